package report

import (
	"strings"
	"testing"

	"doomwatch/model"
)

// TestReportText: each kind of verdict reads as the README shows it.
func TestReportText(t *testing.T) {
	code := int32(1)
	web := Workload{Kind: "Deployment", Name: "web", Verdict: "doomed", Reason: "2/2 new pods doomed: Crashing repeatedly (exit 1)",
		Doomed: []Container{
			{Pod: "web-a", Container: "app", Reason: "Crashing repeatedly (exit 1)", ExitCode: &code, Log: []string{"panic: boom"}, LogPrevious: true},
			{Pod: "web-b", Container: "app", Reason: "Crashing repeatedly (exit 1)", LogError: "not allowed"},
		}}
	slow := Workload{Kind: "Deployment", Name: "api", Verdict: "progressing", Reason: `Waiting for deployment "api" rollout to finish`,
		Pending: []model.GatePending{{Reason: "Readiness probe must respond at /healthz (port 8080)", Pods: 2, Example: "api-a/app"}}}
	done := Workload{Kind: "StatefulSet", Name: "db", Verdict: "complete", Reason: "partitioned roll out complete: 3 new pods have been updated..."}
	for _, tc := range []struct {
		name string
		rep  Gate
		want string
	}{
		{"doomed", Gate{Verdict: "doomed", Workloads: []Workload{web}},
			"deployment/web is doomed: 2/2 new pods doomed: Crashing repeatedly (exit 1)\n" +
				"web-a/app: Crashing repeatedly (exit 1)\n  last 1 line of web-a/app's previous log:\n    panic: boom\n" +
				"web-b/app: Crashing repeatedly (exit 1)\n  (no log: not allowed)\n"},
		{"timeout lists what is missing first", Gate{Verdict: "timeout", Message: "timed out after 8s", Workloads: []Workload{done, slow}},
			"timed out after 8s; still waiting for:\n" +
				"deployment/api: Waiting for deployment \"api\" rollout to finish\n" +
				"  2 pods: Readiness probe must respond at /healthz (port 8080) (e.g. api-a/app)\n" +
				"statefulset/db: partitioned roll out complete: 3 new pods have been updated...\n"},
		{"missing and unsupported", Gate{Verdict: "missing", Workloads: []Workload{
			{Kind: "Deployment", Name: "wbe", Verdict: "missing", Reason: "deployment/wbe was deleted while waiting"},
			{Kind: "DaemonSet", Name: "agent", Verdict: "unsupported", Reason: "rollout status is only available for RollingUpdate strategy type"}}},
			"deployment/wbe was deleted while waiting\n" +
				"cannot wait for daemonset/agent: rollout status is only available for RollingUpdate strategy type\n"},
		{"complete with warnings", Gate{Verdict: "complete", Window: "15m", MoreWarnings: 2,
			Workloads:    []Workload{{Kind: "Deployment", Name: "web", Verdict: "complete", Reason: "ok", StartFailures: []model.NodeStartFailures{{Node: "node-3", Pods: 3, Failures: 4, Exit128: true}}}},
			SuspectNodes: []SuspectNode{{Name: "node-3", Why: "3 pods of 1 workload failed to start with exit 128 here in the last 15m; 0 elsewhere"}},
			Warnings:     []Container{{Pod: "web-a", Container: "app", Node: "node-3", Reason: "Failed to start on node, will retry (exit 128): …"}}},
			"deployment/web: ok\n" +
				"warning: node-3 is suspect: 3 pods of 1 workload failed to start with exit 128 here in the last 15m; 0 elsewhere\n" +
				"warning: deployment/web: 3 pods failed to start with exit 128 on node node-3 in the last 15m (transient: the node's runtime; retried)\n" +
				"warning: web-a/app (transient, on node node-3): Failed to start on node, will retry (exit 128): …\n" +
				"warning: and 2 more containers with transient failures\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := tc.rep.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			if got := b.String(); got != tc.want {
				t.Errorf("text:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}
