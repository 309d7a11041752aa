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
	suspect        *model.Node
	stopped        bool
	width          int
}

func newHeader(c *common, ctx, scope string) *header {
	return &header{c: c, context: ctx, scope: scope, spin: spinner.New(spinner.WithSpinner(spinner.Dot))}
}

// SetSize sets the header's width; its height is lines().
func (h *header) SetSize(w int) { h.width = w }

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
		s = h.spin.View() + " syncing pods: " + thousands(h.health.PodsSeen) + " …"
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

	line = st.dim.Render("rollouts")
	if len(h.rollouts) == 0 {
		line += st.dim.Render(" none in scope")
	}
	for i := range h.rollouts {
		r := &h.rollouts[i]
		v := string(r.Verdict)
		line += "  " + st.rollout[v].Render(rolloutIcon(v)+" "+r.Name) +
			fmt.Sprintf(" %d/%d/%d", r.Updated, r.Ready, r.Desired)
	}
	b.WriteString(clip(line, h.width))
	if h.suspect != nil {
		b.WriteByte('\n')
		b.WriteString(st.danger.Render(clip("⚠ suspect node "+h.suspect.Name+": "+h.suspect.Why, h.width)))
	}
	return b.String()
}
