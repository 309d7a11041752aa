package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"doomwatch/model"
)

// rolloutList shows every rollout (Deployments, StatefulSets, DaemonSets): verdict,
// updated/ready/desired and why.
type rolloutList struct {
	// The selection follows the workload (Rollout.Workload): the model sorts doomed rollouts
	// first, so a rollout turning doomed moves the others, and the selection must follow the
	// workload, not its row, or enter would filter another rollout's pods.
	list[model.Rollout]
	c        *common
	rollouts []model.Rollout
	// across says, for the workloads in several clusters whose verdicts differ between them, the
	// verdict in each (model.Spread), at most maxAcrossLines of them, the worst first.
	across []string
	h      int
	width  int
	tab    *table[*model.Rollout]
}

// maxAcrossLines bounds the across-clusters lines above the rollouts' rows.
const maxAcrossLines = 3

func newRolloutList(c *common) *rolloutList {
	r := &rolloutList{c: c, tab: newTable(rolloutColumns)}
	// The title and the column header are above the rows.
	r.list = newList(2, func(i int) *model.Rollout { return &r.rollouts[i] }, (*model.Rollout).Workload)
	return r
}

// SetSize sets the list's size including title and header.
func (r *rolloutList) SetSize(w, h int) {
	r.width, r.h = w, h
	r.setHeight(h)
}

// Refresh shows the model's rollouts when they changed, keeping the selection on the same
// workload while it exists.
func (r *rolloutList) Refresh(s *snapshot) {
	var across []string
	for _, sp := range s.spreads {
		if len(across) < maxAcrossLines && sp.Differs() {
			across = append(across, sp.String())
		}
	}
	if !slices.Equal(across, r.across) {
		r.across = across
		// The lines sit above the column header: the rows start lower and have less room.
		r.above = 2 + len(across)
		r.setHeight(r.h)
	}
	if sameSlice(s.rollouts, r.rollouts) && len(s.rollouts) > 0 {
		return
	}
	r.rollouts = s.rollouts
	r.setLen(len(s.rollouts))
}

// Update moves the selection; enter shows exactly the rollout's pods.
func (r *rolloutList) Update(msg tea.Msg) (tea.Msg, tea.Cmd) {
	if r.update(msg, r.c.keys) {
		return nil, nil
	}
	if k, ok := msg.(tea.KeyPressMsg); ok && key.Matches(k, r.c.keys.Enter) {
		if ro := r.selected(); ro != nil {
			return showPodsMsg{context: ro.Context, owner: ro.Workload()}, nil
		}
	}
	return nil, nil
}

// Help is the list keys and the dashboard's; enter shows the rollout's pods.
func (r *rolloutList) Help() rankedHelp {
	return r.c.keys.listHelp(withDesc(r.c.keys.Enter, "rollout's pods"))
}

// View renders the list.
func (r *rolloutList) View(focused bool) string {
	st := r.c.st
	var b strings.Builder
	title := "ROLLOUTS"
	if focused {
		title = st.focusTitle.Render(title)
	} else {
		title = st.title.Render(title)
	}
	b.WriteString(clip(title+" "+st.dim.Render(fmt.Sprintf("%d rollouts", len(r.rollouts))), r.width))
	b.WriteByte('\n')
	for _, line := range r.across {
		b.WriteString(st.warn.Render(clip("  ⚠ across clusters: "+line, r.width)))
		b.WriteByte('\n')
	}
	from, to := r.cur.visible()
	r.tab.reset()
	for i := from; i < to; i++ {
		r.tab.add(&r.rollouts[i], r.c)
	}
	r.tab.layout(r.width)
	b.WriteString(r.tab.header(r.c, r.width))
	for i := from; i < to; i++ {
		sel := i == r.cur.sel && focused
		mark := "  "
		if sel {
			mark = "▶ "
		}
		row := clip(r.tab.row(i-from, mark, &r.rollouts[i], r.c, !sel), r.width)
		if sel {
			row = st.selected.Render(fit(row, r.width))
		}
		b.WriteByte('\n')
		b.WriteString(row)
	}
	if len(r.rollouts) == 0 {
		b.WriteString("\n  " + st.dim.Render("no rollouts in scope"))
	}
	return b.String()
}

// rolloutColumns are the rollouts panel's columns, in display order: fixed widths, all always
// shown (a narrow panel cuts the line), the counts aligned right, and the reason, two blanks off
// them, the rest of the line.
var rolloutColumns = []column[*model.Rollout]{
	// With several contexts, each cluster's rollouts come together (model.Fleet.Rollouts).
	{title: "CONTEXT", max: 16, optional: true, cell: func(ro *model.Rollout, _ *common) string { return ro.Context }},
	{title: "NAMESPACE", min: 16, max: 16, cell: func(ro *model.Rollout, _ *common) string { return ro.Namespace }},
	{title: "NAME", min: 28, max: 28, cell: func(ro *model.Rollout, _ *common) string { return rolloutName(ro) }},
	{title: "VERDICT", min: 13, max: 13, cell: func(ro *model.Rollout, _ *common) string { return rolloutIcon(ro.Verdict) + " " + string(ro.Verdict) },
		paint: func(ro *model.Rollout, c *common, s string) string { return c.st.rollout[ro.Verdict].Render(s) }},
	{title: "UP-TO-DATE", min: 10, max: 10, right: true, cell: func(ro *model.Rollout, _ *common) string { return fmt.Sprintf("%d/%d", ro.Updated, ro.Desired) }},
	{title: "READY", min: 7, max: 7, right: true, cell: func(ro *model.Rollout, _ *common) string { return fmt.Sprintf("%d/%d", ro.Ready, ro.Desired) }},
	{title: "AVAILABLE", min: 9, max: 9, right: true, cell: func(ro *model.Rollout, _ *common) string { return strconv.Itoa(int(ro.Available)) }},
	{title: "REASON", pad: 1, rest: true, cell: func(ro *model.Rollout, _ *common) string { return ro.Reason }},
}

// rolloutName is a Deployment's name, or kubectl's short form for the other kinds: "sts/redis",
// "ds/kube-proxy".
func rolloutName(ro *model.Rollout) string {
	switch model.Kind(ro.Kind) {
	case model.KindStatefulSet:
		return "sts/" + ro.Name
	case model.KindDaemonSet:
		return "ds/" + ro.Name
	}
	return ro.Name
}
