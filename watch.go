package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"doomwatch/kube"
	"doomwatch/model"
)

// watchPoll is how often --watch looks again without a batch: evidence leaves the window and a
// crash loop's hold ends with time alone.
const watchPoll = time.Second

// runWatch is --watch: once the informers have synced, one line for every rollout, pod and node,
// then one line each time a verdict, a reason or a suspect call changes, until interrupted or the
// source stops. A script (or the scenario harness) reads the verdicts over time this way, not
// only at the end as --once and wait's exit give them.
func runWatch(ctx context.Context, src *kube.Source, m *model.Model, o *options, deadline time.Time, stdout, stderr io.Writer) int {
	// The first sync is bounded as --once's is: a cluster that never syncs is an error, not a
	// silent stream.
	syncCtx, cancelSync := context.WithDeadline(ctx, deadline)
	err := src.Settle(syncCtx, func(b model.Batch) { m.Apply(&b, src.Now()) })
	cancelSync()
	if err != nil {
		if ctx.Err() != nil {
			return interrupted(stderr)
		}
		return fail(stderr, err, clusterHint(err, o.demo))
	}
	var state model.WatchState
	var version uint64
	looked := false
	poll := time.NewTicker(watchPoll)
	defer poll.Stop()
	batches := src.Batches()
	for {
		if v := m.Version(); !looked || v != version {
			looked, version = true, v
			now := src.Now()
			snap := m.Snapshot(src.Context(), now)
			if err := model.WriteWatch(stdout, o.output, state.Diff(&snap, now)); err != nil {
				return fail(stderr, fmt.Errorf("writing the watch stream: %w", err), "")
			}
		}
		select {
		case <-ctx.Done():
			return interrupted(stderr)
		case <-poll.C:
			m.Expire(src.Now())
		case b, ok := <-batches:
			if !ok {
				if err := src.Err(); err != nil {
					return fail(stderr, err, "")
				}
				return interrupted(stderr)
			}
			m.Apply(&b, src.Now())
		}
	}
}
