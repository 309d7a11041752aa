package cmd

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"doomwatch/classify"
	"doomwatch/contract"
	"doomwatch/model"
	"doomwatch/report"
)

// soakT0 is when the soak tests' workloads first complete.
var soakT0 = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)

// soakStatus is deployment/NAME with the rollout verdict v and doomed current pods, as the model
// gives it to the gate.
func soakStatus(name string, v classify.RolloutClass, doomed ...model.GateProblem) model.GateStatus {
	st := model.GateStatus{
		Target:    model.Target{Kind: contract.KindDeployment, Namespace: "shop", Name: name},
		Namespace: "shop",
		Name:      name,
		Found:     true,
		Rollout:   model.Rollout{Verdict: v, Desired: 4, Updated: 4, Ready: 4, Reason: "deployment \"" + name + "\" successfully rolled out"},
		Pods:      model.Counts{Pods: 4, Healthy: 4 - len(doomed), Doomed: len(doomed)},
		Doomed:    doomed,
	}
	st.Rollout.NewPods, st.Rollout.NewDoomed = 4, len(doomed)
	if len(doomed) > 0 {
		st.Rollout.DoomReason = doomed[0].Reason
	}
	if v != classify.RolloutComplete {
		st.Rollout.Reason = "Waiting for deployment \"" + name + "\" rollout to finish: 3 of 4 updated replicas are available..."
	}
	return st
}

var crashing = model.GateProblem{Namespace: "shop", Pod: "web-58997bcc96-nnd26", Container: "app",
	Reason: "Crashing repeatedly (exit 1, 1 restart), restarting after the kubelet's back-off"}

// look is one look of the gate at the statuses at soakT0+at, as wait's loop takes it.
type look struct {
	at       time.Duration
	statuses []model.GateStatus
	want     string // "", "failed" or "ended"
}

func decided(how report.End, done bool) string {
	switch {
	case !done:
		return ""
	case how == report.Failed:
		return "failed"
	case how == report.Ended:
		return "ended"
	case how == report.TimedOut:
		return "timed out"
	}
	return "?"
}

// TestStableWindow: with --stable, a complete workload passes the gate only once it has stayed
// complete for the window, counted from when it last became complete; a doom within the window
// (its rollout's, or a current pod's) fails the gate. Without --stable the gate is as it was.
func TestStableWindow(t *testing.T) {
	complete := func(doomed ...model.GateProblem) []model.GateStatus {
		return []model.GateStatus{soakStatus("web", classify.RolloutComplete, doomed...)}
	}
	progressing := func(doomed ...model.GateProblem) []model.GateStatus {
		return []model.GateStatus{soakStatus("web", classify.RolloutProgressing, doomed...)}
	}
	doomed := []model.GateStatus{soakStatus("web", classify.RolloutDoomed, crashing)}
	for _, tc := range []struct {
		name   string
		stable time.Duration
		looks  []look
	}{
		{"holds: passes only after the window", time.Minute, []look{
			{-5 * time.Second, progressing(), ""},
			{0, complete(), ""},
			{59 * time.Second, complete(), ""},
			{time.Minute, complete(), "ended"},
		}},
		{"the rollout turns doomed within the window", time.Minute, []look{
			{0, complete(), ""},
			{17 * time.Second, doomed, "failed"},
		}},
		{"a current pod is doomed while the rollout is still complete", time.Minute, []look{
			{0, complete(), ""},
			{7 * time.Second, complete(crashing), "failed"},
		}},
		{"complete with a doomed pod at the first look", time.Minute, []look{
			{0, complete(crashing), "failed"},
		}},
		{"a current pod is doomed after a fall back to progressing", time.Minute, []look{
			{0, complete(), ""},
			{2 * time.Second, progressing(), ""},
			{7 * time.Second, progressing(crashing), "failed"},
		}},
		{"a doomed pod before completing is the rollout's to judge", time.Minute, []look{
			{0, progressing(crashing), ""},
		}},
		{"complete, progressing, complete: the window starts again", time.Minute, []look{
			{0, complete(), ""},
			{30 * time.Second, progressing(), ""},
			{40 * time.Second, complete(), ""},
			{90 * time.Second, complete(), ""}, // a minute after the first completion, 50 s into this one
			{99 * time.Second, complete(), ""},
			{100 * time.Second, complete(), "ended"},
		}},
		{"without --stable: complete passes at once", 0, []look{
			{-5 * time.Second, progressing(), ""},
			{0, complete(), "ended"},
		}},
		{"without --stable: a doomed pod of a complete rollout does not fail it", 0, []look{
			{0, complete(crashing), "ended"},
		}},
		{"without --stable: a doomed rollout fails", 0, []look{
			{0, doomed, "failed"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &gate{stable: tc.stable}
			for _, l := range tc.looks {
				if got := decided(g.decide(l.statuses, soakT0.Add(l.at))); got != l.want {
					t.Fatalf("at +%s (%s): %q, want %q", l.at, l.statuses[0].Rollout.Verdict, got, l.want)
				}
			}
		})
	}
}

// TestStableDoomedPodSaysWhy: a workload failed by a doomed pod while its rollout is called
// complete reads as doomed, with the pod's reason, in the verdict (report.NewGate) and the
// progress.
func TestStableDoomedPodSaysWhy(t *testing.T) {
	g := &gate{stable: time.Minute}
	statuses := []model.GateStatus{soakStatus("web", classify.RolloutComplete)}
	g.decide(statuses, soakT0)
	statuses = []model.GateStatus{soakStatus("web", classify.RolloutComplete, crashing)}
	if how, done := g.decide(statuses, soakT0.Add(7*time.Second)); !done || how != report.Failed {
		t.Fatalf("decide: %v %v, want failed", how, done)
	}
	rep := report.NewGate(&report.GateInput{End: report.Failed, Statuses: statuses, Stable: g.stable, Started: true})
	var out bytes.Buffer
	if err := rep.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	want := "deployment/web is doomed: 1/4 new pods doomed after the rollout completed (--stable 1m): Crashing repeatedly (exit 1, 1 restart), restarting after the kubelet's back-off\n" +
		"web-58997bcc96-nnd26/app: Crashing repeatedly (exit 1, 1 restart), restarting after the kubelet's back-off\n"
	if rep.Verdict != report.Doomed || out.String() != want {
		t.Errorf("verdict %s, text:\n%s\nwant:\n%s", rep.Verdict, out.String(), want)
	}
}

// TestStableHeldStillJudged: a workload that has held for --stable is still judged while another's
// window runs: a crash loop in it fails the wait.
func TestStableHeldStillJudged(t *testing.T) {
	g := &gate{stable: time.Minute}
	g.decide([]model.GateStatus{soakStatus("web", classify.RolloutComplete), soakStatus("api", classify.RolloutProgressing)}, soakT0)
	g.decide([]model.GateStatus{soakStatus("web", classify.RolloutComplete), soakStatus("api", classify.RolloutComplete)}, soakT0.Add(30*time.Second))
	if how, done := g.decide([]model.GateStatus{soakStatus("web", classify.RolloutComplete, crashing), soakStatus("api", classify.RolloutComplete)},
		soakT0.Add(70*time.Second)); !done || how != report.Failed {
		t.Errorf("web held, then crash-loops while api's window runs: %q", decided(how, done))
	}
}

// TestStableToleratesRequired: under --stable, doomed pods a Deployment's required rollout
// tolerates (Rollout.Tolerates) do not fail the window; one more does.
func TestStableToleratesRequired(t *testing.T) {
	g := &gate{stable: time.Minute}
	tolerating := func(doomed ...model.GateProblem) []model.GateStatus {
		st := soakStatus("web", classify.RolloutComplete, doomed...)
		st.Rollout.Tolerates = 1
		return []model.GateStatus{st}
	}
	g.decide(tolerating(), soakT0)
	if how, done := g.decide(tolerating(crashing), soakT0.Add(7*time.Second)); done {
		t.Fatalf("one doomed pod of the one tolerated: %v, want still soaking", how)
	}
	other := crashing
	other.Pod = "web-58997bcc96-x2k9q"
	if how, done := g.decide(tolerating(crashing, other), soakT0.Add(9*time.Second)); !done || how != report.Failed {
		t.Fatalf("two doomed pods, one tolerated: %v %v, want failed", how, done)
	}
}

// TestStableProgress: while the window runs, the progress says how long each complete workload
// has held ("complete, stable for 12s of 1m"), live and plain; without --stable it shows the
// rollout's own reason.
func TestStableProgress(t *testing.T) {
	g := &gate{stable: time.Minute}
	statuses := []model.GateStatus{soakStatus("web", classify.RolloutComplete), soakStatus("api", classify.RolloutProgressing)}
	g.decide(statuses, soakT0)
	shown := g.shown(statuses, soakT0.Add(12500*time.Millisecond))
	if got, want := shown[0].Rollout.Reason, "complete, stable for 12s of 1m"; got != want {
		t.Errorf("web's reason %q, want %q", got, want)
	}
	if got := shown[1].Rollout.Reason; !strings.HasPrefix(got, "Waiting for deployment") {
		t.Errorf("api's reason %q, want its rollout's", got)
	}
	if !strings.Contains(statuses[0].Rollout.Reason, "successfully rolled out") {
		t.Errorf("shown changed the gate's own statuses: %q", statuses[0].Rollout.Reason)
	}
	if got := (&gate{}).shown(statuses, soakT0); &got[0] != &statuses[0] {
		t.Errorf("without --stable, shown copies the statuses")
	}

	var buf bytes.Buffer
	p := &plainProgress{w: &buf, soak: true}
	g = &gate{stable: time.Minute}
	web := statuses[:1]
	for _, at := range []time.Duration{0, 3 * time.Second, 6 * time.Second, 12 * time.Second} {
		now := soakT0.Add(at)
		g.decide(web, now)
		p.Update(g.shown(web, now), now)
	}
	want := "10:00:00 deployment/web: complete, stable for 0s of 1m\n" +
		"10:00:06 deployment/web: 4 desired, 4 updated, 4 ready · 4 healthy · complete, stable for 6s of 1m\n" +
		"10:00:12 deployment/web: 4 desired, 4 updated, 4 ready · 4 healthy · complete, stable for 12s of 1m\n"
	if got := buf.String(); got != want {
		t.Errorf("plain progress:\n%s\nwant:\n%s", got, want)
	}
}

// TestStableEnds: a wait that passes says each workload stayed complete for the window, and the
// document records it; a timeout names the workloads whose window it cut short.
func TestStableEnds(t *testing.T) {
	g := &gate{stable: time.Minute}
	statuses := []model.GateStatus{soakStatus("web", classify.RolloutComplete), soakStatus("api", classify.RolloutComplete)}
	g.decide([]model.GateStatus{statuses[0], soakStatus("api", classify.RolloutProgressing)}, soakT0)
	g.decide(statuses, soakT0.Add(20*time.Second)) // api completes 20 s later
	now := soakT0.Add(70 * time.Second)
	got := g.timedOut("timed out after 70s", statuses, now)
	if want := "timed out after 70s, before --stable 1m had passed for deployment/api (stable for 50s)"; got != want {
		t.Errorf("timeout message %q, want %q", got, want)
	}
	if got := (&gate{}).timedOut("timed out after 70s", statuses, now); got != "timed out after 70s" {
		t.Errorf("without --stable: %q", got)
	}

	rep := report.NewGate(&report.GateInput{End: report.Ended, Statuses: statuses, Stable: time.Minute})
	if rep.Stable != "1m" || rep.Workloads[0].Reason != `deployment "web" successfully rolled out; stable for 1m` {
		t.Errorf("stable %q, reason %q", rep.Stable, rep.Workloads[0].Reason)
	}
	rep = report.NewGate(&report.GateInput{End: report.Ended, Statuses: statuses})
	if rep.Stable != "0s" || rep.Workloads[0].Reason != `deployment "web" successfully rolled out` {
		t.Errorf("without --stable: stable %q, reason %q", rep.Stable, rep.Workloads[0].Reason)
	}
}

// TestOwnTimeout: a workload with Krane's timeout-override times the wait out (exit 70) once its
// own timeout has passed since the wait began, if it is not complete by then; a complete one, or
// one without the annotation, is not timed out by it.
func TestOwnTimeout(t *testing.T) {
	timed := func(v classify.RolloutClass) []model.GateStatus {
		st := soakStatus("web", v)
		st.Timeout = 2 * time.Minute
		return []model.GateStatus{st, soakStatus("cart", classify.RolloutProgressing)}
	}
	for _, tc := range []struct {
		name  string
		looks []look
	}{
		{"progressing past its timeout", []look{
			{0, timed(classify.RolloutProgressing), ""},
			{2*time.Minute - time.Second, timed(classify.RolloutProgressing), ""},
			{2 * time.Minute, timed(classify.RolloutProgressing), "timed out"},
		}},
		{"complete before its timeout, the other still going", []look{
			{time.Minute, timed(classify.RolloutComplete), ""},
			{3 * time.Minute, timed(classify.RolloutComplete), ""},
		}},
		{"doomed before its timeout", []look{
			{time.Minute, timed(classify.RolloutDoomed), "failed"},
		}},
		{"another doomed at the look it times out: the failure comes first, as in Krane", []look{
			{2 * time.Minute, append(timed(classify.RolloutProgressing)[:1], soakStatus("cart", classify.RolloutDoomed, crashing)), "failed"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &gate{started: true, startAt: soakT0}
			for _, l := range tc.looks {
				if got := decided(g.decide(l.statuses, soakT0.Add(l.at))); got != l.want {
					t.Fatalf("at +%s: %q, want %q", l.at, got, l.want)
				}
			}
			if tc.looks[len(tc.looks)-1].want == "timed out" && g.ownTimeout != "deployment/web timed out after 2m (its krane.shopify.io/timeout-override annotation)" {
				t.Errorf("message %q", g.ownTimeout)
			}
		})
	}
}

// widget is a custom resource whose kstatus conditions are conds ("Reconciling", "Ready",
// "Stalled", each True), at an observed generation.
func widget(conds ...string) *unstructured.Unstructured {
	var cs []any
	for _, c := range conds {
		cs = append(cs, map[string]any{"type": c, "status": "True", "reason": c + "Reason", "message": "the operator says " + c})
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "doomwatch.test/v1", "kind": "Widget",
		"metadata": map[string]any{"namespace": "shop", "name": "blue", "uid": "Widget-blue", "generation": int64(1)},
		"status":   map[string]any{"observedGeneration": int64(1), "conditions": cs},
	}}
}

// TestFollowedExplainedByPods: a custom resource kstatus calls InProgress is doomed by a doomed
// pod it controls, with the pod's reason and the pod listed; one its operator calls Stalled keeps
// its own reason and lists its doomed pods; one its operator calls ready stays complete.
func TestFollowedExplainedByPods(t *testing.T) {
	owned := model.Owned{Pods: model.Counts{Pods: 2, Doomed: 1, Healthy: 1}, Problems: []model.GateProblem{crashing}}
	for _, c := range []struct {
		conds        []string
		owned        model.Owned
		verdict      report.Verdict
		reason       string
		doomedListed int
	}{
		{[]string{"Reconciling"}, model.Owned{}, report.Progressing, "InProgress: the operator says Reconciling", 0},
		{[]string{"Reconciling"}, owned, report.Doomed, "1/2 pods it controls doomed: " + crashing.Reason, 1},
		{[]string{"Reconciling"}, model.Owned{Doomed: "deployment/blue-web: ProgressDeadlineExceeded"}, report.Doomed,
			"deployment/blue-web: ProgressDeadlineExceeded", 0},
		{[]string{"Stalled"}, owned, report.Doomed, "Failed: the operator says Stalled", 1},
		{[]string{"Ready"}, owned, report.Complete, "Current: Resource is Ready", 0},
	} {
		r := newFollowed("Widget", "shop", "blue", kraneCRD{}, widget(c.conds...))
		r.owned = c.owned
		w := r.current()
		if w.Verdict != c.verdict || w.Reason != c.reason || len(w.Doomed) != c.doomedListed {
			t.Errorf("%v with %d doomed pods: %s %q, %d doomed listed; want %s %q, %d",
				c.conds, len(c.owned.Problems), w.Verdict, w.Reason, len(w.Doomed), c.verdict, c.reason, c.doomedListed)
		}
		if r.uid != "Widget-blue" {
			t.Errorf("uid %q", r.uid)
		}
	}
}

// TestFollowedTimeout: a custom resource gets its timeout as Krane gives it, its own
// timeout-override before its CRD's instance-timeout; the wait times out (exit 70) when it has not
// completed that long after the wait began, and a value Krane would refuse fails it.
func TestFollowedTimeout(t *testing.T) {
	reconciling := func(annotations map[string]any) *unstructured.Unstructured {
		w := widget("Reconciling")
		if annotations != nil {
			w.Object["metadata"].(map[string]any)["annotations"] = annotations
		}
		return w
	}
	crd := kraneCRD{timeout: 30 * time.Second}
	for _, c := range []struct {
		obj  *unstructured.Unstructured
		at   time.Duration
		want string // "" (waiting), "timed out" or "failed"
		msg  string
	}{
		{reconciling(nil), 29 * time.Second, "", ""},
		{reconciling(nil), 30 * time.Second, "timed out", "widget/blue timed out after 30s (its CRD's krane.shopify.io/instance-timeout annotation)"},
		{reconciling(map[string]any{contract.TimeoutAnnotation: "PT2M"}), time.Minute, "", ""},
		{reconciling(map[string]any{contract.TimeoutAnnotation: "PT2M"}), 2 * time.Minute, "timed out", "widget/blue timed out after 2m (its krane.shopify.io/timeout-override annotation)"},
		{reconciling(map[string]any{contract.TimeoutAnnotation: "soon"}), 0, "failed", ""},
	} {
		g := &gate{started: true, startAt: soakT0, resources: []*followed{newFollowed("Widget", "shop", "blue", crd, c.obj)}}
		how, done := g.decide(nil, soakT0.Add(c.at))
		if got := decided(how, done); got != c.want || g.ownTimeout != c.msg {
			t.Errorf("%v at %s: %q %q, want %q %q", c.obj.GetAnnotations(), c.at, got, g.ownTimeout, c.want, c.msg)
		}
	}
}
