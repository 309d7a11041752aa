package model

import (
	"time"

	"doomwatch/classify"
	"doomwatch/contract"
	"doomwatch/podrec"
	"doomwatch/sanitize"
)

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

// upsertPod stores the latest record of a pod: it resolves the owner, records start failures in
// the ledger, and judges the pod once.
func (m *Model) upsertPod(r *podrec.Record, now time.Time) {
	k := nsName{r.GetNamespace(), r.GetName()}
	p := m.pods[k]
	// The node's UID is looked up before uncount, which forgets a deleted node with its last pod.
	// Node names are DNS subdomains, which Sanitize leaves as they are, so the raw name is the key.
	nodeUID := m.nodeUID(r.NodeName())
	var prev *podrec.Record // the pod's previous record; nil when it is seen for the first time
	if p == nil {
		m.nextID++
		p = &Pod{Key: sanitize.Text(r.GetNamespace() + "/" + r.GetName()), Context: m.context, id: m.nextID}
		m.pods[k] = p
	} else {
		m.uncount(p)
		if p.UID != sanitize.Text(string(r.GetUID())) {
			p.sticky = nil // a new pod under the same name starts with a clean slate
			m.endStarts(p)
		} else {
			prev = p.rec
		}
	}
	// A new pod, or one now bound to its node: events that came before it count now.
	arrived := prev == nil || prev.NodeName() == "" && r.NodeName() != ""
	p.rec = r
	p.UID = sanitize.Text(string(r.GetUID()))
	p.Namespace = sanitize.Text(r.GetNamespace())
	p.Name = sanitize.Text(r.GetName())
	p.Node = sanitize.Text(r.NodeName())
	p.Phase = sanitize.Text(string(r.Phase()))
	p.Created = r.GetCreationTimestamp().Time
	p.ctrl = ctrlKey(r.GetNamespace(), r.GetOwnerReferences())
	p.Owner = m.topOwner(p.ctrl)
	p.workload = m.workloadOf(p)
	m.recordFailures(p, prev, nodeUID, now)
	m.noteStart(p, prev, now)
	if arrived {
		m.podArrived(p, k, now)
	}
	m.judge(p)
	m.count(p)
}

// delete removes one object.
func (m *Model) delete(r contract.Ref) {
	k := nsName{r.Namespace, r.Name}
	switch r.Kind {
	case contract.KindPod:
		if p := m.pods[k]; p != nil {
			m.uncount(p)
			delete(m.pods, k)
			m.endStarts(p)
			m.dropPodEvents(k)
			m.dropRow(p)
			m.indexStart(p, false)
			delete(m.holds, p)
			p.gone = true
			// Ledger entries stay: a deleted pod's failures remain evidence for the window.
		}
	case contract.KindNode:
		m.forgetNodeReadiness(sanitize.Text(r.Name))
		if n := m.nodes[r.Name]; n != nil {
			n.known, n.ready, n.cordoned = false, false, false
			m.dropNodeIfEmpty(n)
		}
		m.nodeView.valid = false
	case contract.KindEvent:
		m.deleteEvent(k)
	default:
		m.deleteWorkload(r.Kind, k)
	}
	// A deleted controller's owner entry stays while pods of it are counted (ownerEntry).
}

// judge sets the pod's verdicts: classify's, then the model's evidence on top (sticky doom,
// cross-node escalation). Only classify decides; the model only promotes verdicts classify named
// by rule.
func (m *Model) judge(p *Pod) {
	// One pass: each container is judged once, for both the pod's verdict and its own.
	pod := m.rebuilt.Pod(p.rec)
	base, cvs := classify.PodAndContainers(pod, m.now, p.Containers[:0])
	p.Containers = cvs
	for i := range p.Containers {
		c := &p.Containers[i]
		c.SetName(sanitize.Text(c.Name))
		c.Reason, c.Message = sanitize.Text(c.Reason), sanitize.Text(c.Message)
	}
	sanitizeVerdict(&base)
	v := base
	if base.Rule == classify.RuleStarting && len(m.evs.pods) > 0 {
		// Stuck before its containers start, the pod shows its cause only in events.
		if ev, ok := classify.PodEvents(pod, v, m.eventsFor(p)); ok {
			sanitizeVerdict(&ev)
			v = ev
		}
	}
	escalated := m.escalatedNodes(p.workload)
	starting := false
	delete(m.holds, p)
	for i := range p.Containers {
		c := &p.Containers[i]
		promoted := m.applySticky(p, c)
		if m.applyBackOff(p, c) {
			promoted = true
		}
		if c.Rule == classify.RuleCrashLoopRunning {
			m.hold(p, pod, c)
		}
		if c.Class == classify.Transient && classify.Escalates(c.Rule) {
			starting = true
			if escalated > 0 {
				c.Verdict = classify.Escalate(c.Verdict, escalated)
				promoted = true
			}
		}
		if promoted && (v.Container == c.Name && v.Init == c.Init || classify.MoreSevere(c.Verdict, v)) {
			v = c.Verdict // carries the container's name and init flag (classify.ContainerVerdict)
		}
	}
	if v.Rule == classify.RuleSandboxFailed {
		// A sandbox failure is a start failure of the pod's own (recordSandboxFailure).
		starting = true
		if escalated > 0 {
			v = classify.Escalate(v, escalated)
		}
	}
	p.Verdict = m.withSurroundings(p, pod, v)
	m.indexStart(p, starting)
}

// rejudge re-evaluates a pod whose evidence changed, keeping its counts right.
func (m *Model) rejudge(p *Pod) {
	m.uncount(p)
	m.judge(p)
	m.count(p)
}

func sanitizeVerdict(v *classify.Verdict) {
	v.Reason = sanitize.Text(v.Reason)
	v.Message = sanitize.Text(v.Message)
	v.Container = sanitize.Text(v.Container)
}

// count adds a pod to the counts, its node's and its ReplicaSet's counts and the views; uncount
// takes it out of the counts. Every change to a pod is an uncount, the change, then a count.
func (m *Model) count(p *Pod) {
	m.counts.add(p.Verdict.Class, 1)
	m.countNamespace(p.Namespace, p.Verdict.Class, 1)
	m.countOwner(p, 1)
	m.indexCtrlPod(p, 1)
	if p.Node != "" {
		n := m.node(p.Node)
		n.pods++
		if failing(p.Verdict.Class) {
			n.failing++
		}
		m.nodeView.counted[n.name] = struct{}{}
	}
	m.countRS(p, 1)
	m.watch(p, 1)
	m.syncRow(p)
}

func (m *Model) uncount(p *Pod) {
	m.counts.add(p.Verdict.Class, -1)
	m.countNamespace(p.Namespace, p.Verdict.Class, -1)
	m.countOwner(p, -1)
	m.indexCtrlPod(p, -1)
	if p.Node != "" {
		if n := m.nodes[p.Node]; n != nil {
			n.pods--
			if failing(p.Verdict.Class) {
				n.failing--
			}
			m.nodeView.counted[n.name] = struct{}{}
			m.dropNodeIfEmpty(n)
		}
	}
	m.countRS(p, -1)
	m.watch(p, -1)
}

func failing(k classify.Class) bool { return k == classify.Transient || k == classify.Doomed }

func (c *Counts) add(k classify.Class, d int) {
	c.Pods += d
	switch k {
	case classify.Healthy:
		c.Healthy += d
	case classify.Progressing:
		c.Progressing += d
	case classify.Transient:
		c.Transient += d
	case classify.Doomed:
		c.Doomed += d
	case classify.Completed:
		c.Completed += d
	}
}
