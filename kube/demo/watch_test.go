package demo

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	utilclock "k8s.io/utils/clock"

	"doomwatch/classify"
	"doomwatch/kube"
	"doomwatch/model"
	"doomwatch/report"
)

// TestWritesWaitForSlowWatchers writes three times as many pods as a fake watcher buffers
// while nobody reads it. Unpaced, client-go's fake tracker panics "channel full" at the 101st
// write; paced, the writes stop at half the buffer and wait, and once the watcher is read they
// resume where they stopped and every event arrives, in order.
func TestWritesWaitForSlowWatchers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs := fake.NewClientset()
	ws := watchClient(cs)
	w, err := cs.CoreV1().Pods("").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	n := 3 * int(watch.DefaultChanSize)
	want := map[string]*corev1.Pod{}
	for i := range n {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("p-%03d", i)}}
		want[objectKey(p.Namespace, p.Name)] = p
	}
	have := map[string]*corev1.Pod{}
	pods := func(ns string) kindClient[*corev1.Pod] { return cs.CoreV1().Pods(ns) }

	// Nobody reads: the first write that finds no room gives up (by cancelling its own context)
	// instead of waiting, so this runs in one goroutine and shows where the writes stopped.
	stalled, giveUp := context.WithCancel(ctx)
	err = syncNamespaced(stalled, want, have, pods, func() error {
		if !ws.room("pods") {
			giveUp()
		}
		return ws.wait(stalled, "pods")
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("sync with an unread watcher = %v, want it stopped waiting for room", err)
	}
	if buffered, limit := len(w.ResultChan()), int(watch.DefaultChanSize)/2+1; buffered != limit || len(have) != limit {
		t.Fatalf("%d events buffered, %d pods written; want writes stopped at %d", buffered, len(have), limit)
	}

	// Now the informer reads: the writes resume where they stopped.
	done := make(chan error, 1)
	go func() {
		done <- syncNamespaced(ctx, want, have, pods, func() error { return ws.wait(ctx, "pods") })
	}()
	var got []string
	for len(got) < n {
		select {
		case ev := <-w.ResultChan():
			if ev.Type != watch.Added {
				t.Fatalf("event %d is %s, want Added", len(got), ev.Type)
			}
			got = append(got, ev.Object.(*corev1.Pod).Name)
		case <-ctx.Done():
			t.Fatalf("received %d of %d events", len(got), n)
		}
	}
	if err := <-done; err != nil {
		t.Fatalf("sync: %v", err)
	}
	if !sort.StringsAreSorted(got) || got[0] != "p-000" || got[n-1] != fmt.Sprintf("p-%03d", n-1) {
		t.Errorf("events out of order or missing: first %s, last %s", got[0], got[n-1])
	}
}

// TestWritesWaitForAWatcher: a write with nobody watching yet would be replayed into the
// informer's watcher all at once when it opens, so writes wait for one.
func TestWritesWaitForAWatcher(t *testing.T) {
	cs := fake.NewClientset()
	ws := watchClient(cs)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	waitCtx, cancelWait := context.WithCancel(ctx)
	waited := make(chan error, 1)
	go func() { waited <- ws.wait(waitCtx, "pods") }()

	// Open a watch on nodes: pods still have no watcher, so the wait goes on until cancelled.
	nw, err := cs.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer nw.Stop()
	cancelWait()
	if err := <-waited; err == nil {
		t.Fatal("wait returned with no pod watcher open")
	}

	pw, err := cs.CoreV1().Pods("shop").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.wait(ctx, "pods"); err != nil {
		t.Fatalf("wait with a pod watcher open: %v", err)
	}
	// A stopped watcher no longer counts: the informer that opened it has moved on.
	pw.Stop()
	stopped, cancelStopped := context.WithCancel(ctx)
	cancelStopped()
	if err := ws.wait(stopped, "pods"); err == nil {
		t.Fatal("wait counted a stopped watcher as open")
	}
}

// TestLiveAtHighSpeed plays the whole scenario in live mode at --speed 250 (the simulated
// hour in about fifteen seconds) through the real informers. Not faster: node-3's failures count
// for 15 simulated minutes, which at 1000 is 0.9 s of the wall clock, and a race-enabled run that
// shares two cores with the e2e suite's control planes was starved that long (CI: node-3 never
// seen suspect, all else there); at 250 the window is 3.6 s. The engine then writes the story's
// steps a few milliseconds apart, thousands of writes in all: nothing panics, the source stays up
// to the end, and every part of the story reaches the model: node-3 (and no other node) turns
// suspect, payments and search are doomed, checkout completes, and the CronJob's history holds
// its last 3 runs.
func TestLiveAtHighSpeed(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	src, err := Start(ctx, Options{Seed: 1, Speed: 250, Interval: 20 * time.Millisecond})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	// The CronJob's last run starts at 58m (every 5m from 3m, up to the horizon) and completes 25s
	// later: its pod in the model means the whole scenario has been played.
	lastRun := fmt.Sprintf("ledger-export-%d-", Epoch.Add(58*time.Minute).Unix()/60)
	m := model.New(model.DefaultConfig())
	node3Suspect := false
	var verdicts map[string]classify.RolloutClass
	for {
		select {
		case <-ctx.Done():
			t.Fatalf("at %s: node-3 suspect seen %v, rollouts %v, %d CronJob runs, last run done %v",
				src.Now().Sub(Epoch), node3Suspect, verdicts, cronRuns(m, src.Now()), completed(m, src.Now(), lastRun))
		case b, ok := <-src.Batches():
			if !ok {
				t.Fatalf("batches closed: %v", src.Err())
			}
			now := src.Now()
			m.Apply(&b, now)
			for _, n := range m.Nodes(now) {
				if n.Suspect && n.Name != "node-3" {
					t.Fatalf("%s suspect at %s: %s", n.Name, now.Sub(Epoch), n.Why)
				}
				node3Suspect = node3Suspect || n.Suspect
			}
			verdicts = map[string]classify.RolloutClass{}
			for _, r := range m.Rollouts() {
				verdicts[r.Namespace+"/"+r.Name] = r.Verdict
			}
			if completed(m, now, lastRun) && node3Suspect &&
				verdicts["shop/payments"] == classify.RolloutDoomed && verdicts["search/search"] == classify.RolloutDoomed &&
				verdicts["shop/checkout"] == classify.RolloutComplete && cronRuns(m, now) == 3 {
				return
			}
		}
	}
}

// cronRuns counts the demo CronJob's completed pods.
func cronRuns(m *model.Model, now time.Time) int {
	n := 0
	for _, p := range report.NewSnapshot(m, "demo", now).Pods {
		if strings.HasPrefix(p.Name, "ledger-export-") && p.Verdict == "completed" {
			n++
		}
	}
	return n
}

// completed reports whether the model holds a completed pod whose name starts with prefix.
func completed(m *model.Model, now time.Time, prefix string) bool {
	for _, p := range report.NewSnapshot(m, "demo", now).Pods {
		if strings.HasPrefix(p.Name, prefix) && p.Verdict == "completed" {
			return true
		}
	}
	return false
}

// TestEnginePanicStopsTheSource makes a scenario step panic in live mode: the process lives
// on (the dashboard can restore the terminal), Batches closes and Err says what happened.
func TestEnginePanicStopsTheSource(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs := fake.NewClientset()
	eng := newEngine(1, Classic, cs)
	eng.advance(0)
	if err := eng.sync(ctx); err != nil {
		t.Fatal(err)
	}
	eng.watches = watchClient(cs)
	i := sort.Search(len(eng.events), func(i int) bool { return eng.events[i].at > 0 })
	eng.events[i].do = func(*world, time.Duration) { panic("step exploded") }

	clk := &clock{epoch: Epoch, speed: 100, start: time.Now(), real: utilclock.RealClock{}}
	src, err := startSource(ctx, eng, clk, time.Millisecond, kube.Options{AllNamespaces: true, Interval: time.Millisecond, Now: clk.Now, Context: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	for range src.Batches() {
	}
	if ctx.Err() != nil {
		t.Fatal("the source ran until the test's deadline; want it stopped by the engine's panic")
	}
	err = src.Err()
	if err == nil || !strings.Contains(err.Error(), "step exploded") || !strings.Contains(err.Error(), "panicked") {
		t.Fatalf("Err() = %v, want the engine's panic", err)
	}
}

// TestSourceErrNilWhenCancelled: stopping a source on purpose is not an error to report.
func TestSourceErrNilWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	src, err := Start(ctx, Options{Seed: 1, Speed: 10})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	for range src.Batches() {
	}
	if err := src.Err(); err != nil {
		t.Errorf("Err() after cancel = %v, want nil", err)
	}
}
