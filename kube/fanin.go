package kube

import (
	"context"
	"sync"
	"time"

	"doomwatch/contract"
)

// fanIn hands the batches of a fleet's sources on together, at most one hand-over per interval:
// whatever the clusters delivered since the last one, each batch marked with its cluster. The
// dashboard then applies them all and refreshes its views once per interval, as for one cluster,
// however many clusters sent a batch within it (three clusters under churn were three refreshes an
// interval, each of which reads every cluster).
//
// A batch waits for no more than one interval: the first after a quiet interval goes out at once,
// the others with the next hand-over, an interval after the last. Each source's own coalescer
// already holds its batches an interval apart, so a hand-over has at most one batch of a cluster:
// a cluster's next batch is read only once its previous one has been handed over. While the
// consumer is slow, each source keeps coalescing its cluster's changes (the latest object per key
// wins), as it does for a single cluster, rather than the fan-in queueing batch after batch.
//
// out is closed once every source has closed and what they delivered has been handed over. When
// ctx ends, what is not handed over yet is dropped and the sources are drained until they close,
// so that their coalescers can stop and a closed out means nothing runs any more.
func fanIn(ctx context.Context, sources []*Source, interval time.Duration, out chan<- []contract.Batch) {
	in := make(chan contract.Batch)
	// handed[i] says cluster i's batch has been handed over: its forwarder may read the next.
	handed := make([]chan struct{}, len(sources))
	var wg sync.WaitGroup
	for i, s := range sources {
		handed[i] = make(chan struct{}, 1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			forward(ctx, s, i, in, handed[i])
		}()
	}
	go func() {
		wg.Wait()
		close(in)
	}()
	go func() {
		defer close(out)
		collect(ctx, in, handed, interval, out)
		// Until every forwarder has returned, each of them draining its source.
		for range in {
		}
	}()
}

// forward passes source s's batches, marked as cluster i's, to in, one at a time: each after the
// previous one was handed over.
func forward(ctx context.Context, s *Source, i int, in chan<- contract.Batch, handed <-chan struct{}) {
	defer func() {
		// Drain, so the source's coalescer can stop; nothing is read after ctx ends.
		for range s.Batches() {
		}
	}()
	for b := range s.Batches() {
		b.Cluster = i
		select {
		case in <- b:
		case <-ctx.Done():
			return
		}
		select {
		case <-handed:
		case <-ctx.Done():
			return
		}
	}
}

// collect gathers the batches from in and hands them to out, at most once per interval, until in
// closes or ctx ends. in closes once every forwarder has returned, each after its last batch was
// handed over: nothing is pending then.
func collect(ctx context.Context, in <-chan contract.Batch, handed []chan struct{}, interval time.Duration, out chan<- []contract.Batch) {
	var pending []contract.Batch
	var last time.Time // when the consumer took the last hand-over
	timer := time.NewTimer(interval)
	timer.Stop()
	defer timer.Stop()
	for {
		var send chan<- []contract.Batch
		var due <-chan time.Time
		if len(pending) > 0 {
			if wait := interval - time.Since(last); wait > 0 {
				timer.Reset(wait)
				due = timer.C
			} else {
				send = out
			}
		}
		select {
		case b, ok := <-in:
			if !ok {
				return
			}
			pending = append(pending, b)
		case <-due:
		case send <- pending:
			last = time.Now()
			for _, b := range pending {
				handed[b.Cluster] <- struct{}{}
			}
			pending = nil
		case <-ctx.Done():
			return
		}
	}
}
