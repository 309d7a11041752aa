package model

import (
	"slices"
	"sort"
)

// order keeps rows sorted by cmp, which must be a total order (every order here ends on the row's
// id), so that a row is found again by binary search.
//
// It is a list of sorted blocks of at most maxBlock rows, a B-tree of depth two: inserting or
// removing one row costs two binary searches and a copy within one block, O(log n + maxBlock),
// whatever the row count; reading the i'th row costs a binary search over the blocks' start
// positions. A plain sorted slice would move half of its n pointers per change (50 changes at
// 150,000 pods move 30 MB per order); a pointer B-tree (google/btree) has no positional access,
// which the dashboard needs for the window it shows, nor a rank for following the selection.
type order struct {
	cmp    func(a, b *row) int
	blocks [][]*row
	n      int
	// starts[i] is the position of blocks[i][0]; rebuilt when stale (after a change), which is
	// O(number of blocks), a few hundred at 150,000 rows.
	starts []int
	stale  bool
}

const (
	// maxBlock bounds a block: a change copies at most this many pointers.
	maxBlock = 512
	// fillBlock is how full a rebuild leaves the blocks, so inserts seldom split them at once.
	fillBlock = 384
	// bulkMin is the smallest batch of new rows merged into an order in one linear pass rather
	// than inserted one by one: a sync delivers thousands at a time.
	bulkMin = 256
)

func newOrder(cmp func(a, b *row) int) *order { return &order{cmp: cmp} }

// Len is the number of rows.
func (o *order) Len() int { return o.n }

// block returns the index of the first block whose last row is not before r, or len(blocks).
func (o *order) block(r *row) int {
	return sort.Search(len(o.blocks), func(i int) bool {
		b := o.blocks[i]
		return o.cmp(b[len(b)-1], r) >= 0
	})
}

// insert adds r.
func (o *order) insert(r *row) {
	o.n++
	o.stale = true
	if len(o.blocks) == 0 {
		o.blocks = append(o.blocks, []*row{r})
		return
	}
	bi := min(o.block(r), len(o.blocks)-1)
	b := o.blocks[bi]
	j, _ := slices.BinarySearchFunc(b, r, o.cmp)
	b = slices.Insert(b, j, r)
	if len(b) <= maxBlock {
		o.blocks[bi] = b
		return
	}
	// Split in two halves, each with room to grow.
	half := len(b) / 2
	lo := make([]*row, half, maxBlock)
	hi := make([]*row, len(b)-half, maxBlock)
	copy(lo, b[:half])
	copy(hi, b[half:])
	o.blocks[bi] = lo
	o.blocks = slices.Insert(o.blocks, bi+1, hi)
}

// remove takes r out and reports whether it was there.
func (o *order) remove(r *row) bool {
	bi := o.block(r)
	if bi == len(o.blocks) {
		return false
	}
	b := o.blocks[bi]
	j, found := slices.BinarySearchFunc(b, r, o.cmp)
	if !found || b[j] != r {
		return false
	}
	b = slices.Delete(b, j, j+1)
	o.n--
	o.stale = true
	switch {
	case len(b) == 0:
		o.blocks = slices.Delete(o.blocks, bi, bi+1)
	case bi+1 < len(o.blocks) && len(b)+len(o.blocks[bi+1]) <= maxBlock/2:
		// Two small neighbours become one, so deletions do not leave many near-empty blocks.
		o.blocks[bi] = append(b, o.blocks[bi+1]...)
		o.blocks = slices.Delete(o.blocks, bi+1, bi+2)
	default:
		o.blocks[bi] = b
	}
	return true
}

// insertMany adds rs, which it may reorder. A large batch (a sync delivers thousands of pods at a
// time) is sorted and merged in one pass: k log n comparisons, each new row's place found by
// binary search, and one copy of the n pointers. A small one is inserted row by row.
func (o *order) insertMany(rs []*row) {
	if len(rs) < bulkMin {
		for _, r := range rs {
			o.insert(r)
		}
		return
	}
	slices.SortFunc(rs, o.cmp)
	old := o.all()
	merged := make([]*row, 0, len(old)+len(rs))
	i := 0
	for _, r := range rs {
		k, _ := slices.BinarySearchFunc(old[i:], r, o.cmp)
		merged = append(merged, old[i:i+k]...)
		merged = append(merged, r)
		i += k
	}
	merged = append(merged, old[i:]...)
	o.load(merged)
}

// load replaces the rows with sorted, which the order keeps (its blocks are windows on it; a
// block copies itself out when it first grows).
func (o *order) load(sorted []*row) {
	o.blocks = o.blocks[:0]
	for len(sorted) > 0 {
		k := min(fillBlock, len(sorted))
		o.blocks = append(o.blocks, sorted[:k:k])
		sorted = sorted[k:]
	}
	o.n = 0
	for _, b := range o.blocks {
		o.n += len(b)
	}
	o.stale = true
}

func (o *order) positions() []int {
	if o.stale || len(o.starts) != len(o.blocks) {
		o.starts = o.starts[:0]
		n := 0
		for _, b := range o.blocks {
			o.starts = append(o.starts, n)
			n += len(b)
		}
		o.stale = false
	}
	return o.starts
}

// locate returns the block and offset of position i, which must be in range.
func (o *order) locate(i int) (bi, j int) {
	starts := o.positions()
	bi = sort.Search(len(starts), func(k int) bool { return starts[k] > i }) - 1
	return bi, i - starts[bi]
}

// at returns the row at position i.
func (o *order) at(i int) *row {
	bi, j := o.locate(i)
	return o.blocks[bi][j]
}

// index returns r's position, or -1 when r is not in the order.
func (o *order) index(r *row) int {
	bi := o.block(r)
	if bi == len(o.blocks) {
		return -1
	}
	b := o.blocks[bi]
	j, found := slices.BinarySearchFunc(b, r, o.cmp)
	if !found || b[j] != r {
		return -1
	}
	return o.positions()[bi] + j
}

// appendRange appends the rows at positions [from, to) to dst.
func (o *order) appendRange(dst []*row, from, to int) []*row {
	if from >= to {
		return dst
	}
	bi, j := o.locate(from)
	for n := to - from; n > 0; bi, j = bi+1, 0 {
		b := o.blocks[bi][j:]
		k := min(n, len(b))
		dst = append(dst, b[:k]...)
		n -= k
	}
	return dst
}

// all returns a copy of every row in order.
func (o *order) all() []*row { return o.appendRange(make([]*row, 0, o.n), 0, o.n) }
