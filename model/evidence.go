package model

import (
	"sort"
	"time"

	"doomwatch/classify"
	"doomwatch/podrec"
	"doomwatch/sanitize"
)

// The kubelet's waiting reasons for a container the runtime failed to create or start (kubernetes
// pkg/kubelet/kuberuntime/kuberuntime_container.go, ErrCreateContainer;
// pkg/kubelet/container/sync_result.go, ErrRunContainer).
const (
	reasonCreateContainerError = "CreateContainerError"
	reasonRunContainerError    = "RunContainerError"
)

// recordFailures adds the pod's transient start failures to the ledger: exit-128 terminations
// (recorder.terminated) and create errors (recordCreateErrors). Both state and lastState of every
// container, init containers included, are read. It first notes the containers' pull errors
// (notePullErrors), which need the previous record too.
//
// When a failure counts (Failure.At). The window is measured on doomwatch's clock, not the
// node's: a node whose clock is behind by more than the window would otherwise never count, and
// one ahead would count for longer. So a failure that appears on a pod the model already knew
// (prev, the pod's previous object, is not nil) is dated now, the batch it arrived in; its
// finishedAt only identifies it. A failure already present when the pod is first seen (the
// dashboard opened mid-incident, --once, or a pod that failed before its first batch) can only be
// dated by its finishedAt, no later than now: the node's skew then shifts it, which nothing on the
// pod can measure. A failure the previous object already showed was judged then and is not judged
// again, so one that was too old, or expired, is never re-dated.
//
// Only classify's RuleStartFailure128 and RuleCreateErrorTransient are node evidence: a start
// failure classify calls deterministic (a missing executable) is the workload's fault, not the
// node's.
func (m *Model) recordFailures(p *Pod, prev *podrec.Record, nodeUID string, now time.Time) {
	m.notePullErrors(p, prev, now)
	init, statuses := p.rec.InitStatuses(), p.rec.Statuses()
	if len(init) == 0 && len(statuses) == 0 {
		return
	}
	since := now.Add(-m.cfg.Window)
	r := recorder{m: m, p: p, nodeUID: nodeUID, first: prev == nil, since: since, now: now}
	if prev != nil {
		r.prevInit, r.prev = prev.InitStatuses(), prev.Statuses()
	}
	for i := range init {
		r.status(&init[i], r.prevInit)
	}
	for i := range statuses {
		r.status(&statuses[i], r.prev)
	}
	m.recordCreateErrors(p, nodeUID, since, now)
}

// recorder carries what one pod update brings through its container statuses.
type recorder struct {
	m              *Model
	p              *Pod
	nodeUID        string
	first          bool // the pod is seen for the first time: its failures are seeded
	prevInit, prev []podrec.ContainerStatus
	since, now     time.Time
}

func (r *recorder) status(cs *podrec.ContainerStatus, prev []podrec.ContainerStatus) {
	if st := cs.State(); st.Kind() == podrec.StateTerminated {
		r.terminated(cs, st, prev)
	}
	if st := cs.LastState(); st.Kind() == podrec.StateTerminated {
		r.terminated(cs, st, prev)
	}
}

// terminated records one terminated state. A failure without finishedAt is not evidence: the
// kubelet copies the runtime's finishedAt into every terminated state (kubernetes
// pkg/kubelet/kubelet_pods.go, convertToAPIContainerStatuses), and containerd sets it when a start
// fails (containerd internal/cri/server/container_start.go, StartContainer), so only a hand-made
// object lacks it. Without a time such a failure could not be matched between state and
// lastState, nor between one update and the next: it would be counted again and again.
func (r *recorder) terminated(cs *podrec.ContainerStatus, st *podrec.ContainerState, prev []podrec.ContainerStatus) {
	if st.FinishedAt() == 0 {
		return
	}
	finished := st.FinishedAt().Time()
	p := r.p
	k := failureKey{uid: failureID(p), container: cs.Name(), at: int64(st.FinishedAt())}
	// Dedup and window checks come first: they are lookups, and an update repeating a known
	// failure costs no classification.
	if r.m.ledger.has(k) {
		return
	}
	at := r.now
	if r.first {
		if finished.Before(r.now) {
			at = finished
		}
	} else if showedTermination(prev, cs.Name(), st.FinishedAt()) {
		return
	}
	if at.Before(r.since) {
		return
	}
	t, _ := st.Terminated()
	v, ok := classify.StartFailure(&t)
	if !ok || v.Rule != classify.RuleStartFailure128 {
		return
	}
	f := Failure{
		PodUID:       p.UID,
		Pod:          p.Key,
		Container:    sanitize.Text(cs.Name()),
		Node:         p.Node,
		NodeUID:      r.nodeUID,
		Workload:     p.workload,
		RestartCount: cs.RestartCount(),
		At:           at,
		FinishedAt:   finished,
		ExitCode:     t.ExitCode,
		Reason:       sanitize.Text(t.Reason),
		Message:      normalizeMessage(sanitize.Text(t.Message)),
	}
	r.m.addFailure(f, k, r.since)
}

// failureID is a pod's identity in a failureKey: its UID, or its key for an object without one
// (hand-made fixtures), which still deduplicates per pod.
func failureID(p *Pod) string {
	if p.UID == "" {
		return p.Key
	}
	return p.UID
}

// addFailure files f under k in the ledger (evidence since since) and, when it is new, marks the
// nodes view for a rebuild.
func (m *Model) addFailure(f Failure, k failureKey, since time.Time) {
	if m.ledger.add(f, k, since, m.cfg.LedgerMax, &m.esc) {
		m.nodeView.valid = false
	}
}

// showedTermination reports whether the previous statuses showed container name terminated at
// finished, in state or lastState.
func showedTermination(prev []podrec.ContainerStatus, name string, finished podrec.Stamp) bool {
	for i := range prev {
		cs := &prev[i]
		if cs.Name() != name {
			continue
		}
		for _, st := range [...]*podrec.ContainerState{cs.State(), cs.LastState()} {
			if st.Kind() == podrec.StateTerminated && st.FinishedAt() == finished {
				return true
			}
		}
		return false
	}
	return false
}

// startEpisode is a container waiting in a transient create error, and the moment its failure is
// dated: when the model first saw it there, or last renewed it (renewCreateErrors). A pod's
// episodes are kept in Model.starting.
type startEpisode struct {
	container string // the raw name, as in the status
	init      bool
	at        time.Time
}

func createErrorReason(reason string) bool {
	return reason == reasonCreateContainerError || reason == reasonRunContainerError
}

// recordCreateErrors records CRI-O's runtime start failures. CRI-O reports what containerd reports
// as a terminated exit 128 as a waiting CreateContainerError or RunContainerError (the kubelet's
// reasons when the runtime's CreateContainer or StartContainer call fails); there is no
// terminated state and no finishedAt. A container waiting in one that classify calls transient
// (RuleCreateErrorTransient) is one failure, dated and identified by the moment the model first
// saw it there: it stays one failure however many updates repeat it, and a new one starts when
// the container has left that state and comes back. While it stays, it is renewed once per window
// (renewCreateErrors), since the kubelet keeps retrying it without the status changing.
//
// The episodes live in m.starting, not on Pod: few pods ever have one, and every pod would pay
// for the field.
func (m *Model) recordCreateErrors(p *Pod, nodeUID string, since, now time.Time) {
	rec := p.rec
	eps := m.starting[p]
	changed := false
	verdicts, judged := m.scratch[:0], false
	for _, list := range [...]struct {
		statuses []podrec.ContainerStatus
		init     bool
	}{{rec.InitStatuses(), true}, {rec.Statuses(), false}} {
		for i := range list.statuses {
			cs := &list.statuses[i]
			failing := false
			// A RunContainerError whose lastState is the start failure it reports (containerd's
			// StartError, dockershim's ContainerCannotRun: the kubelet writes the error it got back
			// from StartContainer, kuberuntime_container.go startContainer) is that failure, already
			// in the ledger by its finishedAt; only CRI-O's create errors have no terminated state.
			if st := cs.State(); st.Kind() == podrec.StateWaiting && createErrorReason(st.Reason()) && !reportsStartFailure(cs) {
				// Only now is a classification worth its cost: few pods are ever in these states.
				if !judged {
					verdicts, judged = classify.Containers(m.rebuilt.Pod(rec), m.now, verdicts), true
				}
				failing = ruleOf(verdicts, cs.Name(), list.init) == classify.RuleCreateErrorTransient
			}
			j := findStart(eps, cs.Name(), list.init)
			switch {
			case failing && j < 0:
				eps = append(eps, startEpisode{container: cs.Name(), init: list.init, at: now})
				changed = true
				m.addCreateError(p, cs, nodeUID, now, since)
			case !failing && j >= 0:
				eps = append(eps[:j], eps[j+1:]...)
				changed = true
			}
		}
	}
	if judged {
		m.scratch = verdicts[:0]
	}
	switch {
	case !changed:
	case len(eps) == 0:
		delete(m.starting, p)
	default:
		m.starting[p] = eps
	}
}

// addCreateError records the create error container cs is waiting in, dated at.
func (m *Model) addCreateError(p *Pod, cs *podrec.ContainerStatus, nodeUID string, at, since time.Time) {
	w := cs.State()
	f := Failure{
		PodUID:       p.UID,
		Pod:          p.Key,
		Container:    sanitize.Text(cs.Name()),
		Node:         p.Node,
		NodeUID:      nodeUID,
		Workload:     p.workload,
		RestartCount: cs.RestartCount(),
		At:           at,
		Reason:       sanitize.Text(w.Reason()),
		Message:      normalizeMessage(sanitize.Text(w.Message())),
	}
	m.addFailure(f, failureKey{uid: failureID(p), container: cs.Name(), at: at.UnixNano(), createError: true}, since)
}

// renewCreateErrors records again, at now, every container still waiting in a create error whose
// failure has left the window: it has kept failing to start all along (the kubelet retries it on
// every sync), but its status did not change, so no update said so. Pods are taken in name order,
// so the ledger's order does not depend on map order. It reports whether it renewed any.
func (m *Model) renewCreateErrors(now time.Time) bool {
	if len(m.starting) == 0 {
		return false
	}
	since := now.Add(-m.cfg.Window)
	var due []*Pod
	for p, eps := range m.starting {
		for i := range eps {
			if eps[i].at.Before(since) {
				due = append(due, p)
				break
			}
		}
	}
	sort.Slice(due, func(i, j int) bool { return due[i].Key < due[j].Key })
	renewed := false
	for _, p := range due {
		eps := m.starting[p]
		for i := range eps {
			ep := &eps[i]
			cs := rawStatus(p.rec, ep.container, ep.init)
			if ep.at.Before(since) && cs != nil && cs.State().Kind() == podrec.StateWaiting && createErrorReason(cs.State().Reason()) {
				ep.at = now
				m.addCreateError(p, cs, m.nodeUID(p.Node), now, since)
				renewed = true
			}
		}
	}
	return renewed
}

// endStarts forgets the pod's create errors (the pod is gone, or another pod took its name).
func (m *Model) endStarts(p *Pod) { delete(m.starting, p) }

// findStart is the index of container name's episode in eps, or -1.
func findStart(eps []startEpisode, name string, init bool) int {
	for i := range eps {
		if eps[i].container == name && eps[i].init == init {
			return i
		}
	}
	return -1
}

// ruleOf is classify's rule for the container named name (raw), RuleNone when it has none.
func ruleOf(vs []classify.ContainerVerdict, name string, init bool) classify.Rule {
	for i := range vs {
		if vs[i].Name == name && vs[i].Init == init {
			return vs[i].Rule
		}
	}
	return classify.RuleNone
}

// rawStatus finds a container's status in r by its raw name.
func rawStatus(r *podrec.Record, name string, init bool) *podrec.ContainerStatus {
	ss := r.Statuses()
	if init {
		ss = r.InitStatuses()
	}
	for i := range ss {
		if ss[i].Name() == name {
			return &ss[i]
		}
	}
	return nil
}

// reportsStartFailure reports a waiting RunContainerError that follows a terminated start failure.
func reportsStartFailure(cs *podrec.ContainerStatus) bool {
	last := cs.LastState()
	return cs.State().Reason() == "RunContainerError" && last.Kind() == podrec.StateTerminated &&
		(last.Reason() == "StartError" || last.Reason() == "ContainerCannotRun")
}
