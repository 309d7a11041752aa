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
	tty.waitScreen("a doomed rollout", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "payments") && strings.Contains(s, "doomed")
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
	// The timeline is read in the background; ] finds the first change once it is.
	play.waitScreen("a jump to a change", 20*time.Second, func(s string) bool {
		bar := lineWith(s, "replay of demo")
		if strings.Contains(bar, " doomed") || strings.Contains(bar, " transient") || strings.Contains(bar, " suspect") {
			return true
		}
		_, _ = play.ptmx.Write([]byte("]"))
		return false
	})
	play.quit(t)
	if play.waitErr != nil {
		t.Errorf("replay: exit after q: %v, want 0", play.waitErr)
	}
}
