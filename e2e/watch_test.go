package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"doomwatch/classify"
	"doomwatch/kube"
	"doomwatch/model"
)

// watcher is doomwatch's pipeline without the screen: kube.Start on a real clientset feeding a
// model.Model. One goroutine owns the model (it is not safe for concurrent use); the test reads it
// by handing that goroutine a function.
type watcher struct {
	t    *testing.T
	src  *kube.Source
	reqs chan func(*model.Model)

	mu      sync.Mutex
	changed chan struct{} // closed and replaced after every applied batch
	batches int
}

func startWatcher(t *testing.T, cfg *rest.Config, opts kube.Options) *watcher {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if opts.Interval == 0 {
		opts.Interval = 50 * time.Millisecond
	}
	src, err := kube.Start(ctx, cs, opts)
	if err != nil {
		cancel()
		t.Fatalf("kube.Start: %v", err)
	}
	w := &watcher{t: t, src: src, reqs: make(chan func(*model.Model)), changed: make(chan struct{})}
	m := model.New(model.DefaultConfig())
	done := make(chan struct{})
	go func() {
		defer close(done)
		batches := src.Batches()
		for {
			select {
			case b, ok := <-batches:
				if !ok {
					return
				}
				m.Apply(&b, src.Now())
				w.mu.Lock()
				w.batches++
				close(w.changed)
				w.changed = make(chan struct{})
				w.mu.Unlock()
			case f := <-w.reqs:
				f(m)
			case <-ctx.Done():
				return
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return w
}

// read runs f on the model's goroutine and returns when it is done.
func (w *watcher) read(f func(m *model.Model, now time.Time)) {
	done := make(chan struct{})
	w.reqs <- func(m *model.Model) {
		f(m, w.src.Now())
		close(done)
	}
	<-done
}

// waitFor waits until cond holds on the model, re-checking after every batch, or fails the test
// after timeout with a description of the model.
func (w *watcher) waitFor(what string, timeout time.Duration, cond func(m *model.Model, now time.Time) bool) {
	w.t.Helper()
	if !w.await(timeout, cond) {
		w.t.Fatalf("timed out after %s waiting for %s; model:\n%s", timeout, what, w.describe())
	}
}

// expect is waitFor that records the failure and lets the test go on, for a step whose failure
// should not hide what the later steps show.
func (w *watcher) expect(what string, timeout time.Duration, cond func(m *model.Model, now time.Time) bool) {
	w.t.Helper()
	if !w.await(timeout, cond) {
		w.t.Errorf("timed out after %s waiting for %s; model:\n%s", timeout, what, w.describe())
	}
}

func (w *watcher) await(timeout time.Duration, cond func(m *model.Model, now time.Time) bool) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		w.mu.Lock()
		changed := w.changed
		w.mu.Unlock()
		var ok bool
		w.read(func(m *model.Model, now time.Time) { ok = cond(m, now) })
		if ok {
			return true
		}
		select {
		case <-changed:
		case <-deadline.C:
			return false
		}
	}
}

// describe renders the model for a failure message.
func (w *watcher) describe() string {
	var b strings.Builder
	w.read(func(m *model.Model, now time.Time) {
		h := m.Health()
		fmt.Fprintf(&b, "health: synced=%v watchError=%q forbidden=%v podsSeen=%d\n", h.Synced, h.WatchError, h.Forbidden, h.PodsSeen)
		for _, p := range m.View(model.Query{Sort: model.ByName}) {
			fmt.Fprintf(&b, "pod %s node=%s verdict=%s reason=%q\n", p.Key, p.Node, p.Verdict.Class, p.Verdict.Reason)
		}
		for _, n := range m.Nodes(now) {
			fmt.Fprintf(&b, "node %s known=%v failures=%d failedPods=%d suspect=%v why=%q\n", n.Name, n.Known, n.Failures, n.FailedPods, n.Suspect, n.Why)
		}
		for _, f := range m.Failures(now) {
			fmt.Fprintf(&b, "failure %s/%s node=%s restarts=%d finishedAt=%s\n", f.Pod, f.Container, f.Node, f.RestartCount, f.FinishedAt.Format(time.RFC3339))
		}
	})
	return b.String()
}

// Conditions over the model, composable in waitFor.

func synced(m *model.Model) bool { return m.Health().Synced }

func verdictIs(key string, k classify.Class) func(*model.Model) bool {
	return func(m *model.Model) bool {
		p := m.Pod(key)
		return p != nil && p.Verdict.Class == k
	}
}

func nodeOf(m *model.Model, now time.Time, name string) (model.Node, bool) {
	for _, n := range m.Nodes(now) {
		if n.Name == name {
			return n, true
		}
	}
	return model.Node{}, false
}

func all(conds ...func(*model.Model) bool) func(*model.Model, time.Time) bool {
	return func(m *model.Model, _ time.Time) bool {
		for _, c := range conds {
			if !c(m) {
				return false
			}
		}
		return true
	}
}
