package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"doomwatch/contract"
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
	if more := r.more(); more != "" {
		b.WriteString("\n  " + st.dim.Render(more))
	}
	if len(r.rollouts) == 0 {
		b.WriteString("\n  " + st.dim.Render("no rollouts in scope"))
	}
	return b.String()
}

// rolloutColumns are the rollouts panel's columns, in display order, all always shown: each as
// wide as what it has held (bounded), the counts aligned right, and the reason, two blanks off
// them, the rest of the line. Where kubectl's titles would cost the reason its words (at 120
// columns and less) the counts' titles are abbreviated; where the names would push the reason
// off an 80-column screen they are cut, the longer first.
var rolloutColumns = []column[*model.Rollout]{
	// With several contexts, each cluster's rollouts come together (model.Fleet.Rollouts).
	{title: "CONTEXT", max: 16, squeeze: 7, optional: true, cell: func(ro *model.Rollout, _ *common) string { return ro.Context }},
	{title: "NAMESPACE", max: 16, squeeze: 8, cell: func(ro *model.Rollout, _ *common) string { return ro.Namespace }},
	{title: "NAME", max: 32, squeeze: 12, cell: func(ro *model.Rollout, _ *common) string { return rolloutName(ro) }},
	{title: "VERDICT", min: verdictWidth, cell: func(ro *model.Rollout, _ *common) string { return rolloutIcon(ro.Verdict) + " " + string(ro.Verdict) },
		paint: func(ro *model.Rollout, c *common, s string) string { return c.st.rollout[ro.Verdict].Render(s) }},
	{title: "UP-TO-DATE", short: "UPD", right: true, cell: func(ro *model.Rollout, _ *common) string { return fmt.Sprintf("%d/%d", ro.Updated, ro.Desired) }},
	{title: "READY", right: true, cell: func(ro *model.Rollout, _ *common) string { return fmt.Sprintf("%d/%d", ro.Ready, ro.Desired) }},
	{title: "AVAILABLE", short: "AVAIL", right: true, cell: func(ro *model.Rollout, _ *common) string { return strconv.Itoa(int(ro.Available)) }},
	{title: "REASON", min: reasonMin, keep: rolloutReasonKeep, pad: 1, rest: true, cell: func(ro *model.Rollout, _ *common) string { return ro.Reason }},
}

// rolloutReasonKeep is how much of a rollout's reason kubectl's long titles may not take: the
// reasons run "2/2 new pods doomed: " and then the pods' own reason.
const rolloutReasonKeep = 60

// rolloutName is a Deployment's name, or kubectl's short form for the other kinds: "sts/redis",
// "ds/kube-proxy" (contract.KindInfo.Prefix).
func rolloutName(ro *model.Rollout) string {
	if k := contract.Info(contract.Kind(ro.Kind)); k != nil && k.Prefix != "" {
		return k.Prefix + "/" + ro.Name
	}
	return ro.Name
}
