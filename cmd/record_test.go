package cmd

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
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
	in := make(chan []contract.Batch)
	go func() { // a source that never pauses, as the demo at a high --speed
		for {
			select {
			case in <- []contract.Batch{{}}:
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

// TestTeeRecordsEachClusterBatch: the fleet hands the dashboard several clusters' batches at once;
// the recording beside it holds each as a batch of its own, marked with its cluster, in order,
// as replay feeds them back, and the dashboard gets the delivery as it came.
func TestTeeRecordsEachClusterBatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rec")
	start := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	w, err := recording.Create(path, recording.Options{Contexts: []string{"eu", "us", "ap"}, Start: start})
	if err != nil {
		t.Fatal(err)
	}
	rc := &recorder{w: w, path: path}
	in := make(chan []contract.Batch, 2)
	delivered := [][]contract.Batch{
		{{Cluster: 2, Health: &contract.Health{PodsSeen: 1}}, {Cluster: 0, Health: &contract.Health{PodsSeen: 2}}},
		{{Cluster: 1, Health: &contract.Health{PodsSeen: 3}}},
	}
	for _, bs := range delivered {
		in <- bs
	}
	close(in)
	clock := start
	out, stop := rc.tee(t.Context(), in, func() time.Time { clock = clock.Add(time.Second); return clock })
	var got [][]contract.Batch
	for bs := range out {
		got = append(got, bs)
	}
	stop()
	if err := rc.close(clock); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || len(got[0]) != 2 || len(got[1]) != 1 || rc.batches != 3 {
		t.Fatalf("the dashboard got %d deliveries %v, the recorder counted %d batches; want the 2 deliveries as they came, 3 batches", len(got), got, rc.batches)
	}
	r, err := recording.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	type rec struct {
		at             time.Duration
		cluster, stamp int
	}
	var recorded []rec
	first, last := r.Span()
	for fr, err := range r.Batches(first.Add(-time.Second), last) {
		if err != nil {
			t.Fatal(err)
		}
		if fr.Batch.Health != nil {
			recorded = append(recorded, rec{fr.At.Sub(start), fr.Batch.Cluster, fr.Batch.Health.PodsSeen})
		}
	}
	want := []rec{{time.Second, 2, 1}, {time.Second, 0, 2}, {2 * time.Second, 1, 3}}
	if !slices.Equal(recorded, want) {
		t.Fatalf("recorded %v, want %v", recorded, want)
	}
}
