package kube

import (
	"context"
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"doomwatch/contract"
)

// listFunc and watchFunc are one resource's list and watch calls in one namespace.
type (
	listFunc  func(context.Context, metav1.ListOptions) (runtime.Object, error)
	watchFunc func(context.Context, metav1.ListOptions) (watch.Interface, error)
)

// clients are the clients a row lists and watches with: the typed clientset, and the dynamic
// client for custom resources (nil when the source has none: the demo, unit tests).
type clients struct {
	typed   kubernetes.Interface
	dynamic dynamic.Interface
	// discovery answers which custom resources are served; its requests are bounded, so an API
	// server that never answers cannot hold a request (and its connection) open for ever.
	discovery discovery.DiscoveryInterface
}

// workloadRow is one workload kind as kube watches it: how it is listed and watched, and what its
// informer keeps of each object (transform.go). The source wires every row the same way and hands
// its objects over as contract.Objects, so a workload kind is one row here and one file in model/
// (kubectl's StatusViewerFor and kstatus's legacyTypes keep their kinds in tables the same way).
type workloadRow struct {
	kind contract.Kind
	// client is the kind's list and watch in namespace ns ("" for all).
	client func(c clients, ns string) (listFunc, watchFunc)
	// trim is the informer's transform of one object: what the model reads of it.
	trim func(t *trimmer, obj any) any
}

// workloadRows are the workload kinds, in the order the source lists them: owners before what
// they own is not needed (the model resolves owners as they come), but ReplicaSets first lets the
// first batch group a Deployment's pods at once.
var workloadRows = []workloadRow{
	{
		kind: contract.KindReplicaSet,
		client: func(c clients, ns string) (listFunc, watchFunc) {
			i := c.typed.AppsV1().ReplicaSets(ns)
			return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return i.List(ctx, o) }, i.Watch
		},
		trim: func(t *trimmer, obj any) any { return t.replicaSet(obj.(*appsv1.ReplicaSet)) },
	},
	{
		kind: contract.KindDeployment,
		client: func(c clients, ns string) (listFunc, watchFunc) {
			i := c.typed.AppsV1().Deployments(ns)
			return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return i.List(ctx, o) }, i.Watch
		},
		trim: func(t *trimmer, obj any) any { return t.deployment(obj.(*appsv1.Deployment)) },
	},
	{
		kind: contract.KindStatefulSet,
		client: func(c clients, ns string) (listFunc, watchFunc) {
			i := c.typed.AppsV1().StatefulSets(ns)
			return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return i.List(ctx, o) }, i.Watch
		},
		trim: func(t *trimmer, obj any) any { return t.statefulSet(obj.(*appsv1.StatefulSet)) },
	},
	{
		kind: contract.KindDaemonSet,
		client: func(c clients, ns string) (listFunc, watchFunc) {
			i := c.typed.AppsV1().DaemonSets(ns)
			return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return i.List(ctx, o) }, i.Watch
		},
		trim: func(t *trimmer, obj any) any { return t.daemonSet(obj.(*appsv1.DaemonSet)) },
	},
	{
		kind: contract.KindJob,
		client: func(c clients, ns string) (listFunc, watchFunc) {
			i := c.typed.BatchV1().Jobs(ns)
			return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return i.List(ctx, o) }, i.Watch
		},
		trim: func(t *trimmer, obj any) any { return t.job(obj.(*batchv1.Job)) },
	},
	{
		kind: contract.KindCronJob,
		client: func(c clients, ns string) (listFunc, watchFunc) {
			i := c.typed.BatchV1().CronJobs(ns)
			return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return i.List(ctx, o) }, i.Watch
		},
		trim: func(t *trimmer, obj any) any { return t.cronJob(obj.(*batchv1.CronJob)) },
	},
	{
		kind:   contract.KindRollout,
		client: dynamicClient(contract.KindRollout),
		trim:   func(t *trimmer, obj any) any { return t.argoRollout(obj.(*unstructured.Unstructured)) },
	},
}

// dynamicClient lists and watches a custom resource kind through the dynamic client, by its row
// of contract.Kinds.
func dynamicClient(kind contract.Kind) func(c clients, ns string) (listFunc, watchFunc) {
	return func(c clients, ns string) (listFunc, watchFunc) {
		info := contract.Info(kind)
		gvr := schema.GroupVersionResource{Group: info.Group, Version: info.Version, Resource: info.Resource}
		i := c.dynamic.Resource(gvr).Namespace(ns)
		return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return i.List(ctx, o) }, i.Watch
	}
}

// served reports whether the cluster serves row r: always for the built-in kinds; for a custom
// resource, when there is a dynamic client and the API server's discovery lists its resource in
// its group and version (a cluster without the CRD answers 404, and is not an error).
func (r *workloadRow) served(c clients) (bool, error) {
	info := contract.Info(r.kind)
	if !info.Optional {
		return true, nil
	}
	if c.dynamic == nil {
		return false, nil
	}
	list, err := c.discovery.ServerResourcesForGroupVersion(info.APIVersion())
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, err
	}
	for _, res := range list.APIResources {
		if res.Name == info.Resource {
			return true, nil
		}
	}
	return false, nil
}

// newObject is an empty object of row r's kind, of the type its informer makes.
func (r *workloadRow) newObject() runtime.Object {
	return contract.Info(r.kind).New().(runtime.Object)
}

// rowsByType finds a typed workload row by the Go type of its objects, for the transform; the
// unstructured kinds are found by their kind (rowOf).
var rowsByType = func() map[reflect.Type]*workloadRow {
	out := make(map[reflect.Type]*workloadRow, len(workloadRows))
	for i := range workloadRows {
		if r := &workloadRows[i]; !contract.Info(r.kind).Optional {
			out[reflect.TypeOf(r.newObject())] = r
		}
	}
	return out
}()

// rowOf is the workload row of kind, nil for none.
func rowOf(kind contract.Kind) *workloadRow {
	for i := range workloadRows {
		if workloadRows[i].kind == kind {
			return &workloadRows[i]
		}
	}
	return nil
}
