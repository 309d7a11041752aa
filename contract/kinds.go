package contract

import (
	"reflect"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// KindInfo is what every package needs to know of a kind by name alone: its API resource, the
// names kubectl accepts for it, and how the dashboard abbreviates it. It is the start of one table
// of kinds (kubectl's StatusViewerFor and kstatus's legacyTypes keep theirs the same way): what
// each package does with a kind is still its own.
type KindInfo struct {
	Kind Kind
	// Group and Version are the API's ("" for the core group); Resource is its plural resource
	// name ("deployments"), as messages and RBAC name it.
	Group, Version, Resource string
	// Short is kubectl's short name ("deploy", "sts"); "" when it has none.
	Short string
	// Prefix is how the rollouts panel and the header name a rollout of the kind before its name:
	// "sts/redis", "ds/kube-proxy"; "" for a Deployment, the kind a rollout is by default.
	Prefix string
	// Waitable says `doomwatch wait` (and the gate) can wait for an object of the kind.
	Waitable bool
	// New returns an empty object of a workload kind, which Batch.Workloads carries: the recording
	// decodes into it. Nil for the kinds with a batch section of their own (pods, nodes, events).
	New func() metav1.Object
	// Optional says the kind is a custom resource: kube watches it only where the API server's
	// discovery serves its group and version, and its objects are *unstructured.Unstructured.
	Optional bool
}

// Kinds are the kinds kube watches, in the order kube lists them.
var Kinds = []KindInfo{
	{Kind: KindPod, Version: "v1", Resource: "pods", Short: "po", Waitable: true},
	{Kind: KindNode, Version: "v1", Resource: "nodes", Short: "no"},
	{Kind: KindReplicaSet, Group: "apps", Version: "v1", Resource: "replicasets", Short: "rs",
		New: func() metav1.Object { return &appsv1.ReplicaSet{} }},
	{Kind: KindDeployment, Group: "apps", Version: "v1", Resource: "deployments", Short: "deploy", Waitable: true,
		New: func() metav1.Object { return &appsv1.Deployment{} }},
	{Kind: KindStatefulSet, Group: "apps", Version: "v1", Resource: "statefulsets", Short: "sts", Prefix: "sts", Waitable: true,
		New: func() metav1.Object { return &appsv1.StatefulSet{} }},
	{Kind: KindDaemonSet, Group: "apps", Version: "v1", Resource: "daemonsets", Short: "ds", Prefix: "ds", Waitable: true,
		New: func() metav1.Object { return &appsv1.DaemonSet{} }},
	{Kind: KindJob, Group: "batch", Version: "v1", Resource: "jobs", Waitable: true,
		New: func() metav1.Object { return &batchv1.Job{} }},
	{Kind: KindCronJob, Group: "batch", Version: "v1", Resource: "cronjobs", Short: "cj", Waitable: true,
		New: func() metav1.Object { return &batchv1.CronJob{} }},
	{Kind: KindEvent, Version: "v1", Resource: "events", Short: "ev"},
	// kubectl-argo-rollouts names it rollout, rollouts and ro (pkg/kubectl-argo-rollouts/cmd/get
	// get_rollout.go Aliases; the CRD's shortNames: ro).
	{Kind: KindRollout, Group: "argoproj.io", Version: "v1alpha1", Resource: "rollouts", Short: "ro", Prefix: "ro",
		Waitable: true, Optional: true, New: newUnstructured("argoproj.io/v1alpha1", KindRollout)},
}

// newUnstructured makes the New of a kind read as unstructured objects.
func newUnstructured(apiVersion string, kind Kind) func() metav1.Object {
	return func() metav1.Object {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(apiVersion)
		u.SetKind(string(kind))
		return u
	}
}

// APIVersion is the kind's group/version as an object's apiVersion says it: "apps/v1", "v1".
func (k *KindInfo) APIVersion() string {
	if k.Group == "" {
		return k.Version
	}
	return k.Group + "/" + k.Version
}

// Info is the table's row for k, or nil for a kind it does not hold.
func Info(k Kind) *KindInfo {
	for i := range Kinds {
		if Kinds[i].Kind == k {
			return &Kinds[i]
		}
	}
	return nil
}

// Resource is k's API resource name ("replicasets"), or its lower-cased name with an s for a kind
// the table does not hold.
func (k Kind) Resource() string {
	if i := Info(k); i != nil {
		return i.Resource
	}
	return strings.ToLower(string(k)) + "s"
}

// ParseWaitable reads a TYPE as kubectl does (kubectl api-resources): the kind's name, its
// resource, its short name, and the first two qualified by the group ("deployment.apps"), without
// regard to case. Only kinds wait can wait for are found.
func ParseWaitable(typ string) (Kind, bool) {
	typ = strings.ToLower(typ)
	for i := range Kinds {
		k := &Kinds[i]
		if !k.Waitable {
			continue
		}
		singular := strings.ToLower(string(k.Kind))
		if typ == singular || typ == k.Resource || (k.Short != "" && typ == k.Short) {
			return k.Kind, true
		}
		if k.Group != "" && (typ == singular+"."+k.Group || typ == k.Resource+"."+k.Group) {
			return k.Kind, true
		}
	}
	return "", false
}

// WaitableKind is the kind wait waits for that a manifest's object of group and kind is ("apps",
// "Deployment"); the version plays no part, as it is only a representation.
func WaitableKind(group, kind string) (Kind, bool) {
	for i := range Kinds {
		if k := &Kinds[i]; k.Waitable && k.Group == group && string(k.Kind) == kind {
			return k.Kind, true
		}
	}
	return "", false
}

// Waitable are the resource names of the kinds wait can wait for, the workloads first and pods
// last: for messages ("deployments, statefulsets, daemonsets and pods").
func Waitable() []string {
	var names []string
	for _, k := range Kinds {
		if k.Waitable && k.Kind != KindPod {
			names = append(names, k.Resource)
		}
	}
	return append(names, KindPod.Resource())
}

// Workload is obj with its kind, the row of Kinds whose New makes objects of obj's Go type: for
// batches built by hand (tests, fixtures). It panics on a type no row makes, a programming error.
func Workload(obj metav1.Object) Object {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return Object{Kind: Kind(u.GetKind()), Obj: obj}
	}
	t := reflect.TypeOf(obj)
	for i := range Kinds {
		if k := &Kinds[i]; k.New != nil && reflect.TypeOf(k.New()) == t {
			return Object{Kind: k.Kind, Obj: obj}
		}
	}
	panic("contract.Workload: no workload kind makes a " + t.String())
}

// Workloads is Workload of each object.
func Workloads(objs ...metav1.Object) []Object {
	out := make([]Object, len(objs))
	for i, o := range objs {
		out[i] = Workload(o)
	}
	return out
}

// WorkloadsOf is Workload of each object of a typed slice.
func WorkloadsOf[T metav1.Object](objs []T) []Object {
	out := make([]Object, len(objs))
	for i, o := range objs {
		out[i] = Workload(o)
	}
	return out
}
