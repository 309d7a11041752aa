package demo

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	utilclock "k8s.io/utils/clock"

	"doomwatch/contract"
	"doomwatch/model"
	"doomwatch/podrec"
	"doomwatch/recording"
	"doomwatch/replay"
	"doomwatch/report"
)

// stepClock is the real time a live demo follows in these tests (Options.real). It stands still
// until the test moves it to the engine's next wake-up, so that the live path (the engine waiting
// for each step's time on the clock, its writes, the informers, the coalescer) plays the story at
// any --speed without the test waiting for it.
type stepClock struct {
	mu    sync.Mutex
	now   time.Time
	timer *stepTimer    // the engine's pending wait; nil while it works
	armed chan struct{} // a value each time the engine starts to wait
}

func newStepClock(now time.Time) *stepClock {
	return &stepClock{now: now, armed: make(chan struct{}, 1)}
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *stepClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

func (c *stepClock) NewTimer(d time.Duration) utilclock.Timer {
	c.mu.Lock()
	t := &stepTimer{c: c, at: c.now.Add(d), ch: make(chan time.Time, 1)}
	c.timer = t
	c.mu.Unlock()
	select {
	case c.armed <- struct{}{}:
	default:
	}
	return t
}

// next waits until the engine waits for its next step, and says until when.
func (c *stepClock) next(ctx context.Context) (time.Time, error) {
	for {
		select {
		case <-c.armed:
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		}
		c.mu.Lock()
		t := c.timer
		c.mu.Unlock()
		if t != nil {
			return t.at, nil
		}
	}
}

// fire moves the clock to the engine's wake-up, which wakes it.
func (c *stepClock) fire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.timer
	c.timer, c.now = nil, t.at
	t.ch <- t.at
}

type stepTimer struct {
	c  *stepClock
	at time.Time
	ch chan time.Time
}

func (t *stepTimer) C() <-chan time.Time { return t.ch }

func (t *stepTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	if t.c.timer != t {
		return false
	}
	t.c.timer = nil
	return true
}

func (t *stepTimer) Reset(d time.Duration) bool {
	active := t.Stop()
	t.c.mu.Lock()
	t.at, t.c.timer = t.c.now.Add(d), t
	t.c.mu.Unlock()
	select {
	case t.c.armed <- struct{}{}:
	default:
	}
	return active
}

// delivered is what the informers have handed over: the latest version of every object the
// batches carried, as the model holds it.
type delivered struct {
	synced  bool
	pods    map[string]*podrec.Record
	nodes   map[string]*corev1.Node
	rss     map[string]*appsv1.ReplicaSet
	deploys map[string]*appsv1.Deployment
	stss    map[string]*appsv1.StatefulSet
	dss     map[string]*appsv1.DaemonSet
	jobs    map[string]*batchv1.Job
	events  map[string]*corev1.Event
}

func newDelivered() *delivered {
	return &delivered{pods: map[string]*podrec.Record{}, nodes: map[string]*corev1.Node{}, rss: map[string]*appsv1.ReplicaSet{},
		deploys: map[string]*appsv1.Deployment{}, stss: map[string]*appsv1.StatefulSet{}, dss: map[string]*appsv1.DaemonSet{},
		jobs: map[string]*batchv1.Job{}, events: map[string]*corev1.Event{}}
}

func (d *delivered) apply(b *contract.Batch) {
	if b.Health != nil && b.Health.Synced {
		d.synced = true
	}
	for _, p := range b.Pods {
		d.pods[objectKey(p.GetNamespace(), p.GetName())] = p
	}
	for _, o := range b.Nodes {
		d.nodes[o.Name] = o
	}
	for _, o := range b.Workloads {
		k := objectKey(o.Obj.GetNamespace(), o.Obj.GetName())
		switch x := o.Obj.(type) {
		case *appsv1.ReplicaSet:
			d.rss[k] = x
		case *appsv1.Deployment:
			d.deploys[k] = x
		case *appsv1.StatefulSet:
			d.stss[k] = x
		case *appsv1.DaemonSet:
			d.dss[k] = x
		case *batchv1.Job:
			d.jobs[k] = x
		}
	}
	for _, o := range b.Events {
		d.events[objectKey(o.Namespace, o.Name)] = o
	}
	for _, r := range b.Deletes {
		k := objectKey(r.Namespace, r.Name)
		switch r.Kind {
		case contract.KindPod:
			delete(d.pods, k)
		case contract.KindNode:
			delete(d.nodes, k)
		case contract.KindReplicaSet:
			delete(d.rss, k)
		case contract.KindDeployment:
			delete(d.deploys, k)
		case contract.KindStatefulSet:
			delete(d.stss, k)
		case contract.KindDaemonSet:
			delete(d.dss, k)
		case contract.KindJob:
			delete(d.jobs, k)
		case contract.KindEvent:
			delete(d.events, k)
		}
	}
}

// lacks names an object written into the clientset (w) whose latest version the batches have not
// carried yet, "" when they carried them all. It compares what the informers keep of each kind: a
// pod's record as the pod informer makes it, and the status of the others (a node's conditions
// without the heartbeat, an event's count, time and message), which is what the demo's
// controllers and kubelets write.
func (d *delivered) lacks(w *world) string {
	in := podrec.NewInterner()
	if s := lacksKind("pod", w.pods, d.pods, func(want *corev1.Pod, got *podrec.Record) bool { return in.Pod(want).SameContent(got) }); s != "" {
		return s
	}
	nodeConds := func(n *corev1.Node) []corev1.NodeCondition {
		out := slices.Clone(n.Status.Conditions)
		for i := range out {
			out[i] = corev1.NodeCondition{Type: out[i].Type, Status: out[i].Status, Reason: out[i].Reason, Message: out[i].Message, LastTransitionTime: out[i].LastTransitionTime}
		}
		return out
	}
	same := equality.Semantic.DeepEqual
	for _, s := range []string{
		lacksKind("node", w.nodes, d.nodes, func(want, got *corev1.Node) bool { return same(nodeConds(want), nodeConds(got)) }),
		lacksKind("replicaset", w.rss, d.rss, func(want, got *appsv1.ReplicaSet) bool {
			return same(want.Status, got.Status) && *want.Spec.Replicas == *got.Spec.Replicas
		}),
		lacksKind("deployment", w.deploys, d.deploys, func(want, got *appsv1.Deployment) bool {
			return same(want.Status, got.Status) && want.Generation == got.Generation
		}),
		lacksKind("statefulset", w.stss, d.stss, func(want, got *appsv1.StatefulSet) bool { return same(want.Status, got.Status) }),
		lacksKind("daemonset", w.dss, d.dss, func(want, got *appsv1.DaemonSet) bool { return same(want.Status, got.Status) }),
		lacksKind("job", w.jobs, d.jobs, func(want, got *batchv1.Job) bool { return same(want.Status, got.Status) }),
		lacksKind("event", w.events, d.events, func(want, got *corev1.Event) bool {
			return want.Count == got.Count && want.Message == got.Message && want.LastTimestamp.Equal(&got.LastTimestamp)
		}),
	} {
		if s != "" {
			return s
		}
	}
	return ""
}

func lacksKind[W, G any](kind string, want map[string]W, got map[string]G, same func(W, G) bool) string {
	for _, k := range sortedKeys(want) {
		g, ok := got[k]
		if !ok {
			return kind + " " + k + " (not seen)"
		}
		if !same(want[k], g) {
			return kind + " " + k + " (an older version)"
		}
	}
	for _, k := range sortedKeys(got) {
		if _, ok := want[k]; !ok {
			return kind + " " + k + " (its delete)"
		}
	}
	return ""
}

// recordLive records the live demo at speed into dir as `doomwatch record --demo` does (every
// batch, at the source's time when it came) until the story reaches until. The real clock is a
// stepClock: the engine waits for each step's time on it as it would in real time, and the test
// moves the clock to that time only once the batches hold everything the engine has written, as
// they would on a machine that keeps up with the story before its next step. The informers and
// the coalescer run as they do live, on the real clock. So a step is recorded at its own time,
// where live it comes a moment later (about one coalescing interval, 100ms of the story).
func recordLive(t *testing.T, dir string, speed float64, until time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	origin := time.Date(2030, time.March, 1, 0, 0, 0, 0, time.UTC) // anything but the story's time
	clk := newStepClock(origin)
	src, eng, err := start(ctx, Options{Seed: 1, Speed: speed, real: clk})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	w, err := recording.Create(dir, recording.Options{Contexts: []string{src.Context()}, Scope: src.Scope(), Start: Epoch})
	if err != nil {
		t.Fatal(err)
	}
	got := newDelivered()
	for {
		wake, err := clk.next(ctx)
		if err != nil {
			t.Fatalf("speed %g: the engine did not wait for a next step by %s", speed, src.Now().Sub(Epoch))
		}
		// The engine has written its step and waits: take the batches until they hold it all.
		for !got.synced || got.lacks(eng.written) != "" {
			select {
			case b, ok := <-src.Batches():
				if !ok {
					t.Fatalf("speed %g: the source stopped: %v", speed, src.Err())
				}
				got.apply(&b)
				if err := w.Append(src.Now(), &b); err != nil {
					t.Fatal(err)
				}
			case <-ctx.Done():
				t.Fatalf("speed %g at %s: the batches never carried %s", speed, src.Now().Sub(Epoch), got.lacks(eng.written))
			}
		}
		if time.Duration(float64(wake.Sub(origin))*speed) > until {
			break
		}
		clk.fire()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// story is what doomwatch says at one moment: every pod's verdict and reason, every rollout's
// verdict, and node-3's start failures (the count and the ledger's entries).
type story struct {
	pods, rollouts map[string]string
	node3          int
	failures       []model.Failure
}

func storyOf(f *model.Fleet, now time.Time) story {
	snap := report.NewFleetSnapshot(f, nil, nil, now)
	s := story{pods: map[string]string{}, rollouts: map[string]string{}}
	for _, p := range snap.Pods {
		s.pods[p.Namespace+"/"+p.Name] = p.Verdict + ": " + p.Reason
	}
	for _, r := range snap.Rollouts {
		s.rollouts[r.Namespace+"/"+r.Kind+"/"+r.Name] = r.Verdict
	}
	for _, n := range snap.Nodes {
		if n.Name == "node-3" {
			s.node3 = n.StartFailures
		}
	}
	for _, c := range f.Clusters() {
		for _, fl := range c.Failures(now) {
			if fl.Node == "node-3" {
				s.failures = append(s.failures, fl)
			}
		}
	}
	return s
}

// replayedAt is `doomwatch replay DIR --once --at at` (cmd/replay.go): the recording replayed
// from its start to at.
func replayedAt(t *testing.T, dir string, at time.Duration) story {
	t.Helper()
	rd, err := recording.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	f, err := replay.At(rd, model.DefaultConfig(), Epoch.Add(at))
	if err != nil {
		t.Fatalf("replay at %s: %v", at, err)
	}
	return storyOf(f, Epoch.Add(at))
}

// onceAt is `doomwatch --demo --once --at at`.
func onceAt(t *testing.T, at time.Duration) story {
	t.Helper()
	return storyOf(onceFleet(t, at))
}

// differs lists the keys whose values differ between a (named an) and b (named bn).
func differs(an string, a map[string]string, bn string, b map[string]string) []string {
	var out []string
	for _, k := range sortedKeys(a) {
		if v, ok := b[k]; !ok || v != a[k] {
			out = append(out, fmt.Sprintf("%s: %s %q, %s %q", k, an, a[k], bn, v))
		}
	}
	for _, k := range sortedKeys(b) {
		if _, ok := a[k]; !ok {
			out = append(out, fmt.Sprintf("%s: not in %s, %s %q", k, an, bn, b[k]))
		}
	}
	return out
}

// failureID is what tells one start failure from another: the container (the pod's, for a
// sandbox) and the runtime's finishedAt (zero for a sandbox failure, which is one per event).
type failureID struct {
	pod, container, reason string
	finished               time.Time
}

func failureIDs(fs []model.Failure) map[failureID]int {
	out := map[failureID]int{}
	for _, f := range fs {
		out[failureID{f.PodUID, f.Container, f.Reason, f.FinishedAt.UTC()}]++
	}
	return out
}

// TestStoryAnySpeed: the demo's story is a function of its simulated time, whatever the --speed.
// Recordings of the live demo at --speed 1, 10 and 20 (`doomwatch record --demo`), replayed at
// every second of the story's first two minutes (`doomwatch replay --once --at`), say the same
// thing at each: every pod's verdict and reason, every rollout's verdict, node-3's start failures.
// And they say what `doomwatch --demo --once --at` says of the pods and rollouts then. Of node-3's
// start failures the snapshot knows less: it sees the cluster once, as `--once` on a real cluster
// does, and a container's earlier failed start is gone from its status once it failed again
// (lastState holds the last termination only), where the recordings saw it happen. So the
// snapshot's failures are the recordings' but those, and the counts differ by exactly them.
func TestStoryAnySpeed(t *testing.T) {
	const end = 120 * time.Second
	speeds := []float64{1, 10, 20}
	recorded := map[float64]string{}
	for _, speed := range speeds {
		dir := filepath.Join(t.TempDir(), "rec")
		recordLive(t, dir, speed, end)
		recorded[speed] = dir
	}
	overwritten := 0 // earlier failures the snapshots did not see, summed over the moments
	// From 1s: --at 0s is live mode.
	for at := time.Second; at <= end; at += time.Second {
		once := onceAt(t, at)
		rec := map[float64]story{}
		for _, speed := range speeds {
			rec[speed] = replayedAt(t, recorded[speed], at)
		}
		base := rec[speeds[0]]
		for _, speed := range speeds[1:] {
			r := rec[speed]
			name := fmt.Sprintf("speed %g", speed)
			for _, d := range append(differs("speed 1", base.pods, name, r.pods), differs("speed 1", base.rollouts, name, r.rollouts)...) {
				t.Errorf("at %s, replayed: %s", at, d)
			}
			if r.node3 != base.node3 || !maps.Equal(failureIDs(r.failures), failureIDs(base.failures)) {
				t.Errorf("at %s, replayed: node-3's start failures at speed 1: %d, at speed %g: %d", at, base.node3, speed, r.node3)
			}
		}
		for _, d := range append(differs("replayed", base.pods, "--demo --once", once.pods), differs("replayed", base.rollouts, "--demo --once", once.rollouts)...) {
			t.Errorf("at %s: %s", at, d)
		}

		// node-3's start failures: the snapshot's are among the recording's, and each of the
		// recording's that the snapshot lacks is a container's failed start followed by another
		// failed start of that container, which the snapshot has.
		seen, snap := failureIDs(base.failures), failureIDs(once.failures)
		missing := 0
		for id, n := range snap {
			if seen[id] < n {
				t.Errorf("at %s: --demo --once counts a start failure of node-3 the recording does not: %+v", at, id)
			}
		}
		for id, n := range seen {
			lost := n - snap[id]
			if lost <= 0 {
				continue
			}
			missing += lost
			later := false
			for other := range snap {
				later = later || other.pod == id.pod && other.container == id.container && other.finished.After(id.finished)
			}
			if !later {
				t.Errorf("at %s: --demo --once lacks node-3's start failure %+v, and no later failure of that container", at, id)
			}
		}
		if base.node3-once.node3 != missing {
			t.Errorf("at %s: node-3's start failures replayed %d, --demo --once %d: a difference of %d, want the %d failures --once could not see",
				at, base.node3, once.node3, base.node3-once.node3, missing)
		}
		overwritten += missing
	}
	if overwritten == 0 {
		t.Error("no start failure was overwritten before a moment looked at: the story no longer has a container fail twice in a row, and this test compares less than it says")
	}
}
