package model

import (
	"cmp"
	"slices"
	"strings"

	"doomwatch/classify"
)

// viewCache holds the last View: the TUI asks for it every frame and renders only the visible
// rows, so a frame costs no allocation while the model and the query stay the same.
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
	out := make([]*Pod, 0, len(m.pods))
	for _, p := range m.pods {
		if keep(p, &q, tokens) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, comparator(q.Sort))
	c.pods, c.version, c.q, c.valid = out, m.version, q, true
	return out
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
	for _, t := range tokens {
		if !fuzzyMatch(t, p) {
			return false
		}
	}
	return true
}

// fuzzyMatch reports whether token (lower case) is a subsequence of "namespace/name node reason",
// ignoring ASCII case, as fzf-style filters do: "chk3" finds "checkout-…" on "node-3". The text
// filter is split on spaces and every word must match. A subsequence test is linear and
// allocation-free, so filtering 100,000 pods takes milliseconds; results keep the view's sort
// order rather than a match score.
func fuzzyMatch(token string, p *Pod) bool {
	j := 0
	for _, field := range [...]string{p.Namespace, "/", p.Name, " ", p.Node, " ", p.Verdict.Reason} {
		for i := 0; i < len(field) && j < len(token); i++ {
			c := field[i]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c == token[j] {
				j++
			}
		}
		if j == len(token) {
			return true
		}
	}
	return false
}

func comparator(s Sort) func(a, b *Pod) int {
	switch s {
	case ByName:
		return byName
	case ByNode:
		return func(a, b *Pod) int {
			if c := strings.Compare(a.Node, b.Node); c != 0 {
				return c
			}
			return bySeverity(a, b)
		}
	case ByAge:
		return func(a, b *Pod) int {
			if c := b.Created.Compare(a.Created); c != 0 {
				return c
			}
			return byName(a, b)
		}
	default:
		return bySeverity
	}
}

func bySeverity(a, b *Pod) int {
	if c := cmp.Compare(b.Verdict.Kind.Severity(), a.Verdict.Kind.Severity()); c != 0 {
		return c
	}
	return byName(a, b)
}

func byName(a, b *Pod) int {
	if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
		return c
	}
	return strings.Compare(a.Name, b.Name)
}
