package classify

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"doomwatch/kube"
)

// compile is kube's JSONPath, as doomwatch wait gives it to ParseKraneConditions.
func compile(expr string) (JSONPath, error) {
	j, err := kube.CompileJSONPath(expr)
	if err != nil {
		return nil, err
	}
	return j, nil
}

// kraneExample is the custom resource of Krane's README ("Deploying custom resources"), whose
// Failed condition its default rollout conditions call a failure with "resource is failed".
const kraneExample = `apiVersion: stable.shopify.io/v1
kind: Example
metadata:
  generation: 2
  name: example
  namespace: namespace
status:
  observedGeneration: 2
  conditions:
  - type: "Ready"
    status: "False"
    reason: "exampleNotReady"
    message: "resource is not ready"
  - type: "Failed"
    status: "True"
    reason: "exampleFailed"
    message: "resource is failed"
`

// TestKraneVerdict: a custom resource judged by its CRD's krane.shopify.io/instance-rollout-conditions
// as Krane's CustomResource and RolloutConditions judge it: the README's example, the defaults
// through a rollout, custom conditions, and the annotations Krane refuses.
func TestKraneVerdict(t *testing.T) {
	example := func(mutate func(u *unstructured.Unstructured)) *unstructured.Unstructured {
		// As the API's JSON decodes: integers int64.
		j, err := yaml.YAMLToJSON([]byte(kraneExample))
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(j); err != nil {
			t.Fatal(err)
		}
		if mutate != nil {
			mutate(u)
		}
		return u
	}
	conds := func(ready, failed string) func(u *unstructured.Unstructured) {
		return func(u *unstructured.Unstructured) {
			cs, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			cs[0].(map[string]any)["status"] = ready
			cs[1].(map[string]any)["status"] = failed
			_ = unstructured.SetNestedSlice(u.Object, cs, "status", "conditions")
		}
	}
	defaults, err := ParseKraneConditions(" True ", compile)
	if err != nil {
		t.Fatal(err)
	}
	custom, err := ParseKraneConditions(`{"success_conditions": [{"path": "$.status.phase", "value": "Deployed"}, {"path": "$.status.replicas", "value": 3}],
		"failure_conditions": [{"path": "$.status.phase", "value": "Error", "custom_error_msg": "the release failed", "error_msg_path": "$.status.message"}]}`, compile)
	if err != nil {
		t.Fatal(err)
	}
	nullOK, err := ParseKraneConditions(`{"success_conditions": [{"path": "$.status.error", "value": null}]}`, compile)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		obj    *unstructured.Unstructured
		c      *KraneConditions
		class  RolloutClass
		reason string
	}{
		{"the README's example", example(nil), defaults, RolloutDoomed, "Krane's failure condition met: resource is failed"},
		{"observedGeneration as a string, read with Krane's to_i", example(func(u *unstructured.Unstructured) {
			u.Object["status"].(map[string]any)["observedGeneration"] = "2"
		}), defaults, RolloutDoomed, "Krane's failure condition met: resource is failed"},
		{"a null value matches a path with nothing there", example(conds("False", "False")), nullOK, RolloutComplete, "Krane's rollout conditions are met"},
		{"generation not observed", example(func(u *unstructured.Unstructured) { u.SetGeneration(3) }), defaults, RolloutProgressing,
			"waiting for status.observedGeneration to reach generation 3 (Krane's rollout conditions read nothing before)"},
		{"no status", example(func(u *unstructured.Unstructured) { delete(u.Object, "status") }), defaults, RolloutProgressing,
			"waiting for status.observedGeneration to reach generation 2 (Krane's rollout conditions read nothing before)"},
		{"not ready yet", example(conds("False", "False")), defaults, RolloutProgressing,
			`waiting for $.status.conditions[?(@.type == "Ready")].status to be True (Krane's rollout conditions)`},
		{"ready", example(conds("True", "False")), defaults, RolloutComplete, "Krane's rollout conditions are met"},
		{"ready wins over failed, as Krane checks success first", example(conds("True", "True")), defaults, RolloutComplete, "Krane's rollout conditions are met"},
		{"custom: all success conditions", example(func(u *unstructured.Unstructured) {
			u.Object["status"].(map[string]any)["phase"] = "Deployed"
			u.Object["status"].(map[string]any)["replicas"] = int64(3)
		}), custom, RolloutComplete, "Krane's rollout conditions are met"},
		{"custom: one success condition short", example(func(u *unstructured.Unstructured) {
			u.Object["status"].(map[string]any)["phase"] = "Deployed"
			u.Object["status"].(map[string]any)["replicas"] = int64(2)
		}), custom, RolloutProgressing, "waiting for $.status.replicas to be 3 (Krane's rollout conditions)"},
		{"custom: custom_error_msg before error_msg_path", example(func(u *unstructured.Unstructured) {
			u.Object["status"].(map[string]any)["phase"] = "Error"
			u.Object["status"].(map[string]any)["message"] = "chart not found"
		}), custom, RolloutDoomed, "Krane's failure condition met: the release failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if v := KraneVerdict(tc.obj, tc.c); v.Class != tc.class || v.Reason != tc.reason {
				t.Errorf("%+v, want %s %q", v, tc.class, tc.reason)
			}
		})
	}
	for _, bad := range []struct{ annotation, err string }{
		{"yes", "rollout conditions are not valid JSON"},
		{`{"failure_conditions": []}`, "success_conditions must contain at least one entry"},
		{`{"success_conditions": []}`, "success_conditions must contain at least one entry"},
		{`{"success_conditions": {"path": "$.x"}}`, "success_conditions should be Array"},
		{`{"success_conditions": [{"path": "$.status.x"}]}`, "missing required key(s) for success_condition: path and value"},
		{`{"success_conditions": [{"path": "$.status[", "value": 1}]}`, `invalid JsonPath expression "$.status["`},
	} {
		if _, err := ParseKraneConditions(bad.annotation, compile); err == nil || !strings.HasPrefix(err.Error(), bad.err) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line starting %q", bad.annotation, err, bad.err)
		}
	}
}
