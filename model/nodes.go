package model

import (
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

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
	name := Sanitize(obj.Name)
	n := m.node(name)
	was := *n
	if uid := Sanitize(string(obj.UID)); uid != n.uid {
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
	// starts counts the pods that started on each node within the window (outlier_starts.go).
	starts startIndex
}

// Nodes returns every node's cluster at now: suspect nodes first, then by failures, then name.
// The slice is the same until the nodes change; callers must not modify it.
func (m *Model) Nodes(now time.Time) []Node {
	c := &m.nodeView
	if !c.valid || (c.at != now.Unix() || c.starts.dirty) && len(m.ledger.live()) > 0 {
		c.nodes, c.at, c.valid = m.buildNodes(now), now.Unix(), true
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
	out := slices.Clone(c.nodes)
	for name := range c.counted {
		n := m.nodes[name]
		if n == nil {
			continue // dropped, which made the cache invalid; not reached
		}
		if i, ok := c.pos[idOf(n.uid, name)]; ok {
			out[i].Pods, out[i].FailingPods = n.pods, n.failing
		}
	}
	clear(c.counted)
	c.nodes = out
	return out
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
	pods      map[failureIdentity]struct{}
	workloads map[string]struct{}
	messages  map[string]int
	// local* count only the failures of node-local workloads, the ones the suspect rule compares.
	localPods      map[failureIdentity]struct{}
	localWorkloads map[string]struct{}
	localNot128    bool // a counted failure was a create error, not an exit 128
	// ring holds the node's starts (startIndex); unmarked counts its failing pods whose start it
	// does not hold (a sandbox failure, a create error renewed without an update, a start dated
	// apart from its failure), which started here all the same.
	ring     *startRing
	unmarked int
}

// started is the number of pods of node-local workloads that started or tried to start on the
// node within the window (buckets from..to): its starts, and its failing pods not among them,
// less the failing pods of workloads escalated as not node-local. Never fewer than its failing
// pods.
func (a *nodeAgg) started(from, to int64) int {
	n := a.unmarked - (len(a.pods) - len(a.localPods))
	if a.ring != nil {
		n += a.ring.count(from, to)
	}
	return max(n, len(a.localPods))
}

func (m *Model) buildNodes(now time.Time) []Node {
	since := now.Add(-m.cfg.Window)
	aggs := make(map[nodeID]*nodeAgg, len(m.nodes))
	starts := &m.nodeView.starts
	from, to := starts.bucketsIn(now, m.cfg.Window)
	get := func(id nodeID, name string) *nodeAgg {
		a := aggs[id]
		if a == nil {
			a = &nodeAgg{Node: Node{Name: name, UID: id.uid, Histogram: make([]int, HistogramBuckets),
				Conditions: unknownConditions()}, ring: starts.rings[id]}
			aggs[id] = a
		}
		return a
	}
	for name, n := range m.nodes {
		a := get(idOf(n.uid, name), name)
		a.Known, a.Ready, a.Cordoned = n.known, n.ready, n.cordoned
		a.Pods, a.FailingPods = n.pods, n.failing
		if n.known {
			n.attrs.fill(&a.Node)
		}
	}
	bucket := m.cfg.Window / HistogramBuckets
	allLocal := make(map[failureIdentity]struct{})
	unmarked, notLocal := 0, 0 // over every node
	for _, e := range m.ledger.live() {
		f := &e.Failure
		if f.At.Before(since) || f.Node == "" {
			continue
		}
		a := get(idOf(f.NodeUID, f.Node), f.Node)
		if a.pods == nil {
			a.pods = make(map[failureIdentity]struct{})
			a.workloads = make(map[string]struct{})
			a.messages = make(map[string]int)
			a.localPods = make(map[failureIdentity]struct{})
			a.localWorkloads = make(map[string]struct{})
		}
		a.Failures++
		if f.ExitCode == 128 {
			a.Failures128++
		}
		id := failureIdentity{f.PodUID, f.Pod}
		if _, seen := a.pods[id]; !seen {
			a.pods[id] = struct{}{}
			if !starts.started(id, a.ring, from, to) {
				a.unmarked++
				unmarked++
			}
		}
		a.workloads[f.Workload] = struct{}{}
		a.messages[f.Message]++
		// Workloads escalated as not node-local fail wherever they run: they say nothing about
		// this node, nor about the others, so they are left out of both sides of the comparison.
		if m.escalatedNodes(f.Workload) == 0 {
			a.localPods[id] = struct{}{}
			a.localWorkloads[f.Workload] = struct{}{}
			a.localNot128 = a.localNot128 || f.ExitCode != 128
			allLocal[id] = struct{}{}
		}
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
	// Suspect: the node stands out from the rest of the cluster by the share of the pods that
	// started on it that failed (outlier.go): node-local trouble, the premise of Krane's exit-128
	// rule (Shopify/krane#656). Distinct pods, not failures: one pod restarting five times
	// elsewhere is one pod. Only the nodes with enough failing pods are candidates; the others
	// count in the totals. A node that is gone (a UID no Node object holds any more) keeps its
	// failures for the window, and they count among the other nodes', but it is not suspect: there
	// is nothing left to cordon, and the flag would be read as the node now under its name.
	pop := outlierPopulation{failed: len(allLocal), started: starts.total.count(from, to) + unmarked, minPods: m.cfg.SuspectPods}
	var cands []nodeRate
	var candAggs []*nodeAgg
	for _, a := range aggs {
		notLocal += len(a.pods) - len(a.localPods)
		if a.UID != "" && !a.Known {
			continue
		}
		pop.nodes++
		if len(a.localPods) >= m.cfg.SuspectPods {
			cands = append(cands, nodeRate{failed: len(a.localPods), started: a.started(from, to)})
			candAggs = append(candAggs, a)
		}
	}
	pop.started = max(pop.started-notLocal, pop.failed)
	for i, v := range judgeOutliers(pop, cands) {
		if !v.suspect {
			continue
		}
		a, c := candAggs[i], cands[i]
		a.Suspect = true
		a.Why = whySentence(why{
			here: c, workloads: len(a.localWorkloads), exit128: !a.localNot128, byRate: v.byRate,
			base: v.base, others: v.others, elsewhere: pop.failed - c.failed,
			startedElsewhere: pop.started - c.started, left: len(a.pods) - c.failed, window: m.cfg.Window,
		})
	}
	out := make([]Node, 0, len(aggs))
	for _, a := range aggs {
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
	here      nodeRate // this node's failed and started pods (of node-local workloads)
	workloads int      // the distinct workloads of those failed pods
	exit128   bool     // every one of those failures was an exit 128
	// byRate: judged against base, the nodes not suspect (others is the number of other suspect
	// nodes, which base leaves out); otherwise by failure percentage, with too few starts
	// elsewhere to compare rates.
	byRate bool
	base   nodeRate
	others int
	// elsewhere is the distinct pods of node-local workloads that failed on the other nodes, of
	// startedElsewhere that started there.
	elsewhere, startedElsewhere int
	left                        int // pods that failed here of workloads escalated as not node-local
	window                      time.Duration
}

// whySentence explains a suspect node: how many of the pods that started here failed, "4 of 6
// pods that started here in the last 15m failed to start with exit 128", or, when every one of
// them failed, "4 pods of 3 workloads failed to start with exit 128 here in the last 15m" (with
// "(100%)" when judged by rate). Judged by rate, it gives the share it was compared with,
// ", against 0.6% of 310 on other nodes" ("on nodes not suspect" when other nodes are suspect
// too, which the rate leaves out); judged by failure percentage, when too few pods started
// elsewhere to compare rates, it gives none. Then how many failed elsewhere, "; 2 elsewhere",
// with ", of 4 that started there" when no share was given and some started there without
// failing; and how many pods of not-node-local workloads it left out. "with exit 128" is said
// only when it is true of every failure it counts: CRI-O reports the same runtime trouble as a
// create error. It stays short: the dashboard's header gives it, and what the suspects share,
// on one line of 200 columns.
func whySentence(w why) string {
	failed := " failed to start"
	if w.exit128 {
		failed += " with exit 128"
	}
	in := " in the last " + ShortDuration(w.window)
	var s string
	if w.here.started > w.here.failed {
		s = strconv.Itoa(w.here.failed) + " of " + plural(w.here.started, "pod") + " that started here" + in + failed
	} else {
		s = plural(w.here.failed, "pod") + " of " + plural(w.workloads, "workload") + failed + " here" + in
		if w.byRate {
			s += " (100%)"
		}
	}
	if w.byRate {
		where := "other nodes"
		if w.others > 0 {
			where = "nodes not suspect"
		}
		s += ", against " + percent(w.base.failed, w.base.started) + " of " + strconv.Itoa(w.base.started) + " on " + where
	}
	s += "; " + strconv.Itoa(w.elsewhere) + " elsewhere"
	if !w.byRate && w.startedElsewhere > w.elsewhere {
		s += ", of " + strconv.Itoa(w.startedElsewhere) + " that started there"
	}
	if w.left > 0 {
		s += "; " + plural(w.left, "pod") + " of not-node-local workloads left out"
	}
	return s
}

// percent prints n/d as a percentage: one decimal below 10% ("0.6%"), none above ("33%").
func percent(n, d int) string {
	if d <= 0 || n <= 0 {
		return "0%"
	}
	p := 100 * float64(n) / float64(d)
	if p < 0.1 {
		return "<0.1%"
	}
	if p < 10 {
		return strings.TrimSuffix(strconv.FormatFloat(p, 'f', 1, 64), ".0") + "%"
	}
	return strconv.FormatFloat(math.Round(p), 'f', 0, 64) + "%"
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
