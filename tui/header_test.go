package tui

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"doomwatch/model"
)

// rolloutsLine is the header's rollouts line on screen.
func rolloutsLine(t *testing.T, d *dashboard) string {
	t.Helper()
	for _, l := range strings.Split(screen(d), "\n") {
		if strings.HasPrefix(l, "rollouts") {
			return l
		}
	}
	t.Fatalf("no rollouts line:\n%s", screen(d))
	return ""
}

// TestHeaderRolloutsLineFollowsDataAndWidth: the header's rollouts line is made when the rollouts
// or the width change, not per frame; it must still show a new Deployment, widen with the
// terminal and, with more rollouts than fit, end in "…" at the width.
func TestHeaderRolloutsLineFollowsDataAndWidth(t *testing.T) {
	d := newTestDashboard(t, 100, 30)
	if l := rolloutsLine(t, d); strings.Contains(l, "…") || !strings.Contains(l, "checkout 12/8/12") {
		t.Fatalf("four rollouts fit in 100 columns: %q", l)
	}
	var b model.Batch
	for i := range 40 {
		dep, rs := deployment(fmt.Sprintf("svc-%02d", i), 1, 1, 1)
		b.Deployments = append(b.Deployments, dep)
		b.ReplicaSets = append(b.ReplicaSets, rs)
	}
	d.Update(batchMsg{batch: b})
	narrow := rolloutsLine(t, d)
	if !strings.HasSuffix(narrow, "…") || !strings.Contains(narrow, "svc-00") {
		t.Errorf("44 rollouts should fill the line and end in …: %q", narrow)
	}
	d.Update(tea.WindowSizeMsg{Width: 180, Height: 30})
	wide := rolloutsLine(t, d)
	if len([]rune(wide)) != 180 || !strings.HasSuffix(wide, "…") || !strings.HasPrefix(wide, narrow[:len(narrow)-len("…")]) {
		t.Errorf("at 180 columns the line should be 180 wide and continue the narrow one:\n%q\n%q", narrow, wide)
	}
	if strings.Count(wide, "svc-") <= strings.Count(narrow, "svc-") {
		t.Errorf("a wider terminal should show more rollouts:\n%q\n%q", narrow, wide)
	}
}
