package tui

import (
	"cmp"
	"slices"
	"strings"
)

// column is one column of a panel's table: its title, its width rule and the function that
// formats its cell, after k9s's render.HeaderColumn (internal/render/pod.go). Unlike k9s, which
// re-renders every row, a panel formats only the rows on screen. A panel's columns are a slice
// literal in display order (podColumns, nodeColumns, rolloutColumns), so a new column is one line
// there; R is what a row's cells are made of.
type column[R any] struct {
	title string
	// short, when set, is the title used when the full titles would take room the columns need:
	// a column left out, or the keep or rest column given less than it holds back (table.layout).
	short string
	// The column is as wide as its title and the widest cell the table has formatted in it, at
	// least min and at most max (0: no limit); min == max fixes the width.
	min, max int
	// keep, when set, makes the column take the room the other columns shown leave, never less
	// than min: up to keep cells of it are held before any column after it in priority is offered
	// room. At most one column of a table has it. On a rest column, keep is how many of its cells
	// the other columns' full titles may not take (see short).
	keep int
	// squeeze, when set, is the least width the column is cut down to when the columns that are
	// always shown (priority 0) do not fit the panel: the widest of them gives up a cell first.
	squeeze int
	// priority ranks the columns by use, 1 the most useful: on a narrow panel the columns with
	// the highest go first (ties in display order). A column of priority 0 is always shown, and
	// the panel clips the line instead.
	priority int
	// right aligns the cells to the right (counts); they are padded, never cut.
	right bool
	// optional leaves the column out while no cell the table has formatted in it holds anything.
	optional bool
	// pad is the blanks before the column besides the one between any two.
	pad int
	// rest makes the column the rest of the line, the last column: its cells are written as they
	// are, neither fitted nor trimmed, and the panel clips the line. It is held min cells.
	rest bool
	// cell formats the row's cell.
	cell func(r R, c *common) string
	// paint, when set, styles the fitted cell of a row the panel draws unselected.
	paint func(r R, c *common, s string) string
}

// table lays a panel's columns out for one frame: the cells of the rows on screen, which columns
// fit the width and how wide each is.
//
// The widths follow every row the table has formatted, not only the rows on screen: each column
// keeps the widest cell it has had (seen), and widths only grow while the table lives. Which
// columns fit then does not change with the page: scrolling to rows with shorter cells brings
// no column in, and sorting (which only moves rows) none out. Keeping the maxima costs nothing
// past the cells a frame formats anyway, so a table of 150,000 pods is never scanned for them.
type table[R any] struct {
	cols   []column[R]
	titles []string
	// order is the columns by priority, the order layout offers them room in.
	order []int
	// cells are the rows on screen, len(cols) cells each, reused per frame: at most a screenful.
	cells []string
	// seen is the widest cell of each column the table has formatted, and filled whether any
	// held anything (for optional columns).
	seen   []int
	filled []bool
	widths []int
	on     []bool
	// shown are the columns shown, in display order.
	shown []int
	// starts is where each column's cell starts in the line drawn last, in bytes; -1 for a
	// column not shown.
	starts []int
}

func newTable[R any](cols []column[R]) *table[R] {
	n := len(cols)
	t := &table[R]{cols: cols, titles: make([]string, n), order: make([]int, n),
		seen: make([]int, n), filled: make([]bool, n),
		widths: make([]int, n), on: make([]bool, n), shown: make([]int, 0, n), starts: make([]int, n)}
	for i := range cols {
		t.titles[i] = cols[i].title
		t.order[i] = i
	}
	slices.SortStableFunc(t.order, func(a, b int) int { return cmp.Compare(cols[a].priority, cols[b].priority) })
	return t
}

// reset drops the last frame's rows.
func (t *table[R]) reset() { t.cells = t.cells[:0] }

// add formats the cells of the next row on screen and widens the columns to them.
func (t *table[R]) add(r R, c *common) {
	for i := range t.cols {
		s := t.cols[i].cell(r, c)
		t.cells = append(t.cells, s)
		if s != "" {
			t.seen[i] = max(t.seen[i], width(s))
			t.filled[i] = true
		}
	}
}

// layout sizes each column to its title and the widest cell the table has formatted in it
// (column.min, max), then offers the columns room in priority order: those that do not fit the
// panel's width are left out, and so is a column with nothing in it (no title and no cell, or
// optional and empty so far). When the full titles cost a column, or room the keep or rest
// column holds back, the short titles are tried instead.
func (t *table[R]) layout(panelWidth int) {
	if t.place(panelWidth, false) {
		return
	}
	for j := range t.cols {
		if t.cols[j].short != "" {
			t.place(panelWidth, true)
			return
		}
	}
}

// place lays the columns out with the full titles or the short ones and reports whether every
// column with anything in it fits, the keep or rest column with the cells it holds back.
func (t *table[R]) place(panelWidth int, short bool) bool {
	for j := range t.cols {
		col := &t.cols[j]
		t.titles[j] = col.title
		if short && col.short != "" {
			t.titles[j] = col.short
		}
		w := max(width(t.titles[j]), t.seen[j])
		if col.max > 0 {
			w = min(w, col.max)
		}
		w = max(w, col.min)
		if col.optional && !t.filled[j] {
			w = 0
		}
		t.widths[j] = w
		t.on[j] = false
		t.starts[j] = -1
	}
	avail := panelWidth - 2 // selection gutter
	used, reserved, flex, rest := 0, 0, -1, -1
	fits := true
	for _, j := range t.order {
		col := &t.cols[j]
		need := t.widths[j]
		if need == 0 {
			continue
		}
		switch {
		case col.rest:
			need = col.min
		case col.keep > 0:
			// Keep up to keep of the column before any column after it in priority, then let
			// it take whatever is left.
			reserved = max(col.min, min(need, col.keep, avail-used))
			fits = fits && reserved >= min(need, col.keep)
			need = reserved
		}
		need += 1 + col.pad
		if col.priority == 0 || used+need <= avail+1 {
			t.on[j] = true
			used += need
			switch {
			case col.rest:
				rest = j
			case col.keep > 0:
				flex = j
			}
		} else {
			fits = false
		}
	}
	if over := used - (avail + 1); over > 0 {
		used -= t.squeeze(over)
	}
	if flex >= 0 {
		t.widths[flex] = max(min(t.widths[flex], reserved+avail+1-used), t.cols[flex].min)
	}
	if rest >= 0 {
		left := avail + 1 - used + t.cols[rest].min
		fits = fits && left >= min(t.widths[rest], max(t.cols[rest].keep, t.cols[rest].min))
	}
	t.shown = t.shown[:0]
	for j := range t.cols {
		if t.on[j] {
			t.shown = append(t.shown, j)
		}
	}
	return fits
}

// squeeze takes over cells from the columns shown that may be cut (column.squeeze), a cell at a
// time from the widest, until they fit or none can give more, and returns how many it took.
func (t *table[R]) squeeze(over int) int {
	took := 0
	for ; took < over; took++ {
		widest := -1
		for j := range t.cols {
			if t.on[j] && t.cols[j].squeeze > 0 && t.widths[j] > t.cols[j].squeeze &&
				(widest < 0 || t.widths[j] > t.widths[widest]) {
				widest = j
			}
		}
		if widest < 0 {
			break
		}
		t.widths[widest]--
	}
	return took
}

// header is the column header, clipped to the panel's width.
func (t *table[R]) header(c *common, panelWidth int) string {
	var none R
	return c.st.colHeader.Render(clip(t.line("  ", t.titles, none, c, false), panelWidth))
}

// row draws row i after mark (the selection gutter); paint styles its cells (column.paint).
func (t *table[R]) row(i int, mark string, r R, c *common, paint bool) string {
	n := len(t.cols)
	return t.line(mark, t.cells[i*n:(i+1)*n], r, c, paint)
}

// line joins the shown cells, each fitted to its column, and trims the blanks at the end (a rest
// column's cell is the end as it is).
func (t *table[R]) line(mark string, cells []string, r R, c *common, paint bool) string {
	var b strings.Builder
	b.WriteString(mark)
	for _, j := range t.shown {
		col := &t.cols[j]
		for range col.pad {
			b.WriteByte(' ')
		}
		t.starts[j] = b.Len()
		s := cells[j]
		switch {
		case col.rest:
		case col.right:
			if pad := t.widths[j] - width(s); pad > 0 {
				b.WriteString(strings.Repeat(" ", pad))
			}
		default:
			s = fit(s, t.widths[j])
		}
		if paint && col.paint != nil {
			s = col.paint(r, c, s)
		}
		b.WriteString(s)
		if col.rest {
			return b.String()
		}
		b.WriteByte(' ')
	}
	return strings.TrimRight(b.String(), " ")
}

// start is where column col's cell starts in the line drawn last, in bytes; -1 when the column
// is not shown.
func (t *table[R]) start(col int) int { return t.starts[col] }
