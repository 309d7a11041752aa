package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"

	"doomwatch/classify"
	"doomwatch/model"
)

// header shows where we are looking, whether the data is live, the verdict counts, the rollouts
// and, when there is one, the suspect node.
type header struct {
	c              *common
	context, scope string
	spin           spinner.Model
	spinning       bool
	health         model.Health
	counts         model.Counts
	rollouts       []model.Rollout
	nodes          []model.Node
	suspect        *model.Node // the first suspect in nodes
	share          []string    // what the suspects have in common (snapshot.share)
	stopped        bool
	width          int
	// rolloutsLine is the rollouts line, made when the rollouts or the width change rather than
	// on every frame: a cluster can have thousands of Deployments and the line shows a few.
	rolloutsLine string
}

func newHeader(c *common, ctx, scope string) *header {
	return &header{c: c, context: ctx, scope: scope, spin: spinner.New(spinner.WithSpinner(spinner.Dot))}
}

// SetSize sets the header's width; its height is lines().
func (h *header) SetSize(w int) {
	if w != h.width {
		h.width = w
		h.buildRolloutsLine()
	}
}

// Refresh shows the model's health and counts, and remakes the rollouts line and the suspect
// when the rollouts or the nodes changed.
func (h *header) Refresh(s *snapshot) {
	h.health, h.counts, h.share = s.health, s.counts, s.share
	if !sameSlice(s.rollouts, h.rollouts) || len(s.rollouts) == 0 {
		h.setRollouts(s.rollouts)
	}
	if !sameSlice(s.nodes, h.nodes) || len(s.nodes) == 0 {
		h.nodes, h.suspect = s.nodes, nil
		for i := range h.nodes {
			if h.nodes[i].Suspect {
				h.suspect = &h.nodes[i]
				break
			}
		}
	}
}

// setRollouts replaces the rollouts after a model update.
func (h *header) setRollouts(rs []model.Rollout) {
	h.rollouts = rs
	h.buildRolloutsLine()
}

// buildRolloutsLine remakes rolloutsLine. It stops once the line is wider than the header (past
// the width, so clip still marks the cut with "…"): the cost is a line's worth of rollouts.
func (h *header) buildRolloutsLine() {
	st := h.c.st
	var b strings.Builder
	b.WriteString(st.dim.Render("rollouts"))
	used := len("rollouts")
	if len(h.rollouts) == 0 {
		b.WriteString(st.dim.Render(" none in scope"))
	}
	for i := 0; i < len(h.rollouts) && used <= h.width; i++ {
		r := &h.rollouts[i]
		name := rolloutIcon(r.Verdict) + " " + rolloutName(r)
		counts := fmt.Sprintf(" %d/%d/%d", r.Updated, r.Ready, r.Desired)
		b.WriteString("  ")
		b.WriteString(st.rollout[r.Verdict].Render(name))
		b.WriteString(counts)
		used += 2 + width(name) + len(counts)
	}
	h.rolloutsLine = clip(b.String(), h.width)
}

// lines is the header's height.
func (h *header) lines() int {
	if h.suspect != nil {
		return 4
	}
	return 3
}

// Update advances the spinner while the informers sync.
func (h *header) Update(msg tea.Msg) tea.Cmd {
	if m, ok := msg.(spinner.TickMsg); ok {
		if h.health.Synced || h.stopped {
			h.spinning = false
			return nil
		}
		var cmd tea.Cmd
		h.spin, cmd = h.spin.Update(m)
		return cmd
	}
	return nil
}

// startSpinner returns the spinner's first tick when it is not already running.
func (h *header) startSpinner() tea.Cmd {
	if h.spinning || h.health.Synced || h.stopped {
		return nil
	}
	h.spinning = true
	return h.spin.Tick
}

func (h *header) syncState() string {
	st := h.c.st
	var s string
	switch {
	case h.stopped:
		s = st.warn.Render("source stopped")
	case h.health.WatchError != "":
		last := "never"
		if !h.health.LastEvent.IsZero() {
			last = age(h.health.LastEvent, h.c.now) + " ago"
		}
		s = st.warn.Render("reconnecting: " + h.health.WatchError + " · last update " + last)
	case !h.health.Synced:
		s = h.spin.View() + " syncing pods: " + thousands(h.health.PodsSeen)
		if h.health.PodsTotal > 0 {
			s += " of ~" + thousands(h.health.PodsTotal)
		}
		s += " …"
	default:
		s = st.ok.Render("live")
	}
	if len(h.health.Forbidden) > 0 {
		kinds := make([]string, len(h.health.Forbidden))
		for i, k := range h.health.Forbidden {
			kinds[i] = strings.ToLower(string(k)) + "s"
		}
		s += " · " + st.warn.Render("forbidden: "+strings.Join(kinds, ", "))
	}
	return s
}

// View renders the header's lines.
func (h *header) View() string {
	st := h.c.st
	var b strings.Builder
	ctx := h.context
	if ctx == "" {
		ctx = "(none)"
	}
	scope := h.scope
	if scope == "" {
		scope = "all namespaces"
	}
	b.WriteString(clip(st.title.Render("doomwatch")+"  "+st.dim.Render("context ")+model.Sanitize(ctx)+
		"  "+st.dim.Render("scope ")+model.Sanitize(scope)+"  "+h.syncState(), h.width))
	b.WriteByte('\n')

	c := h.counts
	kinds := [...]struct {
		k classify.Kind
		n int
	}{{classify.Healthy, c.Healthy}, {classify.Progressing, c.Progressing},
		{classify.Transient, c.Transient}, {classify.Doomed, c.Doomed}, {classify.Completed, c.Completed}}
	line := st.dim.Render("pods ") + thousands(c.Pods)
	for _, k := range kinds {
		line += "   " + st.badgeFor(k.k, fmt.Sprintf("%s %s %s", badgeIcons[k.k], thousands(k.n), k.k))
	}
	b.WriteString(clip(line, h.width))
	b.WriteByte('\n')

	b.WriteString(h.rolloutsLine)
	if h.suspect != nil {
		b.WriteByte('\n')
		line := "⚠ suspect node " + h.suspect.Name + ": " + h.suspect.Why
		// What the suspects share comes after the why when the line has room for it whole: the
		// nodes panel has it on a line of its own.
		if len(h.share) > 0 && width(line)+3+width(h.share[0]) <= h.width {
			line += " · " + h.share[0]
		}
		b.WriteString(st.danger.Render(clip(line, h.width)))
	}
	return b.String()
}
