package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
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

// recordDemoStory records 60 s of the demo's story at 20× its pace (3 s), into a new directory.
// Its first snapshot is empty, as a new recording's is: the recorder starts before the informers
// have listed, and their lists come seconds of the story later.
func recordDemoStory(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "rec")
	res := runDoomwatch(t, 60*time.Second, nil, "record", "--demo", "--speed", "20", "--for", "60s", "-o", dir)
	if res.code != 0 {
		t.Fatalf("record --demo: %s", res)
	}
	return dir
}

// firstFrame waits for the program's first frame to be whole: drawn top to bottom on a blank
// screen, it is once its last line, the key help, is there.
func (tty *terminal) firstFrame(t *testing.T) string {
	t.Helper()
	return tty.waitScreen("the first frame", 30*time.Second, func(s string) bool { return strings.Contains(s, "q quit") })
}

// syncFrames has the program wrap every frame in synchronized output (mode 2026) from now on, so
// that keyFrame can tell a whole frame from one still being written (a frame larger than the
// pty's buffer arrives in pieces). The emulator does not answer the program's query for the mode;
// this answers it as a terminal that supports it does (DECRPM: recognised, reset).
func (tty *terminal) syncFrames(t *testing.T) {
	t.Helper()
	if _, err := tty.ptmx.Write([]byte("\x1b[?2026;2$y")); err != nil {
		t.Fatal(err)
	}
}

// keyFrame presses keys and returns the first whole frame drawn after them that satisfies cond:
// the screen once the program has finished a synchronized frame begun after the keys, and not
// begun the next. It fails the test after 10 s.
func (tty *terminal) keyFrame(t *testing.T, keys, what string, cond func(screen string) bool) string {
	t.Helper()
	tty.mu.Lock()
	from := tty.raw.Len()
	tty.mu.Unlock()
	if _, err := tty.ptmx.Write([]byte(keys)); err != nil {
		t.Fatal(err)
	}
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for {
		tty.mu.Lock()
		changed := tty.changed
		s := tty.emu.String()
		out := tty.raw.Bytes()[from:]
		begun, ended := bytes.LastIndex(out, []byte("\x1b[?2026h")), bytes.LastIndex(out, []byte("\x1b[?2026l"))
		tty.mu.Unlock()
		if begun >= 0 && ended > begun && cond(s) {
			return s
		}
		select {
		case <-changed:
		case <-tty.readEnd:
			t.Fatalf("after %q, waiting for %s: %s; screen:\n%s", keys, what, tty.why(), s)
		case <-deadline.C:
			t.Fatalf("after %q, waiting 10s for %s; screen:\n%s", keys, what, s)
		}
	}
}

// replayState is what a replay's screen says of the recording's state.
type replayState struct {
	bar, offset, health, rollouts string
	pods                          int
}

var (
	offsetRE = regexp.MustCompile(`\+(\S+) of `)
	podsRE   = regexp.MustCompile(`(?m)^pods (\d+)`)
	// demoPodRow is the pod table's selected row, a pod of the demo's (a generated name), after
	// its namespace when the table is wide enough for that column.
	demoPodRow = regexp.MustCompile(`(?m)^▶ (?:[a-z-]+ +)?[a-z0-9-]+-[a-z0-9]{5} `)
)

func replayStateOf(screen string) replayState {
	st := replayState{bar: lineWith(screen, "replay of demo"), health: lineWith(screen, "doomwatch  context"),
		rollouts: lineWith(screen, "rollouts "), pods: -1}
	if m := offsetRE.FindStringSubmatch(st.bar); m != nil {
		st.offset = m[1]
	}
	if m := podsRE.FindStringSubmatch(screen); m != nil {
		st.pods, _ = strconv.Atoi(m[1])
	}
	return st
}

// holdsState says what is wrong with a screen that should show the recording's state: the
// header synced (not "syncing pods: 0 …"), its pods in the header and in the table, its rollouts.
func holdsState(screen string) error {
	st := replayStateOf(screen)
	switch {
	case !strings.Contains(st.health, "synced") || strings.Contains(st.health, "syncing"):
		return fmt.Errorf("the header is not synced: %q", st.health)
	case st.pods <= 0:
		return fmt.Errorf("%d pods", st.pods)
	case !demoPodRow.MatchString(screen):
		return fmt.Errorf("no demo pod in the table")
	case st.rollouts == "" || strings.Contains(st.rollouts, "none in scope"):
		return fmt.Errorf("no rollouts: %q", st.rollouts)
	}
	return nil
}

// TestReplayFirstFrame runs `doomwatch replay` over a recording of the demo in a pty: its very
// first frame shows the recording's first state, synced, with the pods and rollouts, and not the
// empty start of the recording ("syncing pods: 0 …") while the time bar plays on.
//
// No API server: the recording is of the demo, through the same informers (kube/demo).
func TestReplayFirstFrame(t *testing.T) {
	dir := recordDemoStory(t)
	tty := startTerminal(t, "replay", dir)
	s := tty.firstFrame(t)
	if err := holdsState(s); err != nil {
		t.Errorf("the first frame does not show the recording's first state: %v:\n%s", err, s)
	}
	if bar := replayStateOf(s).bar; !strings.Contains(bar, "playing") {
		t.Errorf("the first frame's time bar: %q, want it playing", bar)
	}
	tty.quit(t)
}

// TestReplaySeekFrame: in `doomwatch replay`, paused, the first frame after a seek shows the
// state at the new position: 10 s forward (the batches in between), then 20 s back, past the
// start, which goes to the recording's first state and not to its empty start.
func TestReplaySeekFrame(t *testing.T) {
	dir := recordDemoStory(t)
	tty := startTerminal(t, "replay", dir)
	tty.firstFrame(t)
	tty.syncFrames(t)
	s := tty.keyFrame(t, " ", "the time bar paused", func(s string) bool { return strings.Contains(replayStateOf(s).bar, "paused") })
	paused, err := offsetSeconds(replayStateOf(s).offset)
	if err != nil {
		t.Fatalf("paused: %v:\n%s", err, s)
	}
	// The first frame at a new position without "seeking…" (which a frame drawn before the seek
	// is done says, over the old state) is the seek's. The program draws a frame only when the
	// screen changes: each seek here goes to a position the time bar shows differently.
	seek := func(keys, what string, from int) int {
		t.Helper()
		var at int
		s := tty.keyFrame(t, keys, what, func(s string) bool {
			bar := replayStateOf(s).bar
			n, err := offsetSeconds(replayStateOf(s).offset)
			at = n
			return err == nil && n != from && !strings.Contains(bar, "seeking")
		})
		if err := holdsState(s); err != nil {
			t.Errorf("%s: the first frame at +%ds does not show the recording's state: %v:\n%s", what, at, err, s)
		}
		return at
	}
	fwd := seek(".", "10 s forward", paused)
	if fwd <= paused {
		t.Errorf("10 s forward from +%ds went to +%ds", paused, fwd)
	}
	// Paused within 10 s of where it opened, 20 s back is past the start: the first state.
	if back := seek(",,", "20 s back, past the start", fwd); back > paused {
		t.Errorf("20 s back from +%ds went to +%ds, after where it paused (+%ds)", fwd, back, paused)
	}
	tty.quit(t)
}

// offsetSeconds reads a time bar's offset under two minutes ("17s").
func offsetSeconds(offset string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSuffix(offset, "s"))
	if err != nil || !strings.HasSuffix(offset, "s") {
		return 0, fmt.Errorf("the time bar's offset %q is not in seconds", offset)
	}
	return n, nil
}
