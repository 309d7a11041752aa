package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"doomwatch/model"
)

// podTable is the virtualised pod list. It reads the model's pod view by position and formats only
// the rows on screen. The selection follows the selected pod's key across updates, not its index.
type podTable struct {
	list[model.Pod]
	c      *common
	rows   model.PodView
	width  int
	total  int // pods in the model, for "12 of 5,000"
	status string
	cells  [][numCols]string // reused per frame: at most a screenful
	shown  []*model.Pod      // the rows on screen, reused per frame
}

func newPodTable(c *common) *podTable {
	t := &podTable{c: c}
	// The title (status line) and the column header are above the rows.
	t.list = newList(2, func(i int) *model.Pod { return t.rows.At(i) }, func(p *model.Pod) string { return p.Key })
	// The model finds a pod's position in O(log n).
	t.index = func(key string) int { return t.rows.Index(key) }
	return t
}

// SetSize sets the table's size including its status line and column header.
func (t *podTable) SetSize(w, h int) {
	t.width = w
	t.setHeight(h)
}

// Refresh shows the query's rows and keeps the selection on the same pod when it is still shown.
func (t *podTable) Refresh(s *snapshot) {
	t.total = s.counts.Pods
	t.rows = s.pods
	t.setLen(t.rows.Len())
	t.status = s.podsStatus
}

// Update moves the selection; enter opens the pod's detail, n narrows the pods to its node and y
// copies `kubectl describe pod`.
func (t *podTable) Update(msg tea.Msg) (tea.Msg, tea.Cmd) {
	if t.update(msg, t.c.keys) {
		return nil, nil
	}
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil, nil
	}
	p := t.selected()
	switch {
	case p == nil:
	case key.Matches(k, t.c.keys.Enter):
		return openDetailMsg{key: p.Key}, nil
	case key.Matches(k, t.c.keys.Node) && p.Node != "":
		return showPodsMsg{node: p.Node}, nil
	case key.Matches(k, t.c.keys.Copy):
		return copyMsg{text: describePod(p)}, nil
	}
	return nil, nil
}

// Help is the list keys and the dashboard's; enter opens the detail, y copies describe.
func (t *podTable) Help() rankedHelp {
	return t.c.keys.listHelp(t.c.keys.Enter, rankedBinding{t.c.keys.Logs, 8},
		rankedBinding{withDesc(t.c.keys.Copy, "copy describe"), 8})
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
