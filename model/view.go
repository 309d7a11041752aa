package model

import (
	"cmp"
	"strings"

	"doomwatch/classify"
)

// Counts are pods per verdict class.
type Counts struct {
	Pods, Healthy, Progressing, Transient, Doomed, Completed int
}

// Sort orders the pod view.
type Sort uint8

// The pod view orders, in the order the `s` key cycles them.
const (
	BySeverity Sort = iota // most severe first, then namespace/name
	ByName                 // namespace/name
	ByNode                 // node, then severity
	ByAge                  // newest first
)

// Filter narrows the pod view by verdict.
type Filter uint8

// The verdict filters, in the order the `v` key cycles them.
const (
	All      Filter = iota
	Problems        // transient or doomed
	OnlyDoomed
	OnlyTransient
)

// Query selects and orders the pod view.
type Query struct {
	Sort   Sort
	Filter Filter
	// Node keeps only pods on this node when non-empty.
	Node string
	// Text is a fuzzy filter over namespace, name, node and reason.
	Text string
	// Context keeps only one cluster's pods in a fleet (Fleet.PodView) when non-empty.
	Context string
	// Owner keeps only the pods of one workload when non-empty, matched exactly: the pod's
	// namespace and top owner, Namespace + "/" + Pod.Owner, as in "shop/Deployment/checkout"
	// (the form of Failure.Workload; Rollout.Workload gives it for a rollout). Unmanaged pods
	// (Owner "") never match.
	Owner string
}

// The pod views are kept, not computed: every pod has a row, and the rows are held in one order
// per Sort and in the views of the queries asked for lately. A batch moves only the rows of the
// pods it changed, so it costs O(changed pods × log n) whatever the pod count, and a sort key
// switches to an order that is already there.

// row is one pod's place in the views: what the orders sort by and the filters match, copied from
// the Pod when it is counted. A pod whose copied fields change gets a new row; a published row
// (in the orders) is never written again, so a text filter can read rows off the UI goroutine
// from a copy of an order's row pointers (FilterJob). The Pod itself is written by every batch
// and must stay on the model's goroutine.
type row struct {
	pod                    *Pod
	ns, name, node, reason string
	// workload is the pod's workload as Query.Owner names it when the pod is managed, else "".
	workload string
	// id is the pod's sequence number, the last key of every order, so that orders are total
	// even if two keys were ever equal and a row is always found again by binary search.
	id uint64
	// created is the pod's creation time, newest first in ByAge.
	createdSec  int64
	createdNsec int32
	kind        classify.Class
	sev         int8
	// pending is set until flush publishes the row; dead marks a pending row that was replaced
	// before it was published. Both are written only before publication.
	pending, dead bool
}

func newRow(p *Pod) *row {
	r := &row{pod: p, ns: p.Namespace, name: p.Name, node: p.Node, reason: p.Verdict.Reason, id: p.id,
		createdSec: p.Created.Unix(), createdNsec: int32(p.Created.Nanosecond()),
		kind: p.Verdict.Class, sev: int8(p.Verdict.Class.Severity()), pending: true}
	if p.Owner != "" {
		r.workload = p.workload
	}
	return r
}

// current reports whether r still holds p's fields.
func (r *row) current(p *Pod) bool {
	w := ""
	if p.Owner != "" {
		w = p.workload
	}
	return r.ns == p.Namespace && r.name == p.Name && r.node == p.Node && r.reason == p.Verdict.Reason &&
		r.workload == w && r.kind == p.Verdict.Class && r.createdSec == p.Created.Unix() &&
		r.createdNsec == int32(p.Created.Nanosecond())
}

// The orders, as the pod view has always sorted: by name is namespace/name; the others are
// stable sorts of the name order, so namespace/name breaks their ties.
func byName(a, b *row) int {
	if c := strings.Compare(a.ns, b.ns); c != 0 {
		return c
	}
	if c := strings.Compare(a.name, b.name); c != 0 {
		return c
	}
	return cmp.Compare(a.id, b.id)
}

// bySeverity: most severe first.
func bySeverity(a, b *row) int {
	if c := cmp.Compare(b.sev, a.sev); c != 0 {
		return c
	}
	return byName(a, b)
}

// byNode: node, then most severe first.
func byNode(a, b *row) int {
	if c := strings.Compare(a.node, b.node); c != 0 {
		return c
	}
	return bySeverity(a, b)
}

// byAge: newest first.
func byAge(a, b *row) int {
	if c := cmp.Compare(b.createdSec, a.createdSec); c != 0 {
		return c
	}
	if c := cmp.Compare(b.createdNsec, a.createdNsec); c != 0 {
		return c
	}
	return byName(a, b)
}

// sortIndex is the order a Sort reads; an unknown Sort reads the name order, as it always did.
func sortIndex(s Sort) Sort {
	if s > ByAge {
		return ByName
	}
	return s
}

// maxViews is how many filtered views are kept up to date besides the four orders: the last
// queries asked for, so cycling the sort with a filter on builds each view once.
const maxViews = 4

// view is a filtered view: the rows q selects, in q's order, kept up to date by flush.
type view struct {
	q      Query
	tokens []string // q.Text's words, lower case
	rows   *order
}

func newView(q Query) *view {
	return &view{q: q, tokens: strings.Fields(strings.ToLower(q.Text)), rows: newOrder(orderFunc(q.Sort))}
}

func orderFunc(s Sort) func(a, b *row) int {
	switch sortIndex(s) {
	case BySeverity:
		return bySeverity
	case ByNode:
		return byNode
	case ByAge:
		return byAge
	}
	return byName
}

// selectsAll reports whether q keeps every pod: its view is then one of the orders.
func selectsAll(q Query) bool {
	return q.Filter == All && q.Node == "" && q.Owner == "" && strings.TrimSpace(q.Text) == ""
}

// index is the model's pod views.
type index struct {
	orders  [ByAge + 1]*order
	views   []*view // most recently asked for first
	pending []*row  // rows counted since the last flush
	scratch []*row
	journal journal
	jobs    uint64 // the last FilterJob's number
}

func newIndex() index {
	var x index
	for s := range x.orders {
		x.orders[s] = newOrder(orderFunc(Sort(s)))
	}
	return x
}

// syncRow gives p a new row when the fields its row holds changed (count calls it after every
// change to a pod); an update that changes nothing the views sort or filter by moves nothing.
func (m *Model) syncRow(p *Pod) {
	if p.row != nil && p.row.current(p) {
		return
	}
	if p.row != nil {
		m.unpublish(p.row)
	}
	p.row = newRow(p)
	m.idx.pending = append(m.idx.pending, p.row)
}

// dropRow takes a deleted pod out of the views.
func (m *Model) dropRow(p *Pod) {
	if p.row != nil {
		m.unpublish(p.row)
		p.row = nil
	}
}

func (m *Model) unpublish(r *row) {
	if r.pending {
		r.dead = true
		return
	}
	x := &m.idx
	for _, o := range x.orders {
		o.remove(r)
	}
	for _, v := range x.views {
		if v.match(r) {
			v.rows.remove(r)
		}
	}
	x.journal.note(r, false, x.orders[ByName].Len())
}

// flush publishes the rows counted since the last flush into the orders and the views. Apply and
// Expire end with it, and every reader starts with it.
func (m *Model) flush() {
	x := &m.idx
	if len(x.pending) == 0 {
		return
	}
	live := x.pending[:0]
	for _, r := range x.pending {
		if !r.dead {
			r.pending = false
			live = append(live, r)
		}
	}
	for _, o := range x.orders {
		x.scratch = append(x.scratch[:0], live...)
		o.insertMany(x.scratch)
	}
	for _, v := range x.views {
		x.scratch = x.scratch[:0]
		for _, r := range live {
			if v.match(r) {
				x.scratch = append(x.scratch, r)
			}
		}
		v.rows.insertMany(x.scratch)
	}
	for _, r := range live {
		x.journal.note(r, true, x.orders[ByName].Len())
	}
	clear(x.pending)
	clear(x.scratch)
	x.pending, x.scratch = x.pending[:0], x.scratch[:0]
}

// PodView is the pod view of one query: the pods it selects, in its order, read by position. It
// reads the model's own index, kept up to date by every Apply and Expire, so the dashboard asks for
// the rows on screen (Append) and never copies the view. It is valid until the next Apply or
// Expire, and must be read on the model's goroutine.
type PodView struct {
	m    *Model
	rows *order
	// merged is a fleet's view over several clusters' (fleetview.go); m and rows are then nil.
	merged *merged
}

// Len is the number of pods in the view.
func (v PodView) Len() int {
	if v.merged != nil {
		return v.merged.n
	}
	if v.rows == nil {
		return 0
	}
	return v.rows.Len()
}

// At returns the i'th pod, 0 <= i < Len().
func (v PodView) At(i int) *Pod {
	if v.merged != nil {
		return v.merged.at(i)
	}
	return v.rows.at(i).pod
}

// Append appends the pods at positions [from, to) to dst; the range is clamped to the view.
func (v PodView) Append(dst []*Pod, from, to int) []*Pod {
	from, to = max(from, 0), min(to, v.Len())
	if from >= to {
		return dst
	}
	if v.merged != nil {
		return v.merged.append(dst, from, to)
	}
	bi, j := v.rows.locate(from)
	for n := to - from; n > 0; bi, j = bi+1, 0 {
		b := v.rows.blocks[bi][j:]
		k := min(n, len(b))
		for _, r := range b[:k] {
			dst = append(dst, r.pod)
		}
		n -= k
	}
	return dst
}

// Index returns the position of the pod with key namespace/name, or -1 when the view does not
// hold it: O(log n), so a selection can follow its pod across re-sorts.
func (v PodView) Index(key string) int {
	if v.merged != nil {
		return v.merged.index(key)
	}
	if v.rows == nil {
		return -1
	}
	p := v.m.Pod(key)
	if p == nil || p.row == nil || p.row.pending {
		return -1
	}
	return v.rows.index(p.row)
}

// PodView returns the pod view of q. A query that keeps every pod reads one of the orders; a
// filtered one is built the first time it is asked for, with one pass over the rows it can come
// from (ViewCost; a text filter over many pods is better built off the UI goroutine:
// StartFilter), and kept up to date from then on while it is among the last few asked for.
func (m *Model) PodView(q Query) PodView {
	m.flush()
	x := &m.idx
	if selectsAll(q) {
		return PodView{m: m, rows: x.orders[sortIndex(q.Sort)]}
	}
	if v := m.findView(q); v != nil {
		return PodView{m: m, rows: v.rows}
	}
	v := newView(q)
	var sel []*row
	for _, b := range m.source(q).blocks {
		for _, r := range b {
			if v.match(r) {
				sel = append(sel, r)
			}
		}
	}
	v.rows.load(sel)
	m.pushView(v)
	return PodView{m: m, rows: v.rows}
}

// source is the smallest set of rows, in q's order, that holds every row q selects: a kept view
// that q narrows, or the whole order.
//
// q narrows a view when it asks for the same verdict, node, owner and sort, and its text is the
// view's text with more typed after it, as a filter is typed key by key: every word of the view's
// text is then a word of q's text or a prefix of one, and a row that matches a word also matches
// its prefix (a subsequence, or a substring, of the longer word contains the shorter), while any
// word added only narrows. So the next key of a filter over 150,000 pods scans the rows the
// previous key left, not the 150,000.
func (m *Model) source(q Query) *order {
	best := m.idx.orders[sortIndex(q.Sort)]
	for _, v := range m.idx.views {
		if narrows(q, v.q) && v.rows.Len() < best.Len() {
			best = v.rows
		}
	}
	return best
}

// narrows reports whether every row q selects is among the rows of the view of base.
func narrows(q, base Query) bool {
	if q.Sort != base.Sort || q.Filter != base.Filter || q.Node != base.Node || q.Owner != base.Owner {
		return false
	}
	return strings.TrimSpace(base.Text) != "" && strings.HasPrefix(strings.ToLower(q.Text), strings.ToLower(base.Text))
}

// ViewCost is how many rows PodView(q) would match to build q's view: 0 when the view is at hand
// (kept, or one of the orders), else the size of the rows it comes from (source). The dashboard
// builds a costly view off its goroutine (StartFilter).
func (m *Model) ViewCost(q Query) int {
	m.flush()
	if selectsAll(q) {
		return 0
	}
	for _, v := range m.idx.views {
		if v.q == q {
			return 0
		}
	}
	return m.source(q).Len()
}

// findView returns q's view and makes it the most recent, or nil.
func (m *Model) findView(q Query) *view {
	vs := m.idx.views
	for i, v := range vs {
		if v.q == q {
			copy(vs[1:i+1], vs[:i])
			vs[0] = v
			return v
		}
	}
	return nil
}

func (m *Model) pushView(v *view) {
	x := &m.idx
	if len(x.views) == maxViews {
		x.views[maxViews-1] = nil
		x.views = x.views[:maxViews-1]
	}
	x.views = append(x.views, nil)
	copy(x.views[1:], x.views)
	x.views[0] = v
}

// View returns the pods q selects, in q's order, as a new slice: for --once and tests, which
// read every pod. The dashboard reads PodView.
func (m *Model) View(q Query) []*Pod {
	v := m.PodView(q)
	return v.Append(make([]*Pod, 0, v.Len()), 0, v.Len())
}

// match reports whether the view keeps r.
func (v *view) match(r *row) bool {
	q := &v.q
	switch q.Filter {
	case Problems:
		if !failing(r.kind) {
			return false
		}
	case OnlyDoomed:
		if r.kind != classify.Doomed {
			return false
		}
	case OnlyTransient:
		if r.kind != classify.Transient {
			return false
		}
	}
	if q.Node != "" && r.node != q.Node {
		return false
	}
	// A managed pod's workload is exactly "namespace/Kind/name" (upsert and reresolveOwners keep
	// Pod.workload so); an unmanaged pod's row has none, so it never matches an owner.
	if q.Owner != "" && r.workload != q.Owner {
		return false
	}
	for _, t := range v.tokens {
		if !fuzzyMatch(t, r) {
			return false
		}
	}
	return true
}

// fuzzyMatch reports whether token (lower case) matches the pod's row, ignoring ASCII case:
//   - fuzzily, as a subsequence, in "namespace/name" or in the node name: short identifiers are
//     where people type abbreviations ("shpay" finds shop/payments-…, "n3" finds node-3);
//   - as a substring of the verdict's reason: prose is long enough that a subsequence would
//     match almost anything ("pay" is a subsequence of "repeatedly").
//
// The text filter is split on spaces and every word must match. Both tests are linear and
// allocation-free; results keep the view's sort order rather than a match score.
func fuzzyMatch(token string, r *row) bool {
	if ctx, ok := strings.CutPrefix(token, "@"); ok {
		// "@eu": the pod's cluster, by a part of its context's name. Context is written once,
		// before the pod's first row is published.
		return classify.ContainsFold(r.pod.Context, ctx)
	}
	return subsequence2(token, r.ns, "/", r.name) || subsequence2(token, r.node, "", "") ||
		classify.ContainsFold(r.reason, token)
}

// subsequence2 reports whether token is a subsequence of a+b+c, without concatenating.
func subsequence2(token, a, b, c string) bool {
	j := 0
	for _, field := range [...]string{a, b, c} {
		for i := 0; i < len(field) && j < len(token); i++ {
			if classify.LowerASCII(field[i]) == token[j] {
				j++
			}
		}
	}
	return j == len(token)
}
