// Package model holds doomwatch's state: pods with their classify verdicts, the evidence gathered
// across updates (start failure ledger, sticky doom, cross-node escalation), suspect nodes and
// rollouts. It is pure and deterministic: time is always passed in, nothing here reads a clock or
// does I/O. kube/ feeds it batches (package contract); tui/ and the --once printers read its views.
package model

import (
	"time"

	"doomwatch/classify"
	"doomwatch/podrec"
)

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
	// (the outlier rule, classify/suspect.go).
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

// Counts are pods per verdict class.
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

// Node is one node's evidence: its start failures, events and suspect call. A node is identified
// by its UID: a node deleted and registered again under the same name is another Node, with the
// same Name.
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
	// Suspect: the node stands out from the others (classify/suspect.go). A node that is gone never is.
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

// Rollout is one workload's rollout: a Deployment, or a StatefulSet or DaemonSet with the
// RollingUpdate strategy. NewReplicaSet and OldReplicaSets are a Deployment's only.
type Rollout struct {
	// Context is the rollout's cluster in a fleet of more than one (Fleet.Rollouts), else "".
	Context               string
	Namespace, Kind, Name string
	Verdict               classify.RolloutClass
	Desired, Updated      int32
	Ready, Available      int32
	// Reason says why: kubectl's rollout-status message, or the pods' doom reasons.
	Reason         string
	NewReplicaSet  string
	OldReplicaSets []string
}

// Workload is the rollout's workload as Query.Owner names it: "shop/Deployment/checkout".
func (r *Rollout) Workload() string { return r.Namespace + "/" + r.Kind + "/" + r.Name }
