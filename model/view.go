package model

import (
	"cmp"
	"slices"
	"strings"

	"doomwatch/classify"
)

// viewCache holds the last View: the TUI asks for it on every batch, tick and query change and
// renders only the visible rows, so a call costs no allocation while the model and the query stay
// the same (a tick, for one). The whole Query is the key (every field, Owner included, is
// compared).
type viewCache struct {
	valid   bool
	version uint64
	q       Query
	pods    []*Pod
}

// View returns the pods q selects, in q's order. The slice is cached until the model or the
// query changes; callers must not modify it.
func (m *Model) View(q Query) []*Pod {
	c := &m.view
	if c.valid && c.version == m.version && c.q == q {
		return c.pods
	}
	tokens := strings.Fields(strings.ToLower(q.Text))
	m.mergeOrder()
	out := make([]*Pod, 0, len(m.order))
	for _, p := range m.order {
		if keep(p, &q, tokens) {
			out = append(out, p)
		}
	}
	switch q.Sort {
	case ByName:
		// m.order is already by namespace/name.
	case BySeverity:
		out = bySeverityStable(out)
	case ByNode:
		slices.SortStableFunc(out, func(a, b *Pod) int {
			if c := strings.Compare(a.Node, b.Node); c != 0 {
				return c
			}
			return cmp.Compare(b.Verdict.Kind.Severity(), a.Verdict.Kind.Severity())
		})
	case ByAge:
		slices.SortStableFunc(out, func(a, b *Pod) int { return b.Created.Compare(a.Created) })
	}
	c.pods, c.version, c.q, c.valid = out, m.version, q, true
	return out
}

// bySeverityStable orders pods most severe first, keeping their (name) order within a severity:
// a counting sort, linear in the pod count.
func bySeverityStable(ps []*Pod) []*Pod {
	const levels = 5 // classify.Kind.Severity returns 0..4
	var start [levels + 1]int
	for _, p := range ps {
		start[levels-p.Verdict.Kind.Severity()]++
	}
	for i, n := 0, 0; i <= levels; i++ {
		start[i], n = n, n+start[i]
	}
	out := make([]*Pod, len(ps))
	for _, p := range ps {
		s := levels - p.Verdict.Kind.Severity()
		out[start[s]] = p
		start[s]++
	}
	return out
}

// mergeOrder brings m.order up to date: pods added since the last merge are sorted (k log k) and
// merged in, deleted ones dropped, in one linear pass.
func (m *Model) mergeOrder() {
	if len(m.added) == 0 && m.removed == 0 {
		return
	}
	slices.SortFunc(m.added, byName)
	out := make([]*Pod, 0, len(m.pods))
	i, j := 0, 0
	for i < len(m.order) || j < len(m.added) {
		var p *Pod
		if j == len(m.added) || i < len(m.order) && byName(m.order[i], m.added[j]) <= 0 {
			p, i = m.order[i], i+1
		} else {
			p, j = m.added[j], j+1
		}
		if !p.gone {
			out = append(out, p)
		}
	}
	clear(m.added)
	m.order, m.added, m.removed = out, m.added[:0], 0
}

func keep(p *Pod, q *Query, tokens []string) bool {
	switch q.Filter {
	case Problems:
		if !failing(p.Verdict.Kind) {
			return false
		}
	case OnlyDoomed:
		if p.Verdict.Kind != classify.Doomed {
			return false
		}
	case OnlyTransient:
		if p.Verdict.Kind != classify.Transient {
			return false
		}
	}
	if q.Node != "" && p.Node != q.Node {
		return false
	}
	if q.Owner != "" && !ofWorkload(p, q.Owner) {
		return false
	}
	for _, t := range tokens {
		if !fuzzyMatch(t, p) {
			return false
		}
	}
	return true
}

// ofWorkload reports whether workload, "namespace/Kind/name", is p's namespace and top owner.
// A managed pod's p.workload is exactly that string: upsert and reresolveOwners set it to
// workloadOf(p.Namespace, p.Owner, p.Key) whenever Owner changes. An unmanaged pod's workload is
// its key instead, hence the Owner check. Comparing the stored string allocates nothing per pod.
func ofWorkload(p *Pod, workload string) bool {
	return p.Owner != "" && p.workload == workload
}

// fuzzyMatch reports whether token (lower case) matches the pod, ignoring ASCII case:
//   - fuzzily, as a subsequence, in "namespace/name" or in the node name: short identifiers are
//     where people type abbreviations ("shpay" finds shop/payments-…, "n3" finds node-3);
//   - as a substring of the verdict's reason: prose is long enough that a subsequence would
//     match almost anything ("pay" is a subsequence of "repeatedly").
//
// The text filter is split on spaces and every word must match. Both tests are linear and
// allocation-free, so filtering 100,000 pods takes milliseconds; results keep the view's sort
// order rather than a match score.
func fuzzyMatch(token string, p *Pod) bool {
	return subsequence2(token, p.Namespace, "/", p.Name) || subsequence2(token, p.Node, "", "") ||
		classify.ContainsFold(p.Verdict.Reason, token)
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

func byName(a, b *Pod) int {
	if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
		return c
	}
	return strings.Compare(a.Name, b.Name)
}
