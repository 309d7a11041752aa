package replay

import (
	"context"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"

	"doomwatch/model"
	"doomwatch/recording"
	"doomwatch/tui"
)

// firstView is the dashboard's first frame over m, the model a player hands it, at the player's
// status: what `doomwatch replay` draws before any frame, tick or key.
func firstView(m *model.Fleet, st tui.PlayStatus) string {
	return tui.RenderFleetFrame(m, tui.FrameOptions{Width: 140, Height: 40, Now: st.At, NoColor: true, Replay: &st})
}

// podsOnScreen is the pod count the header's pods line shows, -1 without one.
func podsOnScreen(screen string) int {
	m := regexp.MustCompile(`(?m)^pods (\d+)`).FindStringSubmatch(screen)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// lineOf is the screen's first line that starts with prefix.
func lineOf(screen, prefix string) string {
	for _, l := range strings.Split(screen, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// TestPlayerOpensAtFirstState: a recording starts before the informers' first lists came (a
// recording of the demo at the story's start, with nothing in its first snapshot), and the
// dashboard opens it where it first holds the cluster's state: the first View, before any frame
// or tick, shows the pods and rollouts and says synced, at the first moment the recording had
// synced. A seek back before that moment, and playing again from the end, go to the same state.
func TestPlayerOpensAtFirstState(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rec")
	recordDemo(t, dir)
	cfg := model.DefaultConfig()
	exact, err := recording.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer exact.Close()
	start, end := exact.Span()
	empty, err := At(exact, cfg, start)
	if err != nil {
		t.Fatal(err)
	}
	if empty.Counts().Pods != 0 || empty.Health().Synced {
		t.Fatalf("the recording's start holds %d pods, synced %v: the case under test is a recording that starts empty",
			empty.Counts().Pods, empty.Health().Synced)
	}

	r, err := recording.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	p, m, err := NewPlayer(r, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	// Where the recording first synced, found here by applying its batches one by one.
	var first time.Time
	scan, err := Seek(exact, cfg, start)
	if err != nil {
		t.Fatal(err)
	}
	for fr, err := range exact.Batches(start, end) {
		if err != nil {
			t.Fatal(err)
		}
		scan.Apply(fr.Batch, fr.At)
		if scan.Health().Synced {
			first = fr.At
			break
		}
	}
	want, err := At(exact, cfg, first)
	if err != nil {
		t.Fatal(err)
	}
	if first.IsZero() || want.Counts().Pods == 0 || len(want.Rollouts()) == 0 {
		t.Fatalf("the recording never synced, or holds no pods or rollouts then (+%s)", first.Sub(start))
	}
	st := p.Status()
	if st.Playing || !st.At.Equal(first) {
		t.Errorf("a new player is at +%s, playing %v; want paused at +%s, where the recording first synced",
			st.At.Sub(start), st.Playing, first.Sub(start))
	}

	screen := firstView(m, st)
	checkFirstState := func(what, screen string) {
		t.Helper()
		head := strings.SplitN(screen, "\n", 2)[0]
		if !strings.Contains(head, "synced") || strings.Contains(screen, "syncing") {
			t.Errorf("%s: the header does not say synced: %q", what, head)
		}
		if n := podsOnScreen(screen); n != want.Counts().Pods {
			t.Errorf("%s shows %d pods, the recording %d at +%s", what, n, want.Counts().Pods, first.Sub(start))
		}
		shown := false
		l := lineOf(screen, "rollouts ")
		for _, r := range want.Rollouts() {
			shown = shown || strings.Contains(l, " "+r.Name+" ")
		}
		if !shown {
			t.Errorf("%s: the rollouts line shows none of the recording's: %q", what, l)
		}
		if off := "+" + duration.HumanDuration(first.Sub(start)) + " of"; !strings.Contains(screen, off) {
			t.Errorf("%s: the time bar is not at %s", what, off)
		}
		if t.Failed() {
			t.Logf("%s:\n%s", what, screen)
		}
	}
	checkFirstState("the first View", screen)

	// Paused (run, not Play), with a clock that does not move: the position moves only with seeks.
	wall := time.Now()
	p.clock = func() time.Time { return wall }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.run(ctx) }()
	defer func() { cancel(); <-done }()
	next := func() tui.Frame {
		t.Helper()
		select {
		case f := <-p.Frames():
			return f
		case <-time.After(10 * time.Second):
			t.Fatal("no frame")
		}
		return tui.Frame{}
	}
	apply := func(f tui.Frame) {
		if f.Model != nil {
			m = f.Model
		}
		for _, s := range f.Steps {
			m.Apply(&s.Batch, s.At)
		}
		m.Expire(p.Now())
	}

	p.Seek(30 * time.Second)
	apply(next())
	p.Seek(-time.Hour)
	f := next()
	if f.Model == nil {
		t.Fatal("a seek back to the first state did not replace the model")
	}
	apply(f)
	st = p.Status()
	if !st.At.Equal(first) {
		t.Errorf("a seek back before the first state went to +%s, want +%s", st.At.Sub(start), first.Sub(start))
	}
	checkFirstState("after a seek back to the start", firstView(m, st))

	// From the end, space plays again from the first state.
	p.Seek(end.Sub(first))
	apply(next())
	p.Toggle() // paused at the end: play again from the first state
	apply(next())
	st = p.Status()
	if !st.At.Equal(first) || !st.Playing {
		t.Errorf("space at the end: at +%s, playing %v; want playing from +%s", st.At.Sub(start), st.Playing, first.Sub(start))
	}
	checkFirstState("played again from the end", firstView(m, st))
}

// TestNoteGoesStale: what a jump found stays on the time bar while the position is there, paused,
// and goes once playing has moved noteHold past it: the pod it called transient may be doomed by
// then, and at the recording's end the note would still say transient.
func TestNoteGoesStale(t *testing.T) {
	p := demoPlayer(t)
	// The player's clock, moved by the test with p.mu held, as the player reads it.
	now := time.Now()
	p.clock = func() time.Time { return now }
	advance := func(d time.Duration) {
		p.mu.Lock()
		now = now.Add(d)
		p.mu.Unlock()
	}
	const found = "pod shop/checkout-1 transient"
	target := p.Status().At.Add(20 * time.Second)
	p.mu.Lock()
	p.marks, p.done = []mark{{at: target, note: found}}, true
	p.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.run(ctx) }() // paused
	defer func() { cancel(); <-done }()

	p.Jump(true)
	select {
	case <-p.Frames():
	case <-time.After(10 * time.Second):
		t.Fatal("no frame after the jump")
	}
	if st := p.Status(); !st.At.Equal(target) || st.Note != found {
		t.Fatalf("after the jump: at +%s, note %q; want +%s, %q", st.At.Sub(st.Start), st.Note, target.Sub(st.Start), found)
	}
	advance(time.Minute)
	if st := p.Status(); st.Note != found {
		t.Errorf("paused where the jump went, a minute later the note is %q, want %q", st.Note, found)
	}
	p.Toggle()
	advance(noteHold - time.Second)
	if st := p.Status(); st.Note != found {
		t.Errorf("playing, %s past the jump the note is %q, want %q still", st.At.Sub(target), st.Note, found)
	}
	advance(2 * time.Second)
	if st := p.Status(); st.Note != "" {
		t.Errorf("playing, %s past the jump the note still says %q", st.At.Sub(target), st.Note)
	}
}
