package kube

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"doomwatch/contract"
)

// The fan-in's tests run in a synctest bubble: its clock is fake and moves only when every
// goroutine of the bubble is blocked, so an interval is exactly 100 ms of it, and synctest.Wait
// returns once the fan-in has done all it can with what it was given.

const testInterval = 100 * time.Millisecond

// testSources are n sources that send what a test gives them, paced at testInterval.
func testSources(n int) []*Source {
	out := make([]*Source, n)
	for i := range out {
		out[i] = &Source{ctx: context.Background(), out: make(chan contract.Batch), synced: make(chan struct{}),
			context: string(rune('a' + i)), interval: testInterval}
	}
	return out
}

// testBatch is batch seq of a cluster: a node's change on even seq, health alone on odd (a batch
// that only says health changed is kept like any other). Health.PodsSeen numbers it.
func testBatch(seq int) contract.Batch {
	b := contract.Batch{Health: &contract.Health{PodsSeen: seq}}
	if seq%2 == 0 {
		b.Nodes = []*corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}}
	}
	return b
}

// delivery is what the consumer got at once, and when (the bubble's clock).
type delivery struct {
	at      time.Time
	batches []contract.Batch
}

// consume reads every delivery of f until Batches closes.
func consume(f *Fleet) <-chan []delivery {
	done := make(chan []delivery, 1)
	go func() {
		var got []delivery
		for bs := range f.Batches() {
			got = append(got, delivery{at: time.Now(), batches: bs})
		}
		done <- got
	}()
	return done
}

// checkOrder fails unless the deliveries hold every cluster's batches 0 … n-1, in order, each
// once, marked with its cluster, and no delivery holds two batches of one cluster.
func checkOrder(t *testing.T, got []delivery, clusters, n int) {
	t.Helper()
	seqs := make([][]int, clusters)
	for i, d := range got {
		var in []int
		for _, b := range d.batches {
			if slices.Contains(in, b.Cluster) {
				t.Errorf("delivery %d holds two batches of cluster %d", i, b.Cluster)
			}
			in = append(in, b.Cluster)
			seqs[b.Cluster] = append(seqs[b.Cluster], b.Health.PodsSeen)
			if want := b.Health.PodsSeen%2 == 0; (len(b.Nodes) == 1) != want {
				t.Errorf("cluster %d batch %d: %d nodes, want the batch as sent", b.Cluster, b.Health.PodsSeen, len(b.Nodes))
			}
		}
	}
	for c, s := range seqs {
		want := make([]int, n)
		for i := range want {
			want[i] = i
		}
		if !slices.Equal(s, want) {
			t.Errorf("cluster %d: batches %v, want %v", c, s, want)
		}
	}
}

// TestFanInOneDeliveryAnInterval: three clusters each send a batch an interval, at their own
// moments within it; the dashboard gets one delivery an interval, never two within one, with
// what the clusters sent since the last, and no batch waits more than an interval. The first
// after a quiet interval goes out at once. Nothing is lost, nor reordered within a cluster.
func TestFanInOneDeliveryAnInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		const clusters, rounds = 3, 20
		sources := testSources(clusters)
		f := Join(ctx, sources, make([]string, clusters))
		done := consume(f)

		var mu sync.Mutex
		offered := map[[2]int]time.Time{} // cluster and seq: when the source had the batch ready
		var wg sync.WaitGroup
		for c, s := range sources {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Cluster c sends 30c ms into each interval (the bubble's clock), as its own
				// coalescer would: at most one batch an interval.
				time.Sleep(time.Duration(c) * 30 * time.Millisecond)
				for seq := range rounds {
					mu.Lock()
					offered[[2]int{c, seq}] = time.Now()
					mu.Unlock()
					s.out <- testBatch(seq) // blocks while the fan-in holds the cluster's last batch
					time.Sleep(testInterval)
				}
				close(s.out)
			}()
		}
		wg.Wait()
		got := <-done

		checkOrder(t, got, clusters, rounds)
		start := got[0].at
		for i, d := range got {
			if i > 0 && d.at.Sub(got[i-1].at) < testInterval {
				t.Errorf("delivery %d came %s after the one before, within one interval", i, d.at.Sub(got[i-1].at))
			}
			for _, b := range d.batches {
				if wait := d.at.Sub(offered[[2]int{b.Cluster, b.Health.PodsSeen}]); wait > testInterval {
					t.Errorf("cluster %d batch %d waited %s, more than an interval", b.Cluster, b.Health.PodsSeen, wait)
				}
			}
		}
		// The first batch came after a quiet time and went out alone, at once.
		if first := got[0]; len(first.batches) != 1 || !first.at.Equal(offered[[2]int{0, 0}]) {
			t.Errorf("the first delivery: %d batches at +%s, want cluster 0's alone at once", len(first.batches), first.at.Sub(offered[[2]int{0, 0}]))
		}
		// Three clusters' batches an interval made about one delivery an interval, not three.
		if len(got) > rounds+2 {
			t.Errorf("%d deliveries for %d intervals of %d clusters' batches, want one an interval", len(got), rounds, clusters)
		}
		if span := got[len(got)-1].at.Sub(start); span > rounds*testInterval {
			t.Errorf("the deliveries took %s for %d intervals", span, rounds)
		}
	})
}

// TestFanInHoldsASlowConsumersClusters: while the dashboard has not taken a delivery, the
// clusters' next batches wait at their sources, where the coalescer keeps merging their changes
// (the latest object per key), rather than queue in the fan-in; each is handed over with the next
// delivery, in order, and nothing is lost.
func TestFanInHoldsASlowConsumersClusters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		sources := testSources(2)
		f := Join(ctx, sources, []string{"", ""})
		batches := f.Batches()

		sent := make([]chan int, len(sources)) // each source says which batches the fan-in took
		for c, s := range sources {
			sent[c] = make(chan int, 10)
			go func() {
				for seq := range 3 {
					s.out <- testBatch(seq)
					sent[c] <- seq
				}
				close(s.out)
			}()
		}
		synctest.Wait()
		for c := range sources {
			if n := len(sent[c]); n != 1 {
				t.Fatalf("cluster %d: the fan-in took %d batches before the dashboard took any, want 1", c, n)
			}
			<-sent[c]
		}
		var got []delivery
		for bs := range batches {
			got = append(got, delivery{at: time.Now(), batches: bs})
			synctest.Wait()
			for c := range sources {
				if n := len(sent[c]); n > 1 {
					t.Fatalf("cluster %d: the fan-in took %d batches after a delivery, want 1 at most", c, n)
				}
				select {
				case <-sent[c]:
				default:
				}
			}
		}
		checkOrder(t, got, 2, 3)
	})
}

// TestFanInClosesAfterTheLastDelivery: what the sources sent before they closed is all handed
// over, the held batches with the next delivery, an interval after the last, and only then is
// Batches closed.
func TestFanInClosesAfterTheLastDelivery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		sources := testSources(2)
		f := Join(ctx, sources, []string{"", ""})
		done := consume(f)
		start := time.Now()
		sources[0].out <- testBatch(0) // after quiet: at once
		synctest.Wait()
		sources[1].out <- testBatch(0) // held for the interval
		sources[0].out <- testBatch(1) // taken once batch 0 was handed over, and held
		sources[1].out <- testBatch(1) // waits at the source: cluster 1 has a batch held
		close(sources[0].out)
		close(sources[1].out)
		got := <-done
		checkOrder(t, got, 2, 2)
		want := []time.Duration{0, testInterval, 2 * testInterval}
		var at []time.Duration
		for _, d := range got {
			at = append(at, d.at.Sub(start))
		}
		if !slices.Equal(at, want) {
			t.Fatalf("deliveries at %v, want %v", at, want)
		}
	})
}

// TestFanInCancelDrains: when ctx ends, nothing more is delivered, the sources are drained so
// that their coalescers can stop (none of their sends blocks), and Batches closes only once
// every source has: a closed Batches means nothing runs any more.
func TestFanInCancelDrains(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		sources := testSources(3)
		f := Join(ctx, sources, make([]string, 3))
		batches := f.Batches()
		for _, s := range sources {
			s.out <- testBatch(0) // one delivered at once, the others held
		}
		cancel()
		for _, s := range sources {
			for seq := range 5 {
				s.out <- testBatch(seq) // would block forever without the drain
			}
		}
		synctest.Wait()
		select {
		case bs, ok := <-batches:
			t.Fatalf("Batches gave %d batches (open: %t) after ctx ended, before every source closed", len(bs), ok)
		default:
		}
		for _, s := range sources[:2] {
			close(s.out)
		}
		synctest.Wait()
		select {
		case _, ok := <-batches:
			t.Fatalf("Batches ended (open: %t) while a source still runs", ok)
		default:
		}
		close(sources[2].out)
		if _, ok := <-batches; ok {
			t.Fatal("Batches gave a batch after ctx ended")
		}
	})
}

// TestFanInOfOneAddsNoHold: a fleet of one cluster is its source, whose coalescer paces its
// batches already: each is handed over as soon as the dashboard takes it, however soon after the
// last.
func TestFanInOfOneAddsNoHold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		sources := testSources(1)
		f := Join(ctx, sources, []string{""})
		done := consume(f)
		start := time.Now()
		for seq := range 3 {
			sources[0].out <- testBatch(seq)
		}
		close(sources[0].out)
		got := <-done
		checkOrder(t, got, 1, 3)
		for i, d := range got {
			if !d.at.Equal(start) {
				t.Errorf("delivery %d at +%s, want at once", i, d.at.Sub(start))
			}
		}
	})
}
