package classify

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// requiredRolloutAnnotation is contract.RequiredRolloutAnnotation (classify imports no contract).
const requiredRolloutAnnotation = "krane.shopify.io/required-rollout"

// Required is a Deployment's required rollout (krane.shopify.io/required-rollout), as Krane reads
// it (lib/krane/kubernetes_resource/deployment.rb).
type Required struct {
	// Value is the annotation's value, "" without one (Krane's default, full).
	Value string
	// Min is how many of the new ReplicaSet's replicas must be ready and available for the rollout
	// to be complete, for "none", "maxUnavailable" and a percentage; -1 for full, where kubectl's
	// answer decides.
	Min int32
}

// Full says every replica is required: no annotation, or "full".
func (r Required) Full() bool { return r.Min < 0 }

// Tolerates is how many of desired new pods may be doomed with the rollout still able to meet the
// requirement; 0 for full, where the rollout rules of DeploymentVerdict decide.
func (r Required) Tolerates(desired int32) int32 {
	if r.Full() || desired <= r.Min {
		return 0
	}
	return desired - r.Min
}

// kranePercent is Krane's percent? (`value =~ /\d+%/`): digits and a percent sign anywhere.
var kranePercent = regexp.MustCompile(`\d+%`)

// leadingInt is Ruby's String#to_i: an optional sign and the leading digits after whitespace, 0
// without any.
var leadingInt = regexp.MustCompile(`^\s*[+-]?\d+`)

func rubyToI(s string) int64 {
	n, err := strconv.ParseInt(leadingInt.FindString(s), 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// RequiredRollout reads Deployment d's required rollout as Krane validates it
// (Deployment#validate_definition): full, none, maxUnavailable, or a percentage (Krane's percent?,
// read with to_i); maxUnavailable only with the RollingUpdate strategy. The minimum is Krane's
// min_available_replicas: the percentage of spec.replicas rounded up, or, for maxUnavailable,
// spec.replicas less the strategy's maxUnavailable (a percentage of it rounded up, as Krane
// computes it, not as the controller rounds it down). The error is Krane's message, one line.
func RequiredRollout(d *appsv1.Deployment) (Required, error) {
	v, ok := d.Annotations[requiredRolloutAnnotation]
	if !ok || v == "full" {
		return Required{Value: v, Min: -1}, nil
	}
	desired := int64(1) // the API server's default for spec.replicas
	if d.Spec.Replicas != nil {
		desired = int64(*d.Spec.Replicas)
	}
	ceilPercent := func(p int64) int32 { return int32(math.Ceil(float64(desired*p) / 100)) }
	switch {
	case v == "none":
		return Required{Value: v, Min: 0}, nil
	case kranePercent.MatchString(v):
		return Required{Value: v, Min: max(0, ceilPercent(rubyToI(v)))}, nil
	case v == "maxUnavailable":
		if s := d.Spec.Strategy.Type; s != "" && s != appsv1.RollingUpdateDeploymentStrategyType {
			return Required{}, fmt.Errorf("'%s: %s' is incompatible with strategy '%s'", requiredRolloutAnnotation, v, oneLine(string(s)))
		}
		var mu *intstr.IntOrString
		if ru := d.Spec.Strategy.RollingUpdate; ru != nil {
			mu = ru.MaxUnavailable
		}
		switch {
		case mu == nil:
			return Required{Value: v, Min: int32(desired)}, nil
		case mu.Type == intstr.String && strings.Contains(mu.StrVal, "%"): // Krane's =~ /%/
			return Required{Value: v, Min: max(0, ceilPercent(100-rubyToI(mu.StrVal)))}, nil
		case mu.Type == intstr.String:
			return Required{Value: v, Min: int32(max(0, desired-rubyToI(mu.StrVal)))}, nil
		}
		return Required{Value: v, Min: int32(max(0, desired-int64(mu.IntVal)))}, nil
	}
	return Required{}, fmt.Errorf("'%s: %s' is invalid. Acceptable values: maxUnavailable, full, none", requiredRolloutAnnotation, oneLine(v))
}
