package tui

import (
	"fmt"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"doomwatch/model"
)

// Focus names the panel that has the keyboard: its index in dashboard.panels.
type Focus int

// The panels tab cycles through.
const (
	FocusPods Focus = iota
	FocusNodes
	FocusRollouts
)

// dashboard is the root model. It owns the model.Model, applies batches to it, lays the screen
// out (layout.go) and routes every other message to the component that decides: the focused
// panel, the open pane, the query bar, the header.
type dashboard struct {
	opts Options
	m    *model.Fleet
	c    *common
	// queryBar is the pod table's query (d.query) and the `/` input.
	queryBar

	header   *header
	pods     *podTable
	nodes    *nodesPanel
	rollouts *rolloutList
	// soak is --stable over the rollouts (model.Soak): refreshAll shows them through it.
	soak   *model.Soak
	detail *detailPane
	logs   *logsPane
	// panels are what tab cycles through, indexed by Focus; panes are what a message can open
	// over the body, and pane is the one last opened.
	panels []panel
	panes  []pane
	pane   pane
	// under is the pane the open one was opened over (the detail under its pod's log), which esc
	// goes back to; nil when the open one covers the panels.
	under pane
	help  help.Model

	// snap is what refreshAll last read from the model, for the panels.
	snap          snapshot
	width, height int
	focus         Focus
	// showDetail is set while pane (the pod's detail) covers the body.
	showDetail bool
	// asyncPods is the number of rows from which a text filter is matched off the UI goroutine
	// (model.ViewCost); below it the match takes a few milliseconds and is applied at once.
	asyncPods int
	// debounce is how long typing must pause before a text filter runs.
	debounce time.Duration
	err      error
	// copied is the command `y` last put on the clipboard, shown in the footer until the next key
	// (clipboard.go).
	copied string
	// onPanic reports a panic caught while drawing (set by Run).
	onPanic func(error)

	// drawn is the screen View last drew, and frameOK says it is still the screen. Every message
	// redraws but a clock tick after which nothing on screen would read differently (keepFrame):
	// an idle dashboard draws nothing (tick).
	drawn              string
	frameOK, keepFrame bool
	// version is the model's Version at the last refresh.
	version uint64
}

func newDashboard(opts Options, noColor bool) *dashboard {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	c := &common{st: newStyles(noColor), keys: DefaultKeyMap(), now: opts.Now()}
	c.keys.Context.SetEnabled(opts.Model.Multi())
	for _, b := range c.keys.replayKeys() {
		b.SetEnabled(opts.Replay != nil)
	}
	d := &dashboard{
		opts:     opts,
		m:        opts.Model,
		c:        c,
		queryBar: newQueryBar(noColor),
		header:   newHeader(c, opts.Model.Clusters()[0].Context, opts.Scope),
		pods:     newPodTable(c),
		nodes:    newNodesPanel(c, opts.Model.Config().Window),
		rollouts: newRolloutList(c),
		detail:   newDetailPane(c),
		help:     help.New(),
		snap:     snapshot{m: opts.Model},
		width:    80,
		height:   24,
		// At 20,000 pods a text filter takes about 5 ms on one core (BenchmarkTextFilter); the
		// sort/filter key target is 16 ms at 10,000 pods and 50 ms at 150,000.
		asyncPods: 20_000,
		debounce:  80 * time.Millisecond,
		soak:      model.NewSoak(opts.Stable),
	}
	d.panels = []panel{FocusPods: d.pods, FocusNodes: d.nodes, FocusRollouts: d.rollouts}
	if opts.Model.Multi() {
		for _, c := range opts.Model.Clusters() {
			d.contexts = append(d.contexts, c.Context)
		}
	}
	if opts.Replay != nil {
		d.header.replayOn, d.header.replay = true, opts.Replay.Status()
	}
	d.logs = newLogsPane(c, opts.Logs)
	d.panes = []pane{d.detail, d.logs}
	if noColor {
		d.help.Styles = help.Styles{}
	}
	d.refreshAll()
	return d
}

// Init starts the batch wait, the clock and the sync spinner.
func (d *dashboard) Init() tea.Cmd {
	if d.opts.Replay != nil {
		return tea.Batch(waitForFrame(d.opts.Replay.Frames()), tick())
	}
	return tea.Batch(waitForBatch(d.opts.Batches), tick(), d.header.startSpinner())
}

// Update routes msg. A panic in a component is turned into an error that ends the program, so
// Run can return it after bubbletea has restored the terminal.
func (d *dashboard) Update(msg tea.Msg) (m tea.Model, cmd tea.Cmd) {
	defer func() {
		if r := recover(); r != nil {
			d.err = fmt.Errorf("dashboard: panic: %v", r)
			m, cmd = d, tea.Quit
		}
	}()
	ok := d.frameOK
	d.frameOK, d.keepFrame = false, false
	cmd = d.update(msg)
	d.frameOK = ok && d.keepFrame
	return d, cmd
}

func (d *dashboard) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case batchMsg:
		d.m.ApplyAll(msg.batches, d.opts.Now())
		return tea.Batch(d.refreshAll(), waitForBatch(d.opts.Batches), d.header.startSpinner())
	case frameMsg:
		if msg.f.Model != nil {
			d.replaceModel(msg.f.Model)
		}
		for i := range msg.f.Steps {
			d.m.Apply(&msg.f.Steps[i].Batch, msg.f.Steps[i].At)
		}
		d.header.replay = d.opts.Replay.Status()
		return tea.Batch(d.refreshAll(), waitForFrame(d.opts.Replay.Frames()))
	case sourceClosedMsg:
		d.header.stopped = true
		return nil
	case tickMsg:
		return d.tick()
	case filterDueMsg:
		return d.text.due(d, msg.seq)
	case filterDoneMsg:
		return d.text.done(d, msg.res)
	case panicMsg:
		d.err = msg.err
		return tea.Quit
	case tea.WindowSizeMsg:
		d.setSize(msg.Width, msg.Height)
		return nil
	case showPodsMsg:
		return d.showPods(msg)
	case copyMsg:
		return d.copyTo(msg)
	case tea.KeyPressMsg:
		return d.handleKey(msg)
	case tea.MouseWheelMsg:
		return d.route(d.active(), msg)
	case tea.MouseClickMsg:
		return d.click(msg)
	}
	if ok, cmd := d.openPane(msg); ok {
		return cmd
	}
	return d.broadcast(msg)
}

// tick expires the evidence of the window and refreshes the views, unless nothing on screen would
// read differently: the model did not change and the clock has not reached the first age drawn
// (common.until). Ages then tick at the resolution they are shown in (seconds below ten minutes,
// then minutes, then hours), and an idle dashboard draws nothing. A replay's position and a
// recording's note move with the clock: those dashboards refresh on every tick.
func (d *dashboard) tick() tea.Cmd {
	now := d.opts.Now()
	d.m.Expire(now)
	if d.opts.Replay == nil && d.opts.Recording == nil && d.m.Version() == d.version &&
		(d.c.until.IsZero() || now.Before(d.c.until)) {
		d.keepFrame = true
		return tick()
	}
	if d.opts.Replay != nil {
		d.header.replay = d.opts.Replay.Status()
	}
	return tea.Batch(d.refreshAll(), tick())
}

// route hands msg to p and handles the navigation it answers within this Update, so the frame
// after a key already shows where it led.
func (d *dashboard) route(p panel, msg tea.Msg) tea.Cmd {
	nav, cmd := p.Update(msg)
	if nav == nil {
		return cmd
	}
	return tea.Batch(cmd, d.update(nav))
}

// broadcast hands a message no one asked for to every component: the header's spinner, the
// input's cursor, a pane's stream.
func (d *dashboard) broadcast(msg tea.Msg) tea.Cmd {
	cmds := make([]tea.Cmd, 0, 2+len(d.panels)+len(d.panes))
	cmds = append(cmds, d.header.Update(msg), d.queryBar.Update(msg))
	for _, p := range d.panels {
		cmds = append(cmds, d.route(p, msg))
	}
	for _, p := range d.panes {
		cmds = append(cmds, d.route(p, msg))
	}
	return tea.Batch(cmds...)
}

// active is what has the keyboard: the open pane, else the focused panel.
func (d *dashboard) active() panel {
	if d.showDetail {
		return d.pane
	}
	return d.panels[d.focus]
}

func (d *dashboard) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	k := d.c.keys
	d.copied = ""
	if d.filtering {
		if key.Matches(msg, k.ForceQuit) {
			return tea.Quit
		}
		cmd, changed := d.typing(msg, k)
		if changed {
			cmd = tea.Batch(cmd, d.refreshPods())
		}
		if !d.filtering {
			d.layout()
		}
		return cmd
	}
	switch {
	case key.Matches(msg, k.Quit, k.ForceQuit):
		return tea.Quit
	case key.Matches(msg, k.Help):
		d.help.ShowAll = !d.help.ShowAll
		d.layout()
		return nil
	}
	if cmd, ok := d.replayKey(msg); ok {
		return cmd
	}
	if key.Matches(msg, k.Logs) {
		if cmd, ok := d.openLogs(); ok {
			return cmd
		}
	}
	if d.showDetail {
		if key.Matches(msg, k.Back) {
			d.closePane()
			return nil
		}
		return d.route(d.pane, msg)
	}
	switch {
	case key.Matches(msg, k.Tab):
		d.focus = (d.focus + 1) % Focus(len(d.panels))
		d.layout()
		return nil
	case key.Matches(msg, k.Filter):
		cmd := d.startTyping()
		d.focus = FocusPods
		d.layout()
		return cmd
	case key.Matches(msg, k.Node):
		return d.toggleNode(msg)
	}
	if d.edit(msg, k) {
		return d.refreshPods()
	}
	return d.route(d.panels[d.focus], msg)
}

// toggleNode widens the pods again, or narrows them to the node the focused panel's selection
// names (showPodsMsg).
func (d *dashboard) toggleNode(msg tea.KeyPressMsg) tea.Cmd {
	if d.query.Node != "" {
		d.query.Node = ""
		cmd := d.refreshPods()
		d.layout()
		return cmd
	}
	p := d.panels[d.focus]
	nav, cmd := p.Update(msg)
	if nav == nil && p != panel(d.pods) {
		// A panel whose selection names no node (the rollouts) leaves n to the pod table.
		var pc tea.Cmd
		nav, pc = d.pods.Update(msg)
		cmd = tea.Batch(cmd, pc)
	}
	if nav == nil {
		nav = showPodsMsg{}
	}
	return tea.Batch(cmd, d.update(nav))
}

// openLogs opens the log pane for the pod in view: the detail's pod, or the pod table's selection.
func (d *dashboard) openLogs() (tea.Cmd, bool) {
	var key string
	switch {
	case d.showDetail && d.pane == pane(d.detail):
		key = d.detail.key
	case !d.showDetail && d.focus == FocusPods:
		if p := d.pods.selected(); p != nil {
			key = p.ID()
		}
	}
	msg, ok := logsFor(d.m.Pod(key))
	if !ok {
		return nil, false
	}
	return d.update(msg), true
}

// showPods brings the pod table back, narrowed as msg asks.
func (d *dashboard) showPods(msg showPodsMsg) tea.Cmd {
	if d.showDetail {
		d.under = nil
		d.closePane()
	}
	d.narrow(msg)
	d.focus = FocusPods
	cmd := d.refreshPods()
	d.layout()
	return cmd
}

// openPane opens the pane msg is for (openDetailMsg: the detail) and reports whether there was one.
func (d *dashboard) openPane(msg tea.Msg) (bool, tea.Cmd) {
	for _, p := range d.panes {
		ok, cmd := p.Open(msg)
		if !ok {
			continue
		}
		d.under = nil
		if d.showDetail && d.pane != p {
			d.under = d.pane
			d.pane.Close()
		}
		d.pane, d.showDetail = p, true
		d.layout()
		p.Refresh(&d.snap)
		return true, cmd
	}
	return false, nil
}

// closePane goes back from the pane to the one it was opened over, else to the panels.
func (d *dashboard) closePane() {
	d.pane.Close()
	if d.under != nil {
		d.pane, d.under = d.under, nil
		d.layout()
		d.pane.Refresh(&d.snap)
		return
	}
	d.showDetail = false
	d.layout()
}

// click hands a left click to the panel under it, in the panel's own lines. Only what has the
// keyboard takes clicks: the nodes panel under the pods does not.
func (d *dashboard) click(msg tea.MouseClickMsg) tea.Cmd {
	f := d.computeFrame()
	if m := f.main; msg.Y >= m.top && msg.Y < m.top+m.h {
		msg.Y -= m.top
		return d.route(m.p, msg)
	}
	return nil
}

// View draws the whole screen.
func (d *dashboard) View() tea.View {
	if !d.frameOK {
		d.drawn, d.frameOK = d.render(), true
	}
	v := tea.NewView(d.drawn)
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = "doomwatch"
	return v
}
