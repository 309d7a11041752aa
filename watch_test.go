package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	"doomwatch/kube/demo"
	"doomwatch/model"
)

// TestWatchStreamsTheDemo: --watch on the demo prints a JSON line per rollout, pod and node once
// synced, then changes as the story goes on, and ends when its context does (SIGINT, SIGTERM).
func TestWatchStreamsTheDemo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	src, err := demo.Start(ctx, demo.Options{Seed: 1, Speed: 20, Interval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	r, w := io.Pipe()
	done := make(chan int, 1)
	watchCtx, stop := context.WithCancel(ctx)
	go func() {
		o := &options{output: "json", demo: true}
		done <- runWatch(watchCtx, src, model.New(model.DefaultConfig()), o, time.Now().Add(30*time.Second), w, io.Discard)
		w.Close()
	}()
	seen := map[string]bool{}
	searchDoomed := false
	sc := bufio.NewScanner(r)
	for sc.Scan() && !(searchDoomed && seen["node"]) {
		var l model.WatchLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if _, err := time.Parse(time.RFC3339Nano, l.Time); err != nil {
			t.Errorf("line %q: time: %v", sc.Text(), err)
		}
		seen[l.Type] = true
		searchDoomed = searchDoomed || l.Type == "rollout" && l.Name == "search" && l.Verdict == "doomed"
	}
	if !searchDoomed {
		t.Fatalf("the stream ended before search was doomed (%v)", sc.Err())
	}
	for _, typ := range []string{"rollout", "pod", "node"} {
		if !seen[typ] {
			t.Errorf("no %s line", typ)
		}
	}
	stop()
	go io.Copy(io.Discard, r) //nolint:errcheck // drains what was written before the stop
	if code := <-done; code != exitInterrupted {
		t.Errorf("exit code %d after the stop, want %d", code, exitInterrupted)
	}
}
