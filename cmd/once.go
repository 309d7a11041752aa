package cmd

import (
	"context"
	"fmt"

	"doomwatch/report"
)

// runOnce is --once: wait for the informers to sync (within the request timeout's deadline),
// print one snapshot as a table or JSON, and exit.
func (r *root) runOnce(ctx context.Context, e *env) error {
	syncCtx, cancelSync := context.WithDeadline(ctx, e.deadline)
	err := e.settle(syncCtx)
	cancelSync()
	if err != nil {
		return r.cluster(err)
	}
	snap := report.NewSnapshot(e.m, e.src.Context(), e.src.Now())
	if err := report.SnapshotPrinters.Print(e.Stdout, r.output, &snap); err != nil {
		return fmt.Errorf("writing snapshot: %w", err)
	}
	return nil
}
