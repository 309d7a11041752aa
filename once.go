package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"doomwatch/kube"
	"doomwatch/model"
)

// runOnce is --once: wait for the informers to sync (within the request timeout's deadline),
// print one snapshot as a table or JSON, and exit.
func runOnce(ctx context.Context, src *kube.Source, m *model.Model, o *options, deadline time.Time, stdout, stderr io.Writer) int {
	syncCtx, cancelSync := context.WithDeadline(ctx, deadline)
	err := src.Settle(syncCtx, func(b model.Batch) { m.Apply(&b, src.Now()) })
	cancelSync()
	if err != nil {
		return fail(stderr, err, clusterHint(err, o.demo))
	}
	snap := m.Snapshot(src.Context(), src.Now())
	if o.output == "json" {
		err = snap.WriteJSON(stdout)
	} else {
		err = snap.WriteTable(stdout)
	}
	if err != nil {
		return fail(stderr, fmt.Errorf("writing snapshot: %w", err), "")
	}
	return exitOK
}
