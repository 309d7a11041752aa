package model

// escalation indexes the ledger by workload and node, for cross-node escalation: a workload whose
// containers failed to start (a transient exit 128, or CRI-O's transient create error) on at least
// EscalateNodes distinct nodes within the window is not suffering node-local trouble (the premise
// of Krane's exit-128 rule, Shopify/krane#656), so its start-failing pods are doomed.
//
// Precisely: in a pod of an escalated workload, every container whose classify verdict is
// transient with RuleStartFailure128 (the exit-128 failure is its current state, or its lastState
// while it waits to be recreated) or RuleCreateErrorTransient becomes doomed with RuleEscalated,
// and the pod's verdict follows; so does a pod waiting on a sandbox it failed to create
// (RuleSandboxFailed, from its events). Containers that run again (the failure is only history) and
// verdicts classify already doomed (CrashLoopBackOff) are left alone. The distinct-node count is
// over the workload's live ledger entries, so escalation clears as failures leave the window.
// Nodes are counted by name: a node registered again under its old name is the same place.
type escalation struct {
	// nodes counts live ledger entries per workload and node.
	nodes map[string]map[string]int
	// applied is the distinct-node count each escalated workload's pods were last judged with.
	applied map[string]int
	// touched collects workloads whose node set changed since the last reconcile.
	touched map[string]struct{}
	// startPods holds, per workload, its pods with a container whose verdict escalation promotes
	// (transient, with an escalating rule; judge files them), and startOf the workload each is
	// filed under.
	startPods map[string]map[*Pod]struct{}
	startOf   map[*Pod]string
}

func newEscalation() escalation {
	return escalation{
		nodes:     make(map[string]map[string]int),
		applied:   make(map[string]int),
		touched:   make(map[string]struct{}),
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
	if ns[f.Node] == 0 {
		e.touched[f.Workload] = struct{}{}
	}
	ns[f.Node]++
}

func (e *escalation) remove(f *Failure) {
	ns := e.nodes[f.Workload]
	if ns == nil {
		return
	}
	if ns[f.Node]--; ns[f.Node] <= 0 {
		delete(ns, f.Node)
		e.touched[f.Workload] = struct{}{}
		if len(ns) == 0 {
			delete(e.nodes, f.Workload)
		}
	}
}

// escalatedNodes returns the distinct-node count when workload w is escalated, else 0.
func (m *Model) escalatedNodes(w string) int {
	if n := len(m.esc.nodes[w]); n >= m.cfg.EscalateNodes {
		return n
	}
	return 0
}

// reconcileEscalation re-judges the pods of workloads whose escalation changed (escalated,
// cleared, or escalated over a different number of nodes, which the reason names).
func (m *Model) reconcileEscalation() {
	if len(m.esc.touched) == 0 {
		return
	}
	var dirty map[string]struct{}
	for w := range m.esc.touched {
		n := m.escalatedNodes(w)
		if m.esc.applied[w] == n {
			continue
		}
		if n == 0 {
			delete(m.esc.applied, w)
		} else {
			m.esc.applied[w] = n
		}
		if dirty == nil {
			dirty = make(map[string]struct{})
		}
		dirty[w] = struct{}{}
	}
	clear(m.esc.touched)
	var pods []*Pod
	for w := range dirty {
		for p := range m.esc.startPods[w] {
			pods = append(pods, p)
		}
	}
	for _, p := range pods {
		m.rejudge(p)
	}
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
