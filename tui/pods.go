package tui

import (
	"strconv"
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
	tab    *table[*podRow]
	shown  []*model.Pod // the rows on screen, reused per frame
	prep   []podRow     // and what their cells are made of
}

func newPodTable(c *common) *podTable {
	t := &podTable{c: c, tab: newTable(podColumns)}
	// The title (status line) and the column header are above the rows.
	t.list = newList(2, func(i int) *model.Pod { return t.rows.At(i) }, func(p *model.Pod) string { return p.ID() })
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
		return openDetailMsg{key: p.ID()}, nil
	case key.Matches(k, t.c.keys.Node) && p.Node != "":
		return showPodsMsg{context: p.Context, node: p.Node}, nil
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
	t.prep = t.prep[:0]
	for _, p := range t.shown {
		t.prep = append(t.prep, newPodRow(p, t.c))
	}
	t.tab.reset()
	for i := range t.prep {
		t.tab.add(&t.prep[i], t.c)
	}
	t.tab.layout(t.width)

	var b strings.Builder
	title := "PODS"
	if focused {
		title = st.focusTitle.Render(title)
	} else {
		title = st.title.Render(title)
	}
	b.WriteString(clip(title+" "+st.dim.Render(t.status), t.width))
	b.WriteByte('\n')
	b.WriteString(t.tab.header(t.c, t.width))

	for i := range t.prep {
		b.WriteByte('\n')
		sel := from+i == t.cur.sel
		mark := "  "
		if sel {
			mark = "▶ "
		}
		// The verdict keeps its colour except on the selected row, which is drawn in one style.
		s := t.tab.row(i, mark, &t.prep[i], t.c, !sel)
		if sel && focused {
			s = st.selected.Render(fit(s, t.width))
		} else if sel {
			s = st.bold.Render(s)
		}
		b.WriteString(s)
	}
	if more := t.more(); more != "" {
		b.WriteString("\n  " + st.dim.Render(more))
	}
	if t.rows.Len() == 0 {
		b.WriteString("\n  " + st.dim.Render("no pods match"))
	}
	return b.String()
}

// verdictWidth is the widest verdict badge, "◐ progressing": the verdict columns are as wide as
// the widest they can hold, so a page of doomed pods has the columns of any other.
const verdictWidth = 13

// reasonMin is the narrowest REASON worth showing; reasonKeep is how much of it the less useful
// columns may not take away.
const (
	reasonMin  = 12
	reasonKeep = 40
)

// podColumns are the pod table's columns, in display order. The verdict, its reason and the
// node (start failures cluster by node) answer "is this rollout doomed, why and where", so they
// rank first and at 80 columns they stay while kubectl's STATUS, which the reason restates, goes;
// the raw container states repeat the reason too, and go first. The namespace comes next: it is
// the name order's first key, and over all namespaces the rows read unsorted without it. The
// reason is the point of the table: it takes what the others leave.
var podColumns = []column[*podRow]{
	// CONTEXT is the pod's cluster, with several contexts only (empty otherwise, so left out).
	{title: "CONTEXT", max: 16, priority: 2, optional: true, cell: func(r *podRow, _ *common) string { return r.Context }},
	{title: "NAMESPACE", max: 16, priority: 5, cell: func(r *podRow, _ *common) string { return r.Namespace }},
	{title: "NAME", max: 40, priority: 1, cell: func(r *podRow, _ *common) string { return r.Name }},
	{title: "READY", max: 5, priority: 7, cell: func(r *podRow, _ *common) string { return r.ready }},
	{title: "STATUS", max: 20, priority: 9, cell: func(r *podRow, _ *common) string { return r.status }},
	{title: "RESTARTS", max: 14, priority: 6, cell: func(r *podRow, _ *common) string { return r.restarts }},
	{title: "NODE", max: 16, priority: 3, cell: func(r *podRow, _ *common) string { return r.Node }},
	{title: "AGE", max: 5, priority: 8, cell: func(r *podRow, c *common) string { return c.age(r.Created) }},
	{title: "VERDICT", min: verdictWidth, max: verdictWidth, priority: 2, cell: func(r *podRow, _ *common) string { return badgeText(r.Verdict.Class) },
		paint: func(r *podRow, c *common, s string) string { return c.st.badgeFor(r.Verdict.Class, s) }},
	{title: "STATE", max: 26, priority: 12, cell: func(r *podRow, _ *common) string { return r.state }},
	{title: "LAST STATE", max: 30, priority: 11, cell: func(r *podRow, _ *common) string { return r.lastState }},
	{title: "EXIT", max: 4, priority: 10, cell: func(r *podRow, _ *common) string { return r.exit }},
	{title: "REASON", min: reasonMin, keep: reasonKeep, priority: 4, cell: func(r *podRow, _ *common) string { return r.Verdict.Reason }},
}

// podRow is what a pod's cells are made of: the pod and its view (model.Pod.Columns and
// model.Pod.Deciding), kubectl's READY, STATUS and RESTARTS and the deciding container's states.
type podRow struct {
	*model.Pod
	ready, status, restarts string
	state, lastState, exit  string
}

// newPodRow reads p's view for its cells. Only rows on screen are made (the table is
// virtualised), so this runs at most a screenful of times per frame.
func newPodRow(p *model.Pod, c *common) podRow {
	cols := p.Columns(c.now)
	c.note(cols.RestartsUntil)
	r := podRow{Pod: p, ready: cols.Ready, status: cols.Status, restarts: cols.Restarts}
	if cs, ok := p.Deciding(); ok {
		r.state, r.lastState = cs.State.Summary(), cs.LastState.Summary()
		if code, ok := cs.LastState.Exit(); ok {
			r.exit = strconv.Itoa(int(code))
		}
		if code, ok := cs.State.Exit(); ok {
			r.exit = strconv.Itoa(int(code))
		}
	}
	if p.Verdict.HasExitCode {
		r.exit = strconv.Itoa(int(p.Verdict.ExitCode))
	}
	return r
}
