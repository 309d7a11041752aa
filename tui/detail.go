package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"doomwatch/classify"
	"doomwatch/model"
)

// detailPane shows one pod in full: every container (init and sidecars included) with its state
// and last state, the verdict and its reason, the pod's Warning events, its conditions, its owner
// chain and its node's cluster status. The lines are built in Refresh (on open, on each batch and
// on resize), so View only slices them.
type detailPane struct {
	c      *common
	key    string
	lines  []string
	cur    cursor
	width  int
	height int
	// copyText is what `y` copies, made with the lines: `kubectl logs` of the container that
	// decided the verdict, else `kubectl describe pod`; copyHelp is its help ("copy logs").
	copyText, copyHelp string
}

func newDetailPane(c *common) *detailPane {
	return &detailPane{c: c, cur: cursor{scrollOnly: true}}
}

// SetSize sets the pane's size including its title line.
func (d *detailPane) SetSize(w, h int) {
	d.width, d.height = w, h
	d.cur.setHeight(h - 1)
}

// Open shows the pod an openDetailMsg names, from its first line.
func (d *detailPane) Open(msg tea.Msg) (bool, tea.Cmd) {
	m, ok := msg.(openDetailMsg)
	if !ok {
		return false, nil
	}
	d.key = m.key
	d.cur.offset = 0
	d.cur.clamp()
	return true, nil
}

// Close has nothing to stop: the lines are made from the model.
func (d *detailPane) Close() {}

// Update scrolls: the pane has no selection, so the list keys and the wheel move the window. y
// copies a kubectl command for the pod (copyText).
func (d *detailPane) Update(msg tea.Msg) (tea.Msg, tea.Cmd) {
	if steer(&d.cur, msg, d.c.keys) {
		return nil, nil
	}
	if k, ok := msg.(tea.KeyPressMsg); ok && key.Matches(k, d.c.keys.Copy) && d.copyText != "" {
		return copyMsg{text: d.copyText}, nil
	}
	return nil, nil
}

// Help is the keys that scroll the pane, the one that copies and the one that leaves it.
func (d *detailPane) Help() rankedHelp {
	cp := withDesc(d.c.keys.Copy, d.copyHelp)
	cp.SetEnabled(d.copyText != "")
	return d.c.keys.detailHelp(cp)
}

// Refresh formats the pod again (on open, on each batch and on resize) and its node.
func (d *detailPane) Refresh(s *snapshot) {
	p := s.m.Pod(d.key)
	var node *model.Node
	if p != nil {
		// A node registered again under its old name is listed twice: the pod is on the one
		// registered now (Known), not the old one whose failures are still in the window.
		for i := range s.nodes {
			if n := &s.nodes[i]; n.Name == p.Node && (node == nil || !node.Known && n.Known) {
				node = n
			}
		}
	}
	d.rebuild(p, node, s.m.PodEvents(d.key))
}

// rebuild formats pod p (nil when it is gone), its node and its Warning events.
func (d *detailPane) rebuild(p *model.Pod, node *model.Node, events []model.Event) {
	d.lines = d.lines[:0]
	d.copyText, d.copyHelp = "", ""
	if p == nil {
		d.lines = append(d.lines, d.c.st.dim.Render("the pod "+d.key+" is gone"))
	} else {
		d.lines = detailLines(d.lines, p, node, events, d.c, max(d.width, 20))
		d.copyText, d.copyHelp = describePod(p), "copy describe"
		if cmd, ok := podLogs(p); ok {
			d.copyText, d.copyHelp = cmd, "copy logs"
		}
	}
	// The window stays where the user scrolled it, as far as the new lines allow.
	d.cur.setLen(len(d.lines))
}

// View renders the visible lines under a title; the pane always has the keyboard.
func (d *detailPane) View(bool) string {
	st := d.c.st
	var b strings.Builder
	keys := d.c.keys
	b.WriteString(clip(st.focusTitle.Render("POD "+d.key)+st.dim.Render("  "+hints(keys.Back, keys.Up, keys.Down)), d.width))
	from, to := d.cur.visible()
	for _, l := range d.lines[from:to] {
		b.WriteByte('\n')
		b.WriteString(clip(l, d.width))
	}
	return b.String()
}

// detailLines appends the pod's detail to dst, wrapped to width; events are its Warning events,
// newest first.
func detailLines(dst []string, p *model.Pod, node *model.Node, events []model.Event, c *common, width int) []string {
	st := c.st
	now := c.now
	add := func(s string) { dst = append(dst, s) }
	// wrapped adds label and a long value wrapped under it, indented.
	wrapped := func(indent int, label, value string) {
		if value == "" {
			return
		}
		pad := strings.Repeat(" ", indent)
		text := ansi.Wrap(value, max(width-indent-len(label)-1, 10), " ")
		for i, l := range strings.Split(text, "\n") {
			if i == 0 {
				add(pad + st.dim.Render(label) + " " + l)
			} else {
				add(pad + strings.Repeat(" ", len(label)+1) + l)
			}
		}
	}
	add(st.bold.Render("Verdict  ") + st.badgeFor(p.Verdict.Class, badgeText(p.Verdict.Class)) +
		st.dim.Render(ruleSource(p.Verdict)))
	wrapped(2, "reason:", p.Verdict.Reason)
	// classify folds the runtime message into most reasons; show it again only when it is not.
	if msg := p.Verdict.Message; !strings.Contains(p.Verdict.Reason, msg) {
		wrapped(2, "message:", msg)
	}
	cols := p.Columns(now)
	add(st.bold.Render("Status   ") + cols.Status + st.dim.Render("  ready ") + cols.Ready +
		st.dim.Render("  restarts ") + cols.Restarts + st.dim.Render("  phase ") + p.Phase +
		st.dim.Render("  age ") + c.age(p.Created))

	// Node and its cluster status.
	nodeLine := st.bold.Render("Node     ") + p.Node
	switch {
	case p.Node == "":
		nodeLine += st.dim.Render("(not scheduled)")
	case node == nil:
		nodeLine += st.dim.Render("  (no evidence)")
	case node.Failures == 0:
		nodeLine += "  " + nodeState(node) + st.dim.Render("  no start failures here in the window")
	default:
		nodeLine += "  " + nodeState(node) + fmt.Sprintf(st.dim.Render("  start failures ")+"%d"+
			st.dim.Render(" of ")+"%d"+st.dim.Render(" pods, ")+"%d"+st.dim.Render(" workloads"),
			node.Failures, node.FailedPods, node.Workloads)
		if node.Suspect {
			nodeLine += "  " + st.danger.Render("⚠ SUSPECT")
		}
	}
	add(nodeLine)
	if node != nil && node.Suspect {
		wrapped(2, "why:", node.Why)
	}

	// Owner chain: the pod's direct controller, then the top owner the model grouped it under.
	chain := "Pod/" + p.Name
	if ctrl := p.Controller(); ctrl != "" {
		chain += " → " + ctrl
	}
	if p.Owner != "" && !strings.HasSuffix(chain, " → "+p.Owner) {
		chain += " → " + p.Owner
	}
	add(st.bold.Render("Owners   ") + chain)

	add("")
	dst = eventLines(dst, events, c, width)

	if conds := p.Conditions(); len(conds) > 0 {
		add("")
		add(st.bold.Render("Conditions"))
		for _, cond := range conds {
			line := fmt.Sprintf("  %-26s %-7s", cond.Type, cond.Status)
			if cond.Reason != "" {
				line += " " + cond.Reason
			}
			if !cond.Since.IsZero() {
				line += st.dim.Render("  since " + c.age(cond.Since))
			}
			add(line)
			wrapped(4, "message:", cond.Message)
		}
	}

	add("")
	add(st.bold.Render("Containers"))
	for _, cs := range p.States() {
		kind := ""
		if cs.Init {
			kind = " (init)"
			if cs.Sidecar {
				kind = " (sidecar)"
			}
		}
		v := p.ContainerVerdict(cs.Name, cs.Init)
		head := "  " + st.bold.Render(cs.Name) + st.dim.Render(kind)
		if v != nil {
			head += "  " + st.badgeFor(v.Class, badgeText(v.Class))
		}
		add(head)
		wrapped(4, "image:", cs.Image)
		if v != nil && v.Reason != "" {
			wrapped(4, "verdict:", v.Reason)
		}
		if !cs.Reported {
			add("    " + st.dim.Render("no status yet"))
			continue
		}
		dst = stateLines(dst, "state:", &cs.State, c, width)
		dst = stateLines(dst, "last state:", &cs.LastState, c, width)
		add("    " + st.dim.Render("ready ") + fmt.Sprint(cs.Ready) + st.dim.Render("  restarts ") +
			fmt.Sprint(cs.RestartCount))
	}
	return dst
}

// eventLines appends the Events section: one line per Warning event, newest first (the model's
// order), as kubectl describe's Events table has them but without the Normal ones: age, count
// ("x3", when more than one), reason and the message, clipped to the line (the model sanitised
// it). The columns are as wide as their widest cell, the reason at most 28.
func eventLines(dst []string, events []model.Event, c *common, w int) []string {
	st := c.st
	if len(events) == 0 {
		return append(dst, st.bold.Render("Events")+"  "+st.dim.Render("no warning events"))
	}
	dst = append(dst, st.bold.Render("Events")+"  "+st.dim.Render("warnings, newest first"))
	ages := make([]string, len(events))
	ageW, countW, reasonW := 0, 0, 0
	for i := range events {
		ev := &events[i]
		ages[i] = eventAge(ev, c)
		ageW = max(ageW, width(ages[i]))
		if ev.Count > 1 {
			countW = max(countW, len(fmt.Sprint(ev.Count))+1)
		}
		reasonW = max(reasonW, min(width(ev.Reason), 28))
	}
	for i := range events {
		ev := &events[i]
		count := ""
		if ev.Count > 1 {
			count = fmt.Sprintf("x%d", ev.Count)
		}
		line := "  " + st.dim.Render(fit(ages[i], ageW)) + " "
		if countW > 0 {
			line += fit(count, countW) + " "
		}
		line += st.warn.Render(fit(ev.Reason, reasonW))
		if rest := w - 2 - ageW - 1 - countW - btoi(countW > 0) - reasonW - 2; rest > 0 && ev.Message != "" {
			line += "  " + clip(ev.Message, rest)
		}
		dst = append(dst, line)
	}
	return dst
}

// ruleSource says which container and which part of the status decided the verdict.
func ruleSource(v classify.Verdict) string {
	var parts []string
	if v.Container != "" {
		c := "container " + v.Container
		if v.Init {
			c = "init " + c
		}
		parts = append(parts, c)
	}
	if s := v.Source.String(); s != "" {
		parts = append(parts, "from "+s)
	}
	if v.HasExitCode {
		parts = append(parts, fmt.Sprintf("exit %d", v.ExitCode))
	}
	if len(parts) == 0 {
		return ""
	}
	return "  (" + strings.Join(parts, ", ") + ")"
}

// stateLines formats one container state: its summary (model.State.Summary, as the pod table's
// STATE column has it), then the exit code, times and the wrapped message.
func stateLines(dst []string, label string, s *model.State, c *common, width int) []string {
	st := c.st
	pad := "    "
	lbl := st.dim.Render(fmt.Sprintf("%-11s ", label))
	msgLines := func(msg string) {
		if msg == "" {
			return
		}
		text := ansi.Wrap(msg, max(width-len(pad)-12-9, 10), " ")
		for i, l := range strings.Split(text, "\n") {
			if i == 0 {
				dst = append(dst, pad+strings.Repeat(" ", 12)+st.dim.Render("message: ")+l)
			} else {
				dst = append(dst, pad+strings.Repeat(" ", 12+9)+l)
			}
		}
	}
	switch s.Kind {
	case model.StateWaiting:
		dst = append(dst, pad+lbl+s.Summary())
		msgLines(s.Message)
	case model.StateRunning:
		dst = append(dst, pad+lbl+s.Summary()+st.dim.Render(" since ")+stamp(s.StartedAt, c))
	case model.StateTerminated:
		line := pad + lbl + s.Summary() + st.dim.Render(" exit ") + fmt.Sprint(s.ExitCode)
		if s.Signal != 0 {
			line += st.dim.Render(" signal ") + fmt.Sprint(s.Signal)
		}
		dst = append(dst, line)
		dst = append(dst, pad+strings.Repeat(" ", 12)+st.dim.Render("started ")+stamp(s.StartedAt, c)+
			st.dim.Render("  finished ")+stamp(s.FinishedAt, c))
		msgLines(s.Message)
	default:
		if label == "state:" {
			dst = append(dst, pad+lbl+st.dim.Render("none"))
		}
	}
	return dst
}

// stamp is an absolute time with its age: "2026-01-02T15:04:05Z (12s ago)".
func stamp(t time.Time, c *common) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339) + " (" + c.age(t) + " ago)"
}
