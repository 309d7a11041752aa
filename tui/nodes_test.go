package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"doomwatch/contract"
	"doomwatch/model"
)

// manySuspects is a dashboard whose nodes panel holds six suspect nodes (three lines each: row,
// why, msg; four at 80 columns, where the why wraps) and six quiet ones, in a terminal so short
// that only a few fit. Six quiet nodes, because a suspect node must stand out from the nodes that
// are not suspect, and at most half of them may be failing too.
func manySuspects(t *testing.T, width int) *dashboard {
	t.Helper()
	// One failing pod per node is enough to be suspect here; escalation is off so the pods stay
	// transient and every node keeps its evidence.
	m := model.New(model.Config{SuspectPods: 1, EscalateNodes: 100})
	var b contract.Batch
	for i, name := range []string{"node-a", "node-b", "node-c", "node-d", "node-e", "node-f", "node-g", "node-h", "node-i",
		"node-j", "node-k", "node-l"} {
		b.Nodes = append(b.Nodes, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}})
		cs := running("app", "registry.example.com/app:v1", 0, nil)
		if i < 6 {
			cs = corev1.ContainerStatus{Name: "app", Image: "registry.example.com/app:v1", RestartCount: 1,
				State: corev1.ContainerState{Terminated: terminated("StartError", runtime128, 128, time.Minute)}}
		}
		b.Pods = appendPods(b.Pods, mkPod(podSpec{ns: "shop", name: fmt.Sprintf("app%d-x", i), node: name,
			rs: fmt.Sprintf("app%d-rs", i), created: 5 * time.Minute, status: []corev1.ContainerStatus{cs}}))
	}
	m.Apply(&b, t0)
	d := newDashboard(Options{Model: model.FleetOf("", m), Now: func() time.Time { return t0 }}, true)
	d.Update(tea.WindowSizeMsg{Width: width, Height: 18})
	press(d, "tab")
	suspects := 0
	for i := range d.nodes.nodes {
		if d.nodes.nodes[i].Suspect {
			if d.nodes.nodes[i].DominantMessage == "" {
				t.Fatalf("%s has no dominant message: the fixture should give suspects three lines", d.nodes.nodes[i].Name)
			}
			suspects++
		}
	}
	if suspects != 6 {
		t.Fatalf("%d suspect nodes, want 6", suspects)
	}
	if lines := d.nodes.cur.lines(0); width <= 80 && lines != 4 {
		t.Fatalf("at %d columns the first suspect takes %d lines, want 4 (its why wrapped)", width, lines)
	}
	if 3*suspects <= d.nodes.cur.height {
		t.Fatalf("the panel has %d lines, room for every suspect: the test proves nothing", d.nodes.cur.height)
	}
	return d
}

// nodeLineY is the screen line holding node name's row in the nodes panel, or -1.
func nodeLineY(d *dashboard, name string) int {
	f := d.computeFrame()
	for y, l := range strings.Split(screen(d), "\n") {
		if y < f.bodyTop+2 {
			continue
		}
		// The why and msg lines under a suspect name no node, so the row is the line that does.
		if strings.Contains(l, " "+name+" ") && !strings.Contains(l, "why: ") && !strings.Contains(l, "msg: ") {
			return y
		}
	}
	return -1
}

func TestNodesSelectionStaysOnScreen(t *testing.T) {
	for _, w := range []int{120, 80} {
		testNodesSelectionStaysOnScreen(t, manySuspects(t, w))
	}
}

func testNodesSelectionStaysOnScreen(t *testing.T, d *dashboard) {
	for i := range d.nodes.nodes {
		want := d.nodes.nodes[i].Name
		if got := d.nodes.selected(); got == nil || got.Name != want {
			t.Fatalf("after %d downs the selection is %v, want %s", i, got, want)
		}
		marked := ""
		for _, l := range strings.Split(screen(d), "\n") {
			if strings.HasPrefix(l, "▶ ") {
				marked = l
			}
		}
		if !strings.Contains(marked, " "+want+" ") {
			t.Fatalf("selected %s is not marked on screen (marked line %q):\n%s", want, marked, screen(d))
		}
		if d.nodes.nodes[i].Suspect && !strings.Contains(screen(d), "why: ") {
			t.Fatalf("selected suspect %s is shown without its why:\n%s", want, screen(d))
		}
		press(d, "j")
	}
	// And back up from the bottom.
	for i := len(d.nodes.nodes) - 1; i >= 0; i-- {
		want := d.nodes.nodes[i].Name
		if nodeLineY(d, want) < 0 {
			t.Fatalf("moving up, selected %s is off screen:\n%s", want, screen(d))
		}
		press(d, "k")
	}
}

func TestNodesClickSelectsTheNodeUnderTheMouse(t *testing.T) {
	for _, w := range []int{120, 80} {
		d := manySuspects(t, w)
		clickEveryLine(t, d)
		// Again with the window scrolled: it no longer starts at the first node.
		press(d, "G")
		if d.nodes.cur.offset == 0 {
			t.Fatalf("G did not scroll the panel:\n%s", screen(d))
		}
		clickEveryLine(t, d)
	}
}

// clickEveryLine clicks each line of each node on screen and checks that it selects that node.
func clickEveryLine(t *testing.T, d *dashboard) {
	t.Helper()
	listEnd := d.computeFrame().bodyTop + 2 + d.nodes.cur.height // below the title and column header
	clicked := 0
	for i := range d.nodes.nodes {
		name := d.nodes.nodes[i].Name
		for dy := range d.nodes.cur.lines(i) {
			y := nodeLineY(d, name)
			if y < 0 || y+dy >= listEnd {
				break // not on screen, or this line of it is below the panel
			}
			d.Update(tea.MouseClickMsg{X: 10, Y: y + dy, Button: tea.MouseLeft})
			if got := d.nodes.selected(); got == nil || got.Name != name {
				t.Fatalf("click on line %d of %s selected %v:\n%s", dy, name, got, screen(d))
			}
			// A node cut off at the bottom scrolls into full view; one shown whole stays put.
			if ny := nodeLineY(d, name); ny < 0 || (y+d.nodes.cur.lines(i) <= listEnd && ny != y) {
				t.Fatalf("clicking %s moved it from line %d to %d:\n%s", name, y, ny, screen(d))
			}
			clicked++
		}
	}
	if clicked < 4 {
		t.Fatalf("only %d lines were clickable:\n%s", clicked, screen(d))
	}
}

// TestNodesTitleSaysTheWindow: the panel says over which window it counts, from the model's config.
func TestNodesTitleSaysTheWindow(t *testing.T) {
	for _, c := range []struct {
		window time.Duration
		want   string
	}{{0, "start failures in the last 15m · 5 nodes"}, {40 * time.Minute, "start failures in the last 40m · 5 nodes"}} {
		m := model.New(model.Config{Window: c.window})
		b := fixtureBatch()
		m.Apply(&b, t0)
		d := newDashboard(Options{Model: model.FleetOf("", m), Now: func() time.Time { return t0 }}, true)
		d.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
		press(d, "tab")
		if !strings.Contains(screen(d), c.want) {
			t.Errorf("window %v: title lacks %q:\n%s", c.window, c.want, screen(d))
		}
	}
}

// TestSuspectNodeAt80x24: on the smallest usable terminal the panel on-call opens first still
// shows the suspect node, its start failure count, the sparkline of when they happened, how
// many workloads they hit, and the whole why sentence (wrapped, not cut).
func TestSuspectNodeAt80x24(t *testing.T) {
	m := fixtureModel()
	var suspect *model.Node
	nodes := m.Nodes(t0)
	peak := 0
	for i := range nodes {
		for _, v := range nodes[i].Histogram {
			peak = max(peak, v)
		}
		if nodes[i].Suspect && suspect == nil {
			suspect = &nodes[i]
		}
	}
	if suspect == nil {
		t.Fatal("the fixture has no suspect node")
	}
	frame := RenderFrame(m, FrameOptions{Width: 80, Height: 24, Now: t0, NoColor: true, Focus: FocusNodes})
	checkFrame(t, frame, 80, 24)
	lines := strings.Split(frame, "\n")
	var hdr, row string
	whyAt := -1
	for i, l := range lines {
		switch {
		case strings.Contains(l, "NODE") && strings.Contains(l, "HISTORY"):
			hdr = l
		case strings.Contains(l, "⚠ SUSPECT") && strings.Contains(l, " "+suspect.Name+" "):
			row = l
		case strings.HasPrefix(strings.TrimSpace(l), "why: ") && whyAt < 0:
			whyAt = i
		}
	}
	if hdr == "" || row == "" || whyAt < 0 {
		t.Fatalf("no header with HISTORY, suspect row or why line:\n%s", frame)
	}
	for _, col := range []string{"STARTS✗", "WORKLOADS", "STATE"} {
		if !strings.Contains(hdr, col) {
			t.Errorf("header lacks %s: %q", col, hdr)
		}
	}
	// The failure count sits under STARTS✗ (right-aligned), the sparkline under HISTORY.
	cell := func(title string) string {
		i := strings.Index(hdr, title)
		if i < 0 {
			return ""
		}
		start := ansi.StringWidth(hdr[:i])
		return strings.TrimSpace(ansi.Cut(row, start, start+ansi.StringWidth(title)))
	}
	if got, want := cell("STARTS✗"), strconv.Itoa(suspect.Failures); got != want {
		t.Errorf("STARTS✗ of %s is %q, want %q:\n%s", suspect.Name, got, want, frame)
	}
	if spark := sparkline(suspect.Histogram, peak); !strings.Contains(row, spark) {
		t.Errorf("suspect row lacks its sparkline %q: %q", spark, row)
	}
	if strings.Contains(row, "…") {
		t.Errorf("suspect row is cut: %q", row)
	}
	// The why, joined back from its lines, is the model's sentence whole.
	var why []string
	for _, l := range lines[whyAt:] {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "msg: ") || l == "" || strings.Contains(l, "node-") {
			break
		}
		why = append(why, strings.TrimPrefix(l, "why: "))
	}
	if got := strings.Join(why, " "); got != suspect.Why {
		t.Errorf("why on screen is %q, want the whole %q:\n%s", got, suspect.Why, frame)
	}
	if len(why) < 2 {
		t.Errorf("at 80 columns the fixture's why should wrap (test proves nothing): %q", why)
	}
}

// TestPodsFillTheirPartWithNodesBelow: with the nodes panel under the pods, the pod table fills
// every line of its part, however the suspect's why wraps: the layout and the drawing measure the
// nodes panel at the same width.
func TestPodsFillTheirPartWithNodesBelow(t *testing.T) {
	// The fixture's five nodes (node-3 suspect) and 60 more healthy pods on them: the nodes panel
	// is then short enough that its height follows its rows.
	m := model.New(model.DefaultConfig())
	b := fixtureBatch()
	for i := range 60 {
		b.Pods = appendPods(b.Pods, mkPod(podSpec{ns: "web", name: fmt.Sprintf("web-%02d", i),
			node: []string{"node-1", "node-2", "node-4", "node-5"}[i%4], rs: "web-rs", created: time.Hour,
			status: []corev1.ContainerStatus{running("app", "registry.example.com/web:v1", 0, nil)}}))
	}
	m.Apply(&b, t0)
	for _, sz := range sizes {
		frame := RenderFrame(m, FrameOptions{Width: sz.w, Height: sz.h, Now: t0, NoColor: true})
		lines := strings.Split(frame, "\n")
		podsAt, nodesAt := -1, -1
		for i, l := range lines {
			if strings.HasPrefix(l, "PODS ") {
				podsAt = i
			}
			if strings.HasPrefix(l, "NODES ") {
				nodesAt = i
			}
		}
		// With a suspect node the panel is under the pods at every size, in brief when short.
		if podsAt < 0 || nodesAt < 0 {
			t.Fatalf("%s: want the pods and the nodes panel:\n%s", sz.name, frame)
		}
		// Between the column header and the separator above the nodes, every line is a pod.
		for i := podsAt + 2; i < nodesAt-1; i++ {
			if strings.TrimSpace(lines[i]) == "" {
				t.Fatalf("%s: line %d is blank, the pods part is not filled:\n%s", sz.name, i, frame)
			}
		}
	}
}

// TestNodesPanelSaysNodesAreForbidden: when RBAC forbids listing nodes the panel itself says so
// (its STATE is then unknown and it only knows the nodes pods name), not only the header.
func TestNodesPanelSaysNodesAreForbidden(t *testing.T) {
	const note = "forbidden: cannot list nodes (RBAC); showing nodes from pods"
	for _, forbidden := range []bool{false, true} {
		b := fixtureBatch()
		h := &contract.Health{Synced: true, LastEvent: t0}
		if forbidden {
			b.Nodes = nil
			h.Forbidden = []contract.Kind{contract.KindNode}
		}
		b.Health = h
		m := model.New(model.DefaultConfig())
		m.Apply(&b, t0)
		for _, o := range []FrameOptions{{Width: 80, Height: 24, Focus: FocusNodes}, {Width: 200, Height: 50}} {
			o.Now, o.NoColor = t0, true
			frame := RenderFrame(m, o)
			checkFrame(t, frame, o.Width, o.Height)
			title := ""
			for _, l := range strings.Split(frame, "\n") {
				if strings.HasPrefix(l, "NODES") {
					title = l
				}
			}
			if title == "" {
				t.Fatalf("%dx%d: no nodes panel:\n%s", o.Width, o.Height, frame)
			}
			if got := strings.Contains(title, "NODES · "+note); got != forbidden {
				t.Errorf("%dx%d forbidden=%v: title %q", o.Width, o.Height, forbidden, title)
			}
			// The nodes named by pods are still listed.
			if !strings.Contains(frame, " node-3 ") || !strings.Contains(frame, "⚠ SUSPECT") {
				t.Errorf("%dx%d forbidden=%v: the suspect node should still be shown:\n%s", o.Width, o.Height, forbidden, frame)
			}
		}
	}
}

// TestNodesSelectionStaysOnTheSuspectUntilTheUserMoves: on-call opens the nodes panel during an
// incident; the node that turned suspect after the dashboard started must be the one selected.
func TestNodesSelectionStaysOnTheSuspectUntilTheUserMoves(t *testing.T) {
	m := model.New(model.DefaultConfig())
	var b contract.Batch
	for _, name := range []string{"node-1", "node-2", "node-3"} {
		b.Nodes = append(b.Nodes, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}})
	}
	m.Apply(&b, t0)
	d := newDashboard(Options{Model: model.FleetOf("", m), Now: func() time.Time { return t0 }}, true)
	d.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
	if got := d.nodes.selected(); got == nil || got.Name != "node-1" {
		t.Fatalf("before any failure the first node should be selected, got %v", got)
	}
	// Three pods fail to start with a transient exit 128 on node-3: it turns suspect and sorts first.
	var fail contract.Batch
	for i := range 3 {
		cs := corev1.ContainerStatus{Name: "app", Image: "registry.example.com/app:v1", RestartCount: 1,
			State: corev1.ContainerState{Terminated: terminated("StartError", runtime128, 128, time.Minute)}}
		fail.Pods = appendPods(fail.Pods, mkPod(podSpec{ns: "shop", name: fmt.Sprintf("web-%d", i), node: "node-3",
			rs: "web-rs", created: 5 * time.Minute, status: []corev1.ContainerStatus{cs}}))
	}
	d.Update(batchMsg{batches: []contract.Batch{fail}})
	if got := d.nodes.selected(); got == nil || got.Name != "node-3" || !got.Suspect {
		t.Fatalf("the untouched selection should be on the suspect node-3 now, got %+v", got)
	}
	// Once the user picks a node, updates that re-sort the panel no longer move the selection.
	press(d, "tab", "j")
	picked := d.nodes.selected().Name
	d.Update(batchMsg{batches: []contract.Batch{fail}})
	if got := d.nodes.selected(); got == nil || got.Name != picked {
		t.Fatalf("after the user moved, the selection should stay on %s, got %v", picked, got)
	}
}

// TestSuspectUnderThePodsAt80x24: on the default terminal the pods view still shows the suspect
// node under the pods, its row and its whole why, and says how many nodes it leaves out; the
// pods keep most of the screen. The nodes panel has all of them once it has the keyboard.
func TestSuspectUnderThePodsAt80x24(t *testing.T) {
	m := fixtureModel()
	frame := RenderFrame(m, FrameOptions{Width: 80, Height: 24, Now: t0, NoColor: true})
	checkFrame(t, frame, 80, 24)
	lines := strings.Split(frame, "\n")
	nodesAt := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "NODES ") })
	if nodesAt < 0 {
		t.Fatalf("no nodes panel under the pods:\n%s", frame)
	}
	panel := lines[nodesAt : len(lines)-1]
	var suspect *model.Node
	for _, nd := range m.Nodes(t0) {
		if nd.Suspect {
			suspect = &nd
			break
		}
	}
	var why []string
	for i, l := range panel {
		if s := strings.TrimSpace(l); strings.HasPrefix(s, "why: ") {
			why = append(why, strings.TrimPrefix(s, "why: "))
			for _, next := range panel[i+1:] {
				if !strings.HasPrefix(next, strings.Repeat(" ", len(whyPrefix))) {
					break
				}
				why = append(why, strings.TrimSpace(next))
			}
		}
	}
	if !strings.Contains(strings.Join(panel, "\n"), "⚠ SUSPECT "+suspect.Name+" ") || strings.Join(why, " ") != suspect.Why {
		t.Errorf("the panel under the pods lacks the suspect's row or its whole why %q:\n%s", suspect.Why, frame)
	}
	if last := panel[len(panel)-1]; last != "  +4 more" {
		t.Errorf("the panel's last line is %q, want the marker of the four other nodes:\n%s", last, frame)
	}
	if pods := nodesAt - 1; pods < len(lines)/2 {
		t.Errorf("the pods have %d lines of 24, want most of the screen:\n%s", pods, frame)
	}
	frame = RenderFrame(m, FrameOptions{Width: 80, Height: 24, Now: t0, NoColor: true, Focus: FocusNodes})
	for _, nd := range m.Nodes(t0) {
		if !strings.Contains(frame, " "+nd.Name+" ") {
			t.Errorf("with the keyboard the nodes panel lacks %s:\n%s", nd.Name, frame)
		}
	}
	if strings.Contains(frame, " more") {
		t.Errorf("with the keyboard every node fits, yet the panel says there are more:\n%s", frame)
	}
}
