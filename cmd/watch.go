package cmd

import (
	"context"
	"fmt"
	"time"

	"doomwatch/report"
)

// watchPoll is how often --watch looks again without a batch: evidence leaves the window and a
// crash loop's hold ends with time alone.
const watchPoll = time.Second

// runWatch is --watch: once the informers have synced, one line for every rollout, pod and node,
// then one line each time a verdict, a reason or a suspect call changes, until interrupted or the
// source stops. A script (or the scenario harness) reads the verdicts over time this way, not
// only at the end as --once and wait's exit give them.
func (r *root) runWatch(ctx context.Context, e *env) error {
	// The first sync is bounded as --once's is: a cluster that never syncs is an error, not a
	// silent stream.
	syncCtx, cancelSync := context.WithDeadline(ctx, e.deadline)
	err := e.settleAll(syncCtx)
	cancelSync()
	if err != nil {
		if ctx.Err() != nil {
			return ErrInterrupted
		}
		return r.cluster(err)
	}
	var state report.WatchState
	var version uint64
	looked := false
	poll := time.NewTicker(watchPoll)
	defer poll.Stop()
	batches := e.src.Batches()
	for {
		if v := e.m.Version(); !looked || v != version {
			looked, version = true, v
			now := e.src.Now()
			snap := report.NewFleetSnapshot(e.m, nil, nil, now)
			if err := report.WatchPrinters.Print(e.Stdout, r.output, state.Diff(&snap, now)); err != nil {
				return fmt.Errorf("writing the watch stream: %w", err)
			}
		}
		select {
		case <-ctx.Done():
			return ErrInterrupted
		case <-poll.C:
			e.m.Expire(e.src.Now())
		case bs, ok := <-batches:
			if !ok {
				if err := e.src.Err(); err != nil {
					return err
				}
				return ErrInterrupted
			}
			e.m.ApplyAll(bs, e.src.Now())
		}
	}
}
