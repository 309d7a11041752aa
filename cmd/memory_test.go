package cmd

import (
	"context"
	"math"
	"runtime/debug"
	"testing"
	"time"
)

// TestGovernMemory: no limit while the source syncs; once it has, a limit of the live heap and a
// half more; none at all when the user set GOMEMLIMIT.
func TestGovernMemory(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	debug.SetMemoryLimit(math.MaxInt64)
	t.Setenv("GOMEMLIMIT", "")
	ctx, cancel := context.WithCancel(context.Background())
	synced, done := make(chan struct{}), make(chan struct{})
	go func() { governMemory(ctx, synced); close(done) }()
	if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
		t.Fatalf("a limit of %d before the source synced", l)
	}
	close(synced)
	deadline := time.Now().Add(10 * time.Second)
	for debug.SetMemoryLimit(-1) == math.MaxInt64 {
		if time.Now().After(deadline) {
			t.Fatal("no memory limit 10s after the source synced")
		}
		time.Sleep(time.Millisecond)
	}
	live := liveHeap()
	if l := debug.SetMemoryLimit(-1); l < int64(live)+24<<20 || l > int64(live)*2+24<<20 {
		t.Errorf("limit %d for a live heap of %d, want half as much again, at least 24 MiB more", l, live)
	}
	cancel()
	<-done

	debug.SetMemoryLimit(math.MaxInt64)
	t.Setenv("GOMEMLIMIT", "1GiB")
	closed := make(chan struct{})
	close(closed)
	governMemory(context.Background(), closed) // returns at once: the user's limit stands
	if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
		t.Errorf("with GOMEMLIMIT set, the limit became %d", l)
	}
}

func TestMemoryLimit(t *testing.T) {
	for _, tc := range []struct{ live, want uint64 }{
		{0, 24 << 20},
		{30 << 20, 54 << 20},
		{300 << 20, 450 << 20},
	} {
		if got := memoryLimit(tc.live); got != int64(tc.want) {
			t.Errorf("memoryLimit(%d MiB) = %d MiB, want %d MiB", tc.live>>20, got>>20, tc.want>>20)
		}
	}
}
