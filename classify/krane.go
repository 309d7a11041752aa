package classify

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// KraneAnnotation is the annotation on a CustomResourceDefinition by which Krane judges the
// rollout of its instances (Shopify/krane README, "Deploying custom resources"): "true" for the
// defaults, or JSON with success_conditions and failure_conditions.
const KraneAnnotation = "krane.shopify.io/instance-rollout-conditions"

// KraneInstanceTimeout is the annotation on a CustomResourceDefinition that gives its custom
// resources their timeout (Krane's CustomResourceDefinition#timeout_for_instance, read when the
// resource has no krane.shopify.io/timeout-override of its own); Krane ignores a value its
// DurationParser refuses.
const KraneInstanceTimeout = "krane.shopify.io/instance-timeout"

// KraneConditions are a CRD's rollout conditions as Krane reads them
// (lib/krane/rollout_conditions.rb): every success condition met is success, any failure
// condition met is failure.
type KraneConditions struct {
	Success, Failure []KraneCondition
}

// JSONPath is one of Krane's paths, compiled: the first value at it in an object, nil when there is
// none (the jsonpath gem's first). kube compiles them (kube.CompileJSONPath, client-go's JSONPath):
// classify reads objects, not path expressions.
type JSONPath interface {
	First(obj map[string]any) any
}

// KraneCondition is one condition: the first value at Path equal to Value. A failure's message is
// CustomErrorMsg, else the first value at ErrorMsgPath.
type KraneCondition struct {
	Path, ErrorMsgPath JSONPath
	// PathText is the path as written, for messages.
	PathText       string
	Value          any
	CustomErrorMsg string
}

// kraneDefault is Krane's default_conditions, which the annotation "true" selects.
const kraneDefault = `{
  "success_conditions": [{"path": "$.status.conditions[?(@.type == \"Ready\")].status", "value": "True"}],
  "failure_conditions": [{"path": "$.status.conditions[?(@.type == \"Failed\")].status", "value": "True",
    "error_msg_path": "$.status.conditions[?(@.type == \"Failed\")].message"}]
}`

// ParseKraneConditions reads the annotation's value as Krane does (RolloutConditions
// from_annotation and validate!): "true" (any case, spaces around) is the defaults; otherwise JSON
// whose success_conditions must be a non-empty list of {path, value}, and whose failure_conditions
// may be absent. Paths are JSONPath, Krane's `$.status.conditions[?(@.type == "Ready")].status`
// form, which compile makes ready to read (its error is one line). The error is one line.
func ParseKraneConditions(annotation string, compile func(path string) (JSONPath, error)) (*KraneConditions, error) {
	text := annotation
	if strings.EqualFold(strings.TrimSpace(annotation), "true") {
		text = kraneDefault
	}
	var raw struct {
		Success json.RawMessage `json:"success_conditions"`
		Failure json.RawMessage `json:"failure_conditions"`
	}
	if err := json.Unmarshal([]byte(text), &raw); err != nil {
		return nil, fmt.Errorf("rollout conditions are not valid JSON: %s", oneLine(err.Error()))
	}
	c := &KraneConditions{}
	var err error
	if c.Success, err = kraneList(raw.Success, "success_conditions", true, compile); err != nil {
		return nil, err
	}
	if c.Failure, err = kraneList(raw.Failure, "failure_conditions", false, compile); err != nil {
		return nil, err
	}
	return c, nil
}

// kraneList reads one list of conditions, with validate_conditions' messages.
func kraneList(raw json.RawMessage, key string, required bool, compile func(string) (JSONPath, error)) ([]KraneCondition, error) {
	if len(raw) == 0 || string(raw) == "null" {
		if required {
			return nil, fmt.Errorf("%s must contain at least one entry", key)
		}
		return nil, nil
	}
	var items []map[string]any
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("%s should be Array", key)
	}
	if len(items) == 0 && required {
		return nil, fmt.Errorf("%s must contain at least one entry", key)
	}
	out := make([]KraneCondition, 0, len(items))
	for _, it := range items {
		path, okPath := it["path"].(string)
		value, okValue := it["value"]
		if !okPath || !okValue {
			return nil, fmt.Errorf("missing required key(s) for %s: path and value", strings.TrimSuffix(key, "s"))
		}
		c := KraneCondition{PathText: path, Value: value}
		var err error
		if c.Path, err = compile(path); err != nil {
			return nil, err
		}
		if p, ok := it["error_msg_path"].(string); ok {
			if c.ErrorMsgPath, err = compile(p); err != nil {
				return nil, err
			}
		}
		c.CustomErrorMsg, _ = it["custom_error_msg"].(string)
		out = append(out, c)
	}
	return out, nil
}

// met says the condition holds: the first value at its path equals its value, numbers compared
// as numbers (the object's integers are int64, the annotation's float64), null matching nothing.
func (c *KraneCondition) met(obj map[string]any) bool {
	got := c.Path.First(obj)
	if c.Value == nil {
		return got == nil // Ruby's nil == nil: a "value": null matches a path with nothing there
	}
	if a, ok := number(got); ok {
		b, ok := number(c.Value)
		return ok && a == b
	}
	return got != nil && reflect.DeepEqual(got, c.Value)
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, true
	case int:
		return float64(n), true
	}
	return 0, false
}

// errNoConditions is for a nil *KraneConditions, a programming error.
var errNoConditions = errors.New("no rollout conditions")

// KraneVerdict judges a custom resource by its CRD's rollout conditions, as Krane's CustomResource
// does: nothing is read until status.observedGeneration equals metadata.generation; then every
// success condition met is complete, else any failure condition met is doomed with the failures'
// messages (custom_error_msg, else the value at error_msg_path), else it waits for the first
// success condition not met. Text in the reason is the API's, unsanitised.
func KraneVerdict(obj *unstructured.Unstructured, c *KraneConditions) RolloutVerdict {
	if c == nil {
		return RolloutVerdict{RolloutProgressing, "Unknown: " + errNoConditions.Error()}
	}
	// Krane reads it with to_i: a number, or a string of one.
	observed, found, err := unstructured.NestedFieldNoCopy(obj.Object, "status", "observedGeneration")
	og, isNum := number(observed)
	if s, ok := observed.(string); ok {
		n, perr := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		og, isNum = float64(n), perr == nil
	}
	if !found || err != nil || !isNum || int64(og) != obj.GetGeneration() {
		return RolloutVerdict{RolloutProgressing, fmt.Sprintf(
			"waiting for status.observedGeneration to reach generation %d (Krane's rollout conditions read nothing before)", obj.GetGeneration())}
	}
	var unmet *KraneCondition
	for i := range c.Success {
		if !c.Success[i].met(obj.Object) {
			unmet = &c.Success[i]
			break
		}
	}
	if unmet == nil {
		return RolloutVerdict{RolloutComplete, "Krane's rollout conditions are met"}
	}
	var msgs []string
	failed := false
	for i := range c.Failure {
		f := &c.Failure[i]
		if !f.met(obj.Object) {
			continue
		}
		failed = true
		switch {
		case f.CustomErrorMsg != "":
			msgs = append(msgs, oneLine(f.CustomErrorMsg))
		case f.ErrorMsgPath != nil:
			if m := f.ErrorMsgPath.First(obj.Object); m != nil {
				msgs = append(msgs, oneLine(fmt.Sprint(m)))
			}
		}
	}
	if failed {
		reason := "Krane's failure condition met"
		if len(msgs) > 0 {
			reason += ": " + strings.Join(msgs, "; ")
		}
		return RolloutVerdict{RolloutDoomed, reason}
	}
	return RolloutVerdict{RolloutProgressing, fmt.Sprintf("waiting for %s to be %v (Krane's rollout conditions)", unmet.PathText, unmet.Value)}
}
