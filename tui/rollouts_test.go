package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"doomwatch/contract"
	"doomwatch/model"
)

// TestRolloutsPanelColumns: the rollouts panel's columns are as wide as what they hold, the
// counts aligned right and the reason two blanks off them; kubectl's long titles stay while they
// leave the reason room, and are abbreviated where they would not; at 80 columns every column is
// on screen and the reason starts there.
func TestRolloutsPanelColumns(t *testing.T) {
	cases := []struct {
		w    int
		want []string
	}{
		{200, []string{
			"  NAMESPACE NAME     VERDICT       UP-TO-DATE READY AVAILABLE  REASON\n",
			"  shop      payments ✖ doomed             3/3   0/3         0  3/3 new pods doomed: Image not found: registry.example.com/payments:v2.1.0-typo\n",
			"  shop      checkout ◐ progressing      12/12  8/12         8  Waiting for deployment \"checkout\" rollout to finish: 8 of 12 updated replicas are available...\n",
		}},
		{120, []string{
			"  NAMESPACE NAME     VERDICT         UPD READY AVAIL  REASON\n",
			"  shop      search   ✖ doomed        2/2   0/2     0  2/2 new pods doomed: Crashing repeatedly (exit 137): OOMKilled\n",
		}},
		{80, []string{
			"  NAMESPACE NAME     VERDICT         UPD READY AVAIL  REASON\n",
			"  shop      checkout ◐ progressing 12/12  8/12     8  Waiting for deployment \"c…\n",
		}},
	}
	for _, c := range cases {
		frame := RenderFrame(fixtureModel(), FrameOptions{Width: c.w, Height: 24, Now: t0, NoColor: true, Focus: FocusRollouts})
		checkFrame(t, frame, c.w, 24)
		for _, want := range c.want {
			if !strings.Contains(frame, want) {
				t.Errorf("at %d columns the rollouts panel lacks %q:\n%s", c.w, want, frame)
			}
		}
	}
}

// TestRolloutsPanelLongNamesAt80: names as long as the columns allow are cut, the longer first,
// so that at 80 columns the counts and the start of the reason stay on screen.
func TestRolloutsPanelLongNamesAt80(t *testing.T) {
	m := fixtureModel()
	dep, rs := deployment("payments-reconciler-canary-eu1", 3, 3, 3)
	dep.Namespace, rs.Namespace = "team-payments-pr", "team-payments-pr"
	m.Apply(&contract.Batch{Workloads: contract.Workloads(dep, rs)}, t0)
	frame := RenderFrame(m, FrameOptions{Width: 80, Height: 24, Now: t0, NoColor: true, Focus: FocusRollouts})
	checkFrame(t, frame, 80, 24)
	for _, want := range []string{"  NAMESPACE       NAME             VERDICT         UPD READY AVAIL  REASON\n",
		"  team-payments-… payments-reconc… ● complete      3/3   3/3     3  deployment …\n"} {
		if !strings.Contains(frame, want) {
			t.Errorf("the rollouts panel lacks %q:\n%s", want, frame)
		}
	}
}

// TestRolloutsPanelStable: with --stable the rollouts panel says of a rollout that completes how
// long it has stayed complete, second by second (the dashboard is told when to draw again), and
// stops once the window has passed; rollouts complete when the dashboard started have no window.
func TestRolloutsPanelStable(t *testing.T) {
	now := t0
	m := fixtureModel()
	d := newDashboard(Options{Model: model.FleetOf("", m), Now: func() time.Time { return now }, Stable: time.Minute}, true)
	d.Update(tea.WindowSizeMsg{Width: 200, Height: 40})
	// What was complete when the dashboard started has held: no window.
	d.refreshAll()
	for _, r := range d.snap.rollouts {
		if strings.Contains(r.Reason, "stable for") {
			t.Errorf("%s complete before the dashboard started: %q", r.Name, r.Reason)
		}
	}
	dep, rs := deployment("frontend", 3, 3, 3)
	m.Apply(&contract.Batch{Workloads: contract.Workloads(dep, rs)}, t0)
	reason := func() string {
		for _, r := range d.snap.rollouts {
			if r.Name == "frontend" {
				return r.Reason
			}
		}
		t.Fatal("no rollout frontend")
		return ""
	}
	d.refreshAll()
	if got := reason(); got != "complete, stable for 0s of 1m" || !d.c.until.Equal(t0.Add(time.Second)) {
		t.Fatalf("at once: %q, next draw at %s", got, d.c.until)
	}
	now = t0.Add(12 * time.Second)
	d.refreshAll()
	if got := reason(); got != "complete, stable for 12s of 1m" {
		t.Errorf("12s later: %q", got)
	}
	press(d, "tab", "tab") // the rollouts panel
	if s := screen(d); !strings.Contains(s, "complete, stable for 12s of 1m") {
		t.Errorf("the screen lacks the window:\n%s", s)
	}
	now = t0.Add(time.Minute)
	d.refreshAll()
	if got := reason(); got != `deployment "frontend" successfully rolled out` {
		t.Errorf("after the window: %q", got)
	}
}
