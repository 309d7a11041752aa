package tui

import (
	"strings"
	"testing"

	"doomwatch/contract"
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
