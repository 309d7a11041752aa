package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	corev1 "k8s.io/api/core/v1"

	"doomwatch/contract"
)

// eventSection is the detail's Events section as on screen: its title and its lines, up to the
// blank line after it.
func eventSection(t *testing.T, d *dashboard) []string {
	t.Helper()
	var out []string
	for i := range d.detail.lines {
		l := plain(d, i)
		if strings.HasPrefix(l, "Events") {
			out = append(out, l)
			continue
		}
		if len(out) > 0 {
			if l == "" {
				break
			}
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		t.Fatalf("the detail has no Events section:\n%s", strings.Join(d.detail.lines, "\n"))
	}
	return out
}

// TestDetailShowsThePodsWarningEvents: the detail lists the pod's Warning events newest first, each
// with its age on the dashboard's clock, its count when it repeated, its reason and as much of
// its message as the line holds; a pod without any says so.
func TestDetailShowsThePodsWarningEvents(t *testing.T) {
	d := eventsDashboard(t, 80, 24)
	d.pods.selectKey("shop/api-7d9f8b6c5-xk2lq")
	press(d, "enter")
	got := eventSection(t, d)
	want := []string{
		"Events  warnings, newest first",
		"  30s ago x3 BackOff  Back-off restarting failed container api in pod api-7d9f8…",
		"  50s ago x4 Failed   Error: failed to create containerd task: failed to create…",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Events section:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The lines are made to fit, not cut by the pane: the message ends in "…" where it was clipped.
	for i, l := range d.detail.lines {
		if p := ansi.Strip(l); strings.HasPrefix(p, "Events") || strings.Contains(p, " ago x") {
			if w := ansi.StringWidth(l); w > d.width {
				t.Errorf("events line %d is %d cells wide, the pane %d: %q", i, w, d.width, p)
			}
		}
	}

	press(d, "esc")
	d.pods.selectKey("shop/payments-7d9f8b6c5-p00")
	press(d, "enter")
	if got := eventSection(t, d); len(got) != 1 || got[0] != "Events  no warning events" {
		t.Errorf("a pod without events: %q", got)
	}
}

// TestDetailEventsFollowTheModel: an event that arrives while the detail is open is shown with
// the next batch, on top; one seen once has no count, and its control characters never reach the
// screen.
func TestDetailEventsFollowTheModel(t *testing.T) {
	d := eventsDashboard(t, 160, 40)
	d.pods.selectKey("shop/web-5c9d7f6b8-m2x4k")
	press(d, "enter")
	if got := eventSection(t, d); len(got) != 2 || !strings.HasPrefix(got[1], "  20s ago x12 FailedMount  MountVolume.SetUp failed") {
		t.Fatalf("before: %q", got)
	}
	web := d.m.Pod("shop/web-5c9d7f6b8-m2x4k")
	ev := warningEvent("shop", web.Name, web.UID, "node-1", "FailedMount",
		"\x1b]0;pwned\x07"+configMapMissing+"\x1b[2J", 1, 5*time.Second, 5*time.Second)
	ev.Name += ".second" // another Event object than the first's
	d.Update(batchMsg{batches: []contract.Batch{{Events: []*corev1.Event{ev}}}})
	got := eventSection(t, d)
	if len(got) != 3 || got[1] != "  5s ago      FailedMount  "+configMapMissing || !strings.HasPrefix(got[2], "  20s ago x12 FailedMount") {
		t.Errorf("after a new event:\n%q", got)
	}
	if s := d.render(); strings.Contains(s, "pwned") || strings.Contains(s, "\x07") || strings.Contains(s, "\x1b[2J") {
		t.Errorf("the event's control sequences reached the screen: %q", s)
	}
}
