package cmd

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"time"

	"doomwatch/kube"
	"doomwatch/kube/demo"
	"doomwatch/model"
	"doomwatch/report"
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
	done := make(chan error, 1)
	watchCtx, stop := context.WithCancel(ctx)
	go func() {
		r := &root{common: newCommon(), output: "json"}
		r.demo = true
		e := &env{Program: &Program{Stdout: w, Stderr: io.Discard}, src: kube.Join(ctx, []*kube.Source{src}, []string{""}),
			m:        model.NewFleet(model.DefaultConfig(), []string{src.Context()}),
			deadline: time.Now().Add(30 * time.Second)}
		done <- r.runWatch(watchCtx, e)
		w.Close()
	}()
	seen := map[string]bool{}
	searchDoomed := false
	sc := bufio.NewScanner(r)
	for sc.Scan() && !(searchDoomed && seen["node"]) {
		var l report.WatchLine
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
	if err := <-done; !errors.Is(err, ErrInterrupted) {
		t.Errorf("after the stop: %v, want ErrInterrupted", err)
	}
}
