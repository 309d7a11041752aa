package tui

import (
	"strings"
	"testing"
)

// TestRolloutsPanelColumns: the rollouts panel's columns keep their fixed widths, the counts
// aligned right and the reason two blanks off them; a narrow terminal cuts the line instead of
// leaving columns out.
func TestRolloutsPanelColumns(t *testing.T) {
	cases := []struct {
		w    int
		want []string
	}{
		{200, []string{
			"  NAMESPACE        NAME                         VERDICT       UP-TO-DATE   READY AVAILABLE  REASON\n",
			"  shop             payments                     ✖ doomed             3/3     0/3         0  3/3 new pods doomed: Image not found: registry.example.com/payments:v2.1.0-typo\n",
			"  shop             checkout                     ◐ progressing      12/12    8/12         8  Waiting for deployment \"checkout\" rollout to finish: 8 of 12 updated replicas are available...\n",
		}},
		{80, []string{
			"  NAMESPACE        NAME                         VERDICT       UP-TO-DATE   READ…\n",
			"  shop             checkout                     ◐ progressing      12/12    8/1…\n",
		}},
	}
	for _, c := range cases {
		frame := RenderFrame(fixtureModel(), FrameOptions{Width: c.w, Height: 24, Now: t0, NoColor: true, Focus: FocusRollouts})
		for _, want := range c.want {
			if !strings.Contains(frame, want) {
				t.Errorf("at %d columns the rollouts panel lacks %q:\n%s", c.w, want, frame)
			}
		}
	}
}
