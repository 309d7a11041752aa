// Package model holds doomwatch's state: pods with their classify verdicts, the evidence gathered
// across updates (start failure ledger, sticky doom, cross-node escalation), suspect nodes and
// rollouts. It is pure and deterministic: time is always passed in, nothing here reads a clock or
// does I/O. kube/ feeds it batches (package contract); tui/ and the --once printers read its views.
package model

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"doomwatch/classify"
	"doomwatch/contract"
	"doomwatch/podrec"
	"doomwatch/sanitize"
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

// Model is doomwatch's state. It is not safe for concurrent use: one goroutine (the bubbletea
// program, or the --once printer) owns it.
type Model struct {
	// Configuration, the source's health, the clock and the version.
	cfg    Config
	health contract.Health
	// now is the time of the last Apply or Expire, for reasons that say how long, and the clock
	// classify judges at.
	now     time.Time
	version uint64
	// context names the model's cluster in a fleet of more than one, for Pod.Context.
	context string

	// Pods, their counts and indexes, and what judging them needs.
	pods   map[nsName]*Pod
	counts Counts
	// nsCounts are the counts per namespace (doomwatch serve's doomwatch_pods), kept as counts is.
	nsCounts map[string]*Counts
	// nextID numbers pods as they are first seen.
	nextID uint64
	// podsByCtrl indexes the pods of the controllers that judge their pods (a Job), judged again
	// when the controller changes (kinds.go).
	podsByCtrl map[ownerKey]map[*Pod]struct{}
	// holds maps each pod that a crash loop holds doomed while it runs (RuleCrashLoopRunning) to
	// when the first such container counts as recovered, to be judged again then (holds.go).
	holds map[*Pod]time.Time
	// watched indexes the pods of the controllers a gate asked about (Gate), nil until one does:
	// the dashboard pays nothing for it.
	watched map[ownerKey]map[*Pod]struct{}
	// rebuilt is where records are rebuilt as pods for classify.
	rebuilt podrec.Scratch

	// Nodes and the evidence against them.
	nodes map[string]*nodeState
	// notReady holds the known nodes whose Ready condition is not True; nodeNotReadyPods the pods
	// whose verdict names such a node and how long (surroundings.go).
	notReady         map[string]nodeReadiness
	nodeNotReadyPods map[*Pod]struct{}
	ledger           ledger
	esc              escalation
	// starting holds, per pod with a container waiting in a create error, those containers and
	// since when (evidence.go); scratch is recordCreateErrors' buffer for classify's verdicts.
	starting map[*Pod][]startEpisode
	scratch  []classify.ContainerVerdict

	// Workloads, their pods and owners, for the rollouts. objects holds the workload objects by
	// kind (kinds.go: each kind is a file).
	objects map[contract.Kind]map[nsName]metav1.Object
	// revPods counts the pods of each revision (a ReplicaSet, a set's revision) and how many are
	// doomed, for the rollouts; countRS and its uncount keep it.
	revPods map[revKey]*podCounts
	// rsOwner and ownerRS link ReplicaSets and the workloads that control them (by name), so a
	// change to a pod or a ReplicaSet marks only its workload's rollout dirty (replicaset.go).
	rsOwner map[nsName]rolloutKey
	ownerRS map[rolloutKey]map[nsName]struct{}
	// owners caches each controller's top owner and workload strings, shared by all its pods, for as
	// long as a pod counted by the model has that controller (owner.go).
	owners    map[ownerKey]*ownerEntry
	ownerless []ownerKey // entries that lost their last pod during this batch

	// Events: the Warning events of pods and nodes (events.go).
	evs eventStore

	// Caches for the views: the pod views (view.go), the nodes view and the rollouts.
	idx      index
	nodeView nodeCache
	rollouts rolloutCache
}

// nsName is a namespace and name, the key of every namespaced object the model keeps (pods,
// workloads, ReplicaSets, events); a struct key spares building "ns/name" strings on lookups.
type nsName struct{ ns, name string }

// New returns an empty model.
func New(cfg Config) *Model {
	def := DefaultConfig()
	if cfg.Window <= 0 {
		cfg.Window = def.Window
	}
	if cfg.LedgerMax <= 0 {
		cfg.LedgerMax = def.LedgerMax
	}
	if cfg.EscalateNodes <= 0 {
		cfg.EscalateNodes = def.EscalateNodes
	}
	if cfg.SuspectPods <= 0 {
		cfg.SuspectPods = def.SuspectPods
	}
	return &Model{
		cfg:              cfg,
		pods:             make(map[nsName]*Pod),
		nodes:            make(map[string]*nodeState),
		revPods:          make(map[revKey]*podCounts),
		rsOwner:          make(map[nsName]rolloutKey),
		ownerRS:          make(map[rolloutKey]map[nsName]struct{}),
		podsByCtrl:       make(map[ownerKey]map[*Pod]struct{}),
		notReady:         make(map[string]nodeReadiness),
		nodeNotReadyPods: make(map[*Pod]struct{}),
		holds:            make(map[*Pod]time.Time),
		owners:           make(map[ownerKey]*ownerEntry),
		objects:          make(map[contract.Kind]map[nsName]metav1.Object),
		ledger:           newLedger(),
		esc:              newEscalation(cfg.EscalateNodes),
		starting:         make(map[*Pod][]startEpisode),
		evs:              newEventStore(),
		idx:              newIndex(),
		nodeView:         nodeCache{counted: make(map[string]struct{})},
		rollouts:         rolloutCache{byKey: make(map[rolloutKey]Rollout), dirty: make(map[rolloutKey]struct{})},
	}
}

// Apply applies one batch at time now: classifies each changed pod once, records evidence and
// bumps the version. Classification happens here, never per frame.
//
// Workloads (ReplicaSets, Jobs) are applied before pods, so pods of a Deployment that arrive in the
// same batch as their ReplicaSet are grouped under the Deployment at once.
func (m *Model) Apply(b *contract.Batch, now time.Time) {
	if b == nil {
		return
	}
	changed := b.Len() > 0
	// Events in the batch that first says synced were listed, not seen happening (upsertEvent).
	live := m.health.Synced
	if m.refreshNodeNotReady(now) {
		changed = true
	}
	if b.Health != nil {
		m.health = sanitizeHealth(*b.Health)
		changed = true
	}
	for _, n := range b.Nodes {
		m.upsertNode(n)
	}
	changedOwners := m.applyOwners(b)
	for _, d := range b.Deletes {
		m.delete(d)
	}
	for _, r := range b.Pods {
		m.upsertPod(r, now)
	}
	// Events after pods: an event and the pod it is about often arrive in one batch.
	for _, e := range b.Events {
		m.upsertEvent(e, now, live)
	}
	m.rejudgeEventPods()
	if len(changedOwners) > 0 {
		m.reresolveOwners(changedOwners)
	}
	if m.expire(now) {
		changed = true
	}
	if m.releaseHolds(now) {
		changed = true
	}
	if m.reconcileEscalation(now) {
		changed = true
	}
	m.forgetOwners()
	m.flush()
	if changed {
		m.version++
	}
}

// Expire drops evidence older than the window at now and re-evaluates what depended on it.
func (m *Model) Expire(now time.Time) {
	if m.refreshNodeNotReady(now) {
		m.version++
	}
	if m.expire(now) {
		m.version++
	}
	// The suspects escalation discounts move with the clock as well as with the ledger.
	if m.reconcileEscalation(now) {
		m.version++
	}
	if m.releaseHolds(now) {
		m.version++
	}
	m.flush()
}

// expire drops ledger entries that left the window and renews the create errors that go on; it
// reports whether the ledger changed.
func (m *Model) expire(now time.Time) bool {
	dropped := m.ledger.expire(now.Add(-m.cfg.Window), &m.esc)
	renewed := m.renewCreateErrors(now)
	if dropped || renewed {
		m.nodeView.valid = false
	}
	return dropped || renewed
}

// Version changes whenever the model's content changes.
func (m *Model) Version() uint64 { return m.version }

// Health is the last connection health the source reported.
func (m *Model) Health() contract.Health { return m.health }

// Counts returns pods per verdict.
func (m *Model) Counts() Counts { return m.counts }

// NamespaceCounts calls f with each namespace's counts, in no order; f must not keep c.
func (m *Model) NamespaceCounts(f func(namespace string, c *Counts)) {
	for ns, c := range m.nsCounts {
		f(ns, c)
	}
}

// countNamespace adds (d = 1) or removes (d = -1) a pod of class k in namespace ns; a namespace
// left without pods goes.
func (m *Model) countNamespace(ns string, k classify.Class, d int) {
	c := m.nsCounts[ns]
	if c == nil {
		if m.nsCounts == nil {
			m.nsCounts = make(map[string]*Counts)
		}
		c = &Counts{}
		m.nsCounts[ns] = c
	}
	c.add(k, d)
	if c.Pods <= 0 {
		delete(m.nsCounts, ns)
	}
}

// Pod returns the pod with key namespace/name, or nil.
func (m *Model) Pod(key string) *Pod {
	ns, name, ok := cutKey(key)
	if !ok {
		return nil
	}
	return m.pods[nsName{ns, name}]
}

// containerStatusOf finds the status of the container or init container named name (sanitised,
// as ContainerVerdict.Name has it) in pod, or nil.
func containerStatusOf(pod *corev1.Pod, name string, init bool) *corev1.ContainerStatus {
	ss := pod.Status.ContainerStatuses
	if init {
		ss = pod.Status.InitContainerStatuses
	}
	for i := range ss {
		if sanitize.Text(ss[i].Name) == name {
			return &ss[i]
		}
	}
	return nil
}

// Config returns the thresholds in use (defaults filled in).
func (m *Model) Config() Config { return m.cfg }

func cutKey(key string) (ns, name string, ok bool) {
	for i := 0; i < len(key); i++ {
		if key[i] == '/' {
			return key[:i], key[i+1:], true
		}
	}
	return "", key, key != ""
}

func sanitizeHealth(h contract.Health) contract.Health {
	h.WatchError = sanitize.Text(h.WatchError)
	h.Unreachable = sanitize.Text(h.Unreachable)
	if len(h.Forbidden) > 0 {
		// A copy: the batch's slice is the source's.
		forbidden := make([]contract.Kind, len(h.Forbidden))
		for i, k := range h.Forbidden {
			forbidden[i] = contract.Kind(sanitize.Text(string(k)))
		}
		h.Forbidden = forbidden
	}
	return h
}
