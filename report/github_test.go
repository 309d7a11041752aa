package report

import (
	"strings"
	"testing"

	"doomwatch/model"
)

// TestGitHubAnnotations: an error per workload that failed the gate, with its reason and doomed
// containers, then a warning per suspect node and transient failure; each one line, escaped as
// the Actions toolkit escapes (the title as a property, the message as data).
func TestGitHubAnnotations(t *testing.T) {
	code := int32(1)
	for _, tc := range []struct {
		name string
		rep  Gate
		want string
	}{
		{"complete without warnings", Gate{Verdict: Complete, Workloads: []Workload{{Kind: "Deployment", Name: "web", Verdict: Complete}}}, ""},
		{"doomed and missing", Gate{Verdict: Doomed, Workloads: []Workload{
			{Kind: "Deployment", Name: "web", Verdict: Doomed, Reason: "1/1 new pods doomed: Crashing repeatedly (exit 1)",
				Doomed: []Container{{Pod: "web-a", Container: "app", Node: "node-3", Reason: "Crashing repeatedly (exit 1)", ExitCode: &code}}},
			{Kind: "Deployment", Name: "api", Verdict: Progressing, Reason: "Waiting"},
			{Kind: "Deployment", Name: "wbe", Verdict: Missing, Reason: "deployment/wbe was deleted while waiting"},
		}, SuspectNodes: []SuspectNode{{Name: "node-3", Why: "4 of 4 pods failed: 100%, 0 of 31 elsewhere"}},
			Warnings: []Container{{Pod: "api-x", Container: "app", Reason: "0/3 nodes are available\r\nretrying"}}},
			"::error title=doomwatch%3A deployment/web doomed::1/1 new pods doomed: Crashing repeatedly (exit 1)%0Aweb-a/app: Crashing repeatedly (exit 1) (node node-3)\n" +
				"::error title=doomwatch%3A deployment/wbe missing::deployment/wbe was deleted while waiting\n" +
				"::warning title=doomwatch%3A node node-3 suspect::4 of 4 pods failed: 100%25, 0 of 31 elsewhere\n" +
				"::warning title=doomwatch%3A api-x/app transient::0/3 nodes are available%0D%0Aretrying (on an unscheduled pod)\n"},
		{"timeout", Gate{Verdict: Timeout, Message: "timed out after 10m", Workloads: []Workload{
			{Kind: "Deployment", Name: "web", Verdict: Complete, Reason: "ok"},
			{Kind: "StatefulSet", Name: "db", Verdict: Progressing, Reason: "Waiting for 1 pods to be ready...",
				Pending: []model.GatePending{{Reason: "Creating container", Pods: 1, Example: "db-2/db"}}},
		}}, "::error title=doomwatch%3A statefulset/db timed out::timed out after 10m: Waiting for 1 pods to be ready...%0A1 pod: Creating container (e.g. db-2/db)\n"},
		// An EKS context is an ARN: its colons are escaped in the title.
		{"fleet", FleetGate([]string{"arn:aws:eks:eu-west-1:1:cluster/a,b", "us"}, []Gate{
			{Verdict: Unsupported, Workloads: []Workload{{Kind: "DaemonSet", Name: "agent", Verdict: Unsupported, Reason: "rollout status is only available for RollingUpdate strategy type"}}},
			{Verdict: Timeout, Message: "timed out after 1m", Workloads: []Workload{{Kind: "DaemonSet", Name: "agent", Verdict: Progressing, Reason: "Waiting"}}},
		}), "::error title=doomwatch%3A daemonset/agent in arn%3Aaws%3Aeks%3Aeu-west-1%3A1%3Acluster/a%2Cb unsupported::rollout status is only available for RollingUpdate strategy type\n" +
			"::error title=doomwatch%3A daemonset/agent in us timed out::timed out after 1m: Waiting\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := tc.rep.WriteGitHubAnnotations(&b); err != nil {
				t.Fatal(err)
			}
			if got := b.String(); got != tc.want {
				t.Errorf("annotations:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}
