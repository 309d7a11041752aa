package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"doomwatch/model"
)

// LogSource fetches the last lines of a container's log, of its previous instance when previous
// is set; container is the name as the API server knows it (model.ContainerState.LogName). main
// wires kube.Fleet's TailLog (the API server's pods/log, or the demo's logs), so the dashboard
// itself never imports client-go. The log enters doomwatch there: the lines and the error's text
// come sanitised, and the pane only clips them.
type LogSource interface {
	TailLog(ctx context.Context, context, namespace, pod, container string, previous bool, lines int) ([]string, error)
}

// Log pane bounds: how many lines it asks for, how long it waits, and how wide a line may be
// (a JSON log line can be kilobytes; the pane clips to its width anyway, this bounds the memory).
const (
	logPaneLines   = 100
	logPaneTimeout = 10 * time.Second
	logLineMax     = 2000
)

// openLogsMsg asks for the log pane of one container: its previous instance when it has one, the
// current one otherwise.
type openLogsMsg struct {
	// context is the pod's cluster with several contexts, else "".
	context                   string
	namespace, pod, container string
	// logName is the container's name as the API server knows it, for the request alone
	// (model.ContainerState.LogName); container is the name shown.
	logName string
	// init says the container is an init container (or a sidecar).
	init     bool
	previous bool
	// key is the pod's key in the fleet (model.Pod.ID), for its events.
	key string
	// neverStarted is set when the container has never started, so has no log to fetch, and
	// waiting is then its waiting reason ("ImagePullBackOff"; "" when it has none).
	neverStarted bool
	waiting      string
}

// logsMsg carries a log fetched off the UI goroutine; seq tells it from an older fetch's answer.
type logsMsg struct {
	seq   int
	lines []string
	err   error
}

// logsPane shows the last lines of a container's log, fetched in a Cmd when opened (never in
// Update), sanitised, clipped and scrollable. A failure (RBAC, a container that never ran) is one
// line in the pane.
type logsPane struct {
	c      *common
	src    LogSource
	target openLogsMsg
	seq    int
	// loading is set from Open until the fetch answers; lines or errLine is the answer.
	loading bool
	lines   []string
	errLine string
	// events are the pod's Warning events, shown in place of the log of a container that never
	// started (openLogsMsg.neverStarted), from the model on each Refresh.
	events []model.Event
	cur    cursor
	width  int
	height int
}

func newLogsPane(c *common, src LogSource) *logsPane {
	return &logsPane{c: c, src: src, cur: cursor{scrollOnly: true}}
}

// SetSize sets the pane's size including its title line.
func (l *logsPane) SetSize(w, h int) {
	l.width, l.height = w, h
	l.cur.setHeight(h - 1)
}

// Open starts fetching the log an openLogsMsg names.
func (l *logsPane) Open(msg tea.Msg) (bool, tea.Cmd) {
	m, ok := msg.(openLogsMsg)
	if !ok {
		return false, nil
	}
	l.target, l.loading, l.lines, l.errLine, l.events = m, true, nil, "", nil
	l.seq++
	l.cur.setLen(0)
	if m.neverStarted {
		// The kubelet would only answer that the container is waiting to start: the events say
		// why (Refresh), and `kubectl describe pod` has them.
		l.loading = false
		return true, nil
	}
	return true, fetchLog(l.src, m, l.seq)
}

// Close forgets the log; an answer still on its way is dropped by its seq.
func (l *logsPane) Close() {
	l.seq++
	l.lines, l.loading = nil, false
}

// Update takes the fetch's answer and scrolls. y copies `kubectl describe pod` in place of the
// log of a container that never started.
func (l *logsPane) Update(msg tea.Msg) (tea.Msg, tea.Cmd) {
	if m, ok := msg.(logsMsg); ok {
		if m.seq == l.seq {
			l.answer(m)
		}
		return nil, nil
	}
	if k, ok := msg.(tea.KeyPressMsg); ok && l.target.neverStarted && key.Matches(k, l.c.keys.Copy) {
		return copyMsg{text: l.describe()}, nil
	}
	steer(&l.cur, msg, l.c.keys)
	return nil, nil
}

// describe is `kubectl describe pod` for the pane's pod.
func (l *logsPane) describe() string {
	return describePodNamed(l.target.context, l.target.namespace, l.target.pod)
}

// answer keeps the fetched lines (the source sanitised them), bounded, and shows the end, where
// a crash is.
func (l *logsPane) answer(m logsMsg) {
	l.loading = false
	if m.err != nil {
		l.errLine = "cannot get the log: " + strings.Join(strings.Fields(m.err.Error()), " ")
		return
	}
	l.lines = make([]string, len(m.lines))
	for i, s := range m.lines {
		if len(s) > logLineMax {
			// Cut at the start of a character: half of one is an invalid byte, and a C1 control
			// to a terminal that reads 8-bit controls.
			cut := logLineMax
			for cut > 0 && !utf8.RuneStart(s[cut]) {
				cut--
			}
			s = s[:cut]
		}
		l.lines[i] = s
	}
	l.cur.setLen(len(l.lines))
	l.cur.offset = max(0, len(l.lines)-l.cur.height)
	l.cur.clamp()
}

// Help is the keys that scroll the pane and the one that leaves it, and y when it copies describe.
func (l *logsPane) Help() rankedHelp {
	cp := withDesc(l.c.keys.Copy, "copy describe")
	cp.SetEnabled(l.target.neverStarted)
	return l.c.keys.scrollHelp(cp)
}

// Refresh shows the pod's Warning events in place of the log of a container that never started;
// a log is fetched once, when the pane opens.
func (l *logsPane) Refresh(s *snapshot) {
	if !l.target.neverStarted {
		return
	}
	l.events = s.m.PodEvents(l.target.key)
	// The waiting reason moves on (ErrImagePull, then ImagePullBackOff), and the container may
	// start meanwhile: the pane says so rather than fetch on its own.
	started := false
	if p := s.m.Pod(l.target.key); p != nil {
		var never bool
		if l.target.waiting, never = neverStarted(p, l.target.container, l.target.init); !never {
			started = true
		}
	}
	l.lines = l.noLogLines(l.lines[:0], started)
	// The window stays where the user scrolled it, as far as the new lines allow.
	l.cur.setLen(len(l.lines))
}

// noLogLines are what the pane shows of a container that never started: why it has no log, what
// to run instead, and the pod's Warning events, which say why it has not started. started says it
// has started since the pane opened.
func (l *logsPane) noLogLines(dst []string, started bool) []string {
	st := l.c.st
	t := &l.target
	why := "  " + t.container + " has not started"
	if t.waiting != "" {
		why += " (waiting: " + t.waiting + ")"
	}
	why += ", so it has no log yet: its events say why."
	if started {
		why = "  " + t.container + " has started since: " + l.c.keys.Back.Help().Key + ", then " + l.c.keys.Logs.Help().Key + ", shows its log."
	}
	dst = append(dst, why, "  "+st.dim.Render(hints(withDesc(l.c.keys.Copy, "copies"))+" "+l.describe()), "")
	return eventLines(dst, l.events, l.c, l.width)
}

// View draws the title and the window of lines.
func (l *logsPane) View(bool) string {
	st := l.c.st
	t := &l.target
	which := "log"
	switch {
	case t.neverStarted:
		which = "never started: no log"
	case t.previous:
		which = "previous instance's log"
	}
	title := st.focusTitle.Render("LOGS") + " " + st.dim.Render(fmt.Sprintf("%s/%s/%s · %s", t.namespace, t.pod, t.container, which))
	var b strings.Builder
	b.WriteString(clip(title, l.width))
	switch {
	case l.loading:
		b.WriteString("\n  " + st.dim.Render("fetching the last "+fmt.Sprint(logPaneLines)+" lines…"))
	case l.errLine != "":
		b.WriteString("\n  " + clip(l.errLine, max(0, l.width-2)))
	case len(l.lines) == 0:
		b.WriteString("\n  " + st.dim.Render("the log is empty"))
	default:
		from, to := l.cur.visible()
		for _, s := range l.lines[from:to] {
			b.WriteString("\n")
			b.WriteString(ansi.Truncate(s, l.width, "…"))
		}
	}
	return b.String()
}

// fetchLog fetches in a Cmd. It captures only the source and the target, never the pane or the
// model.
func fetchLog(src LogSource, t openLogsMsg, seq int) tea.Cmd {
	return func() tea.Msg {
		if src == nil {
			return logsMsg{seq: seq, err: errors.New("no log source here")}
		}
		ctx, cancel := context.WithTimeout(context.Background(), logPaneTimeout)
		defer cancel()
		lines, err := src.TailLog(ctx, t.context, t.namespace, t.pod, t.logName, t.previous, logPaneLines)
		return logsMsg{seq: seq, lines: lines, err: err}
	}
}

// neverStarted reports whether the pod's container (or init container) named name has never
// started (model.ContainerState.NeverStarted: the kubelet has no log to serve), and its waiting
// reason. A container the pod does not have, or without a status yet, has not started either.
func neverStarted(p *model.Pod, name string, init bool) (waiting string, never bool) {
	c, _ := p.State(name, init)
	if !c.NeverStarted() {
		return "", false
	}
	if c.State.Kind == model.StateWaiting {
		waiting = c.State.Reason
	}
	return waiting, true
}

// logsFor is the openLogsMsg of a pod's log: the container that decided its verdict, else its
// first app container, and the previous instance when the container has one (`kubectl logs -p`).
func logsFor(p *model.Pod) (openLogsMsg, bool) {
	if p == nil || len(p.Containers) == 0 {
		return openLogsMsg{}, false
	}
	name, init := p.Verdict.Container, p.Verdict.Init
	if name == "" {
		c := p.Containers[0]
		for _, cv := range p.Containers {
			if !cv.Init {
				c = cv
				break
			}
		}
		name, init = c.Name, c.Init
	}
	c, _ := p.State(name, init)
	msg := openLogsMsg{context: p.Context, namespace: p.Namespace, pod: p.Name, container: name, logName: c.LogName(),
		init: init, previous: c.HasPrevious(), key: p.ID()}
	msg.waiting, msg.neverStarted = neverStarted(p, name, init)
	return msg, true
}
