package classify

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// withRequired is deployment d with krane.shopify.io/required-rollout v and maxUnavailable mu
// (nil: none set) under the RollingUpdate strategy.
func withRequired(d *appsv1.Deployment, v string, mu *intstr.IntOrString) *appsv1.Deployment {
	d.Annotations = map[string]string{requiredRolloutAnnotation: v}
	d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: mu}}
	return d
}

// TestRequiredRollout: Krane's values and their minimum (Deployment#min_available_replicas), and
// its refusals, with its messages (lib/krane/kubernetes_resource/deployment.rb).
func TestRequiredRollout(t *testing.T) {
	pct, two := intstr.FromString("25%"), intstr.FromInt32(2)
	recreate := withRequired(deploy(10, 10, 10, 10), "maxUnavailable", nil)
	recreate.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	for _, tc := range []struct {
		d         *appsv1.Deployment
		min       int32
		tolerates int32
		err       string
	}{
		{deploy(10, 10, 10, 10), -1, 0, ""},
		{withRequired(deploy(10, 10, 10, 10), "full", nil), -1, 0, ""},
		{withRequired(deploy(10, 10, 10, 10), "none", nil), 0, 10, ""},
		{withRequired(deploy(10, 10, 10, 10), "90%", nil), 9, 1, ""},
		{withRequired(deploy(3, 3, 3, 3), "50%", nil), 2, 1, ""},                 // 1.5, rounded up
		{withRequired(deploy(10, 10, 10, 10), "maxUnavailable", &pct), 8, 2, ""}, // ceil(10 × 75%)
		{withRequired(deploy(10, 10, 10, 10), "maxUnavailable", &two), 8, 2, ""},
		{withRequired(deploy(10, 10, 10, 10), "maxUnavailable", nil), 10, 0, ""},
		{recreate, 0, 0, "'krane.shopify.io/required-rollout: maxUnavailable' is incompatible with strategy 'Recreate'"},
		{withRequired(deploy(10, 10, 10, 10), "Full", nil), 0, 0,
			"'krane.shopify.io/required-rollout: Full' is invalid. Acceptable values: maxUnavailable, full, none"},
	} {
		req, err := RequiredRollout(tc.d)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if gotErr != tc.err || err == nil && (req.Min != tc.min || req.Tolerates(*tc.d.Spec.Replicas) != tc.tolerates) {
			t.Errorf("%q: min %d, tolerates %d, err %q; want %d, %d, %q", tc.d.Annotations[requiredRolloutAnnotation],
				req.Min, req.Tolerates(*tc.d.Spec.Replicas), gotErr, tc.min, tc.tolerates, tc.err)
		}
	}
}

// TestRequiredRolloutVerdict: with a required rollout, a Deployment is complete once its new
// ReplicaSet has the required replicas ready and available, as Krane's deploy_succeeded? says,
// doomed pods it tolerates do not doom it (not even by the proportional rule), and doomed pods
// that leave the requirement out of reach do at once.
func TestRequiredRolloutVerdict(t *testing.T) {
	d := withRequired(deploy(10, 10, 10, 7, progressing), "70%", nil)
	newRS := func(ready, available int32) *appsv1.ReplicaSet {
		replicas := int32(10)
		return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-2", Generation: 1}, Spec: appsv1.ReplicaSetSpec{Replicas: &replicas},
			Status: appsv1.ReplicaSetStatus{ObservedGeneration: 1, ReadyReplicas: ready, AvailableReplicas: available}}
	}
	crash := "Crashing repeatedly (exit 1)"
	for _, tc := range []struct {
		name   string
		rs     *appsv1.ReplicaSet
		pods   NewPods
		class  RolloutClass
		reason string
	}{
		{"7 of 10 available, 3 doomed: tolerated", newRS(7, 7), NewPods{Total: 10, Doomed: 3, Healthy: 7, Reasons: []string{crash}},
			RolloutComplete, `deployment "web": 7 new replicas available, krane.shopify.io/required-rollout "70%" requires 7 of 10`},
		{"3 doomed, none healthy yet: tolerated, waiting", newRS(0, 0), NewPods{Total: 4, Doomed: 3, Reasons: []string{crash}},
			RolloutProgressing, `Waiting for deployment "web": 0 new replicas available, krane.shopify.io/required-rollout "70%" requires 7 of 10`},
		{"4 doomed: 7 out of reach", newRS(6, 6), NewPods{Total: 10, Doomed: 4, Healthy: 6, Reasons: []string{crash}},
			RolloutDoomed, `4/10 new pods doomed: ` + crash + `, more than krane.shopify.io/required-rollout tolerates (krane.shopify.io/required-rollout "70%" requires 7 of 10)`},
	} {
		v := DeploymentVerdict(d, tc.rs, tc.pods)
		if v.Class != tc.class || v.Reason != tc.reason {
			t.Errorf("%s: %s %q, want %s %q", tc.name, v.Class, v.Reason, tc.class, tc.reason)
		}
	}
	// The same pods without the annotation: the proportional rule dooms the rollout.
	if v := DeploymentVerdict(deploy(10, 10, 10, 7, progressing), newRS(0, 0), NewPods{Total: 4, Doomed: 3, Reasons: []string{crash}}); v.Class != RolloutDoomed {
		t.Errorf("without the annotation: %s %q", v.Class, v.Reason)
	}
	// "none": complete as soon as the new ReplicaSet exists and the spec is observed.
	if v := DeploymentVerdict(withRequired(deploy(10, 10, 0, 0, progressing), "none", nil), newRS(0, 0), NewPods{}); v.Class != RolloutComplete {
		t.Errorf("none: %s %q", v.Class, v.Reason)
	}
}
