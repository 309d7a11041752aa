package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"doomwatch/model"
)

// rolloutList shows every rollout (Deployments, StatefulSets, DaemonSets): verdict,
// updated/ready/desired and why.
type rolloutList struct {
	c        *common
	rollouts []model.Rollout
	cur      cursor
	// sel is the selected workload (Rollout.Workload): the model sorts doomed rollouts first, so a
	// rollout turning doomed moves the others, and the selection must follow the workload, not
	// its row, or enter would filter another rollout's pods.
	sel   string
	width int
}

func newRolloutList(c *common) *rolloutList { return &rolloutList{c: c} }

// SetSize sets the list's size including title and header.
func (r *rolloutList) SetSize(w, h int) {
	r.width = w
	r.cur.setHeight(h - 2)
}

// setRollouts replaces the rollouts after a model update and keeps the selection on the same
// workload while it exists.
func (r *rolloutList) setRollouts(rs []model.Rollout) {
	r.rollouts = rs
	r.cur.setLen(len(rs))
	for i := range rs {
		if r.cur.chosen && rs[i].Workload() == r.sel {
			r.cur.sel = i
			break
		}
	}
	r.cur.clamp()
	r.remember()
}

func (r *rolloutList) remember() {
	if ro := r.selected(); ro != nil {
		r.sel = ro.Workload()
	}
}

// Update handles the list keys.
func (r *rolloutList) Update(msg tea.Msg) tea.Cmd {
	if k, ok := msg.(tea.KeyPressMsg); ok && navigate(&r.cur, k, r.c.keys) {
		r.remember()
	}
	return nil
}

// scroll moves the list by delta rows for the mouse wheel; the selection moves with it.
func (r *rolloutList) scroll(delta int) {
	r.cur.scroll(delta)
	r.remember()
}

// click selects the rollout drawn on the line'th line under the column header.
func (r *rolloutList) click(line int) {
	if r.cur.clickLine(line) {
		r.remember()
	}
}

func (r *rolloutList) selected() *model.Rollout {
	if r.cur.sel >= 0 && r.cur.sel < len(r.rollouts) {
		return &r.rollouts[r.cur.sel]
	}
	return nil
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
