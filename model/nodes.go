package model

import (
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// nodeState is what the model keeps per node between batches: the Node object's state and the
// pod counts, maintained incrementally as pods change.
type nodeState struct {
	name                   string
	known, ready, cordoned bool
	pods, failing          int
}

// node returns the node's state, creating it for a node known only from its pods (nodes
// forbidden by RBAC still appear, Known=false).
func (m *Model) node(name string) *nodeState {
	n := m.nodes[name]
	if n == nil {
		n = &nodeState{name: name}
		m.nodes[name] = n
	}
	return n
}

func (m *Model) dropNodeIfEmpty(n *nodeState) {
	if !n.known && n.pods <= 0 {
		delete(m.nodes, n.name)
	}
}

func (m *Model) upsertNode(obj *corev1.Node) {
	n := m.node(Sanitize(obj.Name))
	n.known = true
	n.cordoned = obj.Spec.Unschedulable
	n.ready = false
	for i := range obj.Status.Conditions {
		if c := &obj.Status.Conditions[i]; c.Type == corev1.NodeReady {
			n.ready = c.Status == corev1.ConditionTrue
		}
	}
	m.nodeView.valid = false
	m.noteNodeReadiness(obj)
}

// nodeCache keeps the last Nodes result: the TUI asks again on every batch, tick and query change,
// and the answer changes only with the model or the clock's second, so most of those calls are
// answered from the cache.
type nodeCache struct {
	valid   bool
	version uint64
	at      int64
	nodes   []Node
}

// Nodes returns every node's cluster at now: suspect nodes first, then by failures, then name.
// The slice is cached until the model changes or now moves to another second; callers must not
// modify it.
func (m *Model) Nodes(now time.Time) []Node {
	c := &m.nodeView
	if c.valid && c.version == m.version && c.at == now.Unix() {
		return c.nodes
	}
	c.nodes, c.version, c.at, c.valid = m.buildNodes(now), m.version, now.Unix(), true
	return c.nodes
}

// failureIdentity tells pods apart in the ledger, also when a fixture has no UID.
type failureIdentity struct{ uid, pod string }

type nodeAgg struct {
	Node
	pods      map[failureIdentity]struct{}
	workloads map[string]struct{}
	messages  map[string]int
}

func (m *Model) buildNodes(now time.Time) []Node {
	since := now.Add(-m.cfg.Window)
	aggs := make(map[string]*nodeAgg, len(m.nodes))
	get := func(name string) *nodeAgg {
		a := aggs[name]
		if a == nil {
			a = &nodeAgg{Node: Node{Name: name, Histogram: make([]int, HistogramBuckets)}}
			aggs[name] = a
		}
		return a
	}
	for name, n := range m.nodes {
		a := get(name)
		a.Known, a.Ready, a.Cordoned = n.known, n.ready, n.cordoned
		a.Pods, a.FailingPods = n.pods, n.failing
	}
	bucket := m.cfg.Window / HistogramBuckets
	total := 0
	allPods := make(map[failureIdentity]struct{})
	for _, e := range m.ledger.live() {
		f := &e.Failure
		if f.FinishedAt.Before(since) || f.Node == "" {
			continue
		}
		total++
		a := get(f.Node)
		if a.pods == nil {
			a.pods = make(map[failureIdentity]struct{})
			a.workloads = make(map[string]struct{})
			a.messages = make(map[string]int)
		}
		a.Failures++
		id := failureIdentity{f.PodUID, f.Pod}
		a.pods[id] = struct{}{}
		allPods[id] = struct{}{}
		a.workloads[f.Workload] = struct{}{}
		a.messages[f.Message]++
		if a.First.IsZero() || f.FinishedAt.Before(a.First) {
			a.First = f.FinishedAt
		}
		if f.FinishedAt.After(a.Last) {
			a.Last = f.FinishedAt
		}
		b := 0
		if bucket > 0 {
			b = int(f.FinishedAt.Sub(since) / bucket)
		}
		a.Histogram[min(max(b, 0), HistogramBuckets-1)]++
	}
	out := make([]Node, 0, len(aggs))
	for _, a := range aggs {
		a.FailedPods, a.Workloads = len(a.pods), len(a.workloads)
		a.DominantMessage = dominant(a.messages)
		// Suspect: enough distinct pods failed here, and this node holds a large share of the
		// cluster's transient exit-128 failures (node-local trouble, Shopify/krane#656).
		if a.FailedPods >= m.cfg.SuspectPods && float64(a.Failures) >= m.cfg.SuspectShare*float64(total) {
			a.Suspect = true
			a.Why = whySentence(a.FailedPods, a.Workloads, len(allPods)-a.FailedPods, m.cfg.Window)
		}
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
		return a.Name < b.Name
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

// whySentence explains a suspect node: "4 pods of 3 workloads failed to start with exit 128 here
// in the last 15m; 0 elsewhere". elsewhere counts the distinct pods that failed on other nodes.
func whySentence(pods, workloads, elsewhere int, window time.Duration) string {
	return plural(pods, "pod") + " of " + plural(workloads, "workload") +
		" failed to start with exit 128 here in the last " + shortDuration(window) +
		"; " + strconv.Itoa(elsewhere) + " elsewhere"
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// shortDuration prints 15m rather than 15m0s, 1h rather than 1h0m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
