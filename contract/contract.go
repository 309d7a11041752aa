// Package contract is what kube/ hands model/: batches of the objects the informers saw, named by
// kind and reference, and the connection's health. It is a leaf: kube, recording and the model
// import it, and it imports only the API types and the pod record, so that the source of the
// objects and the state built from them depend on it and not on each other.
package contract

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"doomwatch/podrec"
)

// Kind names a resource kind kube watches and the model tracks.
type Kind string

// The kinds kube/ watches.
const (
	KindPod         Kind = "Pod"
	KindNode        Kind = "Node"
	KindReplicaSet  Kind = "ReplicaSet"
	KindDeployment  Kind = "Deployment"
	KindStatefulSet Kind = "StatefulSet"
	KindDaemonSet   Kind = "DaemonSet"
	KindJob         Kind = "Job"
	// KindCronJob is waited for through its latest Job (model/cronjob.go).
	KindCronJob Kind = "CronJob"
	// KindRollout is an Argo Rollout (argoproj.io/v1alpha1), watched where its CRD is installed.
	KindRollout Kind = "Rollout"
	// KindEvent is a Warning core/v1 Event about a pod or a node (model/events.go keeps them).
	KindEvent Kind = "Event"
)

// Ref identifies one object. Namespace is empty for nodes.
type Ref struct {
	Kind      Kind
	Namespace string
	Name      string
}

// Batch is one coalesced set of changes from a source: at most one per interval, holding the
// latest object per key and the deletes since the previous batch. Objects are the informer's
// (transformed) objects and are never mutated by the model. Pods come as records
// (podrec.Interner.Pod, podrec.RecordOf).
type Batch struct {
	Pods  []*podrec.Record
	Nodes []*corev1.Node
	// Workloads are the objects of the workload kinds (Workload in Kinds): Deployments, their
	// ReplicaSets, StatefulSets, DaemonSets, Jobs. Each kind is a row of Kinds and, in the model,
	// one file; nothing between the informer and that file switches on the kind.
	Workloads []Object
	// Events are Warning events, trimmed by kube/'s transform; deleted ones come as Refs of
	// KindEvent, named as the Event object is.
	Events  []*corev1.Event
	Deletes []Ref
	// Health is non-nil when the connection health changed since the previous batch.
	Health *Health
	// Cluster is the index of the fleet's cluster the batch is from (model.Fleet.Apply), 0 for one.
	Cluster int
}

// Len is the number of changes in the batch (health excluded).
func (b *Batch) Len() int {
	return len(b.Pods) + len(b.Nodes) + len(b.Workloads) + len(b.Events) + len(b.Deletes)
}

// Object is one object of a workload kind. The kind comes with it because the informers' typed
// objects carry no TypeMeta.
type Object struct {
	Kind Kind
	Obj  metav1.Object
}

// Health is the state of the connection to the cluster. It is part of the data, shown in the header.
type Health struct {
	// Synced is true once every informer that is not forbidden has synced.
	Synced bool
	// PodsSeen counts pods received so far, for "syncing pods: 3,412 …".
	PodsSeen int
	// PodsTotal estimates how many pods there are to receive, for "syncing pods: 3,412 of
	// ~150,000 …"; 0 when unknown (a label selector hides the count from the API server).
	PodsTotal int
	// LastEvent is the time of the last informer event of any kind.
	LastEvent time.Time
	// WatchError is the last watch error while a watch is broken ("" when all watches are healthy).
	WatchError string
	// Forbidden lists the kinds RBAC forbids us to list or watch; the rest works.
	Forbidden []Kind
	// Failures counts the list and watch calls that failed since the start, forbidden ones
	// included (client-go's reflector retries each with backoff); a watch's routine end does not
	// count.
	Failures uint64
	// Unreachable is why the API server does not answer, "" while it does; UnreachableSince is
	// when it stopped (kube/probe.go). The informers retry on their own.
	Unreachable      string
	UnreachableSince time.Time
}
