// Package model holds doomwatch's state: pods with their classify verdicts, the evidence gathered
// across updates (start failure ledger, sticky doom, cross-node escalation), node clusters and
// rollouts. It is pure and deterministic: time is always passed in, nothing here reads a clock or
// does I/O. kube/ feeds it Batches; tui/ and the --once printers read its views.
package model

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"doomwatch/classify"
	"doomwatch/podrec"
)

// Kind names a resource kind the model tracks.
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
	// KindEvent is a Warning core/v1 Event about a pod or a node (events.go).
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
	Pods         []*podrec.Record
	Nodes        []*corev1.Node
	ReplicaSets  []*appsv1.ReplicaSet
	Deployments  []*appsv1.Deployment
	StatefulSets []*appsv1.StatefulSet
	DaemonSets   []*appsv1.DaemonSet
	Jobs         []*batchv1.Job
	// Events are Warning events, trimmed by kube/'s transform; deleted ones come as Refs of
	// KindEvent, named as the Event object is.
	Events  []*corev1.Event
	Deletes []Ref
	// Health is non-nil when the connection health changed since the previous batch.
	Health *Health
	// Cluster is the index of the fleet's cluster the batch is from (Fleet.Apply), 0 for one.
	Cluster int
}

// Len is the number of changes in the batch (health excluded).
func (b *Batch) Len() int {
	return len(b.Pods) + len(b.Nodes) + len(b.ReplicaSets) + len(b.Deployments) +
		len(b.StatefulSets) + len(b.DaemonSets) + len(b.Jobs) + len(b.Events) + len(b.Deletes)
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
	// Unreachable is why the API server does not answer, "" while it does; UnreachableSince is
	// when it stopped (kube's probe, probe.go). The informers retry on their own.
	Unreachable      string
	UnreachableSince time.Time
}

// Config holds the evidence thresholds. The zero value is not useful; start from DefaultConfig.
type Config struct {
	// Window is how long start failures count as evidence (default 15m).
	Window time.Duration
	// LedgerMax bounds the failure ledger; the oldest entries go first (default 50,000).
	LedgerMax int
	// EscalateNodes: a workload whose containers failed to start (a transient exit 128, or a
	// transient create error) on at least this many distinct nodes within the window is doomed,
	// "not node-local" (default 3).
	EscalateNodes int
	// SuspectPods: a node is suspect when at least this many distinct pods of node-local workloads
	// failed to start on it within the window (default 3) and it stands out from the other nodes
	// (the outlier rule, outlier.go).
	SuspectPods int
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{Window: 15 * time.Minute, LedgerMax: 50000, EscalateNodes: 3, SuspectPods: 3}
}

// Pod is the model's view of one pod. Every string field is sanitised for the terminal, and so is
// what its methods read from its record when asked (Columns, States, Conditions, Controller;
// podview.go): the record itself, the API's text, stays inside the model.
type Pod struct {
	Key string // namespace/name
	// Context is the pod's cluster in a fleet of more than one (Fleet), else "".
	Context   string
	UID       string
	Namespace string
	Name      string
	Node      string
	// Owner is the top owner, "Deployment/checkout", or "" for an unmanaged pod.
	Owner   string
	Phase   string
	Created time.Time
	// Verdict is the pod's verdict after evidence (sticky doom, cross-node escalation).
	Verdict classify.Verdict
	// Containers holds one verdict per container, init containers first.
	Containers []classify.ContainerVerdict

	rec *podrec.Record // the informer's record of the pod, never handed out

	// Evidence and index state, owned by the model.
	workload string       // Failure.Workload of this pod's failures
	ctrl     ownerKey     // the pod's controller reference (namespace, kind, name)
	sticky   []stickyDoom // containers doomed by an image "not found", until they run
	gone     bool         // deleted
	id       uint64       // the order the model first saw pods in, the views' last tie-break
	row      *row         // the pod's place in the views (view.go)
}

// Counts are pods per verdict kind.
type Counts struct {
	Pods, Healthy, Progressing, Transient, Doomed, Completed int
}

// Sort orders the pod view.
type Sort uint8

// The pod view orders, in the order the `s` key cycles them.
const (
	BySeverity Sort = iota // most severe first, then namespace/name
	ByName                 // namespace/name
	ByNode                 // node, then severity
	ByAge                  // newest first
)

// Filter narrows the pod view by verdict.
type Filter uint8

// The verdict filters, in the order the `v` key cycles them.
const (
	All      Filter = iota
	Problems        // transient or doomed
	OnlyDoomed
	OnlyTransient
)

// Query selects and orders the pod view.
type Query struct {
	Sort   Sort
	Filter Filter
	// Node keeps only pods on this node when non-empty.
	Node string
	// Text is a fuzzy filter over namespace, name, node and reason.
	Text string
	// Context keeps only one cluster's pods in a fleet (Fleet.PodView) when non-empty.
	Context string
	// Owner keeps only the pods of one workload when non-empty, matched exactly: the pod's
	// namespace and top owner, Namespace + "/" + Pod.Owner, as in "shop/Deployment/checkout"
	// (the form of Failure.Workload; Rollout.Workload gives it for a rollout). Unmanaged pods
	// (Owner "") never match.
	Owner string
}

// Failure is one start failure in the ledger, recorded once: a transient exit 128
// (RuleStartFailure128, containerd and cri-dockerd), a transient CreateContainerError /
// RunContainerError (RuleCreateErrorTransient, how CRI-O reports the same runtime trouble), or a
// pod sandbox the runtime failed to create (a FailedCreatePodSandBox event, events.go).
type Failure struct {
	PodUID    string
	Pod       string // namespace/name
	Container string // "" for a sandbox failure, which is the pod's
	Node      string // the node's name
	// NodeUID is the UID of the Node object the pod ran on when the failure was recorded, so a
	// node deleted and registered again under the same name does not inherit it. It is "" when
	// the model knows no Node object of that name (nodes forbidden by RBAC): the name stands in.
	NodeUID      string
	Workload     string // namespace/Owner, or the pod key for an unmanaged pod
	RestartCount int32
	// At is the time the window measures: when doomwatch saw the failure happen (the batch's now)
	// for a pod it already knew, or, for a failure already present when the pod was first seen,
	// its FinishedAt no later than the moment it was seen (see recordFailures).
	At time.Time
	// FinishedAt is the runtime's finishedAt, part of the failure's identity; zero for a create
	// error, which has none (it is identified by the moment doomwatch first saw it, At).
	FinishedAt time.Time
	ExitCode   int32  // 128; 0 for a create error or a sandbox failure, which have no exit code
	Reason     string // ContainerCannotRun, StartError, CreateContainerError, RunContainerError or FailedCreatePodSandBox
	Message    string // normalised: IDs, hashes and numbers replaced, so equal causes compare equal
}

// Node is one node's cluster of evidence. A node is identified by its UID: a node deleted and
// registered again under the same name is another Node, with the same Name.
type Node struct {
	Name string
	// Context is the node's cluster in a fleet of more than one (Fleet.Nodes), else "".
	Context string
	// UID is the Node object's UID, "" when none is known (nodes forbidden by RBAC).
	UID      string
	Known    bool // a Node object was seen (false when nodes are forbidden or the node is gone)
	Ready    bool
	Cordoned bool
	// Pods on the node and how many of them are transient or doomed.
	Pods, FailingPods int
	// Failures is the number of transient start failures here within the window, Failures128 how
	// many of them were exit 128 (the rest are create errors), FailedPods the distinct pods they
	// hit and Workloads the distinct workloads.
	Failures, Failures128, FailedPods, Workloads int
	First, Last                                  time.Time
	DominantMessage                              string
	// Histogram counts failures per bucket over the window, oldest first (HistogramBuckets long).
	Histogram []int
	// Suspect: the node stands out from the others (outlier.go). A node that is gone never is.
	Suspect bool
	// Why explains a suspect node and how the call was made: "6 of 6 pods that started here in
	// the last 15m failed with exit 128; 3 of 53 elsewhere" (whySentence).
	Why string
	// Conditions are the node's conditions in NodeConditionTypes' order: Ready, MemoryPressure,
	// DiskPressure, PIDPressure, NetworkUnavailable (Status "Unknown" when not reported or the
	// node is not known).
	Conditions [len(NodeConditionTypes)]NodeCondition
	// Info is what the node's kubelet reports of itself: kubelet, runtime and kernel versions, OS
	// image (nodeattrs.go).
	Info NodeInfo
	// Zone, Region, InstanceType and Pool are read from the well-known topology and instance-type
	// labels and the managed services' node-pool labels (nodeattrs.go); "" when not set.
	Zone, Region, InstanceType, Pool string
}

// HistogramBuckets is the number of time buckets in Node.Histogram.
const HistogramBuckets = 15

// RolloutVerdict is a rollout's state.
type RolloutVerdict string

// Rollout verdicts.
const (
	RolloutComplete    RolloutVerdict = "complete"
	RolloutProgressing RolloutVerdict = "progressing"
	RolloutDoomed      RolloutVerdict = "doomed"
)

// Rollout is one workload's rollout: a Deployment, or a StatefulSet or DaemonSet with the
// RollingUpdate strategy. NewReplicaSet and OldReplicaSets are a Deployment's only.
type Rollout struct {
	// Context is the rollout's cluster in a fleet of more than one (Fleet.Rollouts), else "".
	Context               string
	Namespace, Kind, Name string
	Verdict               RolloutVerdict
	Desired, Updated      int32
	Ready, Available      int32
	// Reason says why: kubectl's rollout-status message, or the pods' doom reasons.
	Reason         string
	NewReplicaSet  string
	OldReplicaSets []string
}

// Workload is the rollout's workload as Query.Owner names it: "shop/Deployment/checkout".
func (r *Rollout) Workload() string { return r.Namespace + "/" + r.Kind + "/" + r.Name }
