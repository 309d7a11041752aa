package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"

	"doomwatch/classify"
	"doomwatch/contract"
	"doomwatch/model"
)

// header shows where we are looking, whether the data is live, the verdict counts, the rollouts
// and, when there is one, the suspect node.
type header struct {
	c              *common
	context, scope string
	spin           spinner.Model
	spinning       bool
	health         contract.Health
	counts         model.Counts
	rollouts       []model.Rollout
	nodes          []model.Node
	suspect        *model.Node // the first suspect in nodes
	share          []string    // what the suspects have in common (snapshot.share)
	// clusters and spreads are the fleet's (snapshot.clusters, snapshot.spreads), nil with one
	// cluster.
	clusters []clusterState
	spreads  []model.Spread
	stopped  bool
	width    int
	// rolloutsLine is the rollouts line, made when the rollouts or the width change rather than
	// on every frame: a cluster can have thousands of Deployments and the line shows a few.
	rolloutsLine string
	// replay is a playback's state for the time bar (replayLine), when replayOn.
	replay   PlayStatus
	replayOn bool
	// rec is the note of a recording made beside the dashboard (Options.Recording), sanitised,
	// recFailing set while it cannot write.
	rec        string
	recFailing bool
	// ranked are the rollouts in the line's order: the model's with one cluster, the fleet's
	// worst first with several.
	ranked []model.Rollout
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
	h.clusters, h.spreads = s.clusters, s.spreads
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
	h.rollouts, h.ranked = rs, rs
	if len(h.clusters) > 1 {
		// The fleet's rollouts come cluster by cluster, each cluster's worst first: the line
		// shows the fleet's worst first, whichever cluster they are in.
		rank := map[classify.RolloutClass]int{classify.RolloutDoomed: 0, classify.RolloutProgressing: 1}
		h.ranked = slices.Clone(rs)
		slices.SortStableFunc(h.ranked, func(a, b model.Rollout) int {
			ra, ok := rank[a.Verdict]
			if !ok {
				ra = 2
			}
			rb, ok := rank[b.Verdict]
			if !ok {
				rb = 2
			}
			return ra - rb
		})
	}
	h.buildRolloutsLine()
}

// buildRolloutsLine remakes rolloutsLine. It stops once the line is wider than the header (past
// the width, so clip still marks the cut with "…"): the cost is a line's worth of rollouts.
func (h *header) buildRolloutsLine() {
	st := h.c.st
	var b strings.Builder
	b.WriteString(st.dim.Render("rollouts"))
	used := len("rollouts")
	if len(h.ranked) == 0 {
		b.WriteString(st.dim.Render(" none in scope"))
	}
	for i := 0; i < len(h.ranked) && used <= h.width; i++ {
		r := &h.ranked[i]
		name := rolloutIcon(r.Verdict) + " " + rolloutName(r)
		if r.Context != "" {
			name += "@" + r.Context
		}
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
	n := 3 + len(h.clusters)
	if h.replayOn {
		n++
	}
	if h.suspect != nil {
		n++
	}
	if len(h.spreads) > 0 {
		n++
	}
	return n
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
	if len(h.clusters) > 0 {
		// Each cluster's state has a line of its own (clusterLine); this one sums them up.
		live := 0
		for _, c := range h.clusters {
			if c.health.Synced && c.health.Unreachable == "" && c.health.WatchError == "" {
				live++
			}
		}
		if h.stopped {
			return h.c.st.warn.Render("source stopped")
		}
		s := fmt.Sprintf("%d of %d clusters %s", live, len(h.clusters), h.liveWord())
		if live == len(h.clusters) {
			return h.c.st.ok.Render(s)
		}
		return h.c.st.warn.Render(s)
	}
	return h.stateOf(h.health)
}

// liveWord is what a synced cluster is: live, or in a replay, synced as it was when recorded.
func (h *header) liveWord() string {
	if h.replayOn {
		return "synced"
	}
	return "live"
}

// stateOf says what a cluster's health is: live, syncing (N of ~M), unreachable (since when,
// retrying), reconnecting, and the kinds RBAC forbids.
func (h *header) stateOf(hl contract.Health) string {
	st := h.c.st
	var s string
	switch {
	case h.stopped:
		s = st.warn.Render("source stopped")
	case hl.Unreachable != "":
		s = st.danger.Render("unreachable for " + h.c.age(hl.UnreachableSince) + ", retrying: " + hl.Unreachable)
	case hl.WatchError != "":
		last := "never"
		if !hl.LastEvent.IsZero() {
			last = h.c.age(hl.LastEvent) + " ago"
		}
		s = st.warn.Render("reconnecting: " + hl.WatchError + " · last update " + last)
	case !hl.Synced:
		s = h.spin.View() + " syncing pods: " + thousands(hl.PodsSeen)
		if hl.PodsTotal > 0 {
			s += " of ~" + thousands(hl.PodsTotal)
		}
		s += " …"
	default:
		s = st.ok.Render(h.liveWord())
	}
	if len(hl.Forbidden) > 0 {
		kinds := make([]string, len(hl.Forbidden))
		for i, k := range hl.Forbidden {
			kinds[i] = strings.ToLower(string(k)) + "s"
		}
		s += " · " + st.warn.Render("forbidden: "+strings.Join(kinds, ", "))
	}
	return s
}

// clusterLine is one cluster's line in a fleet's header: its context, its state and its pods.
func (h *header) clusterLine(c *clusterState) string {
	st := h.c.st
	line := "  " + st.title.Render(c.context) + "  " + h.stateOf(c.health) + "  " + st.dim.Render("pods ") + thousands(c.counts.Pods)
	if c.counts.Doomed > 0 {
		line += "  " + st.badgeFor(classify.Doomed, fmt.Sprintf("%s %s doomed", badgeIcons[classify.Doomed], thousands(c.counts.Doomed)))
	}
	if c.counts.Transient > 0 {
		line += "  " + st.badgeFor(classify.Transient, fmt.Sprintf("%s %s transient", badgeIcons[classify.Transient], thousands(c.counts.Transient)))
	}
	return clip(line, h.width)
}

// recNote is the recording's note for the first line, "" when there is no recording.
func (h *header) recNote() string {
	switch {
	case h.rec == "":
		return ""
	case h.recFailing:
		return "  " + h.c.st.danger.Render("● "+h.rec)
	}
	return "  " + h.c.st.dim.Render("● "+h.rec)
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
	label := "context "
	if len(h.clusters) > 0 {
		label, ctx = "contexts ", strconv.Itoa(len(h.clusters))
	}
	// The context is the fleet's (sanitised, model.NewFleet) and the scope its source's (kube and
	// the recording sanitise it).
	b.WriteString(clip(st.title.Render("doomwatch")+"  "+st.dim.Render(label)+ctx+
		"  "+st.dim.Render("scope ")+scope+"  "+h.syncState()+h.recNote(), h.width))
	b.WriteByte('\n')
	if h.replayOn {
		b.WriteString(h.replayLine())
		b.WriteByte('\n')
	}
	for i := range h.clusters {
		b.WriteString(h.clusterLine(&h.clusters[i]))
		b.WriteByte('\n')
	}

	c := h.counts
	kinds := [...]struct {
		k classify.Class
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
		if h.suspect.Context != "" {
			line = "⚠ suspect node " + h.suspect.Name + " in " + h.suspect.Context + ": " + h.suspect.Why
		}
		// What the suspects share comes after the why when the line has room for it whole: the
		// nodes panel has it on a line of its own.
		if len(h.share) > 0 && width(line)+3+width(h.share[0]) <= h.width {
			line += " · " + h.share[0]
		}
		b.WriteString(st.danger.Render(clip(line, h.width)))
	}
	if len(h.spreads) > 0 {
		b.WriteByte('\n')
		b.WriteString(clip(acrossLine(h.spreads), h.width))
	}
	return b.String()
}

// acrossLine is the header's line of the workloads in several clusters. It leads with the worst
// one whose verdict differs between its clusters, the fleet's story (payments doomed in two,
// complete in the third), and counts the others, the same everywhere they run: one doomed
// everywhere is in the rollouts line already, and says nothing of the clusters. --once's
// ACROSS CLUSTERS section lists and counts them alike (report/table.go).
func acrossLine(spreads []model.Spread) string {
	var first *model.Spread
	differ := 0
	for i := range spreads {
		if spreads[i].Differs() {
			if first == nil {
				first = &spreads[i]
			}
			differ++
		}
	}
	same := len(spreads) - differ
	if first == nil {
		noun := "workloads, each"
		if same == 1 {
			noun = "workload,"
		}
		return fmt.Sprintf("across clusters: %d %s the same everywhere it runs", same, noun)
	}
	line := "across clusters: " + first.String()
	if differ > 1 {
		line += fmt.Sprintf(" (+%d more that differ)", differ-1)
	}
	if same > 0 {
		line += fmt.Sprintf(" · %d the same everywhere", same)
	}
	return line
}
