package model

import (
	"container/heap"
	"sort"
	"strings"
)

// merged is a fleet's pod view: each cluster's view of the same query, merged in the query's
// order as it is read. Each cluster keeps its own orders up to date batch by batch (view.go), so
// the fleet never sorts: reading rows [from, to) merges the clusters' rows up to to, once per
// view (a view lives until the next batch), at O(to × log clusters); the dashboard reads the rows
// on screen, near the top of the order as a rule. Index finds a pod's position without merging,
// by counting in each cluster's order the rows before it (a binary search each).
type merged struct {
	parts []PodView
	cmp   func(a, b *row) int
	n     int
	// out is the merged order read so far; heads are each part's next row.
	out   []*row
	heads []cursorAt
	h     mergeHeap
}

// cursorAt is a part's next row, and where it is in the part's blocks.
type cursorAt struct {
	r     *row
	bi, j int
}

func mergeViews(parts []PodView, s Sort) PodView {
	mv := &merged{parts: parts, cmp: orderFunc(s), heads: make([]cursorAt, len(parts))}
	for _, p := range parts {
		mv.n += p.Len()
	}
	mv.h.m = mv
	for i, p := range parts {
		if p.Len() > 0 {
			mv.heads[i] = cursorAt{r: p.rows.blocks[0][0]}
			mv.h.items = append(mv.h.items, i)
		}
	}
	heap.Init(&mv.h)
	return PodView{merged: mv}
}

// less orders the rows of two parts: q's order, then the part, so the merge is total.
func (mv *merged) less(a *row, pa int, b *row, pb int) bool {
	if c := mv.cmp(a, b); c != 0 {
		return c < 0
	}
	return pa < pb
}

// fill merges until out holds n rows.
func (mv *merged) fill(n int) {
	for len(mv.out) < n && len(mv.h.items) > 0 {
		i := mv.h.items[0]
		c := &mv.heads[i]
		mv.out = append(mv.out, c.r)
		blocks := mv.parts[i].rows.blocks
		if c.j++; c.j == len(blocks[c.bi]) {
			c.bi, c.j = c.bi+1, 0
		}
		if c.bi == len(blocks) {
			heap.Pop(&mv.h)
		} else {
			c.r = blocks[c.bi][c.j]
			heap.Fix(&mv.h, 0)
		}
	}
}

func (mv *merged) at(i int) *Pod {
	mv.fill(i + 1)
	return mv.out[i].pod
}

func (mv *merged) append(dst []*Pod, from, to int) []*Pod {
	mv.fill(to)
	for _, r := range mv.out[from:to] {
		dst = append(dst, r.pod)
	}
	return dst
}

// index is the position of the pod of a fleet key (Pod.ID), or -1: its position in its
// cluster's order, plus, in each other cluster's, how many rows come before it.
func (mv *merged) index(key string) int {
	ctx, k, ok := strings.Cut(key, keySep)
	if !ok {
		return -1
	}
	own := -1
	for i, p := range mv.parts {
		if p.m != nil && p.m.context == ctx {
			own = i
			break
		}
	}
	if own < 0 {
		return -1
	}
	pos := mv.parts[own].Index(k)
	if pos < 0 {
		return -1
	}
	r := mv.parts[own].rows.at(pos)
	for i, p := range mv.parts {
		if i == own || p.rows == nil {
			continue
		}
		pos += sort.Search(p.Len(), func(j int) bool { return !mv.less(p.rows.at(j), i, r, own) })
	}
	return pos
}

// mergeHeap holds the parts with rows left, by their next row.
type mergeHeap struct {
	m     *merged
	items []int
}

func (h *mergeHeap) Len() int { return len(h.items) }
func (h *mergeHeap) Less(a, b int) bool {
	pa, pb := h.items[a], h.items[b]
	return h.m.less(h.m.heads[pa].r, pa, h.m.heads[pb].r, pb)
}
func (h *mergeHeap) Swap(a, b int) { h.items[a], h.items[b] = h.items[b], h.items[a] }
func (h *mergeHeap) Push(x any)    { h.items = append(h.items, x.(int)) }
func (h *mergeHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}
