// Package podrec is the pod record: the compact, immutable copy of a pod that the pod informer's
// store holds and the model points at (Record), made from a pod (Interner.Pod) or straight from
// the API server's protobuf encoding of one (Interner.PodFromProto), and rebuilt as a pod for
// classify and the printers (Scratch). The Interner that shares what records repeat also shares
// what kube's transform keeps of the other kinds it trims. The package reads no cluster and keeps
// no state of its own: kube makes records, model keeps them, tui reads them.
package podrec

import (
	"maps"
	"math"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Record is a pod as doomwatch keeps it: what classify, the model and the views read, and
// nothing else. kube's informer transform makes one of every pod the API server sends
// (Interner.Pod), the informer's store holds it in place of the pod, and the model's Pod points at
// it, so the record is the only copy of a pod doomwatch holds. A record is immutable once made;
// any goroutine may read it.
//
// Why not the pod itself, trimmed: a corev1.Pod's structs are 1,240 bytes however little they
// hold, a container status 208, a condition 120, each container state another allocation; a
// trimmed two-container pod cost 2.6 KB. The record keeps the same fields in their own few bytes
// (times as nanoseconds, a state as one small struct), shares the spec with every pod of its
// template and the text of its conditions with every pod in the same condition, and comes to
// about a third of that (kube's BenchmarkPodMemory).
//
// classify still judges *corev1.Pod values: Scratch rebuilds one from a record without allocating
// (Record.Pod allocates a new one), and the fixtures prove that the rebuilt pod is the trimmed pod
// (TestRecordRebuildsTheTrimmedPod).
type Record struct {
	namespace, name, uid, resourceVersion, node string
	generation                                  int64
	created, deleted                            Stamp
	deleting                                    bool                    // deleted is set: the pod is being deleted
	owners                                      []metav1.OwnerReference // shared
	// annotations holds the kept annotations (keptAnnotations): the Job controller's index
	// annotations of an indexed Job's pod, which classify.JobAttempt reads; nil for other pods.
	annotations map[string]string
	// revision is the one label a record keeps, the pod's revision for its controller: a
	// DaemonSet's pod's pod-template-generation, any other pod's controller-revision-hash (a
	// StatefulSet's rollout judges the pods of its update revision, a DaemonSet's those of its
	// template generation: model/rollouts.go); "" for pods without it.
	revision               string
	spec                   *specRecord // shared
	phase, reason, message string
	conds                  []condition
	init, statuses         []ContainerStatus
}

// specRecord is what a record keeps of a pod's spec besides the node, shared by the pods of a
// template.
type specRecord struct {
	init, containers []corev1.Container
	restartPolicy    corev1.RestartPolicy
	gates            []corev1.PodReadinessGate
}

// condition is a pod condition: its text, shared, and when it last changed.
type condition struct {
	text *condText
	at   Stamp
}

type condText struct {
	typ             corev1.PodConditionType
	status          corev1.ConditionStatus
	reason, message string
}

// ContainerStatus is a container's status as a record keeps it: state, last state, readiness,
// started, restart count, image and whether the image was pulled (imageID, model/sticky.go).
// Container IDs, resources, volume mounts and the user go: nothing reads them.
type ContainerStatus struct {
	name, image, imageID string
	state, last          ContainerState
	restarts             int32
	ready                bool
	started              optBool
}

// ContainerState is a container state as a record keeps it (the API allows one of waiting, running
// and terminated), without the container ID. Reasons are shared; messages are not, as they mostly
// name their pod or container ("back-off 1m20s restarting failed container=app pod=…") and would
// only churn the table.
type ContainerState struct {
	kind              StateKind
	exitCode, signal  int32
	reason, message   string
	started, finished Stamp
}

// StateKind is which of the API's container states a ContainerState is.
type StateKind uint8

// The kinds of container state; the zero kind, stateNone, is a status that reports none.
const (
	stateNone StateKind = iota
	StateWaiting
	StateRunning
	StateTerminated
)

// optBool is a *bool as a byte.
type optBool uint8

const (
	boolUnset optBool = iota
	boolFalse
	boolTrue
)

func optBoolOf(b *bool) optBool {
	switch {
	case b == nil:
		return boolUnset
	case *b:
		return boolTrue
	}
	return boolFalse
}

func (b optBool) ptr() *bool {
	switch b {
	case boolTrue:
		return &sharedTrue
	case boolFalse:
		return &sharedFalse
	}
	return nil
}

// Stamp is a time as nanoseconds since the Unix epoch, and 0 the zero time, so that a record's
// zero value holds zero times. The epoch itself, which containerd reports as the start of a
// container that never started, is EpochStamp.
type Stamp int64

// EpochStamp is the Unix epoch as a Stamp.
const EpochStamp = Stamp(math.MinInt64)

func stampOf(t time.Time) Stamp {
	switch {
	case t.IsZero():
		return 0
	case t.UnixNano() == 0:
		return EpochStamp
	}
	return Stamp(t.UnixNano())
}

// Time is s as a time.Time.
func (s Stamp) Time() time.Time {
	switch s {
	case 0:
		return time.Time{}
	case EpochStamp:
		return time.Unix(0, 0)
	}
	return time.Unix(0, int64(s))
}

func (s Stamp) meta() metav1.Time {
	if s == 0 {
		return metav1.Time{}
	}
	return metav1.NewTime(s.Time())
}

// keptAnnotations are the only annotations a record keeps: the Job controller's completion index
// and per-index failure count (kubernetes pkg/controller/job/indexed_job_utils.go), which
// classify.JobAttempt reads for a Job with a backoff limit per index, and the API server's mark
// on the bookmark that ends a streamed list (metav1.InitialEventsAnnotationKey), which client-go's
// reflector reads from the bookmark's object.
// The labels a record keeps one of (Record.revision): the StatefulSet and DaemonSet
// controllers' revision label (k8s.io/api/apps/v1 ControllerRevisionHashLabelKey) and the
// DaemonSet controller's template generation label (k8s.io/api/extensions/v1beta1
// DaemonSetTemplateGenerationKey, which the DaemonSet controller still sets).
const (
	revisionHashLabel       = appsv1.ControllerRevisionHashLabelKey
	templateGenerationLabel = "pod-template-generation"
)

// revisionOf picks the label that names a pod's revision for its controller: the template
// generation for a DaemonSet's pod, the revision hash otherwise.
func revisionOf(owners []metav1.OwnerReference, hash, generation string) string {
	for i := range owners {
		if c := owners[i].Controller; c != nil && *c && owners[i].Kind == "DaemonSet" {
			return generation
		}
	}
	return hash
}

var keptAnnotations = [...]string{"batch.kubernetes.io/job-completion-index", "batch.kubernetes.io/job-index-failure-count",
	metav1.InitialEventsAnnotationKey}

// Pod makes p's record: identity, the resource version (the informer tells an update from a resync
// by it), timestamps and ownership; the node, containers, restart policy and readiness gates
// (classify); phase, reason, message, conditions and container statuses (classify, the model's
// evidence and the detail pane); a Job's index annotations; the StatefulSet and DaemonSet revision
// labels. Other labels, other annotations, managedFields, IPs, start time, QoS class and
// the rest of the spec go. Strings, the spec and condition texts are shared through in. An empty
// list of statuses or conditions is kept as none.
func (in *Interner) Pod(p *corev1.Pod) *Record {
	r := &Record{
		namespace:       in.String(p.Namespace),
		name:            p.Name,
		uid:             string(p.UID),
		resourceVersion: p.ResourceVersion,
		node:            in.String(p.Spec.NodeName),
		generation:      p.Generation,
		created:         stampOf(p.CreationTimestamp.Time),
		owners:          in.Owners(p.OwnerReferences),
		spec:            in.spec(&p.Spec),
		phase:           in.String(string(p.Status.Phase)),
		reason:          in.String(p.Status.Reason),
		message:         p.Status.Message,
	}
	if len(p.Labels) > 0 {
		r.revision = in.String(revisionOf(r.owners, p.Labels[revisionHashLabel], p.Labels[templateGenerationLabel]))
	}
	if d := p.DeletionTimestamp; d != nil {
		r.deleted, r.deleting = stampOf(d.Time), true
	}
	for _, k := range keptAnnotations {
		if v, ok := p.Annotations[k]; ok {
			if r.annotations == nil {
				r.annotations = make(map[string]string, 2)
			}
			r.annotations[k] = v
		}
	}
	st := &p.Status
	if len(st.Conditions) > 0 {
		r.conds = make([]condition, len(st.Conditions))
		for i := range st.Conditions {
			c := &st.Conditions[i]
			r.conds[i] = condition{text: in.condition(c), at: stampOf(c.LastTransitionTime.Time)}
		}
	}
	// One allocation for both lists of statuses.
	if n, m := len(st.InitContainerStatuses), len(st.ContainerStatuses); n+m > 0 {
		all := make([]ContainerStatus, n+m)
		for i := range st.InitContainerStatuses {
			all[i] = in.status(&st.InitContainerStatuses[i])
		}
		for i := range st.ContainerStatuses {
			all[n+i] = in.status(&st.ContainerStatuses[i])
		}
		if n > 0 {
			r.init = all[:n:n]
		}
		if m > 0 {
			r.statuses = all[n:]
		}
	}
	return r
}

// RecordOf makes p's record without sharing anything with other records: for tests and tools.
func RecordOf(p *corev1.Pod) *Record { return (*Interner)(nil).Pod(p) }

func (in *Interner) status(c *corev1.ContainerStatus) ContainerStatus {
	return ContainerStatus{
		name:     in.String(c.Name),
		image:    in.String(c.Image),
		imageID:  in.String(c.ImageID),
		state:    in.state(&c.State),
		last:     in.state(&c.LastTerminationState),
		restarts: c.RestartCount,
		ready:    c.Ready,
		started:  optBoolOf(c.Started),
	}
}

func (in *Interner) state(s *corev1.ContainerState) ContainerState {
	switch {
	case s.Waiting != nil:
		return ContainerState{kind: StateWaiting, reason: in.String(s.Waiting.Reason), message: s.Waiting.Message}
	case s.Running != nil:
		return ContainerState{kind: StateRunning, started: stampOf(s.Running.StartedAt.Time)}
	case s.Terminated != nil:
		t := s.Terminated
		return ContainerState{kind: StateTerminated, exitCode: t.ExitCode, signal: t.Signal,
			reason: in.String(t.Reason), message: t.Message,
			started: stampOf(t.StartedAt.Time), finished: stampOf(t.FinishedAt.Time)}
	}
	return ContainerState{}
}

// Pod rebuilds the pod the record was made from, as far as the record keeps it, in new memory.
// Scratch.Pod does it without allocating, for a pod that is read at once and dropped.
func (r *Record) Pod() *corev1.Pod {
	var s Scratch
	return s.Pod(r)
}

// Scratch rebuilds pods from their records for classify and the printers, reusing its memory: the
// pod it returns is valid until its next call and must not be kept, nor any pointer into it (the
// strings in it may be kept: they are the record's). The zero value is ready to use. Not safe for
// concurrent use.
type Scratch struct {
	pod      corev1.Pod
	deleted  metav1.Time
	conds    []corev1.PodCondition
	statuses []corev1.ContainerStatus
	waiting  []corev1.ContainerStateWaiting
	running  []corev1.ContainerStateRunning
	term     []corev1.ContainerStateTerminated
}

// Pod rebuilds r in s.
func (s *Scratch) Pod(r *Record) *corev1.Pod {
	p := &s.pod
	sp := r.spec
	*p = corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: r.name, Namespace: r.namespace, UID: types.UID(r.uid), ResourceVersion: r.resourceVersion,
			Generation: r.generation, CreationTimestamp: r.created.meta(), OwnerReferences: r.owners,
			Annotations: r.annotations,
		},
		Spec: corev1.PodSpec{NodeName: r.node, InitContainers: sp.init, Containers: sp.containers,
			RestartPolicy: sp.restartPolicy, ReadinessGates: sp.gates},
		Status: corev1.PodStatus{Phase: corev1.PodPhase(r.phase), Reason: r.reason, Message: r.message},
	}
	if r.deleting {
		s.deleted = r.deleted.meta()
		p.DeletionTimestamp = &s.deleted
	}
	if len(r.conds) > 0 {
		s.conds = s.conds[:0]
		for _, c := range r.conds {
			s.conds = append(s.conds, corev1.PodCondition{Type: c.text.typ, Status: c.text.status,
				Reason: c.text.reason, Message: c.text.message, LastTransitionTime: c.at.meta()})
		}
		p.Status.Conditions = s.conds
	}
	n, m := len(r.init), len(r.statuses)
	if n+m == 0 {
		return p
	}
	// Every state of every status gets its place before any pointer into these is taken, so that
	// growing them cannot leave an earlier pointer in a stale array.
	if cap(s.statuses) < n+m {
		s.statuses = make([]corev1.ContainerStatus, n+m)
		s.waiting = make([]corev1.ContainerStateWaiting, 0, 2*(n+m))
		s.running = make([]corev1.ContainerStateRunning, 0, 2*(n+m))
		s.term = make([]corev1.ContainerStateTerminated, 0, 2*(n+m))
	}
	s.statuses = s.statuses[:n+m]
	s.waiting, s.running, s.term = s.waiting[:0], s.running[:0], s.term[:0]
	for i := range r.init {
		s.statuses[i] = s.status(&r.init[i])
	}
	for i := range r.statuses {
		s.statuses[n+i] = s.status(&r.statuses[i])
	}
	if n > 0 {
		p.Status.InitContainerStatuses = s.statuses[:n:n]
	}
	if m > 0 {
		p.Status.ContainerStatuses = s.statuses[n : n+m : n+m]
	}
	return p
}

func (s *Scratch) status(c *ContainerStatus) corev1.ContainerStatus {
	return corev1.ContainerStatus{
		Name: c.name, Image: c.image, ImageID: c.imageID,
		State: s.state(&c.state), LastTerminationState: s.state(&c.last),
		RestartCount: c.restarts, Ready: c.ready, Started: c.started.ptr(),
	}
}

func (s *Scratch) state(st *ContainerState) corev1.ContainerState {
	switch st.kind {
	case StateWaiting:
		s.waiting = append(s.waiting, corev1.ContainerStateWaiting{Reason: st.reason, Message: st.message})
		return corev1.ContainerState{Waiting: &s.waiting[len(s.waiting)-1]}
	case StateRunning:
		s.running = append(s.running, corev1.ContainerStateRunning{StartedAt: st.started.meta()})
		return corev1.ContainerState{Running: &s.running[len(s.running)-1]}
	case StateTerminated:
		s.term = append(s.term, corev1.ContainerStateTerminated{ExitCode: st.exitCode, Signal: st.signal,
			Reason: st.reason, Message: st.message, StartedAt: st.started.meta(), FinishedAt: st.finished.meta()})
		return corev1.ContainerState{Terminated: &s.term[len(s.term)-1]}
	}
	return corev1.ContainerState{}
}

// Terminated is st as the API's terminated state, when it is one.
func (st *ContainerState) Terminated() (corev1.ContainerStateTerminated, bool) {
	if st.kind != StateTerminated {
		return corev1.ContainerStateTerminated{}, false
	}
	return corev1.ContainerStateTerminated{ExitCode: st.exitCode, Signal: st.signal, Reason: st.reason,
		Message: st.message, StartedAt: st.started.meta(), FinishedAt: st.finished.meta()}, true
}

// What the model reads of a record beyond what classify reads of the pod it rebuilds: evidence,
// sticky doom and back-off memory, start counts and rollouts read these directly, which costs no
// rebuild. What they return is the record's and must not be modified.

// Revision is the pod's revision for its controller: its pod-template-generation label for a
// DaemonSet's pod, its controller-revision-hash label otherwise; "" for none.
func (r *Record) Revision() string { return r.revision }

// Deleting reports whether the pod has a deletion timestamp.
func (r *Record) Deleting() bool { return r.deleting }

// NodeName is the node the pod is bound to, "" until it is scheduled.
func (r *Record) NodeName() string { return r.node }

// Phase is the pod's phase.
func (r *Record) Phase() corev1.PodPhase { return corev1.PodPhase(r.phase) }

// InitContainers are the pod's init containers as the record keeps them (Interner.Containers).
func (r *Record) InitContainers() []corev1.Container { return r.spec.init }

// Containers are the pod's containers as the record keeps them (Interner.Containers).
func (r *Record) Containers() []corev1.Container { return r.spec.containers }

// InitStatuses are the pod's init container statuses, in the API's order.
func (r *Record) InitStatuses() []ContainerStatus { return r.init }

// Statuses are the pod's container statuses, in the API's order.
func (r *Record) Statuses() []ContainerStatus { return r.statuses }

// Name is the container's name, as the kubelet reports it (not sanitised).
func (c *ContainerStatus) Name() string { return c.name }

// ImageID is the image the container runs, "" until the runtime created it.
func (c *ContainerStatus) ImageID() string { return c.imageID }

// RestartCount is the container's restart count.
func (c *ContainerStatus) RestartCount() int32 { return c.restarts }

// Image is the image the container runs, as the kubelet reports it.
func (c *ContainerStatus) Image() string { return c.image }

// Ready is the container's readiness.
func (c *ContainerStatus) Ready() bool { return c.ready }

// State is the container's current state.
func (c *ContainerStatus) State() *ContainerState { return &c.state }

// LastState is the container's last termination state.
func (c *ContainerStatus) LastState() *ContainerState { return &c.last }

// Kind is which state st is.
func (st *ContainerState) Kind() StateKind { return st.kind }

// Reason is a waiting or terminated state's reason.
func (st *ContainerState) Reason() string { return st.reason }

// Message is a waiting or terminated state's message.
func (st *ContainerState) Message() string { return st.message }

// StartedAt is a running or terminated state's startedAt.
func (st *ContainerState) StartedAt() Stamp { return st.started }

// FinishedAt is a terminated state's finishedAt.
func (st *ContainerState) FinishedAt() Stamp { return st.finished }

// ExitCode is a terminated state's exit code.
func (st *ContainerState) ExitCode() int32 { return st.exitCode }

// Signal is a terminated state's signal, 0 for none.
func (st *ContainerState) Signal() int32 { return st.signal }

// SameContent reports whether a and b hold the same pod but for the resource version: an update
// the transform makes nothing of (kube/unchanged.go).
func (a *Record) SameContent(b *Record) bool {
	if a == b {
		return true
	}
	if a.namespace != b.namespace || a.name != b.name || a.uid != b.uid || a.node != b.node ||
		a.generation != b.generation || a.created != b.created || a.deleted != b.deleted || a.deleting != b.deleting ||
		a.phase != b.phase || a.reason != b.reason || a.message != b.message || !maps.Equal(a.annotations, b.annotations) ||
		a.revision != b.revision ||
		len(a.conds) != len(b.conds) || len(a.init) != len(b.init) || len(a.statuses) != len(b.statuses) ||
		!sameOwners(a.owners, b.owners) || !sameSpec(a.spec, b.spec) {
		return false
	}
	for i := range a.conds {
		if a.conds[i].at != b.conds[i].at || *a.conds[i].text != *b.conds[i].text {
			return false
		}
	}
	for i := range a.init {
		if a.init[i] != b.init[i] {
			return false
		}
	}
	for i := range a.statuses {
		if a.statuses[i] != b.statuses[i] {
			return false
		}
	}
	return true
}

func sameOwners(a, b []metav1.OwnerReference) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 || &a[0] == &b[0] {
		return true
	}
	for i := range a {
		x, y := &a[i], &b[i]
		if x.APIVersion != y.APIVersion || x.Kind != y.Kind || x.Name != y.Name || x.UID != y.UID ||
			optBoolOf(x.Controller) != optBoolOf(y.Controller) || optBoolOf(x.BlockOwnerDeletion) != optBoolOf(y.BlockOwnerDeletion) {
			return false
		}
	}
	return true
}

// sameSpec compares shared specs: the interner hands out one per content, so two pods of a
// template have the same pointer; records made without an interner are compared by content.
func sameSpec(a, b *specRecord) bool {
	if a == b {
		return true
	}
	if a.restartPolicy != b.restartPolicy || len(a.init) != len(b.init) || len(a.containers) != len(b.containers) ||
		len(a.gates) != len(b.gates) {
		return false
	}
	for i := range a.gates {
		if a.gates[i] != b.gates[i] {
			return false
		}
	}
	for _, pair := range [...][2][]corev1.Container{{a.init, b.init}, {a.containers, b.containers}} {
		for i := range pair[0] {
			if !sameContainer(&pair[0][i], &pair[1][i]) {
				return false
			}
		}
	}
	return true
}

func sameContainer(a, b *corev1.Container) bool {
	if a.Name != b.Name || a.Image != b.Image {
		return false
	}
	if (a.RestartPolicy == nil) != (b.RestartPolicy == nil) || a.RestartPolicy != nil && *a.RestartPolicy != *b.RestartPolicy {
		return false
	}
	return a.ReadinessProbe.String() == b.ReadinessProbe.String() && a.StartupProbe.String() == b.StartupProbe.String()
}

// The record is what the informer's store holds, so it is an API object as far as client-go asks:
// metav1.Object for keys and resource versions, runtime.Object for a list's items. Setters change
// the fields the record keeps and ignore the rest (as metav1.Common does); they are only for a
// record that no one else holds yet.

// GetObjectKind is the empty kind: a record is never encoded.
func (r *Record) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject copies the record. What it shares with other records is immutable.
func (r *Record) DeepCopyObject() runtime.Object {
	c := *r
	return &c
}

func (r *Record) GetNamespace() string                          { return r.namespace }
func (r *Record) SetNamespace(ns string)                        { r.namespace = ns }
func (r *Record) GetName() string                               { return r.name }
func (r *Record) SetName(name string)                           { r.name = name }
func (r *Record) GetGenerateName() string                       { return "" }
func (r *Record) SetGenerateName(string)                        {}
func (r *Record) GetUID() types.UID                             { return types.UID(r.uid) }
func (r *Record) SetUID(uid types.UID)                          { r.uid = string(uid) }
func (r *Record) GetResourceVersion() string                    { return r.resourceVersion }
func (r *Record) SetResourceVersion(v string)                   { r.resourceVersion = v }
func (r *Record) GetGeneration() int64                          { return r.generation }
func (r *Record) SetGeneration(g int64)                         { r.generation = g }
func (r *Record) GetSelfLink() string                           { return "" }
func (r *Record) SetSelfLink(string)                            {}
func (r *Record) GetCreationTimestamp() metav1.Time             { return r.created.meta() }
func (r *Record) SetCreationTimestamp(t metav1.Time)            { r.created = stampOf(t.Time) }
func (r *Record) GetDeletionGracePeriodSeconds() *int64         { return nil }
func (r *Record) SetDeletionGracePeriodSeconds(*int64)          {}
func (r *Record) GetLabels() map[string]string                  { return nil }
func (r *Record) SetLabels(map[string]string)                   {}
func (r *Record) GetAnnotations() map[string]string             { return r.annotations }
func (r *Record) SetAnnotations(map[string]string)              {}
func (r *Record) GetFinalizers() []string                       { return nil }
func (r *Record) SetFinalizers([]string)                        {}
func (r *Record) GetOwnerReferences() []metav1.OwnerReference   { return r.owners }
func (r *Record) SetOwnerReferences(o []metav1.OwnerReference)  { r.owners = o }
func (r *Record) GetManagedFields() []metav1.ManagedFieldsEntry { return nil }
func (r *Record) SetManagedFields([]metav1.ManagedFieldsEntry)  {}

func (r *Record) GetDeletionTimestamp() *metav1.Time {
	if !r.deleting {
		return nil
	}
	t := r.deleted.meta()
	return &t
}

func (r *Record) SetDeletionTimestamp(t *metav1.Time) {
	r.deleted, r.deleting = 0, t != nil
	if t != nil {
		r.deleted = stampOf(t.Time)
	}
}

var (
	_ metav1.Object  = (*Record)(nil)
	_ runtime.Object = (*Record)(nil)
)
