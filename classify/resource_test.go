package classify

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestResourceVerdict: kstatus's statuses as doomwatch's verdicts, for objects in the shapes the
// kstatus conventions (fluxcd/cli-utils pkg/kstatus/README.md) and its built-in rules describe.
func TestResourceVerdict(t *testing.T) {
	cr := func(generation int64, status map[string]any) *unstructured.Unstructured {
		o := map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
			"metadata": map[string]any{"name": "blue", "namespace": "shop", "generation": generation}}
		if status != nil {
			o["status"] = status
		}
		return &unstructured.Unstructured{Object: o}
	}
	cond := func(typ, status, reason, message string) map[string]any {
		return map[string]any{"type": typ, "status": status, "reason": reason, "message": message}
	}
	conds := func(cs ...map[string]any) []any {
		out := make([]any, len(cs))
		for i, c := range cs {
			out[i] = c
		}
		return out
	}
	terminating := cr(1, nil)
	terminating.Object["metadata"].(map[string]any)["deletionTimestamp"] = "2026-12-04T10:00:00Z"
	for _, tc := range []struct {
		name   string
		obj    *unstructured.Unstructured
		class  RolloutClass
		reason string
	}{
		{"a ConfigMap", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "c"}}}, RolloutComplete, "Current: Resource is always ready"},
		{"a custom resource without status", cr(1, nil), RolloutComplete, "Current: Resource is current"},
		{"a generation not observed yet", cr(2, map[string]any{"observedGeneration": int64(1)}), RolloutProgressing,
			"InProgress: Widget generation is 2, but latest observed generation is 1"},
		{"Ready=True", cr(1, map[string]any{"observedGeneration": int64(1), "conditions": conds(cond("Ready", "True", "Succeeded", "installed"))}),
			RolloutComplete, "Current: Resource is Ready"},
		{"Reconciling", cr(1, map[string]any{"observedGeneration": int64(1), "conditions": conds(cond("Reconciling", "True", "Progressing", "installing\nchart"))}),
			RolloutProgressing, "InProgress: installing chart"},
		{"Ready=False", cr(1, map[string]any{"observedGeneration": int64(1), "conditions": conds(cond("Ready", "False", "Pending", "waiting for the database"))}),
			RolloutProgressing, "InProgress: waiting for the database"},
		{"Stalled", cr(1, map[string]any{"observedGeneration": int64(1), "conditions": conds(cond("Stalled", "True", "InstallFailed", "install retries exhausted"))}),
			RolloutDoomed, "Failed: install retries exhausted"},
		{"terminating", terminating, RolloutProgressing, "Terminating: Resource scheduled for deletion"},
		{"conditions of the wrong shape", cr(1, map[string]any{"conditions": "Ready"}), RolloutProgressing, "Unknown: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := ResourceVerdict(tc.obj)
			if v.Class != tc.class || (tc.reason != "Unknown: " && v.Reason != tc.reason) || (tc.reason == "Unknown: " && len(v.Reason) <= len(tc.reason)) {
				t.Errorf("%+v, want %s %q", v, tc.class, tc.reason)
			}
		})
	}
}
