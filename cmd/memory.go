package cmd

import (
	"context"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// memoryEvery is how often the memory limit follows the live heap.
const memoryEvery = 10 * time.Second

// governMemory keeps the process's memory near what doomwatch holds. The start is a burst: every
// pod is decoded and the informers' initial lists are garbage moments later, and Go's default
// (collect when the heap doubles, return freed pages to the OS slowly) would keep that peak
// resident for minutes. Once the source has synced, it collects and returns what is free at once
// (debug.FreeOSMemory), then sets a soft memory limit from the live heap, measured anew every
// memoryEvery, so that the heap grows by half of what is live (at least 24 MiB) before the garbage
// collector runs, instead of doubling: at 150,000 pods that is a third less resident memory for
// collections every few seconds under churn. A GOMEMLIMIT the user set is left alone.
func governMemory(ctx context.Context, synced <-chan struct{}) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	select {
	case <-synced:
	case <-ctx.Done():
		return
	}
	debug.FreeOSMemory()
	t := time.NewTicker(memoryEvery)
	defer t.Stop()
	for {
		debug.SetMemoryLimit(memoryLimit(liveHeap()))
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
	}
}

// memoryLimit is the soft limit for a live heap of live bytes: half as much again, at least 24 MiB
// more (what a burst of updates allocates before a collection).
func memoryLimit(live uint64) int64 {
	return int64(live + max(live/2, 24<<20))
}

// liveHeap is the heap the last collection found live.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
