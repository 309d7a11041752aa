package tui

import (
	"fmt"
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
	width    int
}

func newRolloutList(c *common) *rolloutList {
	r := &rolloutList{c: c}
	// The title and the column header are above the rows.
	r.list = newList(2, func(i int) *model.Rollout { return &r.rollouts[i] }, (*model.Rollout).Workload)
	return r
}

// SetSize sets the list's size including title and header.
func (r *rolloutList) SetSize(w, h int) {
	r.width = w
	r.setHeight(h)
}

// Refresh shows the model's rollouts when they changed, keeping the selection on the same
// workload while it exists.
func (r *rolloutList) Refresh(s *snapshot) {
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
			return showPodsMsg{owner: ro.Workload()}, nil
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
	hdr := fmt.Sprintf("  %-16s %-28s %-13s %10s %7s %9s  %s", "NAMESPACE", "NAME", "VERDICT",
		"UP-TO-DATE", "READY", "AVAILABLE", "REASON")
	b.WriteString(st.colHeader.Render(clip(hdr, r.width)))
	from, to := r.cur.visible()
	for i := from; i < to; i++ {
		ro := &r.rollouts[i]
		sel := i == r.cur.sel && focused
		mark := "  "
		if sel {
			mark = "▶ "
		}
		badge := fit(rolloutIcon(ro.Verdict)+" "+string(ro.Verdict), 13)
		if !sel {
			badge = st.rollout[ro.Verdict].Render(badge)
		}
		row := fmt.Sprintf("%s%-16s %-28s %s %10s %7s %9d  %s", mark, clip(ro.Namespace, 16),
			clip(rolloutName(ro), 28), badge, fmt.Sprintf("%d/%d", ro.Updated, ro.Desired),
			fmt.Sprintf("%d/%d", ro.Ready, ro.Desired), ro.Available, ro.Reason)
		row = clip(row, r.width)
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
