package model

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"doomwatch/classify"
	"doomwatch/podrec"
	"doomwatch/sanitize"
)

// A pod's view: what the pod table, the detail pane, --once and the deploy gate show of a pod
// beyond its fields, read from its record when asked and sanitised on the way out, so every
// surface shows the same text and none of them sanitises. Nothing here is kept on the Pod: the
// model holds the informer's record and no second copy of a pod's status (BenchmarkMemory), and
// the dashboard asks only for the rows on screen and the one pod of its detail pane.

// PodColumns are kubectl's columns of a pod at a moment, as `kubectl get pods` prints them
// (classify.Columns), sanitised: STATUS may carry a container's reason, which is the API's text.
type PodColumns struct {
	Ready    string // "1/2"
	Status   string // "CrashLoopBackOff", "Init:0/2", "Terminating"
	Restarts string // "3 (40s ago)"
	// RestartsUntil is when Restarts' "(40s ago)" next reads differently; zero when it has none.
	RestartsUntil time.Time
}

// scratches rebuild records as pods for classify.Columns without allocating. The views run on the
// goroutine that owns the model, but a pool costs nothing there and keeps Columns safe to call
// from anywhere.
var scratches = sync.Pool{New: func() any { return new(podrec.Scratch) }}

// withPod rebuilds p's record as a pod for read, which must not keep it nor any pointer into it
// (podrec.Scratch); false when p has no record.
func (p *Pod) withPod(read func(pod *corev1.Pod)) bool {
	if p == nil || p.rec == nil {
		return false
	}
	s := scratches.Get().(*podrec.Scratch)
	read(s.Pod(p.rec))
	scratches.Put(s)
	return true
}

// Columns are p's kubectl columns at now; zero when p has no record.
func (p *Pod) Columns(now time.Time) PodColumns {
	var c PodColumns
	p.withPod(func(pod *corev1.Pod) {
		ready, status, restarts, until := classify.ColumnsUntil(pod, now)
		c = PodColumns{Ready: sanitize.Text(ready), Status: sanitize.Text(status), Restarts: sanitize.Text(restarts),
			RestartsUntil: until}
	})
	return c
}

// ContainerState is one container of a pod: what its spec asks for and what the kubelet last
// reported of it, sanitised. It is what the detail pane lists, what --once prints per container,
// and what the pod table's STATE, LAST STATE and EXIT columns read of the container that decided
// (Pod.Deciding).
type ContainerState struct {
	// Name is the container's name, as ContainerVerdict.Name and Verdict.Container name it.
	Name string
	// Init says the container is an init container, Sidecar that it is one that runs beside the
	// app containers (restartPolicy Always, classify.IsSidecarContainer).
	Init, Sidecar bool
	// Image is the image the spec asks for.
	Image string
	// Reported says the kubelet has reported the container's status; until it has, the fields
	// below are zero.
	Reported     bool
	Ready        bool
	RestartCount int32
	// State is the container's state now; LastState the one it left at its last restart (the
	// API's lastTerminationState), which `kubectl logs -p` reads.
	State, LastState State

	// apiName is the name as the API server knows it (LogName).
	apiName string
}

// LogName is the container's name as the API server knows it, for a request that names the
// container (its log). It is the API's text, not for the screen: Name is what is shown. The API
// server admits only DNS-1123 labels as container names, which Sanitize returns unchanged, so the
// two differ only for an object it would not have accepted.
func (c *ContainerState) LogName() string { return c.apiName }

// HasPrevious reports whether the container has a previous instance, its last state terminated:
// what `kubectl logs -p` shows, and the kubelet refuses otherwise ("previous terminated container
// %q in pod %q not found", kubernetes pkg/kubelet/kubelet_pods.go validateContainerLogStatus).
func (c *ContainerState) HasPrevious() bool { return c.LastState.Kind == StateTerminated }

// NeverStarted reports whether the container has never started: no instance running, none
// terminated, none before, or no status yet. The kubelet has no log to serve then and says only
// "container %q in pod %q is waiting to start" (validateContainerLogStatus).
func (c *ContainerState) NeverStarted() bool {
	return !c.Reported || c.State.Kind != StateRunning && c.State.Kind != StateTerminated && c.LastState.Kind != StateTerminated
}

// StateKind is which of the API's container states a State is.
type StateKind uint8

// The container states; StateNone is a status that reports none (or no status).
const (
	StateNone StateKind = iota
	StateWaiting
	StateRunning
	StateTerminated
)

var stateWords = [...]string{StateNone: "", StateWaiting: "waiting", StateRunning: "running", StateTerminated: "terminated"}

// String is the state's word, as the API names it and --once prints it: "waiting", "running",
// "terminated"; "" for none.
func (k StateKind) String() string {
	if int(k) < len(stateWords) {
		return stateWords[k]
	}
	return ""
}

// State is a container state, sanitised.
type State struct {
	Kind StateKind
	// Reason and Message are a waiting or terminated state's.
	Reason, Message string
	// ExitCode and Signal are a terminated state's (Signal 0 for none).
	ExitCode, Signal int32
	// StartedAt is a running or terminated state's, FinishedAt a terminated state's; zero when
	// not reported.
	StartedAt, FinishedAt time.Time
}

// Summary is the state in a few words, the way every view says it: "waiting CrashLoopBackOff",
// "running", "terminated Error"; "" for no state.
func (s *State) Summary() string {
	switch s.Kind {
	case StateWaiting, StateTerminated:
		return s.Kind.String() + " " + s.Reason
	case StateRunning:
		return "running"
	}
	return ""
}

// Exit is a terminated state's exit code, ok false for any other state.
func (s *State) Exit() (code int32, ok bool) { return s.ExitCode, s.Kind == StateTerminated }

// States are p's containers, init containers first, each in spec order: the order and the
// containers of p.Containers, whose verdicts they go with. Nil when p has no record.
func (p *Pod) States() []ContainerState { return p.AppendStates(nil) }

// AppendStates appends p's containers (States) to dst, for a caller that reuses its memory.
func (p *Pod) AppendStates(dst []ContainerState) []ContainerState {
	if p == nil || p.rec == nil {
		return dst
	}
	r := p.rec
	for i := range r.InitContainers() {
		spec := &r.InitContainers()[i]
		dst = append(dst, containerState(spec, statusFor(r.InitStatuses(), i, spec.Name), true))
	}
	for i := range r.Containers() {
		spec := &r.Containers()[i]
		dst = append(dst, containerState(spec, statusFor(r.Statuses(), i, spec.Name), false))
	}
	return dst
}

// State is p's container (init container when init) named name, as Name has it; ok is false
// when p has no such container.
func (p *Pod) State(name string, init bool) (ContainerState, bool) {
	if p == nil || p.rec == nil {
		return ContainerState{}, false
	}
	specs, statuses := p.rec.Containers(), p.rec.Statuses()
	if init {
		specs, statuses = p.rec.InitContainers(), p.rec.InitStatuses()
	}
	for i := range specs {
		if sanitize.Text(specs[i].Name) == name {
			return containerState(&specs[i], statusFor(statuses, i, specs[i].Name), init), true
		}
	}
	return ContainerState{}, false
}

// Deciding is the container the pod table's STATE, LAST STATE and EXIT columns describe: the one
// that decided p's verdict, else (the pod itself decided, or the kubelet has not reported the
// deciding container yet) the first app container the kubelet has reported. ok is false when
// there is none.
func (p *Pod) Deciding() (ContainerState, bool) {
	if p == nil || p.rec == nil {
		return ContainerState{}, false
	}
	if name := p.Verdict.Container; name != "" {
		if c, ok := p.State(name, p.Verdict.Init); ok && c.Reported {
			return c, true
		}
	}
	specs := p.rec.Containers()
	for i := range specs {
		if cs := statusFor(p.rec.Statuses(), i, specs[i].Name); cs != nil {
			return containerState(&specs[i], cs, false), true
		}
	}
	return ContainerState{}, false
}

// statusFor finds a container's status by name, trying index i first (classify's statusFor):
// the kubelet reports init containers in spec order.
func statusFor(statuses []podrec.ContainerStatus, i int, name string) *podrec.ContainerStatus {
	if i < len(statuses) && statuses[i].Name() == name {
		return &statuses[i]
	}
	for j := range statuses {
		if statuses[j].Name() == name {
			return &statuses[j]
		}
	}
	return nil
}

// containerState is the container of spec with its status cs (nil when not reported), sanitised.
func containerState(spec *corev1.Container, cs *podrec.ContainerStatus, init bool) ContainerState {
	c := ContainerState{Name: sanitize.Text(spec.Name), Init: init, Sidecar: init && classify.IsSidecarContainer(spec),
		Image: sanitize.Text(spec.Image), apiName: spec.Name}
	if cs == nil {
		return c
	}
	c.Reported, c.Ready, c.RestartCount = true, cs.Ready(), cs.RestartCount()
	c.State, c.LastState = stateOf(cs.State()), stateOf(cs.LastState())
	return c
}

func stateOf(st *podrec.ContainerState) State {
	s := State{Reason: sanitize.Text(st.Reason()), Message: sanitize.Text(st.Message()),
		StartedAt: st.StartedAt().Time(), FinishedAt: st.FinishedAt().Time()}
	switch st.Kind() {
	case podrec.StateWaiting:
		s.Kind = StateWaiting
	case podrec.StateRunning:
		s.Kind = StateRunning
	case podrec.StateTerminated:
		s.Kind, s.ExitCode, s.Signal = StateTerminated, st.ExitCode(), st.Signal()
	}
	return s
}

// ContainerVerdict is the verdict of p's container (init container when init) named name, nil
// for none.
func (p *Pod) ContainerVerdict(name string, init bool) *classify.ContainerVerdict {
	for i := range p.Containers {
		if c := &p.Containers[i]; c.Name == name && c.Init == init {
			return c
		}
	}
	return nil
}

// PodCondition is one of a pod's conditions, sanitised.
type PodCondition struct {
	Type, Status, Reason, Message string
	// Since is when the condition last changed (lastTransitionTime), zero when not reported.
	Since time.Time
}

// Conditions are p's conditions, in the API's order; nil when it reports none.
func (p *Pod) Conditions() []PodCondition {
	var out []PodCondition
	p.withPod(func(pod *corev1.Pod) {
		for i := range pod.Status.Conditions {
			c := &pod.Status.Conditions[i]
			out = append(out, PodCondition{Type: sanitize.Text(string(c.Type)), Status: sanitize.Text(string(c.Status)),
				Reason: sanitize.Text(c.Reason), Message: sanitize.Text(c.Message), Since: c.LastTransitionTime.Time})
		}
	})
	return out
}

// Controller is p's controller as "Kind/name" ("ReplicaSet/checkout-7d9f8b6c5"), the owner
// reference marked controller (at most one: the API server's validation), sanitised; "" when
// nothing controls p. Owner is the top of the chain it starts.
func (p *Pod) Controller() string {
	if p == nil || p.rec == nil {
		return ""
	}
	for _, ref := range p.rec.GetOwnerReferences() {
		if ref.Controller != nil && *ref.Controller {
			return sanitize.Text(ref.Kind) + "/" + sanitize.Text(ref.Name)
		}
	}
	return ""
}

// RecordDigest is a digest of p's record: equal for records of equal content (the pod it
// rebuilds and its revision), "" for none. It is for tests and tools that compare models, such as
// the recorder's round trip, without handing out the record's text, which is the API's and
// unsanitised.
func (p *Pod) RecordDigest() string {
	if p == nil || p.rec == nil {
		return ""
	}
	b, err := json.Marshal(p.rec.Pod())
	if err != nil {
		return "unencodable: " + sanitize.Text(err.Error())
	}
	h := sha256.New()
	h.Write(b)
	h.Write([]byte("\x00revision " + p.rec.Revision()))
	return hex.EncodeToString(h.Sum(nil))
}
