package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRecordBesideDashboardAndReplay runs the real binary in a pty: the dashboard over the demo
// with --record says it records, and q leaves a recording that replays; the replay's dashboard
// has the time bar, pauses on space and jumps to a verdict change on ].
//
// The demo, not the API server: the pty and the recording are what is under test here, and the
// demo goes through the same informers (kube/demo).
func TestRecordBesideDashboardAndReplay(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rec")
	tty := startTerminal(t, "--demo", "--speed", "20", "--record", dir)
	tty.waitScreen("the recording's note in the header", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "● rec "+dir)
	})
	// 20× the demo's pace: its doomed payments rollout comes within seconds.
	tty.waitScreen("the payments rollout doomed in the rollouts line", 30*time.Second, func(s string) bool {
		return strings.Contains(lineWith(s, "rollouts "), "✖ payments")
	})
	tty.quit(t)
	if tty.waitErr != nil {
		t.Fatalf("exit after q: %v, want 0", tty.waitErr)
	}

	res := runDoomwatch(t, 30*time.Second, nil, "replay", dir, "--once", "-o", "json")
	if res.code != 0 {
		t.Fatalf("replay --once: exit %d, stderr %q", res.code, res.stderr)
	}
	var snap struct {
		Rollouts []struct{ Name, Verdict string } `json:"rollouts"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &snap); err != nil {
		t.Fatalf("replay --once -o json: %v\n%s", err, res.stdout)
	}
	doomed := false
	for _, r := range snap.Rollouts {
		doomed = doomed || r.Name == "payments" && r.Verdict == "doomed"
	}
	if !doomed {
		t.Errorf("the recording's end does not have payments doomed: %+v", snap.Rollouts)
	}

	play := startTerminal(t, "replay", dir)
	play.waitScreen("the time bar", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "replay of demo") && strings.Contains(s, "playing")
	})
	if _, err := play.ptmx.Write([]byte(" ")); err != nil {
		t.Fatal(err)
	}
	play.waitScreen("paused", 10*time.Second, func(s string) bool { return strings.Contains(s, "paused") })
	// The timeline is read in the background: until it has found a change, ] says it has not
	// yet. One press at a time, each answered before the next: a press during a seek jumps on
	// from where that seek goes.
	jumped := false
	for i := 0; i < 20 && !jumped; i++ {
		if _, err := play.ptmx.Write([]byte("]")); err != nil {
			t.Fatal(err)
		}
		s, ok := play.awaitScreen(3*time.Second, func(s string) bool {
			bar := lineWith(s, "replay of demo")
			return strings.Contains(bar, " doomed") || strings.Contains(bar, " transient") || strings.Contains(bar, " suspect") ||
				strings.Contains(bar, "found yet")
		})
		bar := lineWith(s, "replay of demo")
		jumped = ok && !strings.Contains(bar, "found yet")
		if !jumped {
			time.Sleep(200 * time.Millisecond)
		}
	}
	if !jumped {
		t.Errorf("] never jumped to a change:\n%s", play.screen())
	}
	play.quit(t)
	if play.waitErr != nil {
		t.Errorf("replay: exit after q: %v, want 0", play.waitErr)
	}
}
