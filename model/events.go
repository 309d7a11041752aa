package model

import (
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"doomwatch/classify"
	"doomwatch/sanitize"
)

// eventsPerObject is how many Warning events the model keeps per pod and per node: the newest.
// The API server bounds the rest (events expire after an hour, kube-apiserver --event-ttl), and
// client-go's correlator folds an object's repeated events into one with a count.
const eventsPerObject = 8

// Event is one Warning event about a pod or a node, as the pod detail and the nodes panel show it.
// Every string is sanitised.
type Event struct {
	Reason  string
	Message string
	// Count is how many times it occurred; First and Last when (kubectl's COUNT, FIRST SEEN and
	// LAST SEEN, classify.EventOf).
	Count       int32
	First, Last time.Time
	// Source is kubectl's SOURCE: "kubelet, node-3", "attachdetach-controller".
	Source string
}

// eventEntry is one Event object the model keeps, filed under the pod or node it is about.
type eventEntry struct {
	key  nsName // the Event object's namespace and name
	obj  nsName // the pod's namespace and name, or the node's name (ns "")
	node bool
	uid  string // involvedObject.uid, raw: the pod it is about (a node's events carry its name)
	ev   Event
	// component and instance are the raw parts of ev.Source, so an update that keeps them (every
	// count raise) does not build it again.
	component, instance string
	// seen is when the model first saw the event at its current count: the batch's time once the
	// informers had synced before it (the event happened while doomwatch watched), otherwise its
	// last time, no later than the batch's (it was listed: the dashboard opened mid-incident, or
	// --once), as recordFailures dates a pod's failures. counted is the count of a
	// FailedCreatePodSandBox event already in the ledger.
	seen    time.Time
	counted int32
}

// objEvents are the events of one pod or node, newest first, at most eventsPerObject.
type objEvents []*eventEntry

// eventStore holds the events the model keeps, by Event object and by what they are about.
type eventStore struct {
	byKey map[nsName]*eventEntry
	pods  map[nsName]objEvents
	nodes map[string]objEvents
	// rejudge collects, during one Apply, the pods whose events a verdict may read changed.
	rejudge []*Pod
	scratch []classify.Event
}

func newEventStore() eventStore {
	return eventStore{byKey: make(map[nsName]*eventEntry), pods: make(map[nsName]objEvents), nodes: make(map[string]objEvents)}
}

// PodEvents returns the Warning events of the pod with key namespace/name, newest first: those
// about the pod now under that name (its UID). The slice is new; nil for none.
func (m *Model) PodEvents(key string) []Event {
	ns, name, ok := cutKey(key)
	if !ok {
		return nil
	}
	p := m.pods[nsName{ns, name}]
	if p == nil {
		return nil
	}
	var out []Event
	for _, e := range m.evs.pods[nsName{ns, name}] {
		if e.about(p) {
			out = append(out, e.ev)
		}
	}
	return out
}

// NodeEvents returns the Warning events about the node named name, newest first: the kubelet's
// (ContainerGCFailed, ImageGCFailed, FreeDiskSpaceFailed, Rebooted, SystemOOM…) and
// node-problem-detector's. The kubelet posts them in the default namespace, so they are seen when
// doomwatch watches all namespaces or the default one. The slice is new; nil for none.
func (m *Model) NodeEvents(name string) []Event {
	list := m.evs.nodes[name]
	if len(list) == 0 {
		return nil
	}
	out := make([]Event, len(list))
	for i, e := range list {
		out[i] = e.ev
	}
	return out
}

// about reports whether e is about pod p, not an earlier pod of the same name.
func (e *eventEntry) about(p *Pod) bool {
	return e.uid == "" || p.rec == nil || e.uid == string(p.rec.GetUID())
}

// The pod and node kinds an event's involvedObject names.
const (
	involvedPod  = "Pod"
	involvedNode = "Node"
)

// upsertEvent stores the latest state of one Event object; live says the informers had synced
// before this batch. Only Warning events about pods and nodes are kept (the field selector asks
// for Warning events; the demo's fake clientset ignores field selectors).
func (m *Model) upsertEvent(obj *corev1.Event, now time.Time, live bool) {
	k := nsName{obj.Namespace, obj.Name}
	old := m.evs.byKey[k]
	io := &obj.InvolvedObject
	if obj.Type != corev1.EventTypeWarning || io.Kind != involvedPod && io.Kind != involvedNode {
		if old != nil {
			m.dropEvent(old)
		}
		return
	}
	node := io.Kind == involvedNode
	target := nsName{io.Namespace, io.Name}
	if node {
		target = nsName{"", io.Name}
	}
	if old != nil && (old.obj != target || old.node != node || old.uid != string(io.UID)) {
		m.dropEvent(old)
		old = nil
	}
	ce := classify.EventOf(obj)
	ev := Event{Reason: sanitize.Text(ce.Reason), Message: sanitize.Text(ce.Message), Count: ce.Count, First: ce.First, Last: ce.Last}
	component, instance := eventSourceParts(obj)
	if old != nil && old.component == component && old.instance == instance {
		ev.Source = old.ev.Source
	} else {
		ev.Source = sanitize.Text(classify.EventSource(obj))
	}
	e := old
	if e == nil {
		e = &eventEntry{key: k, obj: target, node: node, uid: string(io.UID)}
	} else if e.ev == ev {
		return
	}
	e.component, e.instance = component, instance
	if old == nil || ev.Count != e.ev.Count {
		e.seen = now
		if !live && !ev.Last.IsZero() && ev.Last.Before(now) {
			e.seen = ev.Last
		}
	}
	e.ev = ev
	if !m.file(e) {
		return
	}
	if !node {
		m.podEventChanged(e, now)
	}
}

// eventSourceParts are the fields classify.EventSource reads.
func eventSourceParts(e *corev1.Event) (component, instance string) {
	component, instance = e.Source.Component, e.Source.Host
	if component == "" {
		component = e.ReportingController
	}
	if instance == "" {
		instance = e.ReportingInstance
	}
	return component, instance
}

// file puts e in its object's list at its place by time and keeps the newest eventsPerObject. It
// reports whether e is kept: an event older than all of a full list's is not.
func (m *Model) file(e *eventEntry) bool {
	list := m.eventList(e)
	if i := slices.Index(list, e); i >= 0 {
		list = slices.Delete(list, i, i+1)
	}
	i, _ := slices.BinarySearchFunc(list, e, newerFirst)
	list = slices.Insert(list, i, e)
	kept := true
	if len(list) > eventsPerObject {
		last := list[len(list)-1]
		list[len(list)-1] = nil
		list = list[:len(list)-1]
		delete(m.evs.byKey, last.key)
		kept = last != e
	}
	if kept {
		m.evs.byKey[e.key] = e
	}
	m.setEventList(e, list)
	return kept
}

// newerFirst orders an object's events: the latest last time first, then the latest first time,
// then by name, so the order does not depend on arrival.
func newerFirst(a, b *eventEntry) int {
	if c := b.ev.Last.Compare(a.ev.Last); c != 0 {
		return c
	}
	if c := b.ev.First.Compare(a.ev.First); c != 0 {
		return c
	}
	return strings.Compare(a.key.name, b.key.name)
}

func (m *Model) eventList(e *eventEntry) objEvents {
	if e.node {
		return m.evs.nodes[e.obj.name]
	}
	return m.evs.pods[e.obj]
}

func (m *Model) setEventList(e *eventEntry, list objEvents) {
	switch {
	case e.node && len(list) == 0:
		delete(m.evs.nodes, e.obj.name)
	case e.node:
		m.evs.nodes[e.obj.name] = list
	case len(list) == 0:
		delete(m.evs.pods, e.obj)
	default:
		m.evs.pods[e.obj] = list
	}
}

// dropEvent forgets one event: the API deleted it (after --event-ttl), or it no longer qualifies.
func (m *Model) dropEvent(e *eventEntry) {
	delete(m.evs.byKey, e.key)
	list := m.eventList(e)
	if i := slices.Index(list, e); i >= 0 {
		list = slices.Delete(list, i, i+1)
	}
	m.setEventList(e, list)
	if !e.node {
		if p := m.pods[e.obj]; p != nil && e.about(p) && judgedBy(e) {
			m.evs.rejudge = append(m.evs.rejudge, p)
		}
	}
}

// judgedBy reports whether a verdict reads pod event e: classify.PodEvents reads some reasons, and
// a back-off reads the kubelet's report of a failed pull (applyPullError). Another event cannot
// change a verdict, so the model re-judges a pod only for these.
func judgedBy(e *eventEntry) bool {
	if classify.EventReason(e.ev.Reason) {
		return true
	}
	_, _, pull := classify.PullFailure(e.ev.Reason, e.ev.Message)
	return pull
}

// deleteEvent handles the API's delete of the Event object named k.
func (m *Model) deleteEvent(k nsName) {
	if e := m.evs.byKey[k]; e != nil {
		m.dropEvent(e)
	}
}

// dropPodEvents forgets the events of a deleted pod. Its sandbox failures stay in the ledger, as
// all of a deleted pod's failures do.
func (m *Model) dropPodEvents(k nsName) {
	for _, e := range m.evs.pods[k] {
		delete(m.evs.byKey, e.key)
	}
	delete(m.evs.pods, k)
}

// podEventChanged records a sandbox failure in the ledger and marks the pod for re-judging when
// the event is one a verdict reads. A pod the model does not know yet (its event came first) has
// its failures recorded when it arrives (podEventsArrived).
func (m *Model) podEventChanged(e *eventEntry, now time.Time) {
	p := m.pods[e.obj]
	if p == nil || !e.about(p) {
		return
	}
	m.recordSandboxFailure(p, e, now)
	if judgedBy(e) {
		m.evs.rejudge = append(m.evs.rejudge, p)
	}
}

// podArrived is told of a pod seen for the first time under its UID (or bound to its node since):
// events of an earlier pod of that name go, and the sandbox failures of events that came before
// the pod are recorded now.
func (m *Model) podArrived(p *Pod, k nsName, now time.Time) {
	list := m.evs.pods[k]
	if len(list) == 0 {
		return
	}
	kept := list[:0]
	for _, e := range list {
		if !e.about(p) {
			delete(m.evs.byKey, e.key)
			continue
		}
		kept = append(kept, e)
		m.recordSandboxFailure(p, e, now)
	}
	clear(list[len(kept):])
	if len(kept) == 0 {
		delete(m.evs.pods, k)
	} else {
		m.evs.pods[k] = kept
	}
}

// combinedPrefix is what client-go's event correlator puts before the message of an event that
// stands for similar ones it folded together (client-go tools/record/events_cache.go
// EventAggregate): every sandbox attempt's message names a new sandbox ID, so after ten of them
// the kubelet's failures arrive as one combined event whose count grows.
const combinedPrefix = "(combined from similar events): "

// recordSandboxFailure adds the failure a FailedCreatePodSandBox event stands for to the ledger,
// once per event and count: a new event is one failure, and so is each update that raised its
// count (several raises between two batches are one). A resync or relist repeats the count and
// adds nothing. The failure is the pod's (no container) on the pod's node, dated when the model
// saw the count (eventEntry.seen); a pod not yet bound to a node is recorded once it is.
// classify's RuleSandboxFailed is transient, like an exit-128 start failure: the CNI or runtime
// of one node failing, so the nodes panel counts it among the node's start failures and the
// suspect rule and cross-node escalation weigh it as they weigh exit 128.
func (m *Model) recordSandboxFailure(p *Pod, e *eventEntry, now time.Time) {
	if e.ev.Reason != "FailedCreatePodSandBox" || e.ev.Count <= e.counted || p.Node == "" {
		return
	}
	e.counted = e.ev.Count
	f := Failure{
		PodUID:   p.UID,
		Pod:      p.Key,
		Node:     p.Node,
		NodeUID:  m.nodeUID(p.Node),
		Workload: p.workload,
		At:       e.seen,
		Reason:   e.ev.Reason,
		Message:  normalizeMessage(strings.TrimPrefix(e.ev.Message, combinedPrefix)),
	}
	m.addFailure(f, failureKey{uid: failureID(p), container: e.key.name, at: int64(e.ev.Count), sandbox: true}, now.Add(-m.cfg.Window))
}

// eventsFor returns the pod's events as classify.PodEvents reads them, in a buffer reused by the
// next call.
func (m *Model) eventsFor(p *Pod) []classify.Event {
	list := m.evs.pods[nsName{p.rec.GetNamespace(), p.rec.GetName()}]
	out := m.evs.scratch[:0]
	for _, e := range list {
		if e.about(p) {
			out = append(out, classify.Event{Reason: e.ev.Reason, Message: e.ev.Message, Count: e.ev.Count, First: e.ev.First, Last: e.ev.Last})
		}
	}
	m.evs.scratch = out[:0]
	return out
}

// pullFailure returns the error of the newest event about p in which the kubelet reports a failed
// pull of img (sanitised, as the events are), and when the model saw it (eventEntry.seen).
func (m *Model) pullFailure(p *Pod, img string) (err string, seen time.Time, ok bool) {
	if len(m.evs.pods) == 0 {
		return "", time.Time{}, false
	}
	for _, e := range m.evs.pods[nsName{p.rec.GetNamespace(), p.rec.GetName()}] {
		if !e.about(p) {
			continue
		}
		if pulled, msg, ok := classify.PullFailure(e.ev.Reason, e.ev.Message); ok && pulled == img {
			return msg, e.seen, true
		}
	}
	return "", time.Time{}, false
}

// rejudgeEventPods re-judges, once each, the pods whose events changed during this Apply.
func (m *Model) rejudgeEventPods() {
	if len(m.evs.rejudge) == 0 {
		return
	}
	done := make(map[*Pod]struct{}, len(m.evs.rejudge))
	for _, p := range m.evs.rejudge {
		if _, ok := done[p]; ok || p.gone {
			continue
		}
		done[p] = struct{}{}
		m.rejudge(p)
	}
	clear(m.evs.rejudge)
	m.evs.rejudge = m.evs.rejudge[:0]
}
