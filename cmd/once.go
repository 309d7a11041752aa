package cmd

import (
	"context"
	"fmt"
	"strings"
	"time"

	"doomwatch/report"
)

// demoOnceAt is the moment of the demo's story --demo --once shows without --at: by 90s
// payments and search are doomed, checkout's rollout has completed past node-3's exit-128
// failures and node-3 is suspect (kube/demo/scenario.go). At its start all is still healthy, and
// a snapshot has no story to play on.
const demoOnceAt = 90 * time.Second

// runOnce is --once: wait for the informers to sync (within the request timeout's deadline),
// print one snapshot as a table or JSON, and exit.
func (r *root) runOnce(ctx context.Context, e *env) error {
	syncCtx, cancelSync := context.WithDeadline(ctx, e.deadline)
	errs := e.settle(syncCtx)
	cancelSync()
	if !e.m.Multi() {
		if errs[0] != nil {
			return r.cluster(errs[0])
		}
	} else if ctx.Err() != nil {
		return ErrInterrupted
	}
	snap := report.NewFleetSnapshot(e.m, e.src.Servers(), errs, e.src.Now())
	if err := report.SnapshotPrinters.Print(e.Stdout, r.output, &snap); err != nil {
		return fmt.Errorf("writing snapshot: %w", err)
	}
	// With several clusters, those that answered are printed, and one that did not fails the
	// run, as kubectl-foreach fails when a context's command does: a script must not take a
	// partial snapshot for a whole one. Every cluster that did not answer is named in clusters[].
	var failed []string
	var first error
	for i, err := range errs {
		if err != nil {
			failed = append(failed, e.m.Clusters()[i].Context)
			if first == nil {
				first = err
			}
		}
	}
	if len(failed) > 0 {
		return r.cluster(fmt.Errorf("%d of %d clusters did not sync (%s): %w", len(failed), len(errs), strings.Join(failed, ", "), first))
	}
	return nil
}
