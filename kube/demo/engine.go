package demo

import (
	"context"
	"fmt"
	"sort"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// event is one step of the scenario: at simulated time at (since Epoch), do changes the
// world the way a controller or kubelet would.
type event struct {
	at  time.Duration
	seq int // insertion order, to keep events at the same instant in the order they were planned
	do  func(w *world, at time.Duration)
}

// world is the desired content of the demo cluster: what the API server would hold. Events
// mutate it; derive fills the controller-owned status fields; sync writes the difference.
type world struct {
	nodes   map[string]*corev1.Node
	pods    map[string]*corev1.Pod
	rss     map[string]*appsv1.ReplicaSet
	deploys map[string]*appsv1.Deployment
	stss    map[string]*appsv1.StatefulSet
	dss     map[string]*appsv1.DaemonSet
	jobs    map[string]*batchv1.Job
	crons   map[string]*batchv1.CronJob
	// events are the Warning events posted about the pods and nodes (events.go).
	events map[string]*corev1.Event
	// synced is when the deployment controller last changed each Deployment's status: its last
	// sync with work to do, from which it schedules the next look at the progress deadline
	// (progressCheck).
	synced map[string]time.Duration
}

func newWorld() *world {
	return &world{
		nodes:   map[string]*corev1.Node{},
		pods:    map[string]*corev1.Pod{},
		rss:     map[string]*appsv1.ReplicaSet{},
		deploys: map[string]*appsv1.Deployment{},
		stss:    map[string]*appsv1.StatefulSet{},
		dss:     map[string]*appsv1.DaemonSet{},
		jobs:    map[string]*batchv1.Job{},
		crons:   map[string]*batchv1.CronJob{},
		events:  map[string]*corev1.Event{},
		synced:  map[string]time.Duration{},
	}
}

// engine applies the scenario's events in time order and mirrors the world into a clientset.
type engine struct {
	client  kubernetes.Interface
	world   *world
	events  []event
	next    int    // index of the first event not yet applied
	written *world // what the clientset holds, to write only differences
	// watches, once set (live mode), paces writes to what the informers have read; nil while
	// nothing watches yet, before the informers start.
	watches *watches
}

func newEngine(seed int64, v Variant, client kubernetes.Interface) *engine {
	w, events := buildScenario(seed, v)
	sort.SliceStable(events, func(i, j int) bool {
		if events[i].at != events[j].at {
			return events[i].at < events[j].at
		}
		return events[i].seq < events[j].seq
	})
	e := &engine{client: client, world: w, events: events, written: newWorld()}
	w.derive(0)
	return e
}

// nextStep is the simulated time of the engine's next step: the scenario's next event, or a controller's next look at the world with nothing else changed
// (the deployment controller checking a progress deadline), whichever comes first. ok is false when
// neither will ever come: the story is over.
func (e *engine) nextStep() (at time.Duration, ok bool) {
	if e.next < len(e.events) {
		at, ok = e.events[e.next].at, true
	}
	if c, found := e.world.nextProgressCheck(); found && (!ok || c < at) {
		at, ok = c, true
	}
	return at, ok
}

// step moves the world to the step at at (nextStep's): it applies the scenario's events at at in
// the order they were planned, the controllers deriving their status after each single event, or,
// with no event then, lets the controllers look.
func (e *engine) step(at time.Duration) {
	applied := false
	for e.next < len(e.events) && e.events[e.next].at <= at {
		ev := e.events[e.next]
		ev.do(e.world, ev.at)
		e.world.derive(ev.at)
		e.next++
		applied = true
	}
	if !applied {
		e.world.derive(at)
	}
}

// advance moves the world to simulated time t, step by step: the world at t is the one after
// every step up to t, whoever asks and however often. A snapshot (--at) and live mode at any
// --speed pass through the same states, at the same simulated times.
func (e *engine) advance(t time.Duration) {
	for {
		at, ok := e.nextStep()
		if !ok || at > t {
			return
		}
		e.step(at)
	}
}

// sync writes the world's differences into the clientset: owners before the pods they own on
// create, pods first on delete, spec changes with Update and status changes with UpdateStatus as
// the control plane and kubelets do.
func (e *engine) sync(ctx context.Context) error {
	cs := e.client
	steps := []struct {
		resource string
		sync     func(room roomFunc) error
	}{
		{"nodes", func(room roomFunc) error {
			return syncKind(ctx, e.world.nodes, e.written.nodes, cs.CoreV1().Nodes(), room)
		}},
		{"deployments", func(room roomFunc) error {
			return syncNamespaced(ctx, e.world.deploys, e.written.deploys, func(ns string) kindClient[*appsv1.Deployment] { return cs.AppsV1().Deployments(ns) }, room)
		}},
		{"replicasets", func(room roomFunc) error {
			return syncNamespaced(ctx, e.world.rss, e.written.rss, func(ns string) kindClient[*appsv1.ReplicaSet] { return cs.AppsV1().ReplicaSets(ns) }, room)
		}},
		{"statefulsets", func(room roomFunc) error {
			return syncNamespaced(ctx, e.world.stss, e.written.stss, func(ns string) kindClient[*appsv1.StatefulSet] { return cs.AppsV1().StatefulSets(ns) }, room)
		}},
		{"daemonsets", func(room roomFunc) error {
			return syncNamespaced(ctx, e.world.dss, e.written.dss, func(ns string) kindClient[*appsv1.DaemonSet] { return cs.AppsV1().DaemonSets(ns) }, room)
		}},
		{"cronjobs", func(room roomFunc) error {
			return syncNamespaced(ctx, e.world.crons, e.written.crons, func(ns string) kindClient[*batchv1.CronJob] { return cs.BatchV1().CronJobs(ns) }, room)
		}},
		{"jobs", func(room roomFunc) error {
			return syncNamespaced(ctx, e.world.jobs, e.written.jobs, func(ns string) kindClient[*batchv1.Job] { return cs.BatchV1().Jobs(ns) }, room)
		}},
		{"pods", func(room roomFunc) error {
			return syncNamespaced(ctx, e.world.pods, e.written.pods, func(ns string) kindClient[*corev1.Pod] { return cs.CoreV1().Pods(ns) }, room)
		}},
		// Events after the pods they are about, as they are posted after what they report.
		{"events", func(room roomFunc) error {
			return syncNamespaced(ctx, e.world.events, e.written.events, func(ns string) kindClient[*corev1.Event] {
				return eventClient{cs.CoreV1().Events(ns)}
			}, room)
		}},
	}
	for _, step := range steps {
		room := func() error { return nil }
		if e.watches != nil {
			room = func() error { return e.watches.wait(ctx, step.resource) }
		}
		if err := step.sync(room); err != nil {
			return err
		}
	}
	// client-go's fake clientset records every action for test assertions and never forgets
	// them; a demo left running for hours would grow without bound.
	if f, ok := e.client.(interface{ ClearActions() }); ok {
		f.ClearActions()
	}
	return nil
}

// roomFunc waits until one more write cannot overflow a watcher (see watches).
type roomFunc func() error

// object is one of the typed API objects the demo writes.
type object[T any] interface {
	*T
	metav1.Object
	DeepCopy() *T
}

// kindClient is the part of a typed client the demo uses.
type kindClient[P any] interface {
	Create(ctx context.Context, obj P, opts metav1.CreateOptions) (P, error)
	Update(ctx context.Context, obj P, opts metav1.UpdateOptions) (P, error)
	UpdateStatus(ctx context.Context, obj P, opts metav1.UpdateOptions) (P, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
}

// syncKind mirrors one cluster-scoped kind.
func syncKind[T any, P object[T]](ctx context.Context, want, have map[string]P, c kindClient[P], room roomFunc) error {
	return syncNamespaced(ctx, want, have, func(string) kindClient[P] { return c }, room)
}

// syncNamespaced mirrors one kind: creates what is new, updates what changed (metadata and spec
// with Update, status with UpdateStatus) and deletes what is gone, in key order. Every write
// waits for room first.
func syncNamespaced[T any, P object[T]](ctx context.Context, want, have map[string]P, client func(ns string) kindClient[P], room roomFunc) error {
	for _, k := range sortedKeys(have) {
		if _, ok := want[k]; ok {
			continue
		}
		old := have[k]
		if err := room(); err != nil {
			return err
		}
		if err := client(old.GetNamespace()).Delete(ctx, old.GetName(), metav1.DeleteOptions{}); err != nil {
			return fmt.Errorf("deleting %s: %w", k, err)
		}
		delete(have, k)
	}
	for _, k := range sortedKeys(want) {
		obj := want[k]
		c := client(obj.GetNamespace())
		old, ok := have[k]
		if !ok {
			if err := room(); err != nil {
				return err
			}
			if _, err := c.Create(ctx, obj.DeepCopy(), metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("creating %s: %w", k, err)
			}
			have[k] = obj.DeepCopy()
			continue
		}
		specChanged, statusChanged := diff(old, obj)
		if specChanged {
			if err := room(); err != nil {
				return err
			}
			if _, err := c.Update(ctx, obj.DeepCopy(), metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("updating %s: %w", k, err)
			}
		}
		if statusChanged {
			if err := room(); err != nil {
				return err
			}
			if _, err := c.UpdateStatus(ctx, obj.DeepCopy(), metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("updating status of %s: %w", k, err)
			}
		}
		if specChanged || statusChanged {
			have[k] = obj.DeepCopy()
		}
	}
	return nil
}

// diff tells whether metadata/spec and status differ between the written and wanted object.
func diff(old, cur any) (spec, status bool) {
	oMeta, oSpec, oStatus := parts(old)
	cMeta, cSpec, cStatus := parts(cur)
	return !equality.Semantic.DeepEqual(oMeta, cMeta) || !equality.Semantic.DeepEqual(oSpec, cSpec),
		!equality.Semantic.DeepEqual(oStatus, cStatus)
}

// parts splits an object into what Update writes (metadata and spec) and what UpdateStatus
// writes.
func parts(obj any) (meta, spec, status any) {
	switch o := obj.(type) {
	case *corev1.Pod:
		return o.ObjectMeta, o.Spec, o.Status
	case *corev1.Node:
		return o.ObjectMeta, o.Spec, o.Status
	case *appsv1.ReplicaSet:
		return o.ObjectMeta, o.Spec, o.Status
	case *appsv1.Deployment:
		return o.ObjectMeta, o.Spec, o.Status
	case *appsv1.StatefulSet:
		return o.ObjectMeta, o.Spec, o.Status
	case *appsv1.DaemonSet:
		return o.ObjectMeta, o.Spec, o.Status
	case *batchv1.Job:
		return o.ObjectMeta, o.Spec, o.Status
	case *batchv1.CronJob:
		return o.ObjectMeta, o.Spec, o.Status
	case *corev1.Event:
		// All of an Event but its metadata is written with Update; it has no status.
		rest := *o
		rest.ObjectMeta = metav1.ObjectMeta{}
		return o.ObjectMeta, rest, nil
	}
	panic(fmt.Sprintf("demo: unexpected object %T", obj))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
