package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

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
		{[]string{"job/migrate"}, `error: cannot wait for "job"`},
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

func TestWaitUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"wait"}, "wait needs workloads"},
		{[]string{"wait", "web"}, `"web" is not TYPE/NAME`},
		{[]string{"wait", "-l", "app=web", "deployment/web"}, "not both"},
		{[]string{"wait", "-l", "app in (", "--demo"}, "parsing -l"},
		{[]string{"wait", "deployment/web", "-o", "table"}, "must be text or json"},
		{[]string{"wait", "deployment/web", "--timeout", "0s"}, "--timeout must be positive"},
		{[]string{"wait", "deployment/web", "--once"}, "unknown flag: --once"},
		{[]string{"wait", "deployment/web", "-A"}, "unknown shorthand flag: 'A'"},
		{[]string{"--timeout", "5s"}, "unknown flag: --timeout"},
		{[]string{"-n", "shop", "wait", "deployment/web", "--speed", "2"}, "--speed needs --demo"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(tc.args...)
			if code != exitUsage {
				t.Errorf("exit code %d, want %d (stderr %q)", code, exitUsage, stderr)
			}
			if !strings.Contains(oneErrorLine(t, stderr), tc.want) {
				t.Errorf("stderr = %q, want it to mention %q", stderr, tc.want)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
		})
	}
}

// TestHelpReadsAsThePlugin: run as kubectl-doomwatch (how kubectl runs a plugin), the help names
// the command "kubectl doomwatch"; otherwise "doomwatch". wait has its own help.
func TestHelpReadsAsThePlugin(t *testing.T) {
	saved := os.Args[0]
	t.Cleanup(func() { os.Args[0] = saved })
	for _, tc := range []struct{ argv0, want, notWant string }{
		{"/usr/local/bin/kubectl-doomwatch", "  kubectl doomwatch wait deployment/NAME", "  doomwatch "},
		{"/home/me/go/bin/doomwatch", "  doomwatch wait deployment/NAME", "kubectl doomwatch"},
	} {
		os.Args[0] = tc.argv0
		for _, args := range [][]string{{"--help"}, {"wait", "--help"}} {
			code, stdout, _ := runCLI(args...)
			if code != exitOK || !strings.Contains(stdout, tc.want) || strings.Contains(stdout, tc.notWant) {
				t.Errorf("%s %v: exit %d, help\n%s\nwant %q and not %q", tc.argv0, args, code, stdout, tc.want, tc.notWant)
			}
		}
	}
	os.Args[0] = "doomwatch"
	_, stdout, _ := runCLI("wait", "--help")
	for _, flag := range []string{"--timeout", "-l, --selector", "-o, --output", "-n, --namespace", "Exit codes: 0"} {
		if !strings.Contains(stdout, flag) {
			t.Errorf("wait --help does not mention %q", flag)
		}
	}
	for _, flag := range []string{"      --once ", "--all-namespaces", "      --at "} {
		if strings.Contains(stdout, flag) {
			t.Errorf("wait --help mentions %q, which wait does not take", flag)
		}
	}
}

// TestWaitOnTheDemo runs the gate on the demo cluster, sped up: the same code as against a real
// cluster from the informers on. The demo's payments rollout pulls an image tag that does not
// exist; checkout, cart and frontend complete while checkout's pods fail with exit 128 on node-3,
// which takes longer than 2s of real time at the demo's own speed.
func TestWaitOnTheDemo(t *testing.T) {
	t.Run("doomed", func(t *testing.T) {
		code, stdout, stderr := runCLI("wait", "--demo", "--speed", "100", "-n", "shop", "deployment/payments", "--timeout", "60s")
		if code != exitError {
			t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		for _, want := range []string{
			"deployment/payments is doomed: 2/2 new pods doomed: Image not found: registry.example.com/payments:v2.4.1-typo\n",
			"/payments: Image not found: registry.example.com/payments:v2.4.1-typo\n",
		} {
			if !strings.Contains(stdout, want) {
				t.Errorf("stdout does not say %q:\n%s", want, stdout)
			}
		}
		if strings.Contains(stdout, "no log") {
			t.Errorf("a container that never ran gets a log:\n%s", stdout)
		}
	})
	t.Run("complete with warnings", func(t *testing.T) {
		code, stdout, stderr := runCLI("wait", "--demo", "--speed", "30", "-n", "shop", "deploy", "checkout", "cart", "frontend", "--timeout", "60s")
		if code != exitOK {
			t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		for _, want := range []string{
			`deployment/checkout: deployment "checkout" successfully rolled out`,
			"warning: node-3 is suspect: ",
			"warning: deployment/checkout: 3 pods failed to start with exit 128 on node node-3 in the last 15m (transient",
		} {
			if !strings.Contains(stdout, want) {
				t.Errorf("stdout does not say %q:\n%s", want, stdout)
			}
		}
		if !regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d deployment/checkout: complete: `).MatchString(stderr) {
			t.Errorf("stderr has no plain progress line for checkout's completion:\n%s", stderr)
		}
	})
	t.Run("selector", func(t *testing.T) {
		code, stdout, stderr := runCLI("wait", "--demo", "-n", "shop", "-l", "app.kubernetes.io/name in (cart,frontend)")
		want := `deployment/cart: deployment "cart" successfully rolled out` + "\n" +
			`deployment/frontend: deployment "frontend" successfully rolled out` + "\n"
		if code != exitOK || stdout != want {
			t.Errorf("exit %d, stdout\n%s\nwant\n%s\nstderr %s", code, stdout, want, stderr)
		}
		code, _, stderr = runCLI("wait", "--demo", "-n", "shop", "-l", "app.kubernetes.io/name=nothing")
		if code != exitError || stderr != "doomwatch: no deployments in namespace shop match -l app.kubernetes.io/name=nothing\n" {
			t.Errorf("no match: exit %d, stderr %q", code, stderr)
		}
	})
	t.Run("not found", func(t *testing.T) {
		start := time.Now()
		code, stdout, stderr := runCLI("wait", "--demo", "-n", "shop", "deployment/paymnets", "sts/redis")
		if code != exitError || stdout != "" || time.Since(start) > 10*time.Second {
			t.Errorf("exit %d after %s, stdout %q", code, time.Since(start), stdout)
		}
		if want := "doomwatch: deployment/paymnets not found in namespace shop\n"; stderr != want {
			t.Errorf("stderr = %q, want %q", stderr, want)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		start := time.Now()
		code, stdout, _ := runCLI("wait", "--demo", "-n", "shop", "deployment/checkout", "--timeout", "2s")
		took := time.Since(start)
		if code != exitTimeout || took < 2*time.Second || took > 8*time.Second {
			t.Errorf("exit %d after %s, want 70 after 2s", code, took)
		}
		for _, want := range []string{"timed out after 2s; still waiting for:\n", `deployment/checkout: Waiting for deployment "checkout" rollout to finish`,
			" (e.g. checkout-"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("stdout does not say %q:\n%s", want, stdout)
			}
		}
	})
	t.Run("json", func(t *testing.T) {
		code, stdout, _ := runCLI("wait", "--demo", "--speed", "100", "-n", "shop", "deployment/payments", "-o", "json")
		if code != exitError {
			t.Fatalf("exit %d", code)
		}
		var rep waitReport
		dec := json.NewDecoder(strings.NewReader(stdout))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rep); err != nil {
			t.Fatalf("decoding %s: %v", stdout, err)
		}
		if rep.Verdict != "doomed" || rep.ExitCode != 1 || len(rep.Workloads) != 1 {
			t.Fatalf("report %+v", rep)
		}
		w := rep.Workloads[0]
		if w.Kind != "Deployment" || w.Namespace != "shop" || w.Name != "payments" || w.Verdict != "doomed" || len(w.Doomed) != 2 ||
			w.Doomed[0].Container != "payments" || w.Doomed[0].ExitCode != nil || w.Doomed[0].Log == nil {
			t.Errorf("workload %+v", w)
		}
		// Every list is [] rather than null, as the README's schema says.
		for _, key := range []string{`"warnings": [`, `"suspectNodes": [`, `"pending": [`, `"log": [`} {
			if !strings.Contains(stdout, key) {
				t.Errorf("the document has no %s", key)
			}
		}
	})
}

// TestPlainProgress: off a terminal, one line per change of verdict at once, a warning the first
// time a transient failure is seen, and a workload's status line when it changed, at most every
// 5 s.
func TestPlainProgress(t *testing.T) {
	var buf bytes.Buffer
	p := &plainProgress{w: &buf}
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	st := func(v model.RolloutVerdict, ready int32, transient ...model.GateProblem) []model.GateStatus {
		return []model.GateStatus{{
			Target:    model.Target{Kind: model.KindDeployment, Namespace: "shop", Name: "web"},
			Found:     true,
			Rollout:   model.Rollout{Verdict: v, Desired: 3, Updated: 3, Ready: ready, Reason: "why"},
			Pods:      model.Counts{Pods: 3, Healthy: int(ready), Progressing: 3 - int(ready)},
			Transient: transient,
		}}
	}
	flaky := model.GateProblem{Pod: "web-1", Container: "app", Node: "node-3", Reason: "Failed to start on node, will retry (exit 128): …"}
	p.Update(st(model.RolloutProgressing, 0), t0)
	p.Update(st(model.RolloutProgressing, 1, flaky), t0.Add(time.Second))   // warning now, status line not yet due
	p.Update(st(model.RolloutProgressing, 1, flaky), t0.Add(3*time.Second)) // nothing new
	p.Update(st(model.RolloutProgressing, 2), t0.Add(6*time.Second))        // due: status line
	p.Update(st(model.RolloutProgressing, 2), t0.Add(12*time.Second))       // due but unchanged
	p.Update(st(model.RolloutComplete, 3), t0.Add(13*time.Second))          // verdict change at once
	want := "10:00:00 deployment/web: progressing: why\n" +
		"10:00:01 warning: web-1/app (transient, on node node-3): Failed to start on node, will retry (exit 128): …\n" +
		"10:00:06 deployment/web: 3/3 updated, 2/3 ready · 2 healthy, 1 progressing\n" +
		"10:00:13 deployment/web: complete: why\n"
	if got := buf.String(); got != want {
		t.Errorf("progress:\n%s\nwant:\n%s", got, want)
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
	g := &gate{ns: "shop", targets: []model.Target{{Kind: model.KindDeployment, Namespace: "shop", Name: "web"}}}
	if err := g.forbidden([]model.Kind{model.KindNode, model.KindJob, model.KindStatefulSet}, false); err != nil {
		t.Errorf("nodes, jobs and statefulsets refused: %v", err)
	}
	err := g.forbidden([]model.Kind{model.KindReplicaSet}, false)
	if err == nil || err.Error() != "not allowed to list and watch replicasets in namespace shop, which the gate needs" {
		t.Errorf("replicasets refused: %v", err)
	}
	g.targets = nil
	if err := g.forbidden([]model.Kind{model.KindDeployment}, true); err == nil {
		t.Errorf("-l with deployments refused: no error")
	}
}

// TestReportText: each kind of verdict reads as the README shows it.
func TestReportText(t *testing.T) {
	code := int32(1)
	web := reportWorkload{Kind: "Deployment", Name: "web", Verdict: "doomed", Reason: "2/2 new pods doomed: Crashing repeatedly (exit 1)",
		Doomed: []reportContainer{
			{Pod: "web-a", Container: "app", Reason: "Crashing repeatedly (exit 1)", ExitCode: &code, Log: []string{"panic: boom"}, LogPrevious: true},
			{Pod: "web-b", Container: "app", Reason: "Crashing repeatedly (exit 1)", LogError: "not allowed"},
		}}
	slow := reportWorkload{Kind: "Deployment", Name: "api", Verdict: "progressing", Reason: `Waiting for deployment "api" rollout to finish`,
		Pending: []reportPending{{Reason: "Readiness probe must respond at /healthz (port 8080)", Pods: 2, Example: "api-a/app"}}}
	done := reportWorkload{Kind: "StatefulSet", Name: "db", Verdict: "complete", Reason: "partitioned roll out complete: 3 new pods have been updated..."}
	for _, tc := range []struct {
		name string
		rep  waitReport
		want string
	}{
		{"doomed", waitReport{Verdict: "doomed", Workloads: []reportWorkload{web}},
			"deployment/web is doomed: 2/2 new pods doomed: Crashing repeatedly (exit 1)\n" +
				"web-a/app: Crashing repeatedly (exit 1)\n  last 1 line of web-a/app's previous log:\n    panic: boom\n" +
				"web-b/app: Crashing repeatedly (exit 1)\n  (no log: not allowed)\n"},
		{"timeout lists what is missing first", waitReport{Verdict: "timeout", Message: "timed out after 8s", Workloads: []reportWorkload{done, slow}},
			"timed out after 8s; still waiting for:\n" +
				"deployment/api: Waiting for deployment \"api\" rollout to finish\n" +
				"  2 pods: Readiness probe must respond at /healthz (port 8080) (e.g. api-a/app)\n" +
				"statefulset/db: partitioned roll out complete: 3 new pods have been updated...\n"},
		{"missing and unsupported", waitReport{Verdict: "missing", Workloads: []reportWorkload{
			{Kind: "Deployment", Name: "wbe", Verdict: "missing", Reason: "deployment/wbe was deleted while waiting"},
			{Kind: "DaemonSet", Name: "agent", Verdict: "unsupported", Reason: "rollout status is only available for RollingUpdate strategy type"}}},
			"deployment/wbe was deleted while waiting\n" +
				"cannot wait for daemonset/agent: rollout status is only available for RollingUpdate strategy type\n"},
		{"complete with warnings", waitReport{Verdict: "complete", Window: "15m", MoreWarnings: 2,
			Workloads:    []reportWorkload{{Kind: "Deployment", Name: "web", Verdict: "complete", Reason: "ok", StartFailures: []reportStartFailures{{Node: "node-3", Pods: 3, Failures: 4, Exit128: true}}}},
			SuspectNodes: []reportNode{{Name: "node-3", Why: "3 pods of 1 workload failed to start with exit 128 here in the last 15m; 0 elsewhere"}},
			Warnings:     []reportContainer{{Pod: "web-a", Container: "app", Node: "node-3", Reason: "Failed to start on node, will retry (exit 128): …"}}},
			"deployment/web: ok\n" +
				"warning: node-3 is suspect: 3 pods of 1 workload failed to start with exit 128 here in the last 15m; 0 elsewhere\n" +
				"warning: deployment/web: 3 pods failed to start with exit 128 on node node-3 in the last 15m (transient: the node's runtime; retried)\n" +
				"warning: web-a/app (transient, on node node-3): Failed to start on node, will retry (exit 128): …\n" +
				"warning: and 2 more containers with transient failures\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.rep.text(); got != tc.want {
				t.Errorf("text:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}
