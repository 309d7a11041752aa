package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"doomwatch/model"
)

// manySuspects is a dashboard whose nodes panel holds six suspect nodes (three lines each: row,
// why, msg) and three quiet ones, in a terminal so short that only a few fit.
func manySuspects(t *testing.T) *dashboard {
	t.Helper()
	// One failing pod per node is enough to be suspect here; escalation is off so the pods stay
	// transient and every node keeps its evidence.
	m := model.New(model.Config{SuspectPods: 1, SuspectShare: 0.01, EscalateNodes: 100})
	var b model.Batch
	for i, name := range []string{"node-a", "node-b", "node-c", "node-d", "node-e", "node-f", "node-g", "node-h", "node-i"} {
		b.Nodes = append(b.Nodes, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}})
		cs := running("app", "registry.example.com/app:v1", 0, nil)
		if i < 6 {
			cs = corev1.ContainerStatus{Name: "app", Image: "registry.example.com/app:v1", RestartCount: 1,
				State: corev1.ContainerState{Terminated: terminated("ContainerCannotRun", runtime128, 128, time.Minute)}}
		}
		b.Pods = append(b.Pods, mkPod(podSpec{ns: "shop", name: fmt.Sprintf("app%d-x", i), node: name,
			rs: fmt.Sprintf("app%d-rs", i), created: 5 * time.Minute, status: []corev1.ContainerStatus{cs}}))
	}
	m.Apply(&b, t0)
	d := newDashboard(Options{Model: m, Now: func() time.Time { return t0 }}, true)
	d.Update(tea.WindowSizeMsg{Width: 120, Height: 18})
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
	d := manySuspects(t)
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
	d := manySuspects(t)
	clickEveryLine(t, d)
	// Again with the window scrolled: it no longer starts at the first node.
	press(d, "G")
	if d.nodes.cur.offset == 0 {
		t.Fatalf("G did not scroll the panel:\n%s", screen(d))
	}
	clickEveryLine(t, d)
}

// clickEveryLine clicks each line of each node on screen and checks that it selects that node.
func clickEveryLine(t *testing.T, d *dashboard) {
	t.Helper()
	listEnd := d.computeFrame().bodyTop + 2 + d.nodes.cur.height // below the title and column header
	clicked := 0
	for i := range d.nodes.nodes {
		name := d.nodes.nodes[i].Name
		for dy := range nodeLines(&d.nodes.nodes[i]) {
			y := nodeLineY(d, name)
			if y < 0 || y+dy >= listEnd {
				break // not on screen, or this line of it is below the panel
			}
			d.Update(tea.MouseClickMsg{X: 10, Y: y + dy, Button: tea.MouseLeft})
			if got := d.nodes.selected(); got == nil || got.Name != name {
				t.Fatalf("click on line %d of %s selected %v:\n%s", dy, name, got, screen(d))
			}
			// A node cut off at the bottom scrolls into full view; one shown whole stays put.
			if ny := nodeLineY(d, name); ny < 0 || (y+nodeLines(&d.nodes.nodes[i]) <= listEnd && ny != y) {
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
	}{{0, "exit-128 start failures in the last 15m · 5 nodes"}, {40 * time.Minute, "exit-128 start failures in the last 40m · 5 nodes"}} {
		m := model.New(model.Config{Window: c.window})
		b := fixtureBatch()
		m.Apply(&b, t0)
		d := newDashboard(Options{Model: m, Now: func() time.Time { return t0 }}, true)
		d.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
		press(d, "tab")
		if !strings.Contains(screen(d), c.want) {
			t.Errorf("window %v: title lacks %q:\n%s", c.window, c.want, screen(d))
		}
	}
}
