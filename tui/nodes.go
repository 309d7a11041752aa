package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"doomwatch/model"
)

// nodesPanel shows each node's start failures in the window: exit 128 (containerd, cri-dockerd)
// and create errors (CRI-O), the same runtime trouble reported two ways. Suspect nodes come first
// (the model orders them) in the danger colour with their "why" sentence underneath: on-call reads
// this panel first, so the suspect must stand out at a glance. Under a suspect (and under the
// selected node while the panel has the keyboard) come what the node runs and where, and its
// latest Warning event; above the rows, what the suspects have in common that the other nodes
// do not. A condition out of its healthy state (DiskPressure…) is in the node's STATE.
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
	// events is each node's latest Warning event (model.NodeEvents), read on every Refresh: events
	// arrive without the nodes changing. evBuf is the next Refresh's, swapped with it.
	events, evBuf []nodeEvent
	// share is what the suspects have in common (snapshot.share), at most maxShareLines of it,
	// one line each between the title and the column header.
	share []string
	// focused is whether the panel had the keyboard when last drawn: only then does the selected
	// node show its detail lines, so the panel under the pods keeps its height (height).
	focused bool
	// brief is set by the root while the panel is under the pods without room for every node
	// whole: it then shows the suspect nodes first, each with its row, why and msg but not its
	// detail lines, what they share when there is room for it too (shareShown), then as many
	// other nodes as fit, and how many it leaves out. The flaky node is the point of the tool;
	// the rest is a tab away.
	brief, shareShown bool
	// lines is the height of all the rows (from whys) with the panel unfocused, briefLines that in
	// brief and suspectLines that of the suspects' rows in brief; detailMax is the most detail
	// lines a node that is not suspect has (what selecting it adds); peak is the highest histogram
	// bucket of any node, so every sparkline has one scale; suspects counts the suspect nodes.
	// They are made with the nodes, not per frame: they read every node.
	lines, briefLines, suspectLines, detailMax, peak, suspects int
	// tab lays the rows on screen out: rows are what their cells are made of and drawn their
	// indices in nodes, reused per frame.
	tab   *table[*shownNode]
	rows  []shownNode
	drawn []int
}

// nodeEvent is a node's latest Warning event and how many others the model keeps for it; ok is
// false for a node without any.
type nodeEvent struct {
	ev   model.Event
	more int
	ok   bool
}

// maxShareLines bounds the shared-attribute sentences shown: the most distinguishing come first.
const maxShareLines = 2

func newNodesPanel(c *common, window time.Duration) *nodesPanel {
	n := &nodesPanel{c: c, window: window, tab: newTable(nodeColumns)}
	// The title and the column header are above the rows.
	n.list = newList(2, func(i int) *model.Node { return &n.nodes[i] }, func(nd *model.Node) string { return nd.Name })
	n.cur.rowLines = func(i int) int { return n.rowLines(i, n.focused) }
	// Whether the list is cut short must not change as the selection moves: count the most
	// lines a selected node can add.
	n.total = func() int {
		if n.focused {
			return n.lines + n.detailMax
		}
		return n.lines
	}
	return n
}

// SetSize sets the panel's size including title and header.
func (n *nodesPanel) SetSize(w, h int) {
	n.setWidth(w)
	n.h = h
	n.setAbove()
	n.setHeight(h)
}

// setWidth re-wraps the whys for width w. The root sets it before laying out the screen, since
// the panel's height (height) depends on how the whys wrap.
func (n *nodesPanel) setWidth(w int) {
	if w != n.width {
		n.width = w
		n.rewrap()
	}
}

// The detail lines under a node start with these, their texts in one column; the why's further
// lines are indented to line up with its first.
const (
	whyPrefix   = "    why: "
	msgPrefix   = "    msg: "
	infoPrefix  = "   node: "
	eventPrefix = "  event: "
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

// rowLines is how many lines node i takes: its brief lines (briefRowLines), then, for a suspect or
// the selected node of a focused panel, its detail lines (detailLines). View draws exactly this
// many; the cursor, and so mouse clicks, measures rows with it.
func (n *nodesPanel) rowLines(i int, focused bool) int {
	lines := n.briefRowLines(i)
	if n.nodes[i].Suspect || focused && i == n.cur.sel {
		lines += n.detailLines(i)
	}
	return lines
}

// briefRowLines is how many lines node i takes in brief: its row and, for a suspect, the why and,
// when there is one, the dominant runtime message (on one line, clipped: the detail pane has it
// whole).
func (n *nodesPanel) briefRowLines(i int) int {
	nd := &n.nodes[i]
	lines := 1
	if nd.Suspect {
		lines += len(n.whys[i])
		if nd.DominantMessage != "" {
			lines++
		}
	}
	return lines
}

// detailLines is how many detail lines node i has: what it runs and where (when its kubelet or
// labels say), and its latest Warning event (when it has one).
func (n *nodesPanel) detailLines(i int) int {
	lines := 0
	if hasInfo(&n.nodes[i]) {
		lines++
	}
	if i < len(n.events) && n.events[i].ok {
		lines++
	}
	return lines
}

// rewrap remakes whys and the heights after the nodes, their events or the width changed.
func (n *nodesPanel) rewrap() {
	n.whys = n.whys[:0]
	n.lines, n.briefLines, n.suspectLines, n.detailMax = 0, 0, 0, 0
	for i := range n.nodes {
		n.whys = append(n.whys, whyLines(&n.nodes[i], n.width))
		n.lines += n.rowLines(i, false)
		n.briefLines += n.briefRowLines(i)
		if n.nodes[i].Suspect {
			n.suspectLines += n.briefRowLines(i)
		} else {
			n.detailMax = max(n.detailMax, n.detailLines(i))
		}
	}
	n.fitRows()
}

// height is the panel's height with every node on it, for sizing it under the pods, where it
// does not have the keyboard: the title, the share lines, the column header and every row, in
// brief without the suspects' detail lines.
func (n *nodesPanel) height(brief bool) int {
	if brief {
		return 2 + len(n.share) + n.briefLines
	}
	return 2 + len(n.share) + n.lines
}

// briefMin is the least height of the panel in brief that shows the first suspect whole, and the
// marker under it when there are other nodes; 0 without a suspect.
func (n *nodesPanel) briefMin() int {
	i := slices.IndexFunc(n.nodes, func(nd model.Node) bool { return nd.Suspect })
	if i < 0 {
		return 0
	}
	h := 2 + n.briefRowLines(i)
	if len(n.nodes) > 1 {
		h++
	}
	return h
}

// setBrief switches the panel to brief and back (see brief).
func (n *nodesPanel) setBrief(b bool) {
	if b != n.brief {
		n.brief = b
		n.setAbove()
	}
}

// setAbove sets the lines above the rows: the title, the share lines and the column header. In
// brief the share lines give way to the suspects when the panel cannot hold both.
func (n *nodesPanel) setAbove() {
	n.shareShown = !n.brief || n.h >= 2+len(n.share)+n.suspectLines+btoi(n.suspects < len(n.nodes))
	above := 2
	if n.shareShown {
		above += len(n.share)
	}
	if above != n.above {
		n.above = above
		n.setHeight(n.h)
	}
}

// Refresh shows the model's nodes, their events and what the suspects share. What did not change
// is not remade; the events are looked up every time (a map look-up per node), since they change
// without the nodes.
func (n *nodesPanel) Refresh(s *snapshot) {
	nodesChanged := !sameSlice(s.nodes, n.nodes) || len(s.nodes) == 0 || s.nodesForbidden != n.forbidden
	n.forbidden = s.nodesForbidden
	evChanged := n.readEvents(s.m, s.nodes)
	share := s.share[:min(len(s.share), maxShareLines)]
	shareChanged := !slices.Equal(share, n.share)
	n.share = share
	if nodesChanged || evChanged || shareChanged {
		n.setNodes(s.nodes)
	}
	// The share lines sit above the column header: the rows start lower and have less room.
	n.setAbove()
}

// readEvents reads the latest Warning event of each of nodes and reports whether any differs from
// what the panel shows.
func (n *nodesPanel) readEvents(m *model.Fleet, nodes []model.Node) bool {
	buf := n.evBuf[:0]
	for i := range nodes {
		var e nodeEvent
		if evs := m.NodeEvents(nodes[i].Context, nodes[i].Name); len(evs) > 0 {
			e = nodeEvent{ev: evs[0], more: len(evs) - 1, ok: true}
		}
		buf = append(buf, e)
	}
	if slices.Equal(buf, n.events) {
		n.evBuf = buf
		return false
	}
	n.events, n.evBuf = buf, n.events
	return true
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

// Update moves the selection; enter and n show the node's pods, y copies `kubectl describe node`
// and Y `kubectl cordon` (each alone: a write is never pasted along with a read).
func (n *nodesPanel) Update(msg tea.Msg) (tea.Msg, tea.Cmd) {
	if n.update(msg, n.c.keys) {
		return nil, nil
	}
	k, ok := msg.(tea.KeyPressMsg)
	nd := n.selected()
	if !ok || nd == nil {
		return nil, nil
	}
	switch {
	case key.Matches(k, n.c.keys.Enter, n.c.keys.Node):
		return showPodsMsg{context: nd.Context, node: nd.Name}, nil
	case key.Matches(k, n.c.keys.Copy):
		return copyMsg{text: describeNode(nd.Context, nd.Name)}, nil
	case key.Matches(k, n.c.keys.Cordon):
		return copyMsg{text: cordonNode(nd.Context, nd.Name)}, nil
	}
	return nil, nil
}

// Help is the list keys and the dashboard's; enter shows the node's pods, y and Y copy commands.
func (n *nodesPanel) Help() rankedHelp {
	k := n.c.keys
	return k.listHelp(withDesc(k.Enter, "node's pods"),
		rankedBinding{withDesc(k.Copy, "copy describe"), 8}, rankedBinding{k.Cordon, 8})
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

// nodeState is the STATE cell: Ready or NotReady (kubectl's STATUS, printers.go printNode), the
// conditions out of their healthy state (nodeConditions) and whether the node is cordoned.
func nodeState(nd *model.Node) string {
	if !nd.Known {
		return "unknown"
	}
	s := "Ready"
	if !nd.Ready {
		s = "NotReady"
	}
	if c := nodeConditions(nd); c != "" {
		s += "," + c
	}
	if nd.Cordoned {
		s += ",cordoned"
	}
	return s
}

// nodeConditions names the node's conditions other than Ready that are True, which for each of
// them is the unhealthy state (MemoryPressure, DiskPressure, PIDPressure, NetworkUnavailable),
// joined by commas; "" when there are none. Unknown is not said: the kubelet does not report
// NetworkUnavailable (the network plugin or the cloud's route controller does, when anything
// does), and a node whose kubelet stopped posting is NotReady already.
func nodeConditions(nd *model.Node) string {
	s := ""
	for _, c := range nd.Conditions {
		if c.Type != string(corev1.NodeReady) && c.Status == string(corev1.ConditionTrue) {
			if s != "" {
				s += ","
			}
			s += c.Type
		}
	}
	return s
}

// hasInfo reports whether the node's kubelet or labels said anything of it (nodeInfo).
func hasInfo(nd *model.Node) bool {
	in := &nd.Info
	return in.Runtime != "" || in.Kubelet != "" || in.Kernel != "" || in.OSImage != "" ||
		nd.Zone != "" || nd.Region != "" || nd.InstanceType != "" || nd.Pool != ""
}

// nodeInfo is what the node runs and where, as its detail line says it: "containerd://2.2.0 ·
// kubelet v1.37.2 · kernel 6.8.0-1031-aws · Ubuntu 24.04.3 LTS · zone eu-west-1b · m6i.2xlarge ·
// pool general". The runtime comes first: a runtime upgrade is the usual reason start failures
// are on some nodes only (model.Shared orders its attributes the same way). The region is said
// only without a zone, which lies in it.
func nodeInfo(nd *model.Node) string {
	in := &nd.Info
	parts := make([]string, 0, 7)
	add := func(prefix, v string) {
		if v != "" {
			parts = append(parts, prefix+v)
		}
	}
	add("", in.Runtime)
	add("kubelet ", in.Kubelet)
	add("kernel ", in.Kernel)
	add("", in.OSImage)
	if nd.Zone != "" {
		add("zone ", nd.Zone)
	} else {
		add("region ", nd.Region)
	}
	add("", nd.InstanceType)
	add("pool ", nd.Pool)
	return strings.Join(parts, " · ")
}

// eventSummary is a Warning event's reason, count and age: "ContainerGCFailed x5 30s ago", and
// "+2" when the model keeps more events for the node than this, its latest.
func eventSummary(e *nodeEvent, c *common) string {
	s := e.ev.Reason
	if e.ev.Count > 1 {
		s += " x" + strconv.Itoa(int(e.ev.Count))
	}
	s += " " + eventAge(&e.ev, c)
	if e.more > 0 {
		s += " +" + strconv.Itoa(e.more)
	}
	return s
}

// eventAge is how long ago ev last occurred: "2m ago" (its first time when it has no last).
func eventAge(ev *model.Event, c *common) string {
	t := ev.Last
	if t.IsZero() {
		t = ev.First
	}
	return c.age(t) + " ago"
}

// nodeColumns are the nodes panel's columns, in display order; the counts are aligned right.
// Which node, that it is suspect, how many start failures and when (the sparkline) are the
// panel's answer and rank first; Ready/cordoned and how many workloads say whether the node or one
// workload is to blame; the latest Warning event says what the kubelet complains of (its message
// is on the event line of a suspect or selected node). The pod counts are for the pods view
// (`enter` or `n` shows the node's pods). Node names on clouds run long
// ("ip-10-0-12-34.eu-west-1.compute.internal"): past 40 cells the name is cut. The event's reason,
// count and age fit in 40. Without a suspect or a node event on screen, their columns are left
// out.
var nodeColumns = []column[*shownNode]{
	{title: "", priority: 2, optional: true, cell: func(r *shownNode, _ *common) string {
		if r.Suspect {
			return "⚠ SUSPECT"
		}
		return ""
	}},
	// With several contexts, each cluster's nodes come together (model.Fleet.Nodes), named here.
	{title: "CONTEXT", max: 16, priority: 2, optional: true, cell: func(r *shownNode, _ *common) string { return r.Context }},
	{title: "NODE", max: 40, priority: 1, cell: func(r *shownNode, _ *common) string { return r.Name }},
	{title: "STATE", priority: 5, cell: func(r *shownNode, _ *common) string { return nodeState(r.Node) }},
	{title: "PODS", right: true, priority: 10, cell: func(r *shownNode, _ *common) string { return strconv.Itoa(r.Pods) }},
	{title: "FAILING", right: true, priority: 9, cell: func(r *shownNode, _ *common) string { return strconv.Itoa(r.FailingPods) }},
	{title: "STARTS✗", right: true, priority: 3, cell: func(r *shownNode, _ *common) string { return strconv.Itoa(r.Failures) }},
	{title: "PODS✗", right: true, priority: 11, cell: func(r *shownNode, _ *common) string { return strconv.Itoa(r.FailedPods) }},
	{title: "WORKLOADS", right: true, priority: 6, cell: func(r *shownNode, _ *common) string { return strconv.Itoa(r.Workloads) }},
	{title: "HISTORY", priority: 4, cell: func(r *shownNode, _ *common) string { return sparkline(r.Histogram, r.peak) }},
	{title: "LAST", priority: 7, cell: func(r *shownNode, c *common) string {
		if r.Last.IsZero() {
			return ""
		}
		return c.age(r.Last) + " ago"
	}},
	{title: "LAST WARNING", max: 40, priority: 8, optional: true, cell: func(r *shownNode, c *common) string {
		if !r.event.ok {
			return ""
		}
		return eventSummary(r.event, c)
	}},
}

// nodeStateCol is the STATE column, whose conditions paintRow colours.
var nodeStateCol = slices.IndexFunc(nodeColumns, func(col column[*shownNode]) bool { return col.title == "STATE" })

// shownNode is a node on screen, what its cells are made of: the node, its latest Warning event
// and the highest histogram bucket of any node, so every sparkline has one scale.
type shownNode struct {
	*model.Node
	event *nodeEvent
	peak  int
}

// View renders the panel in at most the height given to SetSize.
func (n *nodesPanel) View(focused bool) string {
	if focused != n.focused {
		// The selected node's detail lines come and go with the keyboard: measure again.
		n.focused = focused
		n.fitRows()
		n.cur.clamp()
	}
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
	if n.shareShown {
		for _, sh := range n.share {
			b.WriteString(st.warn.Render(clip("  ⚠ "+sh, n.width)))
			b.WriteByte('\n')
		}
	}

	// drawn are the nodes on screen, limit the panel's line after their last line, and more the
	// marker under them when the list is cut short.
	var more string
	limit := n.above + n.cur.height
	n.drawn = n.drawn[:0]
	if n.brief {
		more, limit = n.briefRows()
	} else {
		from, to := n.cur.visible()
		for i := from; i < to; i++ {
			n.drawn = append(n.drawn, i)
		}
		more = n.more()
	}
	n.rows = n.rows[:0]
	for _, i := range n.drawn {
		n.rows = append(n.rows, shownNode{Node: &n.nodes[i], event: &n.events[i], peak: n.peak})
	}
	n.tab.reset()
	for i := range n.rows {
		n.tab.add(&n.rows[i], n.c)
	}
	n.tab.layout(n.width)
	b.WriteString(n.tab.header(n.c, n.width))
	lines := n.above
	add := func(s string) bool {
		if lines >= limit {
			return false
		}
		b.WriteByte('\n')
		b.WriteString(s)
		lines++
		return true
	}
	for k, i := range n.drawn {
		if lines >= limit {
			break
		}
		nd := &n.nodes[i]
		sel := i == n.cur.sel
		mark := "  "
		if sel && focused {
			mark = "▶ "
		}
		row := clip(n.tab.row(k, mark, &n.rows[k], n.c, false), n.width)
		stateAt := n.tab.start(nodeStateCol)
		switch {
		case sel && focused:
			row = st.selected.Render(fit(row, n.width))
		case nd.Suspect:
			row = st.danger.Render(row)
		default:
			row = n.paintRow(row, stateAt, nd, nd.Failures > 0 || (nd.Known && !nd.Ready))
		}
		add(row)
		for j, w := range n.whys[i] {
			prefix := whyPrefix
			if j > 0 {
				prefix = strings.Repeat(" ", len(whyPrefix))
			}
			add(st.danger.Render(clip(prefix+w, n.width)))
		}
		if nd.Suspect && nd.DominantMessage != "" {
			add(st.dim.Render(clip(msgPrefix+nd.DominantMessage, n.width)))
		}
		if !n.brief && (nd.Suspect || sel && focused) {
			n.detailView(i, add)
		}
	}
	if more != "" {
		for ; lines < limit; lines++ {
			b.WriteByte('\n')
		}
		b.WriteString("\n  " + st.dim.Render(more))
	}
	if len(n.nodes) == 0 {
		b.WriteString("\n  " + st.dim.Render("no nodes seen"))
	}
	return b.String()
}

// briefRows puts the nodes the panel shows in brief in drawn: the suspects, then the others, in
// the model's order each, as many as fit. It returns the marker of the nodes left out ("" when
// none is) and the line after the rows' last.
func (n *nodesPanel) briefRows() (more string, limit int) {
	fits := func(room int) bool {
		used := 0
		for _, suspects := range []bool{true, false} {
			for i := range n.nodes {
				if n.nodes[i].Suspect != suspects {
					continue
				}
				l := n.briefRowLines(i)
				if used+l > room && len(n.drawn) > 0 {
					return false
				}
				n.drawn = append(n.drawn, i)
				used += l
			}
		}
		return true
	}
	if fits(n.h - n.above) {
		return "", n.h
	}
	n.drawn = n.drawn[:0]
	fits(n.h - n.above - 1)
	return "+" + thousands(len(n.nodes)-len(n.drawn)) + " more", n.h - 1
}

// detailView adds node i's detail lines (as many as detailLines counts): what it runs and where,
// and its latest Warning event with the start of its message.
func (n *nodesPanel) detailView(i int, add func(string) bool) {
	st := n.c.st
	nd := &n.nodes[i]
	if hasInfo(nd) {
		add(st.dim.Render(clip(infoPrefix+nodeInfo(nd), n.width)))
	}
	if e := &n.events[i]; e.ok {
		head := eventPrefix + eventSummary(e, n.c)
		l := st.warn.Render(clip(head, n.width))
		if rest := n.width - width(head); rest > 2 && e.ev.Message != "" {
			l += st.dim.Render(clip(": "+e.ev.Message, rest))
		}
		add(l)
	}
}

// paintRow draws the row of a node that is not suspect nor selected: in the warning colour when
// warn, plain otherwise, and the conditions in its STATE cell (nodeConditions) in the danger
// colour, so a DiskPressure stands out on a row that is otherwise quiet. stateAt is where the cell
// starts in row (-1: not shown).
func (n *nodesPanel) paintRow(row string, stateAt int, nd *model.Node, warn bool) string {
	st := n.c.st
	paint := func(s string) string {
		if warn && s != "" {
			return st.warn.Render(s)
		}
		return s
	}
	conds := ""
	if stateAt >= 0 && stateAt < len(row) {
		conds = nodeConditions(nd)
	}
	i := -1
	if conds != "" {
		i = strings.Index(row[stateAt:], conds)
	}
	if i < 0 {
		return paint(row)
	}
	from, to := stateAt+i, stateAt+i+len(conds)
	return paint(row[:from]) + st.danger.Render(row[from:to]) + paint(row[to:])
}
