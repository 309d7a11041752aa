package replay

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"doomwatch/kube/demo"
	"doomwatch/model"
	"doomwatch/recording"
	"doomwatch/report"
	"doomwatch/tui"
)

// recordDemo records the live demo at 50× its pace until 100 s of its story, into dir.
func recordDemo(t *testing.T, dir string) { recordDemoUntil(t, dir, 100*time.Second, 0) }

// afterSync is the least of the story a recording of the demo holds after the informers synced,
// where the player opens it: at 50× a second the informers take to list (under -race, on a loaded
// machine) is 50 s of the story gone before it.
const afterSync = 70 * time.Second

// recordDemoUntil records the live demo at 50× its pace until the story's until, and at least
// afterSync past its sync, a snapshot every snapshotEvery (0: the default), into dir.
func recordDemoUntil(t *testing.T, dir string, until, snapshotEvery time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	src, err := demo.Start(ctx, demo.Options{Seed: 1, Speed: 50, Interval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	w, err := recording.Create(dir, recording.Options{Contexts: []string{src.Context()}, Start: demo.Epoch, SnapshotEvery: snapshotEvery})
	if err != nil {
		t.Fatal(err)
	}
	synced, syncedAt := src.Synced(), time.Time{}
	for src.Now().Sub(demo.Epoch) < until || syncedAt.IsZero() || src.Now().Sub(syncedAt) < afterSync {
		select {
		case <-synced:
			synced, syncedAt = nil, src.Now()
		case b := <-src.Batches():
			if err := w.Append(src.Now(), &b); err != nil {
				t.Fatal(err)
			}
		case <-ctx.Done():
			t.Fatalf("the demo did not reach %s", until)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestPlayer: playing applies the recorded batches; a seek forward is those batches in one frame,
// and the model that took them says at 90 s (or later) what At says; a jump goes to a change the
// timeline found, with its note; a seek back replaces the model.
func TestPlayer(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rec")
	recordDemo(t, dir)
	cfg := model.DefaultConfig()
	r, err := recording.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	p, m, err := NewPlayer(r, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	// It opens at the recording's first state (TestPlayerOpensAtFirstState), some seconds into
	// the story: the demo's informers list at their speed, ×50 here. The seeks go to 90s, or a
	// minute past that state if it is later.
	first := p.Status()
	if first.Playing {
		t.Fatal("a new player plays")
	}
	at := demo.Epoch.Add(max(90*time.Second, first.At.Sub(demo.Epoch)+time.Minute))
	// A clock that does not move: the position moves only with seeks.
	wall := time.Now()
	p.clock = func() time.Time { return wall }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.Play(ctx, dir) }()
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
	var f tui.Frame
	// Two seeks forward to at, each shorter than exactSeek: the batches in between.
	for _, to := range []time.Time{first.At.Add(at.Sub(first.At) / 2), at} {
		d := to.Sub(p.Now())
		p.Seek(d)
		f = next()
		if f.Model != nil || len(f.Steps) == 0 {
			t.Fatalf("a seek forward of %s: model %v, %d steps; want the batches", d, f.Model != nil, len(f.Steps))
		}
		for _, s := range f.Steps {
			m.Apply(&s.Batch, s.At)
		}
	}
	m.Expire(at)
	r2, err := recording.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	want, err := At(r2, cfg, at)
	if err != nil {
		t.Fatal(err)
	}
	gs, ws := report.NewFleetSnapshot(m, nil, nil, at), report.NewFleetSnapshot(want, nil, nil, at)
	if len(gs.Pods) != len(ws.Pods) || gs.Summary != ws.Summary {
		t.Errorf("played to +%s: %+v; At says %+v", at.Sub(demo.Epoch), gs.Summary, ws.Summary)
	}
	if st := p.Status(); !st.At.Equal(at) {
		t.Errorf("after the seek the position is %s, want %s", st.At, at)
	}

	// The timeline is scanned in the background; a jump back finds a change before at.
	deadline := time.Now().Add(20 * time.Second)
	for {
		p.mu.Lock()
		done := p.done
		p.mu.Unlock()
		if done || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.Jump(false)
	f = next()
	st := p.Status()
	// What it found depends on how far into the story the player opened: a pod turning doomed or
	// transient, a node suspect, a rollout's verdict (TestJumpTargets).
	if !st.At.Before(at) || st.Note == "" || strings.HasPrefix(st.Note, "no ") {
		t.Errorf("a jump back from +%s went to +%s with note %q; want an earlier change", at.Sub(demo.Epoch), st.At.Sub(demo.Epoch), st.Note)
	}
	if f.Model == nil {
		t.Fatalf("a seek back did not replace the model")
	}
	// The recording is small: the jump was replayed from the start, exactly.
	back := st.At
	exact, err := At(r2, cfg, back)
	if err != nil {
		t.Fatal(err)
	}
	f.Model.Expire(back)
	exact.Expire(back)
	if got, want := report.NewFleetSnapshot(f.Model, nil, nil, back), report.NewFleetSnapshot(exact, nil, nil, back); !reflect.DeepEqual(got, want) {
		t.Errorf("the jump back to +%s is not the exact replay: %+v, want %+v", back.Sub(demo.Epoch), got.Summary, want.Summary)
	}
	if strings.Contains(st.Note, "snapshot") {
		t.Errorf("an exact seek's note speaks of a snapshot: %q", st.Note)
	}

	// In a larger recording a seek back past the first minute starts from the snapshot before it,
	// and the time bar says so.
	p.mu.Lock()
	p.exactBytes = 0
	p.mu.Unlock()
	p.Seek(at.Add(5 * time.Second).Sub(back)) // forward to at+5s
	next()
	p.Seek(-10 * time.Second) // back to at-5s, past the first segment (a snapshot a minute)
	if f = next(); f.Model == nil {
		t.Fatalf("a seek back from a snapshot did not replace the model")
	}
	if st := p.Status(); !strings.Contains(st.Note, "from the snapshot at +") || !st.At.Equal(at.Add(-5*time.Second)) {
		t.Errorf("after a seek back to at-5s from a snapshot: at +%s, note %q", st.At.Sub(demo.Epoch), st.Note)
	}
}

// TestJumpTargets: which timeline lines `[` and `]` go to. The first look (every object's state
// once synced) is not a change; after it, a rollout's verdict changing, a new rollout coming
// doomed, a node called suspect or no longer, a pod turning transient or doomed are; a new
// rollout progressing, a pod turning healthy, a deleted pod are not.
func TestJumpTargets(t *testing.T) {
	t0 := demo.Epoch
	yes, no := true, false
	lines := []struct {
		at   time.Duration
		line report.WatchLine
		want string // the note, "" for no target
	}{
		{0, report.WatchLine{Type: "rollout", Kind: "Deployment", Namespace: "shop", Name: "payments", Verdict: "progressing"}, ""},
		{0, report.WatchLine{Type: "node", Name: "node-3", Suspect: &no}, ""},
		{0, report.WatchLine{Type: "pod", Namespace: "shop", Name: "payments-1", Verdict: "progressing"}, ""},
		{10, report.WatchLine{Type: "rollout", Kind: "Deployment", Namespace: "shop", Name: "cart", Verdict: "progressing"}, ""},
		{20, report.WatchLine{Type: "rollout", Kind: "Deployment", Namespace: "shop", Name: "search", Verdict: "doomed"}, "Deployment shop/search doomed"},
		{30, report.WatchLine{Type: "pod", Namespace: "shop", Name: "payments-1", Verdict: "doomed"}, "pod shop/payments-1 doomed"},
		{31, report.WatchLine{Type: "pod", Namespace: "shop", Name: "payments-1", Verdict: "doomed", Reason: "another reason"}, ""},
		{40, report.WatchLine{Type: "rollout", Kind: "Deployment", Namespace: "shop", Name: "payments", Verdict: "doomed"}, "Deployment shop/payments doomed"},
		{50, report.WatchLine{Type: "node", Name: "node-3", Suspect: &yes}, "node node-3 suspect"},
		{60, report.WatchLine{Type: "node", Name: "node-3", Suspect: &no}, "node node-3 no longer suspect"},
		{70, report.WatchLine{Type: "pod", Namespace: "shop", Name: "payments-1", Verdict: "healthy"}, ""},
		{80, report.WatchLine{Type: "pod", Namespace: "shop", Name: "payments-1", Deleted: true}, ""},
	}
	var j jumps
	for _, c := range lines {
		note, ok := j.note(&c.line, t0.Add(c.at*time.Second))
		if c.want == "" && ok {
			t.Errorf("+%ds %s %s: a jump target (%q), want none", c.at, c.line.Type, c.line.Name, note)
		}
		if c.want != "" && (!ok || note != c.want) {
			t.Errorf("+%ds %s %s: %q (target %v), want %q", c.at, c.line.Type, c.line.Name, note, ok, c.want)
		}
	}
}

// TestFeedPrefetch: the feed reads ahead up to the first batch past its limit, no further, only
// once positioned, and hands out the batches it read ahead in order, as a feed that did not.
func TestFeedPrefetch(t *testing.T) {
	p := demoPlayer(t)
	// From 30 s past where the player opens: the recording has batches there however long the
	// demo's informers took to list (recordDemoUntil).
	first := p.Status().At
	from, limit := first.Add(30*time.Second), first.Add(40*time.Second)
	ahead, plain := p.feed(from), p.feed(from)
	defer ahead.stop()
	defer plain.stop()
	if ahead.prefetching(limit) {
		t.Fatal("a feed not positioned yet prefetches")
	}
	ahead.peek()
	for ahead.prefetching(limit) {
		ahead.fill(limit, prefetchStep)
	}
	q := ahead.queue
	if len(q) < 2 || !q[len(q)-1].At.After(limit) || q[len(q)-2].At.After(limit) {
		t.Fatalf("read ahead %d batches to %s; want up to the first past %s", len(q), q[len(q)-1].At.Sub(demo.Epoch), limit.Sub(demo.Epoch))
	}
	var got, want tui.Frame
	to := first.Add(60 * time.Second)
	ahead.until(to, &got)
	plain.until(to, &want)
	if len(got.Steps) == 0 || len(got.Steps) != len(want.Steps) {
		t.Fatalf("%d batches to +%s read ahead, %d not", len(got.Steps), to.Sub(demo.Epoch), len(want.Steps))
	}
	for i := range got.Steps {
		if !got.Steps[i].At.Equal(want.Steps[i].At) || got.Steps[i].Batch.Len() != want.Steps[i].Batch.Len() {
			t.Fatalf("batch %d: at %s with %d changes read ahead, at %s with %d not", i, got.Steps[i].At, got.Steps[i].Batch.Len(), want.Steps[i].At, want.Steps[i].Batch.Len())
		}
	}
}

// demoPlayer is a player over a recording of the demo (recordDemo), closed when the test ends.
func demoPlayer(t *testing.T) *Player {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "rec")
	recordDemo(t, dir)
	r, err := recording.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	p, _, err := NewPlayer(r, model.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}
