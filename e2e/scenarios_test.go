package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestScenarioCorpus: every scenario of e2e/scenarios parses, names the thread it reproduces,
// and renders its node behaviours into Stages scoped to its namespace and nodes.
func TestScenarioCorpus(t *testing.T) {
	all, err := LoadScenarios()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 20 {
		t.Errorf("%d scenarios, want at least 20", len(all))
	}
	quick := 0
	for _, s := range all {
		if s.Quick {
			quick++
		}
		for i := range s.Behaviours {
			window, lasting, err := s.stageObjects(i, time.Now().Add(time.Minute))
			if err != nil {
				t.Errorf("%s: behaviour %d: %v", s.Name, i, err)
				continue
			}
			for _, o := range append(window, lasting...) {
				if o.GetKind() != "Stage" || !strings.HasPrefix(o.GetName(), s.Name+"-") {
					t.Errorf("%s: behaviour %d renders %s %q", s.Name, i, o.GetKind(), o.GetName())
				}
				if got := fmt.Sprint(o.Object["spec"]); !strings.Contains(got, s.Namespace()) || !strings.Contains(got, ".spec.nodeName") {
					t.Errorf("%s: stage %s is not scoped to the namespace and nodes: %s", s.Name, o.GetName(), got)
				}
			}
		}
		if _, err := s.manifests(append(s.Setup, s.Rollout...)); err != nil {
			t.Errorf("%s: %v", s.Name, err)
		}
	}
	if quick < 2 || quick > 4 {
		t.Errorf("%d quick scenarios, want 2 to 4 for make test", quick)
	}
}

// TestWaitFlags: a scenario's waitFlags reach `doomwatch wait` after the timeout, flags the
// runner sets are refused, and the report says which flags each wait ran with.
func TestWaitFlags(t *testing.T) {
	base := "title: t\nthread: https://example.com/t\nnodes: [{name: n}]\nrollout: [{kind: Deployment}]\n" +
		"expect: {target: deployment/web, verdict: complete}\n"
	s, err := ParseScenario("soak", []byte(base+"waitFlags: [--stable=60s]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.waitFlags(), " "); got != "--timeout=5m0s --stable=60s" {
		t.Errorf("wait's flags %q", got)
	}
	for _, bad := range []string{"[--timeout=1m]", "[-n=x]", "[--output=json]", "[stable=60s]"} {
		if _, err := ParseScenario("bad", []byte(base+"waitFlags: "+bad+"\n")); err == nil {
			t.Errorf("waitFlags %s parsed", bad)
		}
	}
	plain, err := ParseScenario("plain", []byte(base))
	if err != nil {
		t.Fatal(err)
	}
	job := &Scenario{Name: "job"}
	results := []*Result{
		{Scenario: plain, Wait: ToolResult{Ran: true}},
		{Scenario: s, Wait: ToolResult{Ran: true}},
		{Scenario: plain, Wait: ToolResult{Ran: true}},
		{Scenario: job},
	}
	var b strings.Builder
	writeWaitFlags(&b, results)
	want := "`doomwatch wait` ran with `--timeout=5m0s` (2 scenarios); `--timeout=5m0s --stable=60s` (soak), beside -n and --kubeconfig.\n\n"
	if b.String() != want {
		t.Errorf("report:\n%q\nwant\n%q", b.String(), want)
	}
}

// TestStageWeight: a behaviour's rate is the share of starts that fail against pod-ready's 100.
func TestStageWeight(t *testing.T) {
	for _, c := range []struct {
		rate float64
		want int64
	}{{30, 43}, {50, 100}, {5, 5}, {100, 1000000}, {0, 0}} {
		if got := stageWeight(c.rate); got != c.want {
			t.Errorf("stageWeight(%v) = %d, want %d", c.rate, got, c.want)
		}
	}
}

// TestAnalyseStream reads a verdict stream the way the scores do: only lines from the trigger
// on, the first verdict that ends the rollout, a flip back from doomed, a pod's doom and flip, a
// suspect node of the scenario, and a Job judged by its pods.
func TestAnalyseStream(t *testing.T) {
	s := &Scenario{Name: "demo", Expect: Expect{Target: "deployment/web"}}
	trigger := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(sec int) string { return trigger.Add(time.Duration(sec) * time.Second).Format(time.RFC3339Nano) }
	raw := []string{
		`{"time":"` + at(-5) + `","type":"rollout","namespace":"sc-demo","kind":"Deployment","name":"web","verdict":"complete","reason":"rolled out"}`,
		`{"time":"` + at(1) + `","type":"rollout","namespace":"sc-demo","kind":"Deployment","name":"web","verdict":"progressing","reason":"waiting"}`,
		`{"time":"` + at(9) + `","type":"pod","namespace":"sc-demo","name":"web-1","node":"demo-n1","owner":"Deployment/web","verdict":"doomed","reason":"Crashing repeatedly","deleted":false}`,
		`{"time":"` + at(9) + `","type":"rollout","namespace":"sc-demo","kind":"Deployment","name":"web","verdict":"doomed","reason":"1/1 new pods doomed"}`,
		`{"time":"` + at(19) + `","type":"pod","namespace":"sc-demo","name":"web-1","node":"demo-n1","owner":"Deployment/web","verdict":"progressing","reason":"Running, not ready yet","deleted":false}`,
		`{"time":"` + at(19) + `","type":"rollout","namespace":"sc-demo","kind":"Deployment","name":"web","verdict":"progressing","reason":"waiting"}`,
		`{"time":"` + at(21) + `","type":"rollout","namespace":"sc-demo","kind":"Deployment","name":"web","verdict":"doomed","reason":"1/1 new pods doomed"}`,
		`{"time":"` + at(22) + `","type":"node","name":"demo-n1","suspect":true,"reason":"3 pods failed to start here"}`,
		`{"time":"` + at(22) + `","type":"node","name":"other-n1","suspect":true,"reason":"not this scenario's"}`,
	}
	var lines []StreamLine
	for _, l := range raw {
		sl, err := ParseStreamLine([]byte(l), trigger)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, sl)
	}
	r := analyseStream(lines, s, trigger, nil)
	if r.First != "doomed" || !r.FirstAt.Equal(trigger.Add(9*time.Second)) || r.Final != "doomed" {
		t.Errorf("first %q at %s, final %q; want doomed at +9s, final doomed", r.First, r.FirstAt.Sub(trigger), r.Final)
	}
	if r.Flips != 1 || r.PodFlips != 1 || r.DoomedPods != 1 {
		t.Errorf("flips %d, pod flips %d, doomed pods %d; want 1, 1, 1", r.Flips, r.PodFlips, r.DoomedPods)
	}
	if len(r.Suspects) != 1 || r.Suspects[0] != "n1" {
		t.Errorf("suspects %v, want [n1]", r.Suspects)
	}

	job := &Scenario{Name: "demo", Expect: Expect{Target: "job/migrate"}}
	var jl []StreamLine
	for _, l := range []string{
		`{"time":"` + at(3) + `","type":"pod","namespace":"sc-demo","name":"migrate-a","owner":"Job/migrate","verdict":"transient","reason":"Job has 3 of 4 retries left"}`,
		`{"time":"` + at(20) + `","type":"pod","namespace":"sc-demo","name":"migrate-a","owner":"Job/migrate","verdict":"completed","reason":"Completed"}`,
	} {
		sl, err := ParseStreamLine([]byte(l), trigger)
		if err != nil {
			t.Fatal(err)
		}
		jl = append(jl, sl)
	}
	jr := analyseStream(jl, job, trigger, nil)
	if jr.First != "complete" || !jr.DoomedAt.IsZero() {
		t.Errorf("job: first %q, doomed at %v; want complete, never doomed", jr.First, jr.DoomedAt)
	}
	if _, err := ParseStreamLine([]byte(`{"type":"rollout","time":"yesterday"}`), trigger); err == nil {
		t.Error("a line with a bad time parsed")
	}
}

// TestScenarioSubset runs `make test`'s quick scenarios (Scenario.Quick: a one-replica rollout on
// a flaky node, a crash loop, a Job that retries) on the full control plane, kwok's nodes under
// the real controllers, and holds doomwatch's verdict stream and `doomwatch wait` to each
// scenario's expectation. kubectl is left out here: on a doomed Deployment it waits out the
// 10-minute progress deadline (`make scenarios` measures it).
func TestScenarioSubset(t *testing.T) {
	if skipReason != "" {
		t.Skip(skipReason)
	}
	binDir := os.Getenv("DOOMWATCH_K8S_BIN")
	for _, b := range ControlPlaneBinaries {
		if _, err := os.Stat(filepath.Join(binDir, b)); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s not in DOOMWATCH_K8S_BIN=%s (CI=true: failing; hack/build-k8s.sh builds it)", b, binDir)
			}
			t.Skipf("%s not in DOOMWATCH_K8S_BIN=%s; run hack/build-k8s.sh", b, binDir)
		}
	}
	all, err := LoadScenarios()
	if err != nil {
		t.Fatal(err)
	}
	quick, err := SelectScenarios(all, "quick")
	if err != nil {
		t.Fatal(err)
	}
	bin := doomwatchBinary(t)
	dir := filepath.Join(suiteDir, "control-plane")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cp, err := StartControlPlane(ctx, binDir, dir, ControlPlaneOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Stop()
	results := RunScenarios(ctx, cp, quick, RunConfig{
		Doomwatch: bin, Kubectl: filepath.Join(binDir, "kubectl"), NoKubectl: true, Settle: 20 * time.Second,
		Log: t.Logf, StreamDir: dir,
	})
	var report strings.Builder
	WriteReport(&report, results)
	t.Logf("\n%s", report.String())
	failed := false
	for _, r := range results {
		for _, f := range r.Failures() {
			t.Errorf("%s: %s", r.Scenario.Name, f)
			failed = true
		}
	}
	if failed {
		t.Logf("the control plane's logs:\n%s", cp.Logs(20))
	}
}
