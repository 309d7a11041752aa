package cmd

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"doomwatch/classify"
	"doomwatch/contract"
	"doomwatch/model"
)

func TestParseWorkloads(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // the targets as kubectl names them, or the error
	}{
		{[]string{"deployment/web"}, "deployment/web"},
		{[]string{"deploy/web", "deployments.apps/api", "Deployment/db"}, "deployment/web deployment/api deployment/db"},
		{[]string{"sts/db", "statefulsets.apps/cache", "ds/agent", "daemonset.apps/proxy"},
			"statefulset/db statefulset/cache daemonset/agent daemonset/proxy"},
		{[]string{"deployment", "web", "api"}, "deployment/web deployment/api"},
		{[]string{"web"}, `error: "web" is not TYPE/NAME`},
		{[]string{"pod/migrate-1", "po/seed"}, "pod/migrate-1 pod/seed"},
		{[]string{"job/migrate", "jobs.batch/seed", "ro/web"}, "job/migrate job/seed rollout/web"},
		{[]string{"configmap/settings", "widgets.example.com/blue"}, "configmap?/settings widgets.example.com?/blue"},
		{[]string{"c_m/settings"}, `error: invalid resource type "c_m"`},
		{[]string{"deployment/Web_1"}, `error: invalid name "Web_1"`},
		{[]string{"deployment/"}, `error: invalid name ""`},
		{[]string{"/web"}, `error: arguments in resource/name form must have a single resource and name`},
		{[]string{"deployment"}, "error: name the deployment to wait for"},
		{[]string{"deployment", "deploy/web"}, "error: there is no need to specify a resource type"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			refs, err := parseWorkloads(tc.args)
			var got string
			if err != nil {
				got = "error: " + err.Error()
			} else {
				var names []string
				for _, r := range refs {
					if r.typ != "" { // for discovery to map once connected
						names = append(names, r.typ+"?/"+r.name)
						continue
					}
					names = append(names, model.Target{Kind: r.kind, Name: r.name}.String())
				}
				got = strings.Join(names, " ")
			}
			if !strings.HasPrefix(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestPlainProgress: off a terminal, one line per change of verdict at once, a warning the first
// time a transient failure is seen, and a workload's status line when it changed, at most every
// 5 s.
func TestPlainProgress(t *testing.T) {
	var buf bytes.Buffer
	p := &plainProgress{w: &buf}
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	st := func(v classify.RolloutClass, ready int32, transient ...model.GateProblem) []model.GateStatus {
		return []model.GateStatus{{
			Target:    model.Target{Kind: contract.KindDeployment, Namespace: "shop", Name: "web"},
			Found:     true,
			Rollout:   model.Rollout{Verdict: v, Desired: 3, Updated: 3, Ready: ready, Reason: "why"},
			Pods:      model.Counts{Pods: 3, Healthy: int(ready), Progressing: 3 - int(ready)},
			Transient: transient,
		}}
	}
	flaky := model.GateProblem{Pod: "web-1", Container: "app", Node: "node-3", Reason: "Failed to start on node, will retry (exit 128): …"}
	p.Update(st(classify.RolloutProgressing, 0), t0)
	p.Update(st(classify.RolloutProgressing, 1, flaky), t0.Add(time.Second))   // warning now, status line not yet due
	p.Update(st(classify.RolloutProgressing, 1, flaky), t0.Add(3*time.Second)) // nothing new
	p.Update(st(classify.RolloutProgressing, 2), t0.Add(6*time.Second))        // due: status line
	p.Update(st(classify.RolloutProgressing, 2), t0.Add(12*time.Second))       // due but unchanged
	p.Update(st(classify.RolloutComplete, 3), t0.Add(13*time.Second))          // verdict change at once
	want := "10:00:00 deployment/web: progressing: why\n" +
		"10:00:01 warning: web-1/app (transient, on node node-3): Failed to start on node, will retry (exit 128): …\n" +
		"10:00:06 deployment/web: 3 desired, 3 updated, 2 ready · 2 healthy, 1 progressing\n" +
		"10:00:13 deployment/web: complete: why\n"
	if got := buf.String(); got != want {
		t.Errorf("progress:\n%s\nwant:\n%s", got, want)
	}

	// Mid-rollout, with a surge, more pods are ready than desired: the old ones count too.
	surge := model.GateStatus{
		Target:  model.Target{Kind: contract.KindDeployment, Namespace: "shop", Name: "checkout"},
		Found:   true,
		Rollout: model.Rollout{Verdict: classify.RolloutProgressing, Desired: 12, Updated: 3, Ready: 14},
		Pods:    model.Counts{Pods: 5, Healthy: 3, Progressing: 2},
		Old:     11,
	}
	want = "deployment/checkout: 12 desired, 3 updated, 14 ready · 3 healthy, 2 progressing · 11 old"
	if got := progressLine(&surge); got != want {
		t.Errorf("progress line %q, want %q", got, want)
	}
}

// TestWarningsOnePerContainer: a transient failure whose reason changes as it goes on (a NotReady
// node's duration, each retry's container ID) stays one warning with its latest reason, and the
// list is capped.
func TestWarningsOnePerContainer(t *testing.T) {
	g := &gate{warned: map[string]int{}, suspects: map[string]model.Node{}}
	status := func(problems ...model.GateProblem) []model.GateStatus {
		return []model.GateStatus{{Transient: problems}}
	}
	p := model.GateProblem{Namespace: "shop", Pod: "web-1", Container: "app", Node: "node-3"}
	for _, reason := range []string{"node node-3 NotReady for 5s", "node node-3 NotReady for 6s", "node node-3 NotReady for 1m"} {
		p.Reason = reason
		g.note(status(p))
	}
	if len(g.warnings) != 1 || g.warnings[0].Reason != "node node-3 NotReady for 1m" {
		t.Errorf("warnings %+v, want one with the latest reason", g.warnings)
	}
	for i := range maxWarnings + 5 {
		g.note(status(model.GateProblem{Namespace: "shop", Pod: fmt.Sprintf("web-%d", i+2), Container: "app", Reason: "r"}))
	}
	if len(g.warnings) != maxWarnings || g.moreWarnings != 6 {
		t.Errorf("%d warnings and %d more, want %d and 6", len(g.warnings), g.moreWarnings, maxWarnings)
	}
}

// TestForbiddenKindsTheGateNeeds: a refused kind the targets need is an error naming it; one they
// do not need is not.
func TestForbiddenKindsTheGateNeeds(t *testing.T) {
	g := &gate{ns: "shop", targets: []model.Target{{Kind: contract.KindDeployment, Namespace: "shop", Name: "web"}}}
	if err := g.forbidden([]contract.Kind{contract.KindNode, contract.KindJob, contract.KindStatefulSet}, false); err != nil {
		t.Errorf("nodes, jobs and statefulsets refused: %v", err)
	}
	err := g.forbidden([]contract.Kind{contract.KindReplicaSet}, false)
	if err == nil || err.Error() != "not allowed to list and watch replicasets in namespace shop, which the gate needs" {
		t.Errorf("replicasets refused: %v", err)
	}
	// wait -f over several namespaces watches them all.
	g.spans = true
	err = g.forbidden([]contract.Kind{contract.KindReplicaSet}, false)
	if err == nil || err.Error() != "not allowed to list and watch replicasets at the cluster scope (the manifests span namespaces), which the gate needs" {
		t.Errorf("replicasets refused, manifests across namespaces: %v", err)
	}
	g.spans = false
	g.targets = nil
	if err := g.forbidden([]contract.Kind{contract.KindDeployment}, true); err == nil {
		t.Errorf("-l with deployments refused: no error")
	}
}
