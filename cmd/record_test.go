package cmd

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"doomwatch/contract"
	"doomwatch/recording"
)

// The dashboard quits while the source is still sending: once the tee's stop returns, nothing
// more is appended, so closing the recording and summing it up race with no write (the race
// detector caught summary reading the batch count while the tee was still appending).
func TestTeeStopsBeforeClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rec")
	start := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	w, err := recording.Create(path, recording.Options{Contexts: []string{"kind-a"}, Servers: []string{"https://127.0.0.1:6443"}, Start: start})
	if err != nil {
		t.Fatal(err)
	}
	rc := &recorder{w: w, path: path}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in := make(chan contract.Batch)
	go func() { // a source that never pauses, as the demo at a high --speed
		for {
			select {
			case in <- contract.Batch{}:
			case <-ctx.Done():
				return
			}
		}
	}()
	var clock time.Duration
	now := func() time.Time { clock += time.Second; return start.Add(clock) }
	out, stop := rc.tee(ctx, in, now)
	for range 5 {
		<-out
	}
	stop()
	if err := rc.close(time.Time{}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	rc.summary(&buf)
	if note, failing := rc.note(); failing {
		t.Fatalf("after stop and close: %s", note)
	}
	// The tee appends a batch before it passes it on: five were passed, a sixth may be on its way.
	n := rc.batches
	if n < 5 || n > 6 {
		t.Fatalf("the recorder counted %d batches, 5 were passed on", n)
	}
	// The source is still sending. The tee closes out as its goroutine returns, the only one that
	// appends: out closed means nothing can be appended after stop, not merely that nothing was.
	select {
	case _, open := <-out:
		if open {
			t.Fatal("the tee passed a batch on after stop returned")
		}
	default:
		t.Fatal("stop returned while the tee's goroutine still ran")
	}
	if rc.batches != n {
		t.Fatalf("%d batches appended after stop", rc.batches-n)
	}
	if _, last := rc.w.Span(); !last.Equal(start.Add(time.Duration(n) * time.Second)) {
		t.Fatalf("recording ends at %s, want the %dth batch's time", last.Sub(start), n)
	}
	if !strings.Contains(buf.String(), "batches") {
		t.Fatalf("summary: %q", buf.String())
	}
}
