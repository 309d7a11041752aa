package kube

import (
	"context"
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"doomwatch/contract"
)

// listFunc and watchFunc are one resource's list and watch calls in one namespace.
type (
	listFunc  func(context.Context, metav1.ListOptions) (runtime.Object, error)
	watchFunc func(context.Context, metav1.ListOptions) (watch.Interface, error)
)

// workloadRow is one workload kind as kube watches it: how it is listed and watched, and what its
// informer keeps of each object (transform.go). The source wires every row the same way and hands
// its objects over as contract.Objects, so a workload kind is one row here and one file in model/
// (kubectl's StatusViewerFor and kstatus's legacyTypes keep their kinds in tables the same way).
type workloadRow struct {
	kind contract.Kind
	// client is the kind's typed list and watch in namespace ns ("" for all).
	client func(c kubernetes.Interface, ns string) (listFunc, watchFunc)
	// trim is the informer's transform of one object: what the model reads of it.
	trim func(t *trimmer, obj any) any
}

// workloadRows are the workload kinds, in the order the source lists them: owners before what
// they own is not needed (the model resolves owners as they come), but ReplicaSets first lets the
// first batch group a Deployment's pods at once.
var workloadRows = []workloadRow{
	{
		kind: contract.KindReplicaSet,
		client: func(c kubernetes.Interface, ns string) (listFunc, watchFunc) {
			i := c.AppsV1().ReplicaSets(ns)
			return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return i.List(ctx, o) }, i.Watch
		},
		trim: func(t *trimmer, obj any) any { return t.replicaSet(obj.(*appsv1.ReplicaSet)) },
	},
	{
		kind: contract.KindDeployment,
		client: func(c kubernetes.Interface, ns string) (listFunc, watchFunc) {
			i := c.AppsV1().Deployments(ns)
			return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return i.List(ctx, o) }, i.Watch
		},
		trim: func(t *trimmer, obj any) any { return t.deployment(obj.(*appsv1.Deployment)) },
	},
	{
		kind: contract.KindStatefulSet,
		client: func(c kubernetes.Interface, ns string) (listFunc, watchFunc) {
			i := c.AppsV1().StatefulSets(ns)
			return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return i.List(ctx, o) }, i.Watch
		},
		trim: func(t *trimmer, obj any) any { return t.statefulSet(obj.(*appsv1.StatefulSet)) },
	},
	{
		kind: contract.KindDaemonSet,
		client: func(c kubernetes.Interface, ns string) (listFunc, watchFunc) {
			i := c.AppsV1().DaemonSets(ns)
			return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return i.List(ctx, o) }, i.Watch
		},
		trim: func(t *trimmer, obj any) any { return t.daemonSet(obj.(*appsv1.DaemonSet)) },
	},
	{
		kind: contract.KindJob,
		client: func(c kubernetes.Interface, ns string) (listFunc, watchFunc) {
			i := c.BatchV1().Jobs(ns)
			return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return i.List(ctx, o) }, i.Watch
		},
		trim: func(t *trimmer, obj any) any { return t.job(obj.(*batchv1.Job)) },
	},
}

// newObject is an empty object of row r's kind, of the type its informer makes.
func (r *workloadRow) newObject() runtime.Object {
	return contract.Info(r.kind).New().(runtime.Object)
}

// rowsByType finds a workload row by the Go type of its objects, for the transform.
var rowsByType = func() map[reflect.Type]*workloadRow {
	out := make(map[reflect.Type]*workloadRow, len(workloadRows))
	for i := range workloadRows {
		r := &workloadRows[i]
		out[reflect.TypeOf(r.newObject())] = r
	}
	return out
}()
