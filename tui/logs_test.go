package tui

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	corev1 "k8s.io/api/core/v1"

	"doomwatch/contract"
	"doomwatch/model"
)

// fakeLogs is a LogSource that answers from memory and remembers what it was asked.
type fakeLogs struct {
	mu    sync.Mutex
	asked []string
	lines []string
	err   error
}

func (f *fakeLogs) TailLog(_ context.Context, _, ns, pod, container string, previous bool, lines int) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := ""
	if previous {
		p = " -p"
	}
	f.asked = append(f.asked, ns+"/"+pod+"/"+container+p+" --tail="+strconv.Itoa(lines))
	if f.err != nil {
		return nil, f.err
	}
	return f.lines, nil
}

// crashLog is what the crashing api container wrote, as a LogSource hands it over: sanitised
// (kube.Source.TailLog), the colour escape sequence the container wrote around "config" gone.
var crashLog = []string{
	"2026-01-15T10:09:09.812Z level=info msg=\"starting api\" version=v3",
	"2026-01-15T10:09:09.900Z level=error msg=\"config: missing DATABASE_URL\"",
	"2026-01-15T10:09:09.901Z level=fatal msg=exiting",
}

func logsDashboard(t *testing.T, w, h int, src LogSource) *dashboard {
	t.Helper()
	d := newDashboard(Options{Model: model.FleetOf("", fixtureModel()), Now: func() time.Time { return t0 }, Logs: src}, true)
	d.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return d
}

// run runs cmd as bubbletea would and hands every message it yields to the dashboard.
func run(d *dashboard, cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			run(d, c)
		}
	case nil:
	default:
		d.Update(msg)
	}
}

// TestLogsKeyFetchesInACmd: `l` on a crash-looping pod asks for its deciding container's previous
// instance, in a Cmd, never in Update; the pane then shows the lines, the last ones in view; esc
// leaves it.
func TestLogsKeyFetchesInACmd(t *testing.T) {
	src := &fakeLogs{lines: crashLog}
	d := logsDashboard(t, 120, 30, src)
	d.pods.selectKey("shop/api-7d9f8b6c5-xk2lq")
	cmd := press(d, "l")
	if len(src.asked) != 0 {
		t.Fatalf("the log was fetched in Update: %v", src.asked)
	}
	if s := screen(d); !strings.Contains(s, "LOGS shop/api-7d9f8b6c5-xk2lq/api · previous instance's log") || !strings.Contains(s, "fetching") {
		t.Fatalf("the pane does not say it is fetching:\n%s", s)
	}
	run(d, cmd)
	if want := "shop/api-7d9f8b6c5-xk2lq/api -p --tail=100"; len(src.asked) != 1 || src.asked[0] != want {
		t.Errorf("asked %v, want [%s]", src.asked, want)
	}
	s := ansi.Strip(d.render())
	for _, want := range []string{"missing DATABASE_URL", "level=fatal msg=exiting"} {
		if !strings.Contains(s, want) {
			t.Errorf("the pane lacks %q:\n%s", want, s)
		}
	}
	press(d, "esc")
	if s := screen(d); strings.Contains(s, "LOGS") || !strings.Contains(s, "PODS") {
		t.Errorf("esc did not leave the log:\n%s", s)
	}
}

// TestLogsErrorIsOneLine: a refusal (RBAC here, in the API server's words) is one line in the
// pane; a stale answer, for a pane closed and opened again, is dropped.
func TestLogsErrorIsOneLine(t *testing.T) {
	src := &fakeLogs{err: errors.New(`not allowed to get pods/log in shop: pods "api-7d9f8b6c5-xk2lq" is forbidden: User "dev" cannot get resource "pods/log" in API group "" in the namespace "shop"`)}
	d := logsDashboard(t, 200, 30, src)
	d.pods.selectKey("shop/api-7d9f8b6c5-xk2lq")
	stale := press(d, "l")
	press(d, "esc")
	cmd := press(d, "l")
	run(d, stale) // the first fetch answers late: its seq is gone
	if s := screen(d); !strings.Contains(s, "fetching") {
		t.Errorf("a stale answer was shown:\n%s", s)
	}
	run(d, cmd)
	s := screen(d)
	if n := strings.Count(s, "cannot get the log"); n != 1 || !strings.Contains(s, `cannot get resource "pods/log"`) {
		t.Errorf("want the refusal on one line:\n%s", s)
	}
}

// TestLogsLongLineEndsOnAWholeCharacter: a line longer than the pane keeps is cut where a
// character starts: half of one would be an invalid byte, a C1 control to some terminals.
func TestLogsLongLineEndsOnAWholeCharacter(t *testing.T) {
	// "€" is three bytes, the first of them at logLineMax-1: a cut at logLineMax splits it.
	long := strings.Repeat("a", logLineMax-1) + strings.Repeat("€", 10)
	d := logsDashboard(t, 200, 30, &fakeLogs{lines: []string{long}})
	d.pods.selectKey("shop/api-7d9f8b6c5-xk2lq")
	run(d, press(d, "l"))
	if len(d.logs.lines) != 1 {
		t.Fatalf("lines %d, want 1", len(d.logs.lines))
	}
	if got := d.logs.lines[0]; got != strings.Repeat("a", logLineMax-1) || !utf8.ValidString(got) {
		t.Errorf("the line was cut to %d bytes ending %q, want the %d bytes before the split character",
			len(got), got[max(0, len(got)-4):], logLineMax-1)
	}
}

// TestLogsFromTheDetail: `l` in the detail pane opens the log of the pod it shows; the detail's
// footer offers it. esc goes back the way the user came: from the log to the detail, where it was
// scrolled to, then to the list.
func TestLogsFromTheDetail(t *testing.T) {
	src := &fakeLogs{lines: crashLog}
	d := logsDashboard(t, 200, 20, src)
	d.pods.selectKey("shop/api-7d9f8b6c5-xk2lq")
	press(d, "enter")
	if s := screen(d); !strings.Contains(s, "l logs") {
		t.Errorf("the detail's footer does not offer l:\n%s", s)
	}
	press(d, "j", "j")
	scrolled := screen(d)
	run(d, press(d, "l"))
	if len(src.asked) != 1 || !strings.HasPrefix(src.asked[0], "shop/api-7d9f8b6c5-xk2lq/api") {
		t.Errorf("asked %v", src.asked)
	}
	press(d, "esc")
	if s := screen(d); s != scrolled {
		t.Errorf("esc from the log should go back to the detail as it was:\n%s\nwant:\n%s", s, scrolled)
	}
	press(d, "esc")
	if s := screen(d); strings.Contains(s, "POD shop/") || !strings.Contains(s, "PODS") {
		t.Errorf("esc from the detail should go back to the list:\n%s", s)
	}
	// Opened from the list, the log goes back to the list.
	run(d, press(d, "l"))
	press(d, "esc")
	if s := screen(d); strings.Contains(s, "POD shop/") || strings.Contains(s, "LOGS") || !strings.Contains(s, "PODS") {
		t.Errorf("esc from a log opened on the list should go back to the list:\n%s", s)
	}
}

// TestLogsOfAContainerThatNeverStarted: a container whose image cannot be pulled never started
// and has no log; the kubelet would only say it is "waiting to start". `l` shows why instead, the
// pod's Warning events, and offers `kubectl describe pod` on y, as the detail's y does.
func TestLogsOfAContainerThatNeverStarted(t *testing.T) {
	const pod = "payments-7d9f8b6c5-p00"
	image := "registry.example.com/payments:v2.1.0-typo"
	b := fixtureBatch()
	// The kubelet's events for a failed pull: "Failed to pull image %q: %v" and "Error: %v"
	// (kubernetes/kubernetes pkg/kubelet/images/image_manager.go EnsureImageExists).
	b.Events = []*corev1.Event{
		warningEvent("shop", pod, "uid-shop-"+pod, "node-1", "Failed", "Failed to pull image \""+image+"\": "+pullNotFound(image), 4, 4*time.Minute, 30*time.Second),
		warningEvent("shop", pod, "uid-shop-"+pod, "node-1", "Failed", "Error: ErrImagePull", 4, 4*time.Minute, 30*time.Second),
	}
	m := model.New(model.DefaultConfig())
	m.Apply(&b, t0)
	src := &fakeLogs{lines: crashLog}
	d := newDashboard(Options{Model: model.FleetOf("", m), Now: func() time.Time { return t0 }, Logs: src}, true)
	d.Update(tea.WindowSizeMsg{Width: 160, Height: 30})
	describe := "kubectl describe pod -n shop " + pod

	d.pods.selectKey("shop/" + pod)
	press(d, "enter")
	if got, ok := clipboardOf(press(d, "y")); !ok || got != describe {
		t.Errorf("y in the detail copied %q, want %q: the container has no log", got, describe)
	}
	run(d, press(d, "l"))
	if len(src.asked) != 0 {
		t.Errorf("asked for %v, a log the kubelet does not have", src.asked)
	}
	s := screen(d)
	for _, want := range []string{"LOGS shop/" + pod + "/payments · never started: no log",
		"payments has not started (waiting: ErrImagePull), so it has no log yet", "y copies " + describe,
		"Failed to pull image", "Error: ErrImagePull"} {
		if !strings.Contains(s, want) {
			t.Errorf("the pane lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "the log is empty") || strings.Contains(s, "fetching") {
		t.Errorf("the pane reads as a log:\n%s", s)
	}
	if !hasHelp(lastLine(s), "y", "copy describe") {
		t.Errorf("the footer does not offer y:\n%s", lastLine(s))
	}
	if got, ok := clipboardOf(press(d, "y")); !ok || got != describe {
		t.Errorf("y in the pane copied %q, want %q", got, describe)
	}
	// The image is pulled after all: the pane says the container has started, and how to see
	// its log, rather than fetch it on its own.
	started := fixtureBatch()
	started.Pods = appendPods(nil, mkPod(podSpec{ns: "shop", name: pod, node: "node-1", rs: "payments-7d9f8b6c5", created: 4 * time.Minute,
		status: []corev1.ContainerStatus{running("payments", image, 0, nil)}, conds: readyConds(true)}))
	started.Nodes, started.Workloads = nil, nil
	d.Update(batchMsg{batches: []contract.Batch{started}})
	if s := screen(d); !strings.Contains(s, "payments has started since: esc, then l, shows its log.") || len(src.asked) != 0 {
		t.Errorf("the container started: asked %v, pane:\n%s", src.asked, s)
	}

	// A container that ran has a log: y is not offered in its pane. (esc goes back to the list,
	// through the detail the log was opened from.)
	press(d, "esc", "esc")
	d.pods.selectKey("shop/api-7d9f8b6c5-xk2lq")
	run(d, press(d, "l"))
	if s := screen(d); hasHelp(lastLine(s), "y", "copy describe") || len(src.asked) != 1 {
		t.Errorf("the api container's log: asked %v, footer %q", src.asked, lastLine(s))
	}
}

// TestLogsGolden: the log pane at both sizes.
func TestLogsGolden(t *testing.T) {
	for _, sz := range sizes {
		t.Run(sz.name, func(t *testing.T) {
			d := logsDashboard(t, sz.w, sz.h, &fakeLogs{lines: crashLog})
			d.pods.selectKey("shop/api-7d9f8b6c5-xk2lq")
			run(d, press(d, "l"))
			frame := d.render()
			checkFrame(t, frame, sz.w, sz.h)
			golden(t, "logs-"+sz.name+".txt", ansi.Strip(frame))
		})
	}
}
