package model

import (
	"slices"
	"time"

	"doomwatch/classify"
)

// escalation indexes the ledger by workload and node, for cross-node escalation: a workload whose
// containers failed to start (a transient exit 128, or CRI-O's transient create error) on several
// nodes within the window is not suffering node-local trouble (the premise of Krane's exit-128
// rule, Shopify/krane#656), so its start-failing pods are doomed. How many nodes, and which count,
// is classify.NotNodeLocal's rule: none while its failing revisions are healthy on half of their
// pods or more, or while some of their pods have not had their try yet; at least EscalateNodes
// nodes in all while no pod of them is healthy; otherwise at least that many nodes that do not
// stand out from the others as suspects. Flaky nodes must not make a rollout
// look doomed: two flaky nodes and one failure elsewhere are three nodes, and the suspect rule
// names the two.
//
// Precisely: in a pod of an escalated workload, every container whose classify verdict is
// transient with RuleStartFailure128 (the exit-128 failure is its current state, or its lastState
// while it waits to be recreated) or RuleCreateErrorTransient becomes doomed with RuleEscalated,
// and the pod's verdict follows; so does a pod waiting on a sandbox it failed to create
// (RuleSandboxFailed, from its events). Containers that run again (the failure is only history) and
// verdicts classify already doomed (CrashLoopBackOff) are left alone. The node counts are over the
// workload's live ledger entries, so escalation clears as failures leave the window. Nodes are
// counted by name: a node registered again under its old name is the same place.
type escalation struct {
	// min is --escalate-nodes.
	min int
	// nodes counts live ledger entries per workload and node; wide holds the workloads whose
	// entries are on at least min nodes, the only ones that may be escalated.
	nodes map[string]map[string]int
	wide  map[string]struct{}
	// pods counts live ledger entries per workload and pod key: the pods that failed, whose
	// revisions show whether the workload starts where it runs (failingRevisions).
	pods map[string]map[string]int
	// applied is the node count each escalated workload's pods were last judged with (the reason
	// names it); a workload that is not escalated has none.
	applied map[string]int
	// startPods holds, per workload, its pods with a container whose verdict escalation promotes
	// (transient, with an escalating rule; judge files them), and startOf the workload each is
	// filed under.
	startPods map[string]map[*Pod]struct{}
	startOf   map[*Pod]string
	// suspects caches the suspect nodes by name that escalation discounts, judged with every
	// workload counted but those no pod of whose failing revisions is healthy; valid while the
	// ledger, the second and those workloads are the same (suspectsAt, suspectsGen, suspectsLeft).
	suspects     map[string]bool
	suspectsAt   int64
	suspectsGen  uint64
	suspectsLeft []string
}

func newEscalation(min int) escalation {
	return escalation{
		min:       min,
		nodes:     make(map[string]map[string]int),
		wide:      make(map[string]struct{}),
		pods:      make(map[string]map[string]int),
		applied:   make(map[string]int),
		startPods: make(map[string]map[*Pod]struct{}),
		startOf:   make(map[*Pod]string),
	}
}

func (e *escalation) add(f *Failure) {
	ns := e.nodes[f.Workload]
	if ns == nil {
		ns = make(map[string]int)
		e.nodes[f.Workload] = ns
	}
	ns[f.Node]++
	if len(ns) >= e.min {
		e.wide[f.Workload] = struct{}{}
	}
	ps := e.pods[f.Workload]
	if ps == nil {
		ps = make(map[string]int)
		e.pods[f.Workload] = ps
	}
	ps[f.Pod]++
}

func (e *escalation) remove(f *Failure) {
	if ps := e.pods[f.Workload]; ps != nil {
		if ps[f.Pod]--; ps[f.Pod] <= 0 {
			delete(ps, f.Pod)
			if len(ps) == 0 {
				delete(e.pods, f.Workload)
			}
		}
	}
	ns := e.nodes[f.Workload]
	if ns == nil {
		return
	}
	if ns[f.Node]--; ns[f.Node] <= 0 {
		delete(ns, f.Node)
		if len(ns) < e.min {
			delete(e.wide, f.Workload)
		}
		if len(ns) == 0 {
			delete(e.nodes, f.Workload)
		}
	}
}

// escalatedNodes returns the node count workload w's pods are judged with when it is escalated,
// else 0.
func (m *Model) escalatedNodes(w string) int { return m.esc.applied[w] }

// reconcileEscalation decides, at now, which workloads are escalated (classify.NotNodeLocal) and
// re-judges the pods of those whose escalation changed (escalated, cleared, or escalated over a
// different number of nodes, which the reason names). It costs nothing while no workload failed on
// EscalateNodes nodes; otherwise one pass over the window's failures a second for the suspects.
// It reports whether any pod's verdict may have changed.
func (m *Model) reconcileEscalation(now time.Time) bool {
	e := &m.esc
	if len(e.wide) == 0 && len(e.applied) == 0 {
		return false
	}
	next := make(map[string]int, len(e.wide))
	revs := make(map[string]revisionHealth, len(e.wide))
	var left []string // wide workloads no pod of whose failing revisions is healthy
	for w := range e.wide {
		h := m.failingRevisions(w)
		revs[w] = h
		if h.healthy == 0 {
			left = append(left, w)
		}
	}
	suspects := m.escalationSuspects(now, left)
	for w := range e.wide {
		ns := e.nodes[w]
		notSuspect := 0
		for name := range ns {
			if !suspects[name] {
				notSuspect++
			}
		}
		if n := classify.NotNodeLocal(len(ns), notSuspect, revs[w].healthy, revs[w].failing, revs[w].total, e.min); n > 0 {
			next[w] = n
		}
	}
	var dirty []string
	for w, n := range next {
		if e.applied[w] != n {
			dirty = append(dirty, w)
		}
	}
	for w := range e.applied {
		if _, ok := next[w]; !ok {
			dirty = append(dirty, w)
		}
	}
	if len(dirty) == 0 {
		return false
	}
	e.applied = next
	m.nodeView.valid = false // the nodes view leaves escalated workloads out
	var pods []*Pod
	for _, w := range dirty {
		for p := range e.startPods[w] {
			pods = append(pods, p)
		}
	}
	for _, p := range pods {
		m.rejudge(p)
	}
	return true
}

// revisionHealth is what the pods of the revisions whose pods of a workload failed to start say:
// how many there are, how many are healthy and how many are failing (transient or doomed); the
// rest are still on their way (creating, starting, not ready yet).
type revisionHealth struct{ healthy, failing, total int }

// failingRevisions counts the pods of the revisions whose pods of workload w failed to start
// within the window: whether the workload starts where it runs (classify.NotNodeLocal). A pod
// without a revision the model counts (a Job's, an unmanaged pod) counts alone, healthy once it
// started after all, as Krane saw flaky nodes' pods do within seconds. Pods that are gone count no
// more.
func (m *Model) failingRevisions(w string) revisionHealth {
	var h revisionHealth
	var seen map[revKey]struct{}
	for key := range m.esc.pods[w] {
		p := m.Pod(key)
		if p == nil {
			continue
		}
		var s *podCounts
		var k revKey
		if km := kindOf(p.ctrl.kind); km != nil && km.revision != nil {
			k, _, _ = km.revision(m, p)
			s = m.revPods[k]
		}
		if s == nil {
			h.total++
			switch {
			case p.Verdict.Class == classify.Healthy:
				h.healthy++
			case failing(p.Verdict.Class):
				h.failing++
			}
			continue
		}
		if seen == nil {
			seen = make(map[revKey]struct{})
		}
		if _, ok := seen[k]; ok {
			continue
		}
		seen[k] = struct{}{}
		h.healthy += s.healthy
		h.failing += s.failing
		h.total += s.total
	}
	return h
}

// escalationSuspects is the set of suspect nodes, by name, that escalation discounts: the suspect
// rule at now with every workload's failures counted but left's, no pod of whose failing revisions
// is healthy (they are escalated, and their failures must not make suspects of the nodes they are
// on). It is judged once a second of now and when the ledger changes; nil while no workload may be
// escalated.
func (m *Model) escalationSuspects(now time.Time, left []string) map[string]bool {
	e := &m.esc
	if len(e.wide) == 0 {
		return nil
	}
	slices.Sort(left)
	if e.suspects != nil && e.suspectsAt == now.Unix() && e.suspectsGen == m.ledger.gen && slices.Equal(e.suspectsLeft, left) {
		return e.suspects
	}
	skip := make(map[string]struct{}, len(left))
	for _, w := range left {
		skip[w] = struct{}{}
	}
	ev := m.gatherNodes(now, false)
	j := ev.judge(m.cfg.SuspectPods, func(w string) bool { _, ok := skip[w]; return ok })
	out := make(map[string]bool)
	for i, v := range j.verdicts {
		if v.Suspect {
			out[j.aggs[i].Name] = true
		}
	}
	e.suspects, e.suspectsAt, e.suspectsGen, e.suspectsLeft = out, now.Unix(), m.ledger.gen, left
	return out
}

// indexStart files p under its workload in esc.startPods when it has a container escalation would
// doom (start is true), and takes it out otherwise: those pods are the only ones a change of the
// workload's escalation re-judges, so it costs their number, not the model's.
func (m *Model) indexStart(p *Pod, start bool) {
	e := &m.esc
	if w, ok := e.startOf[p]; ok && (!start || w != p.workload) {
		delete(e.startOf, p)
		if set := e.startPods[w]; set != nil {
			delete(set, p)
			if len(set) == 0 {
				delete(e.startPods, w)
			}
		}
	}
	if !start {
		return
	}
	if _, ok := e.startOf[p]; ok {
		return
	}
	e.startOf[p] = p.workload
	set := e.startPods[p.workload]
	if set == nil {
		set = make(map[*Pod]struct{})
		e.startPods[p.workload] = set
	}
	set[p] = struct{}{}
}
