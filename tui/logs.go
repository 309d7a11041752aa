package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"doomwatch/model"
)

// LogSource fetches the last lines of a container's log, of its previous instance when previous
// is set. main wires kube.Source's TailLog (the API server's pods/log, or the demo's logs), so the
// dashboard itself never imports client-go. The lines are untrusted: the pane sanitises them.
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
	previous                  bool
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
	cur     cursor
	width   int
	height  int
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
	l.target, l.loading, l.lines, l.errLine = m, true, nil, ""
	l.seq++
	l.cur.setLen(0)
	return true, fetchLog(l.src, m, l.seq)
}

// Close forgets the log; an answer still on its way is dropped by its seq.
func (l *logsPane) Close() {
	l.seq++
	l.lines, l.loading = nil, false
}

// Update takes the fetch's answer and scrolls.
func (l *logsPane) Update(msg tea.Msg) (tea.Msg, tea.Cmd) {
	if m, ok := msg.(logsMsg); ok {
		if m.seq == l.seq {
			l.answer(m)
		}
		return nil, nil
	}
	steer(&l.cur, msg, l.c.keys)
	return nil, nil
}

// answer keeps the fetched lines, sanitised and bounded, and shows the end, where a crash is.
func (l *logsPane) answer(m logsMsg) {
	l.loading = false
	if m.err != nil {
		l.errLine = "cannot get the log: " + strings.Join(strings.Fields(model.Sanitize(m.err.Error())), " ")
		return
	}
	l.lines = make([]string, len(m.lines))
	for i, s := range m.lines {
		if len(s) > logLineMax {
			s = s[:logLineMax]
		}
		l.lines[i] = model.Sanitize(s)
	}
	l.cur.setLen(len(l.lines))
	l.cur.offset = max(0, len(l.lines)-l.cur.height)
	l.cur.clamp()
}

// Help is the keys that scroll the pane and the one that leaves it.
func (l *logsPane) Help() rankedHelp { return l.c.keys.scrollHelp() }

// Refresh has nothing to do: the log is fetched once, when the pane opens.
func (l *logsPane) Refresh(*snapshot) {}

// View draws the title and the window of lines.
func (l *logsPane) View(bool) string {
	st := l.c.st
	t := &l.target
	which := "log"
	if t.previous {
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
		lines, err := src.TailLog(ctx, t.context, t.namespace, t.pod, t.container, t.previous, logPaneLines)
		return logsMsg{seq: seq, lines: lines, err: err}
	}
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
	return openLogsMsg{context: p.Context, namespace: p.Namespace, pod: p.Name, container: name, previous: p.HasPrevious(name, init)}, true
}
