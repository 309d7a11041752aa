package tui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"k8s.io/apimachinery/pkg/util/duration"

	"doomwatch/model"
)

// nodesPanel shows each node's start failures in the window: exit 128 (containerd, cri-dockerd)
// and create errors (CRI-O), the same runtime trouble reported two ways. Suspect nodes come first
// (the model orders them) in the danger colour with their "why" sentence underneath: on-call reads
// this panel first, so the suspect must stand out at a glance.
type nodesPanel struct {
	// The selection follows the node's name.
	list[model.Node]
	c     *common
	nodes []model.Node
	width int
	h     int
	// window is the model's evidence window, for the title ("in the last 15m").
	window time.Duration
	// forbidden is set when RBAC forbids listing nodes: the panel then only knows the nodes
	// named by pods, and says so.
	forbidden bool
	// whys holds each node's "why" wrapped to the width (nil for a node that is not suspect),
	// remade when the nodes or the width change; row heights are measured from it.
	whys [][]string
	// lines is the height of all the rows (from whys); peak is the highest histogram bucket of
	// any node, so every sparkline has one scale; suspects counts the suspect nodes. All three
	// are made with the nodes, not per frame: they read every node.
	lines, peak, suspects int
	cells                 [][numNodeCols]string // reused per frame: at most a screenful
}

func newNodesPanel(c *common, window time.Duration) *nodesPanel {
	n := &nodesPanel{c: c, window: window}
	// The title and the column header are above the rows.
	n.list = newList(2, func(i int) *model.Node { return &n.nodes[i] }, func(nd *model.Node) string { return nd.Name })
	n.cur.rowLines = func(i int) int { return rowLines(&n.nodes[i], n.whys[i]) }
	return n
}

// SetSize sets the panel's size including title and header.
func (n *nodesPanel) SetSize(w, h int) {
	n.setWidth(w)
	n.h = h
	n.setHeight(h)
}

// setWidth re-wraps the whys for width w. The root sets it before laying out the screen, since
// the panel's height (contentLines) depends on how the whys wrap.
func (n *nodesPanel) setWidth(w int) {
	if w != n.width {
		n.width = w
		n.rewrap()
	}
}

// The why and msg lines under a suspect node start with these; the why's further lines are
// indented to line up with its first.
const (
	whyPrefix = "    why: "
	msgPrefix = "    msg: "
)

// whyLines is the why sentence of a suspect node wrapped to a panel width cells wide, or nil for
// a node that is not suspect. The whole sentence is shown: it is the panel's answer.
func whyLines(nd *model.Node, width int) []string {
	if !nd.Suspect {
		return nil
	}
	w := max(width-len(whyPrefix), 20)
	return strings.Split(ansi.Wrap(nd.Why, w, ""), "\n")
}

// rowLines is how many lines node nd takes given its wrapped why: its row, the why and, when
// there is one, the dominant runtime message (on one line, clipped: the detail pane has it whole).
// View draws exactly this many; the cursor, and so mouse clicks, measures rows with it.
func rowLines(nd *model.Node, why []string) int {
	if !nd.Suspect {
		return 1
	}
	lines := 1 + len(why)
	if nd.DominantMessage != "" {
		lines++
	}
	return lines
}

// rewrap remakes whys and lines after the nodes or the width changed.
func (n *nodesPanel) rewrap() {
	n.whys = n.whys[:0]
	n.lines = 0
	for i := range n.nodes {
		n.whys = append(n.whys, whyLines(&n.nodes[i], n.width))
		n.lines += n.cur.lines(i)
	}
}

// contentLines is the height of all the nodes' rows, for sizing the panel.
func (n *nodesPanel) contentLines() int { return n.lines }

// Refresh shows the model's nodes when they changed; when they did not, nothing is remade.
func (n *nodesPanel) Refresh(s *snapshot) {
	if sameSlice(s.nodes, n.nodes) && len(s.nodes) > 0 && s.nodesForbidden == n.forbidden {
		return
	}
	n.forbidden = s.nodesForbidden
	n.setNodes(s.nodes)
}

// setNodes replaces the nodes and keeps the selection on the same node while it is listed.
func (n *nodesPanel) setNodes(nodes []model.Node) {
	n.nodes = nodes
	n.rewrap()
	n.peak, n.suspects = 0, 0
	for i := range nodes {
		if nodes[i].Suspect {
			n.suspects++
		}
		for _, v := range nodes[i].Histogram {
			n.peak = max(n.peak, v)
		}
	}
	n.setLen(len(nodes))
}

// Update moves the selection; enter and n show the node's pods.
func (n *nodesPanel) Update(msg tea.Msg) (tea.Msg, tea.Cmd) {
	if n.update(msg, n.c.keys) {
		return nil, nil
	}
	if k, ok := msg.(tea.KeyPressMsg); ok && key.Matches(k, n.c.keys.Enter, n.c.keys.Node) {
		if nd := n.selected(); nd != nil {
			return showPodsMsg{node: nd.Name}, nil
		}
	}
	return nil, nil
}

// Help is the list keys and the dashboard's; enter shows the node's pods.
func (n *nodesPanel) Help() rankedHelp {
	return n.c.keys.listHelp(withDesc(n.c.keys.Enter, "node's pods"))
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

// The nodes panel's columns, in display order.
const (
	ncFlag = iota
	ncNode
	ncState
	ncPods
	ncFailing
	ncStarts
	ncFailedPods
	ncWorkloads
	ncHistory
	ncLast
	numNodeCols
)

var nodeColTitles = [numNodeCols]string{"", "NODE", "STATE", "PODS", "FAILING", "STARTS✗", "PODS✗",
	"WORKLOADS", "HISTORY", "LAST"}

// nodeColMax caps a column's width (0: no cap). Node names on clouds run long
// ("ip-10-0-12-34.eu-west-1.compute.internal"); past 40 cells the name is cut.
var nodeColMax = [numNodeCols]int{ncNode: 40}

// nodeColRight marks the counts, aligned right.
var nodeColRight = [numNodeCols]bool{ncPods: true, ncFailing: true, ncStarts: true, ncFailedPods: true, ncWorkloads: true}

// nodeColPriority lists the columns most useful first; on a narrow terminal those at the end go.
// Which node, that it is suspect, how many start failures and when (the sparkline) are
// the panel's answer; Ready/cordoned and how many workloads say whether the node or one workload is
// to blame. The pod counts are for the pods view (`enter` or `n` shows the node's pods).
var nodeColPriority = [numNodeCols]int{ncNode, ncFlag, ncStarts, ncHistory, ncState, ncWorkloads,
	ncLast, ncFailing, ncPods, ncFailedPods}

// nodeCells formats one node's cells.
func (n *nodesPanel) nodeCells(nd *model.Node, peak int, out *[numNodeCols]string) {
	out[ncFlag] = ""
	if nd.Suspect {
		out[ncFlag] = "⚠ SUSPECT"
	}
	out[ncNode] = nd.Name
	out[ncState] = nodeState(nd)
	out[ncPods] = strconv.Itoa(nd.Pods)
	out[ncFailing] = strconv.Itoa(nd.FailingPods)
	out[ncStarts] = strconv.Itoa(nd.Failures)
	out[ncFailedPods] = strconv.Itoa(nd.FailedPods)
	out[ncWorkloads] = strconv.Itoa(nd.Workloads)
	out[ncHistory] = sparkline(nd.Histogram, peak)
	out[ncLast] = ""
	if !nd.Last.IsZero() {
		out[ncLast] = age(nd.Last, n.c.now) + " ago"
	}
}

// layout sizes each column to its title and the visible cells, and picks the columns that fit,
// most useful first. A column with nothing in it (no suspect on screen) is left out.
func (n *nodesPanel) layout() (widths [numNodeCols]int, shown []int) {
	for c := range numNodeCols {
		widths[c] = colWidth(nodeColTitles[c], nodeColMax[c], len(n.cells), func(i int) string { return n.cells[i][c] })
	}
	avail := n.width - 2 // selection gutter
	var include [numNodeCols]bool
	used := 0
	for _, c := range nodeColPriority {
		if widths[c] == 0 {
			continue
		}
		if need := widths[c] + 1; used+need <= avail+1 {
			include[c] = true
			used += need
		}
	}
	shown = make([]int, 0, numNodeCols)
	for c := range numNodeCols {
		if include[c] {
			shown = append(shown, c)
		}
	}
	return widths, shown
}

// nodeLine joins the shown cells, each fitted to its column.
func nodeLine(b *strings.Builder, mark string, cells *[numNodeCols]string, widths *[numNodeCols]int, shown []int) string {
	b.Reset()
	b.WriteString(mark)
	for _, c := range shown {
		cell := cells[c]
		if nodeColRight[c] {
			if pad := widths[c] - width(cell); pad > 0 {
				b.WriteString(strings.Repeat(" ", pad))
			}
			b.WriteString(cell)
		} else {
			b.WriteString(fit(cell, widths[c]))
		}
		b.WriteByte(' ')
	}
	return strings.TrimRight(b.String(), " ")
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
	if n.forbidden {
		// RBAC decides what the panel can know: without nodes it has no Ready/cordoned state and
		// only the nodes that pods name. The header says forbidden too, but this is where the
		// missing columns would puzzle someone.
		title += " " + st.warn.Render("· forbidden: cannot list nodes (RBAC); showing nodes from pods") + st.dim.Render(" ·")
	}
	sub := "start failures"
	if n.window > 0 {
		sub += " in the last " + duration.HumanDuration(n.window)
	}
	sub += fmt.Sprintf(" · %d nodes", len(n.nodes))
	if n.suspects > 0 {
		sub += " · " + st.danger.Render(fmt.Sprintf("%d suspect", n.suspects))
	}
	b.WriteString(clip(title+" "+st.dim.Render(sub), n.width))
	b.WriteByte('\n')

	from, to := n.cur.visible()
	n.cells = n.cells[:0]
	for i := from; i < to; i++ {
		n.cells = append(n.cells, [numNodeCols]string{})
		n.nodeCells(&n.nodes[i], n.peak, &n.cells[len(n.cells)-1])
	}
	widths, shown := n.layout()
	var line strings.Builder
	b.WriteString(st.colHeader.Render(clip(nodeLine(&line, "  ", &nodeColTitles, &widths, shown), n.width)))
	lines := 2
	for i := from; i < to && lines < n.h; i++ {
		nd := &n.nodes[i]
		sel := i == n.cur.sel
		mark := "  "
		if sel && focused {
			mark = "▶ "
		}
		row := clip(nodeLine(&line, mark, &n.cells[i-from], &widths, shown), n.width)
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
		for j, w := range n.whys[i] {
			if lines >= n.h {
				break
			}
			prefix := whyPrefix
			if j > 0 {
				prefix = strings.Repeat(" ", len(whyPrefix))
			}
			b.WriteByte('\n')
			b.WriteString(st.danger.Render(clip(prefix+w, n.width)))
			lines++
		}
		if nd.Suspect && nd.DominantMessage != "" && lines < n.h {
			b.WriteByte('\n')
			b.WriteString(st.dim.Render(clip(msgPrefix+nd.DominantMessage, n.width)))
			lines++
		}
	}
	if len(n.nodes) == 0 {
		b.WriteString("\n  " + st.dim.Render("no nodes seen"))
	}
	return b.String()
}
