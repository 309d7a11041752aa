package tui

import (
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	corev1 "k8s.io/api/core/v1"

	"doomwatch/contract"
	"doomwatch/model"
)

// The clock's tick redraws the screen only when something on it would read differently: an age
// shown in minutes is redrawn once a minute, one in seconds every second, and a model that
// changed at once; an idle dashboard whose text does not move draws nothing.
func TestTickRedrawsOnlyWhenTheScreenWouldChange(t *testing.T) {
	now := t0
	m := model.New(model.DefaultConfig())
	var b contract.Batch
	b.Health = &contract.Health{Synced: true, PodsSeen: 1}
	b.Pods = appendPods(b.Pods, mkPod(podSpec{ns: "shop", name: "web-0", node: "node-1", created: 15*time.Minute + 10*time.Second,
		status: []corev1.ContainerStatus{running("app", "registry.example.com/web:v1", 0, nil)}}))
	m.Apply(&b, now)
	d := newDashboard(Options{Model: model.FleetOf("", m), Now: func() time.Time { return now }}, true)
	d.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
	age := func() string { return ageOn(lineWith(t, d, "web-0")) }
	if got := age(); got != "15m" {
		t.Fatalf("age %q, want 15m", got)
	}
	_ = d.View() // bubbletea draws after every Update
	tickAt := func(at time.Duration) bool {
		now = t0.Add(at)
		d.Update(tickMsg{})
		kept := d.frameOK
		_ = d.View()
		return kept
	}
	for _, at := range []time.Duration{time.Second, 20 * time.Second, 49 * time.Second} {
		if !tickAt(at) {
			t.Errorf("tick at +%v redrew a screen whose ages read the same (15m)", at)
		}
	}
	if tickAt(50 * time.Second) {
		t.Errorf("tick at +50s kept the frame, but the age turned 16m")
	}
	if got := age(); got != "16m" {
		t.Errorf("after +50s the age reads %q, want 16m", got)
	}
	if !tickAt(51 * time.Second) {
		t.Errorf("tick at +51s redrew, though 16m still reads 16m")
	}

	// A young pod's age is shown in seconds: every tick redraws.
	var young contract.Batch
	young.Pods = appendPods(young.Pods, mkPod(podSpec{ns: "shop", name: "web-1", node: "node-1", created: -21 * time.Second,
		status: []corev1.ContainerStatus{running("app", "registry.example.com/web:v1", 0, nil)}}))
	d.Update(batchMsg{batches: []contract.Batch{young}})
	_ = d.View()
	for _, at := range []time.Duration{52 * time.Second, 53 * time.Second} {
		if tickAt(at) {
			t.Errorf("tick at +%v kept the frame, but web-1's age in seconds moved", at)
		}
	}
	if l := lineWith(t, d, "web-1"); ageOn(l) != "32s" {
		t.Errorf("web-1 at +53s: %q, want its age 32s", l)
	}

	// A change to the model is drawn at the next tick, with the clock where it is.
	if !tickAt(53*time.Second + 100*time.Millisecond) {
		t.Errorf("tick within the same second redrew")
	}
	d.m.Clusters()[0].Apply(&contract.Batch{Pods: appendPods(nil, mkPod(podSpec{ns: "shop", name: "web-2", node: "node-1",
		created: time.Hour, status: []corev1.ContainerStatus{running("app", "registry.example.com/web:v1", 0, nil)}}))}, now)
	if tickAt(53*time.Second + 200*time.Millisecond) {
		t.Errorf("tick after the model changed kept the frame")
	}
	if !strings.Contains(screen(d), "web-2") {
		t.Errorf("the tick after the model changed should show web-2:\n%s", screen(d))
	}
}

// lineWith is the screen's line that holds s.
func lineWith(t *testing.T, d *dashboard, s string) string {
	t.Helper()
	for l := range strings.SplitSeq(screen(d), "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	t.Fatalf("no line with %q on screen:\n%s", s, screen(d))
	return ""
}

// ageOn is the AGE cell of a pod row: its one field that reads as HumanDuration does.
func ageOn(line string) string {
	for _, f := range strings.Fields(line) {
		if humanAge.MatchString(f) {
			return f
		}
	}
	return ""
}

var humanAge = regexp.MustCompile(`^[0-9]+[smhdy]([0-9]+[smhd])?$`)
