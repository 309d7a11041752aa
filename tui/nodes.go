package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"k8s.io/apimachinery/pkg/util/duration"

	"doomwatch/model"
)

// nodesPanel shows each node's exit-128 start failures in the window. Suspect nodes come first
// (the model orders them) in the danger colour with their "why" sentence underneath: on-call reads
// this panel first, so the suspect must stand out at a glance.
type nodesPanel struct {
	c     *common
	nodes []model.Node
	cur   cursor
	sel   string
	width int
	h     int
	// window is the model's evidence window, for the title ("in the last 15m").
	window time.Duration
}

func newNodesPanel(c *common, window time.Duration) *nodesPanel {
	n := &nodesPanel{c: c, window: window}
	n.cur.rowLines = func(i int) int { return nodeLines(&n.nodes[i]) }
	return n
}

// SetSize sets the panel's size including title and header.
func (n *nodesPanel) SetSize(w, h int) {
	n.width, n.h = w, h
	n.cur.setHeight(h - 2)
}

// nodeLines is how many lines node nd takes in the panel: its row, and for a suspect node the
// "why" sentence and, when there is one, the dominant runtime message. View draws exactly this
// many; the cursor and mouse clicks measure rows with it.
func nodeLines(nd *model.Node) int {
	switch {
	case !nd.Suspect:
		return 1
	case nd.DominantMessage == "":
		return 2
	default:
		return 3
	}
}

// contentLines is the height of all the nodes' rows, for sizing the panel.
func (n *nodesPanel) contentLines() int {
	total := 0
	for i := range n.nodes {
		total += nodeLines(&n.nodes[i])
	}
	return total
}

func (n *nodesPanel) setNodes(nodes []model.Node) {
	n.nodes = nodes
	n.cur.setLen(len(nodes))
	for i := range nodes {
		if nodes[i].Name == n.sel {
			n.cur.sel = i
			break
		}
	}
	n.cur.clamp()
	n.remember()
}

func (n *nodesPanel) remember() {
	if p := n.selected(); p != nil {
		n.sel = p.Name
	}
}

func (n *nodesPanel) selected() *model.Node {
	if n.cur.sel >= 0 && n.cur.sel < len(n.nodes) {
		return &n.nodes[n.cur.sel]
	}
	return nil
}

// Update handles the list keys.
func (n *nodesPanel) Update(msg tea.Msg) tea.Cmd {
	if k, ok := msg.(tea.KeyPressMsg); ok && navigate(&n.cur, k, n.c.keys) {
		n.remember()
	}
	return nil
}

// sparkLevels draws a histogram bucket; blank means no failures in that bucket.
var sparkLevels = []rune(" ▁▂▃▄▅▆▇█")

// sparkline draws hist scaled to peak so nodes compare on the same scale.
func sparkline(hist []int, peak int) string {
	var b strings.Builder
	for _, v := range hist {
		switch {
		case v <= 0:
			b.WriteRune('·')
		case peak <= 0:
			b.WriteRune(sparkLevels[1])
		default:
			lvl := 1 + v*(len(sparkLevels)-2)/peak
			b.WriteRune(sparkLevels[min(lvl, len(sparkLevels)-1)])
		}
	}
	return b.String()
}

func nodeState(nd *model.Node) string {
	if !nd.Known {
		return "unknown"
	}
	s := "Ready"
	if !nd.Ready {
		s = "NotReady"
	}
	if nd.Cordoned {
		s += ",cordoned"
	}
	return s
}

// View renders the panel in at most the height given to SetSize.
func (n *nodesPanel) View(focused bool) string {
	st := n.c.st
	var b strings.Builder
	title := "NODES"
	if focused {
		title = st.focusTitle.Render(title)
	} else {
		title = st.title.Render(title)
	}
	suspects := 0
	peak := 0
	for i := range n.nodes {
		if n.nodes[i].Suspect {
			suspects++
		}
		for _, v := range n.nodes[i].Histogram {
			peak = max(peak, v)
		}
	}
	sub := "exit-128 start failures"
	if n.window > 0 {
		sub += " in the last " + duration.HumanDuration(n.window)
	}
	sub += fmt.Sprintf(" · %d nodes", len(n.nodes))
	if suspects > 0 {
		sub += " · " + st.danger.Render(fmt.Sprintf("%d suspect", suspects))
	}
	b.WriteString(clip(title+" "+st.dim.Render(sub), n.width))
	b.WriteByte('\n')
	hdr := fmt.Sprintf("  %-10s %-16s %-18s %5s %7s %8s %6s %9s  %-15s %s",
		"", "NODE", "STATE", "PODS", "FAILING", "EXIT-128", "PODS✗", "WORKLOADS", "HISTORY", "LAST")
	b.WriteString(st.colHeader.Render(clip(hdr, n.width)))
	lines := 2
	from, to := n.cur.visible()
	for i := from; i < to && lines < n.h; i++ {
		nd := &n.nodes[i]
		sel := i == n.cur.sel
		mark := "  "
		if sel && focused {
			mark = "▶ "
		}
		flag := ""
		if nd.Suspect {
			flag = "⚠ SUSPECT"
		}
		last := ""
		if !nd.Last.IsZero() {
			last = age(nd.Last, n.c.now) + " ago"
		}
		row := fmt.Sprintf("%s%-10s %-16s %-18s %5d %7d %8d %6d %9d  %-15s %s", mark, flag,
			clip(nd.Name, 16), nodeState(nd), nd.Pods, nd.FailingPods, nd.Failures, nd.FailedPods,
			nd.Workloads, sparkline(nd.Histogram, peak), last)
		row = clip(row, n.width)
		switch {
		case sel && focused:
			row = st.selected.Render(fit(row, n.width))
		case nd.Suspect:
			row = st.danger.Render(row)
		case nd.Failures > 0 || (nd.Known && !nd.Ready):
			row = st.warn.Render(row)
		}
		b.WriteByte('\n')
		b.WriteString(row)
		lines++
		extra := nodeLines(nd)
		if extra >= 2 && lines < n.h {
			b.WriteByte('\n')
			b.WriteString(st.danger.Render(clip("             why: "+nd.Why, n.width)))
			lines++
		}
		if extra >= 3 && lines < n.h {
			b.WriteByte('\n')
			b.WriteString(st.dim.Render(clip("             msg: "+nd.DominantMessage, n.width)))
			lines++
		}
	}
	if len(n.nodes) == 0 {
		b.WriteString("\n  " + st.dim.Render("no nodes seen"))
	}
	return b.String()
}
