package model

import (
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"doomwatch/classify"
	"doomwatch/sanitize"
)

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

// nodeState is what the model keeps per node name between batches: the current Node object's
// state (its UID identifies it) and attributes (nodeattrs.go), and the pod counts, maintained
// incrementally as pods change. Pods name their node, not its UID, so the counts belong to
// whichever node holds the name now.
type nodeState struct {
	name, uid              string
	known, ready, cordoned bool
	pods, failing          int
	attrs                  nodeAttrs // the last Node object's; read only while known
}

// node returns the node's state, creating it for a node known only from its pods (nodes
// forbidden by RBAC still appear, Known=false).
func (m *Model) node(name string) *nodeState {
	n := m.nodes[name]
	if n == nil {
		n = &nodeState{name: name}
		m.nodes[name] = n
		m.nodeView.valid = false
	}
	return n
}

// nodeUID is the UID of the node now named name, "" when no Node object of that name is known.
func (m *Model) nodeUID(name string) string {
	if n := m.nodes[name]; n != nil {
		return n.uid
	}
	return ""
}

func (m *Model) dropNodeIfEmpty(n *nodeState) {
	if !n.known && n.pods <= 0 {
		delete(m.nodes, n.name)
		m.nodeView.valid = false
	}
}

// upsertNode records a Node object. A heartbeat, which changes none of what the model keeps, leaves
// the nodes view as it is.
func (m *Model) upsertNode(obj *corev1.Node) {
	name := sanitize.Text(obj.Name)
	n := m.node(name)
	was := *n
	if uid := sanitize.Text(string(obj.UID)); uid != n.uid {
		// A UID for a name that had none: failures recorded before the Node object arrived
		// happened on this node. A different UID is a new node under the old name (deleted and
		// registered again, whether or not the delete was seen): the old node's failures keep the
		// old UID and stay its own.
		if n.uid == "" && uid != "" {
			m.ledger.nameNodeUID(name, uid)
			m.nodeView.starts.nameNodeUID(name, uid)
		}
		n.uid = uid
	}
	n.known = true
	n.cordoned = obj.Spec.Unschedulable
	n.ready = false
	for i := range obj.Status.Conditions {
		if c := &obj.Status.Conditions[i]; c.Type == corev1.NodeReady {
			n.ready = c.Status == corev1.ConditionTrue
		}
	}
	n.attrs = attrsOf(obj)
	if *n != was {
		m.nodeView.valid = false
	}
	m.noteNodeReadiness(obj)
}

// nodeCache keeps the last Nodes result: the TUI asks again after every batch and tick. A batch
// that only moves pods changes the nodes' pod counts and nothing of their order (suspects, then
// failures, then name), so those are patched into a copy of the last result; a full build, over
// the nodes and the ledger, is paid when a node or the ledger changed, or when the clock moved to
// another second, or pods started, while the ledger holds failures (the histogram's buckets move
// with the clock, and the suspect rule weighs failures against starts). What the suspect nodes
// share is computed with each full build: pod counts are not among the attributes.
type nodeCache struct {
	valid bool // false forces a full build
	at    int64
	nodes []Node
	share []string // sharedOf(nodes)
	// pos is each node's index in nodes; counted holds the names of the nodes whose pod counts
	// changed since nodes was made.
	pos     map[nodeID]int
	counted map[string]struct{}
	// starts counts the pods that started on each node within the window (starts.go).
	starts startIndex
	// until is when nodes, built at, would read differently with the clock alone (NodesUntil).
	until time.Time
}

// Nodes returns every node's evidence at now: suspect nodes first, then by failures, then name.
// The slice is the same until the nodes change; callers must not modify it.
func (m *Model) Nodes(now time.Time) []Node {
	c := &m.nodeView
	if !c.valid || (c.at != now.Unix() || c.starts.dirty) && len(m.ledger.live()) > 0 {
		c.nodes, c.at, c.valid = m.buildNodes(now), now.Unix(), true
		c.until = m.nodesUntil(now)
		c.starts.dirty = false
		c.share = sharedOf(c.nodes)
		clear(c.pos)
		if c.pos == nil {
			c.pos = make(map[nodeID]int, len(c.nodes))
		}
		for i := range c.nodes {
			c.pos[idOf(c.nodes[i].UID, c.nodes[i].Name)] = i
		}
		clear(c.counted)
		return c.nodes
	}
	if len(c.counted) == 0 {
		return c.nodes
	}
	// A pod's every update recounts it on its node; the slice is copied (a new slice tells the
	// views the nodes changed) only when a count did change.
	var out []Node
	for name := range c.counted {
		n := m.nodes[name]
		if n == nil {
			continue // dropped, which made the cache invalid; not reached
		}
		if i, ok := c.pos[idOf(n.uid, name)]; ok && (c.nodes[i].Pods != n.pods || c.nodes[i].FailingPods != n.failing) {
			if out == nil {
				out = slices.Clone(c.nodes)
			}
			out[i].Pods, out[i].FailingPods = n.pods, n.failing
		}
	}
	clear(c.counted)
	if out == nil {
		return c.nodes
	}
	c.nodes = out
	return out
}

// NodesUntil is when the nodes last returned by Nodes would read differently with nothing but the
// clock moving: the window's start buckets turn over (the suspect rule's "N of M pods that started
// here in the last 15m") or a failure moves into an older histogram bucket. Zero: never, as no
// failure is within the window. A failure leaving the window changes the model (Expire).
func (m *Model) NodesUntil() time.Time { return m.nodeView.until }

// nodesUntil is NodesUntil for nodes built at now.
func (m *Model) nodesUntil(now time.Time) time.Time {
	live := m.ledger.live()
	if len(live) == 0 {
		return time.Time{}
	}
	w := m.nodeView.starts.width
	until := time.Unix(0, (now.UnixNano()/w+1)*w)
	bucket := m.cfg.Window / HistogramBuckets
	if bucket <= 0 {
		return until
	}
	since := now.Add(-m.cfg.Window)
	for _, e := range live {
		if off := e.Failure.At.Sub(since); off >= 0 {
			// The failure's bucket index, off/bucket, drops by one when off next crosses a multiple
			// of bucket.
			if t := now.Add(off % bucket); t.Before(until) {
				until = t
			}
		}
	}
	// Nodes keeps what it built for the rest of the second (nodeCache.at).
	if next := time.Unix(now.Unix()+1, 0); until.Before(next) {
		return next
	}
	return until
}

// failureIdentity tells pods apart in the ledger, also when a fixture has no UID.
type failureIdentity struct{ uid, pod string }

// nodeID identifies a node's row: its UID, or its name when no UID is known (nodes forbidden by
// RBAC, or failures of a node whose Node object the model never saw).
type nodeID struct{ uid, name string }

func idOf(uid, name string) nodeID {
	if uid != "" {
		return nodeID{uid: uid}
	}
	return nodeID{name: name}
}

type nodeAgg struct {
	Node
	// pods holds the distinct pods that failed here within the window, each with its workload and
	// whether one of its failures here was a create error rather than an exit 128.
	pods      map[failureIdentity]failedPod
	workloads map[string]struct{}
	messages  map[string]int
	// ring holds the node's starts (startIndex); unmarked counts its failing pods whose start it
	// does not hold (a sandbox failure, a create error renewed without an update, a start dated
	// apart from its failure), which started here all the same.
	ring     *startRing
	unmarked int
}

// failedPod is one pod that failed to start on a node, as the suspect rule counts it.
type failedPod struct {
	workload string
	not128   bool
}

// nodeEvidence is one pass over the ledger at a moment: every node's failures within the window,
// and the starts they are weighed against. The suspect rule reads it twice, with different
// workloads left out: for escalation (escalate.go) and for the nodes view.
type nodeEvidence struct {
	aggs     []*nodeAgg // sorted by name, then UID: the rule's answer does not hang on map order
	from, to int64      // the start buckets within the window
	total    int        // pods that started or tried to start anywhere: every node's starts, and the unmarked
}

// gatherNodes aggregates the ledger's failures within the window at now per node; withNodes also
// fills in each node's own state, attributes and histogram for the nodes view.
func (m *Model) gatherNodes(now time.Time, withNodes bool) *nodeEvidence {
	since := now.Add(-m.cfg.Window)
	byID := make(map[nodeID]*nodeAgg, len(m.nodes))
	starts := &m.nodeView.starts
	ev := &nodeEvidence{}
	ev.from, ev.to = starts.bucketsIn(now, m.cfg.Window)
	get := func(id nodeID, name string) *nodeAgg {
		a := byID[id]
		if a == nil {
			a = &nodeAgg{Node: Node{Name: name, UID: id.uid}, ring: starts.rings[id]}
			if withNodes {
				a.Histogram, a.Conditions = make([]int, HistogramBuckets), unknownConditions()
			}
			byID[id] = a
			ev.aggs = append(ev.aggs, a)
		}
		return a
	}
	for name, n := range m.nodes {
		a := get(idOf(n.uid, name), name)
		a.Known, a.Ready, a.Cordoned = n.known, n.ready, n.cordoned
		a.Pods, a.FailingPods = n.pods, n.failing
		if n.known && withNodes {
			n.attrs.fill(&a.Node)
		}
	}
	bucket := m.cfg.Window / HistogramBuckets
	unmarked := 0
	for _, e := range m.ledger.live() {
		f := &e.Failure
		if f.At.Before(since) || f.Node == "" {
			continue
		}
		a := get(idOf(f.NodeUID, f.Node), f.Node)
		if a.pods == nil {
			a.pods = make(map[failureIdentity]failedPod)
			a.workloads = make(map[string]struct{})
			a.messages = make(map[string]int)
		}
		a.Failures++
		if f.ExitCode == 128 {
			a.Failures128++
		}
		id := failureIdentity{f.PodUID, f.Pod}
		fp, seen := a.pods[id]
		if !seen {
			fp.workload = f.Workload
			if !starts.started(id, a.ring, ev.from, ev.to) {
				a.unmarked++
				unmarked++
			}
		}
		fp.not128 = fp.not128 || f.ExitCode != 128
		a.pods[id] = fp
		if !withNodes {
			continue
		}
		a.workloads[f.Workload] = struct{}{}
		a.messages[f.Message]++
		if a.First.IsZero() || f.At.Before(a.First) {
			a.First = f.At
		}
		if f.At.After(a.Last) {
			a.Last = f.At
		}
		b := 0
		if bucket > 0 {
			b = int(f.At.Sub(since) / bucket)
		}
		a.Histogram[min(max(b, 0), HistogramBuckets-1)]++
	}
	ev.total = starts.total.count(ev.from, ev.to) + unmarked
	sort.Slice(ev.aggs, func(i, j int) bool {
		a, b := ev.aggs[i], ev.aggs[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.UID < b.UID
	})
	return ev
}

// nodeJudgement is the suspect rule's answer over a nodeEvidence, with some workloads left out.
type nodeJudgement struct {
	pop      classify.SuspectPopulation
	aggs     []*nodeAgg // the candidates, in the order of rates and verdicts
	rates    []classify.NodeStarts
	verdicts []classify.SuspectCall
	// left is, per candidate, its failed pods of the workloads left out, and all128 whether every
	// failure it counts was an exit 128: what its why sentence says beside the rates.
	left   []int
	all128 []bool
}

// judge applies the suspect rule (classify.JudgeSuspects) to the evidence, leaving out the
// failures of the workloads left reports true for: workloads that fail wherever they run say
// nothing about this node, nor about the others, so they are left out of both sides of the
// comparison.
//
// The node stands out from the rest of the cluster by the share of the pods that started on it
// that failed: node-local trouble, the premise of Krane's exit-128 rule (Shopify/krane#656).
// Distinct pods, not failures: one pod restarting five times elsewhere is one pod. Only the nodes
// with enough failing pods are candidates; the others count in the totals. A node that is gone (a
// UID no Node object holds any more) keeps its failures for the window, and they count among the
// other nodes', but it is not suspect: there is nothing left to cordon, and the flag would be read
// as the node now under its name.
func (ev *nodeEvidence) judge(minPods int, left func(workload string) bool) nodeJudgement {
	j := nodeJudgement{pop: classify.SuspectPopulation{MinPods: minPods}}
	notLocal := 0
	for _, a := range ev.aggs {
		failed, out, all128 := 0, 0, true
		for _, fp := range a.pods {
			if left != nil && left(fp.workload) {
				out++
				continue
			}
			failed++
			all128 = all128 && !fp.not128
		}
		notLocal += out
		j.pop.Failed += failed
		if a.UID != "" && !a.Known {
			continue
		}
		j.pop.Nodes++
		if failed < minPods {
			continue
		}
		// The node's starts, and its failing pods not among them, less the failing pods of the
		// workloads left out; never fewer than its failing pods.
		started := a.unmarked - out
		if a.ring != nil {
			started += a.ring.count(ev.from, ev.to)
		}
		j.aggs = append(j.aggs, a)
		j.rates = append(j.rates, classify.NodeStarts{Failed: failed, Started: max(started, failed)})
		j.left = append(j.left, out)
		j.all128 = append(j.all128, all128)
	}
	j.pop.Started = max(ev.total-notLocal, j.pop.Failed)
	j.verdicts = classify.JudgeSuspects(j.pop, j.rates)
	return j
}

func (m *Model) buildNodes(now time.Time) []Node {
	ev := m.gatherNodes(now, true)
	j := ev.judge(m.cfg.SuspectPods, func(w string) bool { return m.escalatedNodes(w) > 0 })
	for i, v := range j.verdicts {
		if !v.Suspect {
			continue
		}
		a, c := j.aggs[i], j.rates[i]
		a.Suspect = true
		a.Why = whySentence(why{
			here: c, exit128: j.all128[i], byRate: v.ByRate, base: v.Base, others: v.Others,
			left: j.left[i], window: m.cfg.Window,
		})
	}
	out := make([]Node, 0, len(ev.aggs))
	for _, a := range ev.aggs {
		a.FailedPods, a.Workloads = len(a.pods), len(a.workloads)
		a.DominantMessage = dominant(a.messages)
		out = append(out, a.Node)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := &out[i], &out[j]
		if a.Suspect != b.Suspect {
			return a.Suspect
		}
		if a.Failures != b.Failures {
			return a.Failures > b.Failures
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		// The same name twice: the node registered now first, then an old one by UID.
		if a.Known != b.Known {
			return a.Known
		}
		return a.UID < b.UID
	})
	return out
}

// dominant returns the most frequent message; ties go to the alphabetically first, so the
// answer does not depend on map order.
func dominant(msgs map[string]int) string {
	best, n := "", 0
	for msg, c := range msgs {
		if c > n || c == n && msg < best {
			best, n = msg, c
		}
	}
	return best
}

// why is what a suspect node's sentence says.
type why struct {
	here    classify.NodeStarts // this node's failed and started pods (of node-local workloads)
	exit128 bool                // every one of those failures was an exit 128
	// byRate: judged against base, the nodes not suspect (others is the number of other suspect
	// nodes, which base leaves out); otherwise by failure percentage, with too few pods that
	// started on the nodes not suspect without failing to compare rates.
	byRate bool
	base   classify.NodeStarts
	others int
	left   int // pods that failed here of workloads escalated as not node-local
	window time.Duration
}

// whySentence explains a suspect node in the words an operator reads, the call and how it was
// made: "6 of 6 pods that started here in the last 15m failed with exit 128; 3 of 53 elsewhere".
// The second half is what the node was compared with: the nodes not suspect ("elsewhere" when
// no other node is suspect, "on nodes not suspect" when some are, which the comparison leaves
// out). Judged by failure percentage (half or more failed here) when too few pods started there
// without failing to compare rates, it says so: "; 1 of 2 elsewhere (thin evidence: too few to
// compare)". Then how many pods of not-node-local workloads it left out. "with exit 128"
// is said only when it is true of every failure it counts: CRI-O reports the same runtime trouble
// as a create error ("failed to start"). It stays short: the dashboard's header gives it, and what
// the suspects share, on one line.
func whySentence(w why) string {
	failed := " failed to start"
	if w.exit128 {
		failed = " failed with exit 128"
	}
	s := strconv.Itoa(w.here.Failed) + " of " + plural(w.here.Started, "pod") + " that started here in the last " +
		ShortDuration(w.window) + failed
	where := "elsewhere"
	if w.others > 0 {
		where = "on nodes not suspect"
	}
	if w.base.Started == 0 {
		s += "; none started " + where
	} else {
		s += "; " + strconv.Itoa(w.base.Failed) + " of " + strconv.Itoa(w.base.Started) + " " + where
	}
	if !w.byRate {
		s += " (thin evidence: too few to compare)"
	}
	if w.left > 0 {
		s += "; " + plural(w.left, "pod") + " of not-node-local workloads left out"
	}
	return s
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// ShortDuration prints 15m rather than 15m0s, 1h rather than 1h0m0s.
func ShortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
