package kube

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

// demoEvent is one step of the scenario: at simulated time at (since DemoEpoch), do changes the
// world the way a controller or kubelet would.
type demoEvent struct {
	at  time.Duration
	seq int // insertion order, to keep events at the same instant in the order they were planned
	do  func(w *demoWorld, at time.Duration)
}

// demoWorld is the desired content of the demo cluster: what the API server would hold. Events
// mutate it; derive fills the controller-owned status fields; sync writes the difference.
type demoWorld struct {
	nodes   map[string]*corev1.Node
	pods    map[string]*corev1.Pod
	rss     map[string]*appsv1.ReplicaSet
	deploys map[string]*appsv1.Deployment
	stss    map[string]*appsv1.StatefulSet
	dss     map[string]*appsv1.DaemonSet
	jobs    map[string]*batchv1.Job
	// progress is when each Deployment last made progress, for its progress deadline
	// (kubernetes pkg/controller/deployment/progress.go).
	progress map[string]time.Duration
}

func newDemoWorld() *demoWorld {
	return &demoWorld{
		nodes:    map[string]*corev1.Node{},
		pods:     map[string]*corev1.Pod{},
		rss:      map[string]*appsv1.ReplicaSet{},
		deploys:  map[string]*appsv1.Deployment{},
		stss:     map[string]*appsv1.StatefulSet{},
		dss:      map[string]*appsv1.DaemonSet{},
		jobs:     map[string]*batchv1.Job{},
		progress: map[string]time.Duration{},
	}
}

// demoEngine applies the scenario's events in time order and mirrors the world into a clientset.
type demoEngine struct {
	client  kubernetes.Interface
	world   *demoWorld
	events  []demoEvent
	next    int           // index of the first event not yet applied
	now     time.Duration // simulated time the world reflects
	written *demoWorld    // what the clientset holds, to write only differences
	// watches, once set (live mode), paces writes to what the informers have read; nil while
	// nothing watches yet, before the informers start.
	watches *demoWatches
}

func newDemoEngine(seed int64, client kubernetes.Interface) *demoEngine {
	w, events := buildDemoScenario(seed)
	sort.SliceStable(events, func(i, j int) bool {
		if events[i].at != events[j].at {
			return events[i].at < events[j].at
		}
		return events[i].seq < events[j].seq
	})
	e := &demoEngine{client: client, world: w, events: events, written: newDemoWorld()}
	w.derive(0)
	return e
}

// done reports whether every event has been applied.
func (e *demoEngine) done() bool { return e.next >= len(e.events) }

// advance applies the events up to simulated time t. Status is derived after every single event,
// so the world at t does not depend on how the events were grouped into ticks: live mode at any
// --speed passes through the same states as snapshots (--at) taken at its ticks.
func (e *demoEngine) advance(t time.Duration) {
	for e.next < len(e.events) && e.events[e.next].at <= t {
		ev := e.events[e.next]
		ev.do(e.world, ev.at)
		e.world.derive(ev.at)
		e.next++
	}
	if t > e.now {
		e.now = t
		e.world.derive(t)
	}
}

// sync writes the world's differences into the clientset: owners before the pods they own on
// create, pods first on delete, spec changes with Update and status changes with UpdateStatus as
// the control plane and kubelets do.
func (e *demoEngine) sync(ctx context.Context) error {
	cs := e.client
	steps := []struct {
		resource string
		sync     func(room roomFunc) error
	}{
		{"nodes", func(room roomFunc) error {
			return syncKind(ctx, e.world.nodes, e.written.nodes, cs.CoreV1().Nodes(), room)
		}},
		{"deployments", func(room roomFunc) error {
			return syncNamespaced(ctx, e.world.deploys, e.written.deploys, func(ns string) demoClient[*appsv1.Deployment] { return cs.AppsV1().Deployments(ns) }, room)
		}},
		{"replicasets", func(room roomFunc) error {
			return syncNamespaced(ctx, e.world.rss, e.written.rss, func(ns string) demoClient[*appsv1.ReplicaSet] { return cs.AppsV1().ReplicaSets(ns) }, room)
		}},
		{"statefulsets", func(room roomFunc) error {
			return syncNamespaced(ctx, e.world.stss, e.written.stss, func(ns string) demoClient[*appsv1.StatefulSet] { return cs.AppsV1().StatefulSets(ns) }, room)
		}},
		{"daemonsets", func(room roomFunc) error {
			return syncNamespaced(ctx, e.world.dss, e.written.dss, func(ns string) demoClient[*appsv1.DaemonSet] { return cs.AppsV1().DaemonSets(ns) }, room)
		}},
		{"jobs", func(room roomFunc) error {
			return syncNamespaced(ctx, e.world.jobs, e.written.jobs, func(ns string) demoClient[*batchv1.Job] { return cs.BatchV1().Jobs(ns) }, room)
		}},
		{"pods", func(room roomFunc) error {
			return syncNamespaced(ctx, e.world.pods, e.written.pods, func(ns string) demoClient[*corev1.Pod] { return cs.CoreV1().Pods(ns) }, room)
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

// roomFunc waits until one more write cannot overflow a watcher (see demoWatches).
type roomFunc func() error

// demoObject is one of the typed API objects the demo writes.
type demoObject[T any] interface {
	*T
	metav1.Object
	DeepCopy() *T
}

// demoClient is the part of a typed client the demo uses.
type demoClient[P any] interface {
	Create(ctx context.Context, obj P, opts metav1.CreateOptions) (P, error)
	Update(ctx context.Context, obj P, opts metav1.UpdateOptions) (P, error)
	UpdateStatus(ctx context.Context, obj P, opts metav1.UpdateOptions) (P, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
}

// syncKind mirrors one cluster-scoped kind.
func syncKind[T any, P demoObject[T]](ctx context.Context, want, have map[string]P, c demoClient[P], room roomFunc) error {
	return syncNamespaced(ctx, want, have, func(string) demoClient[P] { return c }, room)
}

// syncNamespaced mirrors one kind: creates what is new, updates what changed (metadata and spec
// with Update, status with UpdateStatus) and deletes what is gone, in key order. Every write
// waits for room first.
func syncNamespaced[T any, P demoObject[T]](ctx context.Context, want, have map[string]P, client func(ns string) demoClient[P], room roomFunc) error {
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
		specChanged, statusChanged := demoDiff(old, obj)
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

// demoDiff tells whether metadata/spec and status differ between the written and wanted object.
func demoDiff(old, cur any) (spec, status bool) {
	oMeta, oSpec, oStatus := demoParts(old)
	cMeta, cSpec, cStatus := demoParts(cur)
	return !equality.Semantic.DeepEqual(oMeta, cMeta) || !equality.Semantic.DeepEqual(oSpec, cSpec),
		!equality.Semantic.DeepEqual(oStatus, cStatus)
}

// demoParts splits an object into what Update writes (metadata and spec) and what UpdateStatus
// writes.
func demoParts(obj any) (meta, spec, status any) {
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
