package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"

	"doomwatch/model"
)

// podTable is the virtualised pod list. It reads the model's pod view by position and formats only
// the rows on screen. The selection follows the selected pod's key across updates, not its index.
type podTable struct {
	c      *common
	rows   model.PodView
	cur    cursor
	selKey string
	width  int
	total  int // pods in the model, for "12 of 5,000"
	status string
	cells  [][numCols]string // reused per frame: at most a screenful
	shown  []*model.Pod      // the rows on screen, reused per frame
}

func newPodTable(c *common) *podTable { return &podTable{c: c} }

// SetSize sets the table's size including its status line and column header.
func (t *podTable) SetSize(w, h int) {
	t.width = w
	t.cur.setHeight(h - 2)
	t.follow()
}

// setRows replaces the rows after a model update or a query change and keeps the selection on the
// same pod when it is still shown.
func (t *podTable) setRows(rows model.PodView) {
	t.rows = rows
	t.cur.setLen(rows.Len())
	t.follow()
}

// follow moves the cursor back onto selKey: a look-up when the pod did not move, else the model
// finds its position in O(log n).
func (t *podTable) follow() {
	if !t.cur.chosen {
		t.cur.sel = 0
		t.cur.clamp()
		t.remember()
		return
	}
	if t.selKey == "" || t.rows.Len() == 0 {
		t.remember()
		return
	}
	if s := t.cur.sel; s < t.rows.Len() && t.rows.At(s).Key == t.selKey {
		t.cur.clamp()
		return
	}
	if i := t.rows.Index(t.selKey); i >= 0 {
		t.cur.sel = i
		t.cur.clamp()
		return
	}
	// The pod left the view: stay at the same place and select what is there now.
	t.cur.clamp()
	t.remember()
}

func (t *podTable) remember() {
	if p := t.selected(); p != nil {
		t.selKey = p.Key
	} else {
		t.selKey = ""
	}
}

// selected is the pod under the cursor, or nil.
func (t *podTable) selected() *model.Pod {
	if t.cur.sel >= 0 && t.cur.sel < t.rows.Len() {
		return t.rows.At(t.cur.sel)
	}
	return nil
}

// selectKey puts the cursor on the pod with key, if it is shown.
func (t *podTable) selectKey(key string) {
	t.cur.chosen = true
	t.selKey = key
	t.follow()
}

// Update handles the list keys.
func (t *podTable) Update(msg tea.Msg) tea.Cmd {
	if k, ok := msg.(tea.KeyPressMsg); ok && navigate(&t.cur, k, t.c.keys) {
		t.remember()
	}
	return nil
}

func (t *podTable) scroll(delta int) { t.cur.scroll(delta); t.remember() }

// clickRow selects the row'th visible row.
func (t *podTable) clickRow(row int) {
	if t.cur.clickLine(row) {
		t.remember()
	}
}

// View renders the status line, the column header and the visible rows.
func (t *podTable) View(focused bool) string {
	st := t.c.st
	from, to := t.cur.visible()
	t.shown = t.rows.Append(t.shown[:0], from, to)
	t.cells = t.cells[:0]
	for _, p := range t.shown {
		t.cells = append(t.cells, [numCols]string{})
		rowCells(p, t.c, &t.cells[len(t.cells)-1])
	}
	widths, shown := t.layout()

	var b strings.Builder
	title := "PODS"
	if focused {
		title = st.focusTitle.Render(title)
	} else {
		title = st.title.Render(title)
	}
	b.WriteString(clip(title+" "+st.dim.Render(t.status), t.width))
	b.WriteByte('\n')

	var line strings.Builder
	line.WriteString("  ")
	for _, c := range shown {
		line.WriteString(fit(colTitles[c], widths[c]))
		line.WriteByte(' ')
	}
	b.WriteString(st.colHeader.Render(clip(strings.TrimRight(line.String(), " "), t.width)))

	for i := range t.cells {
		b.WriteByte('\n')
		p := t.shown[i]
		sel := from+i == t.cur.sel
		line.Reset()
		if sel {
			line.WriteString("▶ ")
		} else {
			line.WriteString("  ")
		}
		for _, c := range shown {
			cell := fit(t.cells[i][c], widths[c])
			if c == colVerdict && !sel {
				cell = st.badgeFor(p.Verdict.Kind, cell)
			}
			line.WriteString(cell)
			line.WriteByte(' ')
		}
		s := strings.TrimRight(line.String(), " ")
		if sel && focused {
			s = st.selected.Render(fit(s, t.width))
		} else if sel {
			s = st.bold.Render(s)
		}
		b.WriteString(s)
	}
	if t.rows.Len() == 0 {
		b.WriteString("\n  " + st.dim.Render("no pods match"))
	}
	return b.String()
}

// layout picks the columns that fit, most useful first, and their widths from the visible cells.
func (t *podTable) layout() (widths [numCols]int, shown []int) {
	for c := range numCols {
		widths[c] = colWidth(colTitles[c], colMax[c], len(t.cells), func(i int) string { return t.cells[i][c] })
	}
	avail := t.width - 2 // selection gutter
	var include [numCols]bool
	used, reserved := 0, 0
	for _, c := range colPriority {
		need := widths[c] + 1
		if c == colReason {
			// The reason is the point of the table: keep up to reasonKeep of it before any
			// less useful column, then let it take whatever is left.
			reserved = max(reasonMin, min(widths[c], reasonKeep, avail-used))
			need = reserved + 1
		}
		if used+need <= avail+1 {
			include[c] = true
			used += need
		}
	}
	if include[colReason] {
		widths[colReason] = max(min(widths[colReason], reserved+avail+1-used), reasonMin)
	}
	shown = make([]int, 0, numCols)
	for c := range numCols {
		if include[c] {
			shown = append(shown, c)
		}
	}
	return widths, shown
}
