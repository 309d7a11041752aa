package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	corev1 "k8s.io/api/core/v1"

	"doomwatch/contract"
	"doomwatch/model"
)

// lineAfter is the line of lines right after the first one containing s, or "".
func lineAfter(lines []string, s string) string {
	for i, l := range lines {
		if strings.Contains(l, s) && i+1 < len(lines) {
			return lines[i+1]
		}
	}
	return ""
}

// nodeRow is the row of node name in the nodes panel on screen s, or "".
func nodeRow(s, name string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, " "+name+" ") && !strings.Contains(l, ": ") {
			return l
		}
	}
	return ""
}

// TestNodesPanelSaysWhatTheSuspectIs: the suspect node's lines say what it runs and where and its
// latest Warning event; above the rows, what the suspects have in common that the others do not;
// a node under disk pressure says so in its STATE, and its latest event is in its row.
func TestNodesPanelSaysWhatTheSuspectIs(t *testing.T) {
	m := eventsModel()
	frame := RenderFrame(m, FrameOptions{Width: 200, Height: 50, Now: t0, NoColor: true, Focus: FocusNodes})
	lines := strings.Split(frame, "\n")
	if got := lineAfter(lines, "NODES start failures"); got != "  ⚠ node-3 runs containerd://2.2.0 (0 of 4 others do)" {
		t.Errorf("the line under the title is %q, want what the suspect shares", got)
	}
	for _, want := range []string{
		"   node: containerd://2.2.0 · kubelet v1.37.2 · kernel 6.8.0-1031-aws · Ubuntu 24.04.3 LTS · zone eu-west-1b · m6i.2xlarge · pool general",
		"  event: ContainerGCFailed x5 40s ago: " + gcDeadline,
	} {
		if !strings.Contains(frame, want+"\n") {
			t.Errorf("the suspect's lines lack %q:\n%s", want, frame)
		}
	}
	row := nodeRow(frame, "node-2")
	for _, want := range []string{"Ready,DiskPressure ", "FreeDiskSpaceFailed x3 2m ago +1"} {
		if !strings.Contains(row, want) {
			t.Errorf("node-2's row lacks %q: %q", want, row)
		}
	}
	// The healthy nodes are not selected: no detail lines under them.
	if strings.Count(frame, "   node: ") != 1 || strings.Count(frame, "  event: ") != 1 {
		t.Errorf("detail lines under a node that is neither suspect nor selected:\n%s", frame)
	}
	// The header has room for the shared attribute after the why at 200 columns, not at 80.
	if !strings.Contains(lines[3], "0 of 12 elsewhere · node-3 runs containerd://2.2.0 (0 of 4 others do)") {
		t.Errorf("the header's suspect line at 200 columns: %q", lines[3])
	}
	narrow := strings.Split(RenderFrame(m, FrameOptions{Width: 80, Height: 24, Now: t0, NoColor: true}), "\n")
	if strings.Contains(narrow[3], "containerd") || !strings.HasPrefix(narrow[3], "⚠ suspect node node-3: 4 of 4 pods") {
		t.Errorf("the header's suspect line at 80 columns: %q", narrow[3])
	}
}

// TestNodesPanelWithoutAttributes: a node whose kubelet and labels say nothing of it and that has
// no events has no detail lines, and nothing is said to be shared.
func TestNodesPanelWithoutAttributes(t *testing.T) {
	frame := RenderFrame(fixtureModel(), FrameOptions{Width: 200, Height: 50, Now: t0, NoColor: true, Focus: FocusNodes})
	for _, bad := range []string{"node: ", "event: ", "LAST WARNING", "others do"} {
		if strings.Contains(frame, bad) {
			t.Errorf("frame holds %q:\n%s", bad, frame)
		}
	}
}

// TestSelectedNodeShowsItsDetail: the selected node shows what it runs while the panel has the
// keyboard; under the pods, where nothing is selected on screen, only the suspect does, and the
// panel is as tall as the layout measured it.
func TestSelectedNodeShowsItsDetail(t *testing.T) {
	d := eventsDashboard(t, 200, 50)
	press(d, "tab", "j", "j") // node-1, then node-2
	s := screen(d)
	if got := lineAfter(strings.Split(s, "\n"), " node-2 "); !strings.HasPrefix(got, "   node: containerd://2.1.4 · kubelet v1.37.2") {
		t.Errorf("the selected node-2 shows no node line under it, but %q:\n%s", got, s)
	}
	after := strings.Split(s, "\n")
	for i, l := range after {
		if strings.Contains(l, " node-2 ") && i+2 < len(after) {
			if ev := after[i+2]; !strings.HasPrefix(ev, "  event: FreeDiskSpaceFailed x3 2m ago +1: Failed to garbage collect") {
				t.Errorf("node-2's event line is %q", ev)
			}
		}
	}
	if strings.Count(s, "   node: ") != 2 {
		t.Errorf("node-1 kept its detail after the selection moved on:\n%s", s)
	}
	press(d, "tab", "tab") // back to the pods, the nodes panel under them
	s = screen(d)
	if strings.Count(s, "   node: ") != 1 || strings.Contains(s, "containerd://2.1.4") {
		t.Errorf("under the pods only the suspect should show its detail:\n%s", s)
	}
	f := d.computeFrame()
	if f.below.h == 0 {
		t.Fatalf("no nodes panel under the pods:\n%s", s)
	}
	if got, want := d.nodes.height(false), 2+1+5+4; got != want || f.below.h != want {
		t.Errorf("height = %d, below.h = %d, want %d (title and column header; the share line; node-3 with its why, msg, node and event lines; four rows)",
			got, f.below.h, want)
	}
}

// TestNodesClickWithTheShareLine: the share line above the column header moves the rows down, and
// a click still selects the node drawn on the clicked line.
func TestNodesClickWithTheShareLine(t *testing.T) {
	d := eventsDashboard(t, 120, 30)
	press(d, "tab")
	for _, name := range []string{"node-5", "node-1", "node-4", "node-3"} {
		y := nodeLineY(d, name)
		if y < 0 {
			t.Fatalf("%s is not on screen:\n%s", name, screen(d))
		}
		d.Update(tea.MouseClickMsg{X: 20, Y: y, Button: tea.MouseLeft})
		if got := d.nodes.selected(); got == nil || got.Name != name {
			t.Fatalf("a click on %s's line selected %v:\n%s", name, got, screen(d))
		}
	}
	// A click on the share line selects nothing.
	share := d.computeFrame().bodyTop + 1
	if l := strings.Split(screen(d), "\n")[share]; !strings.Contains(l, "others do") {
		t.Fatalf("line %d is not the share line: %q", share, l)
	}
	d.Update(tea.MouseClickMsg{X: 20, Y: share, Button: tea.MouseLeft})
	if got := d.nodes.selected(); got == nil || got.Name != "node-3" {
		t.Errorf("a click on the share line selected %v", got)
	}
}

// TestNodeEventsArriveWithoutNodeChanges: a batch holding only a node's event shows it, although
// nothing else about the nodes changed.
func TestNodeEventsArriveWithoutNodeChanges(t *testing.T) {
	d := eventsDashboard(t, 200, 50)
	press(d, "tab")
	if strings.Contains(nodeRow(screen(d), "node-5"), "ImageGCFailed") {
		t.Fatal("node-5 has an event before the test gives it one")
	}
	ev := warningEvent("", "node-5", "node-5", "node-5", "ImageGCFailed", imageGCShort, 1, 10*time.Second, 10*time.Second)
	d.Update(batchMsg{batches: []contract.Batch{{Events: []*corev1.Event{ev}}}})
	if row := nodeRow(screen(d), "node-5"); !strings.Contains(row, "ImageGCFailed 10s ago") || strings.Contains(row, " x1") {
		t.Errorf("node-5's row after its event: %q", row)
	}
}

// TestNodeConditions: only the conditions in their unhealthy state are named; Ready is the
// state's own word.
func TestNodeConditions(t *testing.T) {
	nd := model.Node{Known: true, Ready: true}
	for i, ty := range model.NodeConditionTypes {
		nd.Conditions[i] = model.NodeCondition{Type: string(ty), Status: "False"}
	}
	nd.Conditions[0].Status = "True"
	if got := nodeState(&nd); got != "Ready" {
		t.Errorf("healthy node: %q", got)
	}
	nd.Conditions[2].Status = "True"    // DiskPressure
	nd.Conditions[4].Status = "Unknown" // NetworkUnavailable, set by nobody
	nd.Conditions[1].Status = "True"    // MemoryPressure
	nd.Cordoned = true
	if got := nodeState(&nd); got != "Ready,MemoryPressure,DiskPressure,cordoned" {
		t.Errorf("node under pressure: %q", got)
	}
}
