package model

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"doomwatch/classify"
	"doomwatch/contract"
	"doomwatch/sanitize"
)

// A Fleet is the state of several clusters, one kubeconfig context each, side by side: each
// cluster has a Model of its own, so its evidence, suspect nodes, rollouts and health are judged
// within it (node names and failure baselines repeat across clusters), and the Fleet says what
// is true across them: which workloads exist in several clusters and how each fares, and what the
// suspect nodes of several clusters have in common. One context is a Fleet of one, which reads
// exactly as its Model does.
type Fleet struct {
	clusters []*Cluster
	byName   map[string]int
	cfg      Config

	// The concatenated views, remade from the clusters whose view changed (fleetCache).
	nodes    fleetCache[Node]
	rollouts fleetCache[Rollout]
}

// Cluster is one context of a fleet.
type Cluster struct {
	// Context is the kubeconfig context's name; Server the API server's address ("" for the demo).
	Context string
	Server  string
	*Model
}

// NewFleet returns a fleet of empty models, one per context, in the order given.
func NewFleet(cfg Config, contexts []string) *Fleet {
	f := &Fleet{byName: make(map[string]int, len(contexts)), cfg: cfg}
	for i, c := range contexts {
		m := New(cfg)
		if len(contexts) > 1 {
			m.context = sanitize.Text(c)
		}
		f.clusters = append(f.clusters, &Cluster{Context: sanitize.Text(c), Model: m})
		f.byName[sanitize.Text(c)] = i
	}
	f.cfg = f.clusters[0].Config()
	return f
}

// FleetOf is the fleet of one cluster, named context, whose model is m.
func FleetOf(context string, m *Model) *Fleet {
	c := sanitize.Text(context)
	return &Fleet{clusters: []*Cluster{{Context: c, Model: m}}, byName: map[string]int{c: 0}, cfg: m.Config()}
}

// Len is the number of clusters.
func (f *Fleet) Len() int { return len(f.clusters) }

// Name names what the fleet watches, for a header or a message: its context, or its contexts
// (sanitised, as every context is).
func (f *Fleet) Name() string {
	names := make([]string, len(f.clusters))
	for i, c := range f.clusters {
		names[i] = c.Context
	}
	return strings.Join(names, ", ")
}

// Clusters are the fleet's clusters, in the order of NewFleet's contexts.
func (f *Fleet) Clusters() []*Cluster { return f.clusters }

// Multi reports whether the fleet has more than one cluster: the views then name each row's.
func (f *Fleet) Multi() bool { return len(f.clusters) > 1 }

// Config is the configuration every cluster's model shares.
func (f *Fleet) Config() Config { return f.cfg }

// Apply applies b to the model of its cluster (Batch.Cluster).
func (f *Fleet) Apply(b *contract.Batch, now time.Time) {
	if b == nil || b.Cluster < 0 || b.Cluster >= len(f.clusters) {
		return
	}
	f.clusters[b.Cluster].Apply(b, now)
}

// ApplyAll applies what a fleet's source hands over at once (kube's Fleet.Batches), each batch to
// its cluster's model, in order, at now.
func (f *Fleet) ApplyAll(bs []contract.Batch, now time.Time) {
	for i := range bs {
		f.Apply(&bs[i], now)
	}
}

// Expire ages every cluster's evidence to now.
func (f *Fleet) Expire(now time.Time) {
	for _, c := range f.clusters {
		c.Expire(now)
	}
}

// Version changes whenever any cluster's model does.
func (f *Fleet) Version() uint64 {
	var v uint64
	for _, c := range f.clusters {
		v += c.Version()
	}
	return v
}

// Counts are the pods per verdict of every cluster.
func (f *Fleet) Counts() Counts {
	if len(f.clusters) == 1 {
		return f.clusters[0].Counts()
	}
	var n Counts
	for _, c := range f.clusters {
		k := c.Counts()
		n.Pods += k.Pods
		n.Healthy += k.Healthy
		n.Progressing += k.Progressing
		n.Transient += k.Transient
		n.Doomed += k.Doomed
		n.Completed += k.Completed
	}
	return n
}

// Health is one cluster's health, or what the fleet's add up to: synced when every cluster is,
// the pods seen so far and failed calls, the first broken watch (named by its context) and every
// forbidden kind.
func (f *Fleet) Health() contract.Health {
	if len(f.clusters) == 1 {
		return f.clusters[0].Health()
	}
	h := contract.Health{Synced: true}
	for _, c := range f.clusters {
		ch := c.Health()
		h.Synced = h.Synced && ch.Synced
		h.PodsSeen += ch.PodsSeen
		h.PodsTotal += ch.PodsTotal
		h.Failures += ch.Failures
		if ch.LastEvent.After(h.LastEvent) {
			h.LastEvent = ch.LastEvent
		}
		if h.WatchError == "" && ch.WatchError != "" {
			h.WatchError = c.Context + ": " + ch.WatchError
		}
		if h.Unreachable == "" && ch.Unreachable != "" {
			h.Unreachable, h.UnreachableSince = c.Context+": "+ch.Unreachable, ch.UnreachableSince
		}
		for _, k := range ch.Forbidden {
			if !slices.Contains(h.Forbidden, k) {
				h.Forbidden = append(h.Forbidden, k)
			}
		}
	}
	return h
}

// cluster returns the cluster named context, or nil.
func (f *Fleet) cluster(context string) *Cluster {
	if i, ok := f.byName[context]; ok {
		return f.clusters[i]
	}
	return nil
}

// Cluster returns the cluster named context, or nil.
func (f *Fleet) Cluster(context string) *Cluster { return f.cluster(context) }

// keySep joins a context and a pod key in a fleet's pod keys: Sanitize leaves no control
// character in either, so the key splits back exactly.
const keySep = "\x00"

// ID is the pod's key in its fleet (Fleet.Pod): its namespace/name, prefixed by its context in a
// fleet of more than one.
func (p *Pod) ID() string {
	if p.Context == "" {
		return p.Key
	}
	return p.Context + keySep + p.Key
}

// split returns the cluster and the pod key within it of a fleet key (Pod.ID).
func (f *Fleet) split(key string) (*Cluster, string) {
	if len(f.clusters) == 1 {
		return f.clusters[0], key
	}
	ctx, k, ok := strings.Cut(key, keySep)
	if !ok {
		return nil, ""
	}
	return f.cluster(ctx), k
}

// Pod returns the pod of a key Pod.ID gave, or nil.
func (f *Fleet) Pod(key string) *Pod {
	c, k := f.split(key)
	if c == nil {
		return nil
	}
	return c.Pod(k)
}

// PodEvents are the Warning events of the pod of a key Pod.ID gave.
func (f *Fleet) PodEvents(key string) []Event {
	c, k := f.split(key)
	if c == nil {
		return nil
	}
	return c.PodEvents(k)
}

// NodeEvents are the Warning events of a node of one cluster ("" in a fleet of one).
func (f *Fleet) NodeEvents(context, name string) []Event {
	c := f.clusters[0]
	if len(f.clusters) > 1 {
		if c = f.cluster(context); c == nil {
			return nil
		}
	}
	return c.NodeEvents(name)
}

// fleetCache is the concatenation of the clusters' views (Nodes, Rollouts), each item stamped
// with its cluster's context, kept up to date by copying only the clusters whose view changed:
// the dashboard asks after every batch, and copying every node of the fleet each time cost more
// than the rest of a batch of one cluster among twenty (tui BenchmarkFleetBatch).
//
// It is kept in two buffers in turn. The one handed out last is never written: a change is copied
// into the other, which held the result before last, and that is handed out instead. So a
// result is a new slice whenever the views changed (the dashboard's panels tell a change by the
// slice's identity, sameSlice) and stays as it is until the views have changed twice more: a
// caller that keeps only the latest result reads it unchanged.
type fleetCache[T any] struct {
	bufs [2]fleetBuf[T]
	cur  int // the buffer handed out last
}

// fleetBuf is one buffer of a fleetCache: all, the clusters' slices it holds copies of, and where
// in all each copy starts.
type fleetBuf[T any] struct {
	all   []T
	parts [][]T
	at    []int
}

// get returns the concatenation of parts, each item stamped with its cluster's context by stamp:
// the same slice while every part is.
func (c *fleetCache[T]) get(f *Fleet, parts [][]T, stamp func(*T, string)) []T {
	if b := &c.bufs[c.cur]; b.holds(parts) {
		return b.all
	}
	c.cur = 1 - c.cur
	b := &c.bufs[c.cur]
	b.update(f, parts, stamp)
	return b.all
}

// holds reports whether b is the concatenation of parts.
func (b *fleetBuf[T]) holds(parts [][]T) bool {
	if b.all == nil || len(b.parts) != len(parts) {
		return false
	}
	for i := range parts {
		if !sameSlice(parts[i], b.parts[i]) {
			return false
		}
	}
	return true
}

// update makes b the concatenation of parts, copying the parts it does not hold where they go:
// those that changed, and every part after one whose length changed.
func (b *fleetBuf[T]) update(f *Fleet, parts [][]T, stamp func(*T, string)) {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	had := len(b.all)
	if b.all == nil || cap(b.all) < n {
		b.all, had = make([]T, n, n+n/8), 0
		b.parts = nil
	}
	b.all = b.all[:n]
	clear(b.all[n:max(had, n)]) // what the buffer held past the end: nothing must keep it alive
	if len(b.parts) != len(parts) {
		b.parts, b.at = make([][]T, len(parts)), make([]int, len(parts))
		for i := range b.at {
			b.at[i] = -1
		}
	}
	off := 0
	for i, p := range parts {
		if b.at[i] != off || !sameSlice(b.parts[i], p) {
			part := b.all[off : off+len(p)]
			copy(part, p)
			for j := range part {
				stamp(&part[j], f.clusters[i].Context)
			}
			b.parts[i], b.at[i] = p, off
		}
		off += len(p)
	}
}

func sameSlice[T any](a, b []T) bool { return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0]) }

// Nodes are every cluster's nodes, cluster by cluster in the fleet's order, each in its model's
// order (suspect first), with Context set in a fleet of more than one. The slice is the same
// until a cluster's nodes change, and then a new one; a slice handed out stays as it is until the
// nodes have changed twice more (fleetCache). Callers must not modify it.
func (f *Fleet) Nodes(now time.Time) []Node {
	if len(f.clusters) == 1 {
		return f.clusters[0].Nodes(now)
	}
	parts := make([][]Node, len(f.clusters))
	for i, c := range f.clusters {
		parts[i] = c.Nodes(now)
	}
	return f.nodes.get(f, parts, func(n *Node, ctx string) { n.Context = ctx })
}

// NodesUntil is the earliest of every cluster's Model.NodesUntil; zero: never.
func (f *Fleet) NodesUntil() time.Time {
	var until time.Time
	for _, c := range f.clusters {
		if t := c.NodesUntil(); !t.IsZero() && (until.IsZero() || t.Before(until)) {
			until = t
		}
	}
	return until
}

// Current is rollout r of its cluster (r.Context; the only one in a fleet of one) as that cluster's
// model judges it now (Model.Current).
func (f *Fleet) Current(r *Rollout) (Rollout, bool) {
	c := f.clusters[0]
	if len(f.clusters) > 1 {
		if c = f.cluster(r.Context); c == nil {
			return Rollout{}, false
		}
	}
	cur, ok := c.Current(r)
	cur.Context = r.Context
	return cur, ok
}

// Rollouts are every cluster's rollouts, cluster by cluster, with Context set in a fleet of more
// than one; the slice is kept as Nodes' is.
func (f *Fleet) Rollouts() []Rollout {
	if len(f.clusters) == 1 {
		return f.clusters[0].Rollouts()
	}
	parts := make([][]Rollout, len(f.clusters))
	for i, c := range f.clusters {
		parts[i] = c.Rollouts()
	}
	return f.rollouts.get(f, parts, func(r *Rollout, ctx string) { r.Context = ctx })
}

// SuspectsShare says what suspect nodes have in common that the others do not. In a fleet of one
// it is the cluster's own (Model.SuspectsShare). In a fleet, each cluster's sentences come named
// by its context, and when the suspects of two clusters or more share an attribute that the
// fleet's other nodes mostly lack, a sentence says so first: "the suspect nodes of 2 clusters
// (eu, us) both run containerd://2.2.0 (0 of 13 others do)". Suspects are judged in their own
// cluster; only what they share is compared across the fleet.
func (f *Fleet) SuspectsShare(now time.Time) []string {
	if len(f.clusters) == 1 {
		return f.clusters[0].SuspectsShare(now)
	}
	// Each cluster's nodes come suspect first: its suspects are the head of its slice, the nodes
	// they are compared with the rest (an unknown node has no attributes and counts nowhere). The
	// others are read where they are, not gathered: the dashboard asks after every batch and tick,
	// and copying every node of the fleet each time cost more than the rest of a batch (tui
	// BenchmarkFleetBatch).
	var suspect []Node
	var others [][]Node
	var in []string
	var own []string
	for _, c := range f.clusters {
		nodes := c.Nodes(now)
		k := 0
		for k < len(nodes) && nodes[k].Suspect {
			k++
		}
		if k > 0 {
			suspect = append(suspect, nodes[:k]...)
			in = append(in, c.Context)
		}
		others = append(others, nodes[k:])
		for _, s := range c.SuspectsShare(now) {
			own = append(own, c.Context+": "+s)
		}
	}
	var out []string
	if len(in) > 1 {
		subject := "the " + strconv.Itoa(len(suspect)) + " suspect nodes of " + strconv.Itoa(len(in)) + " clusters (" + strings.Join(in, ", ") + ")"
		out = sharedAs(suspect, others, subject)
	}
	return append(out, own...)
}

// Spread is one workload that exists in more than one cluster, with its rollout's verdict in each.
type Spread struct {
	// Workload is the rollout's workload as Rollout.Workload names it, the same in each cluster.
	Workload string
	// Verdicts are per cluster, in the fleet's order.
	Verdicts []ClusterVerdict
}

// ClusterVerdict is one cluster's verdict on a workload of a Spread.
type ClusterVerdict struct {
	Context string
	Verdict classify.RolloutClass
}

// Spreads are the workloads that have a rollout in more than one cluster, the worst first
// (doomed anywhere, then still progressing anywhere), then by workload.
func (f *Fleet) Spreads() []Spread {
	if len(f.clusters) == 1 {
		return nil
	}
	idx := map[string]int{}
	var out []Spread
	for _, c := range f.clusters {
		for _, r := range c.Rollouts() {
			w := r.Workload()
			i, ok := idx[w]
			if !ok {
				i = len(out)
				idx[w] = i
				out = append(out, Spread{Workload: w})
			}
			out[i].Verdicts = append(out[i].Verdicts, ClusterVerdict{Context: c.Context, Verdict: r.Verdict})
		}
	}
	out = slices.DeleteFunc(out, func(s Spread) bool { return len(s.Verdicts) < 2 })
	rank := func(s Spread) int {
		worst := 0
		for _, v := range s.Verdicts {
			switch v.Verdict {
			case classify.RolloutDoomed:
				worst = max(worst, 2)
			case classify.RolloutProgressing:
				worst = max(worst, 1)
			}
		}
		return worst
	}
	slices.SortStableFunc(out, func(a, b Spread) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return rb - ra
		}
		return strings.Compare(a.Workload, b.Workload)
	})
	return out
}

// Differs reports whether the workload's verdict is not the same in every cluster that has it.
func (s Spread) Differs() bool {
	for _, v := range s.Verdicts[1:] {
		if v.Verdict != s.Verdicts[0].Verdict {
			return true
		}
	}
	return false
}

// String says a spread in one line: "shop/Deployment/payments: doomed in eu, ap; complete in us".
func (s Spread) String() string {
	var order []classify.RolloutClass
	by := map[classify.RolloutClass][]string{}
	for _, v := range s.Verdicts {
		if _, ok := by[v.Verdict]; !ok {
			order = append(order, v.Verdict)
		}
		by[v.Verdict] = append(by[v.Verdict], v.Context)
	}
	rank := map[classify.RolloutClass]int{classify.RolloutDoomed: 0, classify.RolloutProgressing: 1, classify.RolloutComplete: 2}
	slices.SortStableFunc(order, func(a, b classify.RolloutClass) int { return rank[a] - rank[b] })
	parts := make([]string, len(order))
	for i, v := range order {
		parts[i] = string(v) + " in " + strings.Join(by[v], ", ")
	}
	return s.Workload + ": " + strings.Join(parts, "; ")
}

// PodView is the pod view of q over the fleet: the cluster q.Context names, or every cluster's
// view merged in q's order.
func (f *Fleet) PodView(q Query) PodView {
	if len(f.clusters) == 1 {
		return f.clusters[0].PodView(q)
	}
	if q.Context != "" {
		c := f.cluster(q.Context)
		if c == nil {
			return PodView{}
		}
		return c.PodView(q)
	}
	parts := make([]PodView, len(f.clusters))
	for i, c := range f.clusters {
		parts[i] = c.PodView(q)
	}
	return mergeViews(parts, q.Sort)
}

// View returns the pods q selects over the fleet, as a new slice (PodView, read whole).
func (f *Fleet) View(q Query) []*Pod {
	v := f.PodView(q)
	return v.Append(make([]*Pod, 0, v.Len()), 0, v.Len())
}

// ViewCost is how many rows PodView(q) would match to build q's view (Model.ViewCost), over
// the clusters it reads.
func (f *Fleet) ViewCost(q Query) int {
	n := 0
	for _, c := range f.viewed(q) {
		n += c.ViewCost(q)
	}
	return n
}

// viewed are the clusters q's view reads.
func (f *Fleet) viewed(q Query) []*Cluster {
	if len(f.clusters) > 1 && q.Context != "" {
		if c := f.cluster(q.Context); c != nil {
			return []*Cluster{c}
		}
		return nil
	}
	return f.clusters
}

// StartFilter snapshots the pods of every cluster q reads for q's text filter (Model.StartFilter).
func (f *Fleet) StartFilter(q Query) *FilterJob {
	cs := f.viewed(q)
	if len(cs) == 1 {
		return cs[0].StartFilter(q)
	}
	j := &FilterJob{v: newView(q)}
	for _, c := range cs {
		j.parts = append(j.parts, c.StartFilter(q))
	}
	return j
}

// AdoptFilter adopts a result of StartFilter in every cluster it covers (Model.AdoptFilter); a
// refusal of any makes the caller start again.
func (f *Fleet) AdoptFilter(res *FilterResult) bool {
	if res == nil {
		return false
	}
	cs := f.viewed(res.v.q)
	if len(res.parts) == 0 {
		return len(cs) == 1 && cs[0].AdoptFilter(res)
	}
	if len(res.parts) != len(cs) {
		return false
	}
	ok := true
	for i, c := range cs {
		ok = c.AdoptFilter(res.parts[i]) && ok
	}
	return ok
}
