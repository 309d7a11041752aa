package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"doomwatch/model"
)

// Focus names the panel that has the keyboard.
type Focus int

// The panels tab cycles through.
const (
	FocusPods Focus = iota
	FocusNodes
	FocusRollouts
)

// Below this size the dashboard shows "terminal too small" instead of a broken layout.
const (
	minWidth  = 60
	minHeight = 15
)

// dashboard is the root model. It owns the model.Model, applies batches to it and routes every
// other message to the component that decides.
type dashboard struct {
	opts Options
	m    *model.Model
	c    *common

	header   *header
	pods     *podTable
	nodes    *nodesPanel
	rollouts *rolloutList
	detail   *detailPane
	help     help.Model
	filter   textinput.Model

	width, height int
	focus         Focus
	showDetail    bool
	filtering     bool
	query         model.Query
	// shown is the query whose rows the pod table shows: query itself, or the previous one while
	// query's text filter runs off the UI goroutine (textFilter).
	shown model.Query
	text  textFilter
	// asyncPods is the number of rows from which a text filter is matched off the UI goroutine
	// (model.ViewCost); below it the match takes a few milliseconds and is applied at once.
	asyncPods int
	// debounce is how long typing must pause before a text filter runs.
	debounce    time.Duration
	nodeList    []model.Node
	rolloutList []model.Rollout
	err         error
	// onPanic reports a panic caught while drawing (set by Run).
	onPanic func(error)
}

func newDashboard(opts Options, noColor bool) *dashboard {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	c := &common{st: newStyles(noColor), keys: DefaultKeyMap(), now: opts.Now()}
	d := &dashboard{
		opts:     opts,
		m:        opts.Model,
		c:        c,
		header:   newHeader(c, opts.Context, opts.Scope),
		pods:     newPodTable(c),
		nodes:    newNodesPanel(c, opts.Model.Config().Window),
		rollouts: newRolloutList(c),
		detail:   newDetailPane(c),
		help:     help.New(),
		filter:   textinput.New(),
		width:    80,
		height:   24,
		// At 20,000 pods a text filter takes about 5 ms on one core (BenchmarkTextFilter); the
		// sort/filter key target is 16 ms at 10,000 pods and 50 ms at 150,000.
		asyncPods: 20_000,
		debounce:  80 * time.Millisecond,
	}
	d.filter.Prompt = "/"
	d.filter.Placeholder = "namespace, name, node or reason"
	if noColor {
		d.help.Styles = help.Styles{}
		var fs textinput.Styles
		fs.Cursor.Blink = false
		d.filter.SetStyles(fs)
	}
	d.refreshAll()
	return d
}

// Init starts the batch wait, the clock and the sync spinner.
func (d *dashboard) Init() tea.Cmd {
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
	return d, d.update(msg)
}

func (d *dashboard) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case batchMsg:
		d.m.Apply(&msg.batch, d.opts.Now())
		return tea.Batch(d.refreshAll(), waitForBatch(d.opts.Batches), d.header.startSpinner())
	case sourceClosedMsg:
		d.header.stopped = true
		return nil
	case tickMsg:
		now := d.opts.Now()
		d.m.Expire(now)
		return tea.Batch(d.refreshAll(), tick())
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
	case tea.KeyPressMsg:
		return d.handleKey(msg)
	case tea.MouseWheelMsg:
		d.handleWheel(msg)
		return nil
	case tea.MouseClickMsg:
		d.handleClick(msg)
		return nil
	}
	if d.filtering {
		var cmd tea.Cmd
		d.filter, cmd = d.filter.Update(msg)
		return tea.Batch(cmd, d.header.Update(msg))
	}
	return d.header.Update(msg)
}

// refreshAll re-reads the model's views after it changed (batch, tick) or the clock moved. The
// model hands back the same nodes and rollouts while they are unchanged, and then nothing is
// remade from them.
func (d *dashboard) refreshAll() tea.Cmd {
	d.c.now = d.opts.Now()
	h := d.m.Health()
	d.header.health = h
	d.header.counts = d.m.Counts()
	if rs := d.m.Rollouts(); !sameSlice(rs, d.rolloutList) || len(rs) == 0 {
		d.rolloutList = rs
		d.header.setRollouts(rs)
		d.rollouts.setRollouts(rs)
	}
	forbidden := slices.Contains(h.Forbidden, model.KindNode)
	if ns := d.m.Nodes(d.c.now); !sameSlice(ns, d.nodeList) || len(ns) == 0 || forbidden != d.nodes.forbidden {
		d.nodeList = ns
		d.nodes.forbidden = forbidden
		d.nodes.setNodes(d.nodeList)
		d.header.suspect = nil
		for i := range d.nodeList {
			if d.nodeList[i].Suspect {
				d.header.suspect = &d.nodeList[i]
				break
			}
		}
	}
	cmd := d.refreshPods()
	if d.showDetail {
		d.rebuildDetail()
	}
	d.layout()
	return cmd
}

// sameSlice reports whether a and b are the same slice: the model returns the very same one while
// a view is unchanged.
func sameSlice[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// refreshPods re-reads the pod view of the query. The model keeps the view up to date, so this is
// a look-up, except for a query whose view it does not keep yet: a verdict, node or owner filter
// is built here in one pass over the pods; a text filter over many pods is built off the UI
// goroutine (textFilter), and the rows of the previous query stay until it is done.
func (d *dashboard) refreshPods() tea.Cmd {
	var cmd tea.Cmd
	if d.query != d.shown {
		if d.offThread(d.query) {
			cmd = d.text.want(d, d.query)
		} else {
			d.shown = d.query
			d.text.drop()
		}
	}
	d.pods.total = d.header.counts.Pods
	d.pods.setRows(d.m.PodView(d.shown))
	d.pods.status = d.queryStatus()
	return cmd
}

// offThread reports whether q's view is built off the UI goroutine.
func (d *dashboard) offThread(q model.Query) bool {
	return strings.TrimSpace(q.Text) != "" && d.m.ViewCost(q) >= d.asyncPods
}

func (d *dashboard) rebuildDetail() {
	p := d.m.Pod(d.detail.key)
	var node *model.Node
	if p != nil {
		// A node registered again under its old name is listed twice: the pod is on the one
		// registered now (Known), not the old one whose failures are still in the window.
		for i := range d.nodeList {
			if n := &d.nodeList[i]; n.Name == p.Node && (node == nil || !node.Known && n.Known) {
				node = n
			}
		}
	}
	d.detail.rebuild(p, node)
}

var sortNames = [...]string{"severity", "name", "node", "age"}
var filterNames = [...]string{"all", "problems", "doomed", "transient"}

func (d *dashboard) queryStatus() string {
	q := d.query
	s := fmt.Sprintf("%s of %s · sort: %s · verdict: %s", thousands(d.pods.rows.Len()),
		thousands(d.pods.total), sortNames[q.Sort%4], filterNames[q.Filter%4])
	if q.Owner != "" {
		s += " · owner: " + q.Owner
	}
	if q.Node != "" {
		s += " · node: " + q.Node
	}
	if q.Text != "" && !d.filtering {
		s += " · filter: " + model.Sanitize(q.Text)
	}
	if q != d.shown {
		s += " · filtering…"
	}
	return s
}

func (d *dashboard) setSize(w, h int) {
	d.width, d.height = w, h
	d.layout()
	if d.showDetail {
		d.rebuildDetail()
	}
}

// frame is the vertical layout: header, body and footer heights and where the body's parts start.
type frame struct {
	headerH, bodyTop, bodyH, footerH int
	podsH, nodesTop, nodesH          int
}

// computeFrame lays the screen out. Mouse handling uses the same function as View, so a click
// lands on the row that was drawn there.
func (d *dashboard) computeFrame() frame {
	var f frame
	f.headerH = d.header.lines()
	f.footerH = 1
	if d.help.ShowAll {
		f.footerH = lipglossHeight(d.help.View(d.helpKeys()))
	}
	if d.filtering {
		f.footerH++
	}
	f.bodyTop = f.headerH + 1 // a blank separator line
	f.bodyH = max(d.height-f.bodyTop-f.footerH, 3)
	f.podsH = f.bodyH
	// With room to spare the pods view also shows the nodes panel underneath: the suspect node
	// and the failing pods are then on one screen.
	if d.focus == FocusPods && !d.showDetail && f.bodyH >= 20 && len(d.nodeList) > 0 {
		f.nodesH = min(3+d.nodes.contentLines(), f.bodyH/3)
		f.podsH = f.bodyH - f.nodesH - 1
		f.nodesTop = f.bodyTop + f.podsH + 1
	}
	return f
}

// helpKeys is the key map the footer shows: the keys that work in the current mode, and on the
// one-line footer only those that fit the width (see fitShort).
func (d *dashboard) helpKeys() help.KeyMap {
	var km rankedHelp = d.c.keys.forFocus(d.focus)
	switch {
	case d.filtering:
		km = d.c.keys.filterHelp()
	case d.showDetail:
		km = d.c.keys.detailHelp()
	}
	if d.help.ShowAll {
		return km
	}
	return modeHelp{short: fitShort(km.shortRanked(), d.width, ansi.StringWidth(d.help.ShortSeparator))}
}

func lipglossHeight(s string) int { return strings.Count(s, "\n") + 1 }

// layout hands each component its size.
func (d *dashboard) layout() {
	d.nodes.setWidth(d.width)
	f := d.computeFrame()
	d.header.SetSize(d.width)
	d.help.SetWidth(d.width)
	d.filter.SetWidth(max(d.width-4, 10))
	d.detail.SetSize(d.width, f.bodyH)
	switch d.focus {
	case FocusPods:
		d.pods.SetSize(d.width, f.podsH)
		if f.nodesH > 0 {
			d.nodes.SetSize(d.width, f.nodesH)
		}
	case FocusNodes:
		d.nodes.SetSize(d.width, f.bodyH)
	case FocusRollouts:
		d.rollouts.SetSize(d.width, f.bodyH)
	}
}

func (d *dashboard) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	k := d.c.keys
	if d.filtering {
		switch {
		case key.Matches(msg, k.ForceQuit):
			return tea.Quit
		case key.Matches(msg, k.Clear):
			d.filtering = false
			d.filter.Blur()
			d.filter.SetValue("")
			d.query.Text = ""
			cmd := d.refreshPods()
			d.layout()
			return cmd
		case key.Matches(msg, k.Accept):
			d.filtering = false
			d.filter.Blur()
			cmd := d.refreshPods()
			d.layout()
			return cmd
		}
		var cmd tea.Cmd
		d.filter, cmd = d.filter.Update(msg)
		if v := d.filter.Value(); v != d.query.Text {
			d.query.Text = v
			cmd = tea.Batch(cmd, d.refreshPods())
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
	if d.showDetail {
		if key.Matches(msg, k.Back) {
			d.showDetail = false
			d.layout()
			return nil
		}
		return d.detail.Update(msg)
	}
	switch {
	case key.Matches(msg, k.Tab):
		d.focus = (d.focus + 1) % 3
		d.layout()
	case key.Matches(msg, k.Enter):
		return d.enter()
	case key.Matches(msg, k.Back):
		switch {
		case d.query.Text != "":
			d.query.Text = ""
			d.filter.SetValue("")
		case d.query.Owner != "":
			d.query.Owner = ""
		case d.query.Node != "":
			d.query.Node = ""
		case d.query.Filter != model.All:
			d.query.Filter = model.All
		}
		return d.refreshPods()
	case key.Matches(msg, k.Filter):
		d.filtering = true
		d.filter.SetValue(d.query.Text)
		d.filter.CursorEnd()
		d.focus = FocusPods
		d.layout()
		return d.filter.Focus()
	case key.Matches(msg, k.Verdict):
		d.query.Filter = (d.query.Filter + 1) % 4
		return d.refreshPods()
	case key.Matches(msg, k.Sort):
		d.query.Sort = (d.query.Sort + 1) % 4
		return d.refreshPods()
	case key.Matches(msg, k.Node):
		return d.toggleNode()
	default:
		switch d.focus {
		case FocusPods:
			return d.pods.Update(msg)
		case FocusNodes:
			return d.nodes.Update(msg)
		case FocusRollouts:
			return d.rollouts.Update(msg)
		}
	}
	return nil
}

// enter opens the selected pod's detail; on a node it shows that node's pods; on a rollout, the
// rollout's pods.
func (d *dashboard) enter() tea.Cmd {
	var cmd tea.Cmd
	switch d.focus {
	case FocusPods:
		if p := d.pods.selected(); p != nil {
			d.openDetail(p.Key)
		}
	case FocusNodes:
		if n := d.nodes.selected(); n != nil {
			d.query.Node = n.Name
			d.focus = FocusPods
			cmd = d.refreshPods()
			d.layout()
		}
	case FocusRollouts:
		// Exactly the rollout's pods, by owner: a text filter on its name would also catch
		// "checkout-db" for "checkout". The text and node filters go, as either could hide them.
		if r := d.rollouts.selected(); r != nil {
			d.query.Owner = r.Workload()
			d.query.Text, d.query.Node = "", ""
			d.filter.SetValue("")
			d.focus = FocusPods
			cmd = d.refreshPods()
			d.layout()
		}
	}
	return cmd
}

func (d *dashboard) openDetail(key string) {
	d.showDetail = true
	d.detail.open(key)
	d.layout()
	d.rebuildDetail()
}

// toggleNode narrows the pods to the selected pod's (or node's) node, or widens them again.
func (d *dashboard) toggleNode() tea.Cmd {
	if d.query.Node != "" {
		d.query.Node = ""
	} else {
		switch d.focus {
		case FocusNodes:
			if n := d.nodes.selected(); n != nil {
				d.query.Node = n.Name
			}
		default:
			if p := d.pods.selected(); p != nil && p.Node != "" {
				d.query.Node = p.Node
			}
		}
		d.focus = FocusPods
	}
	cmd := d.refreshPods()
	d.layout()
	return cmd
}

func (d *dashboard) handleWheel(msg tea.MouseWheelMsg) {
	delta := 0
	switch msg.Button {
	case tea.MouseWheelUp:
		delta = -3
	case tea.MouseWheelDown:
		delta = 3
	default:
		return
	}
	switch {
	case d.showDetail:
		d.detail.scroll(delta)
	case d.focus == FocusPods:
		d.pods.scroll(delta)
	case d.focus == FocusNodes:
		d.nodes.scroll(delta)
	case d.focus == FocusRollouts:
		d.rollouts.scroll(delta)
	}
}

func (d *dashboard) handleClick(msg tea.MouseClickMsg) {
	if msg.Button != tea.MouseLeft || d.showDetail {
		return
	}
	f := d.computeFrame()
	row := msg.Y - f.bodyTop - 2 // title and column header
	switch d.focus {
	case FocusPods:
		if msg.Y < f.bodyTop+f.podsH {
			d.pods.clickRow(row)
		}
	case FocusNodes:
		d.nodes.click(row)
	case FocusRollouts:
		d.rollouts.click(row)
	}
}

// View draws the whole screen.
func (d *dashboard) View() tea.View {
	v := tea.NewView(d.render())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = "doomwatch"
	return v
}

// render draws the screen as a string of exactly height lines, each at most width cells.
func (d *dashboard) render() (out string) {
	defer func() {
		if r := recover(); r != nil {
			d.err = fmt.Errorf("dashboard: panic while drawing: %v", r)
			out = "doomwatch: internal error, quitting"
			if d.onPanic != nil {
				d.onPanic(d.err)
			}
		}
	}()
	if d.width < minWidth || d.height < minHeight {
		return clip(fmt.Sprintf("terminal too small (%d×%d): doomwatch needs at least %d×%d",
			d.width, d.height, minWidth, minHeight), max(d.width, 1))
	}
	f := d.computeFrame()
	lines := make([]string, 0, d.height)
	appendBlock := func(s string, h int) {
		n := 0
		for l := range strings.SplitSeq(s, "\n") {
			if n == h {
				break
			}
			lines = append(lines, clip(l, d.width))
			n++
		}
		for ; n < h; n++ {
			lines = append(lines, "")
		}
	}
	appendBlock(d.header.View(), f.headerH)
	lines = append(lines, "")
	switch {
	case d.showDetail:
		appendBlock(d.detail.View(), f.bodyH)
	case d.focus == FocusPods:
		appendBlock(d.pods.View(true), f.podsH)
		if f.nodesH > 0 {
			lines = append(lines, "")
			appendBlock(d.nodes.View(false), f.nodesH)
		}
	case d.focus == FocusNodes:
		appendBlock(d.nodes.View(true), f.bodyH)
	case d.focus == FocusRollouts:
		appendBlock(d.rollouts.View(true), f.bodyH)
	}
	if d.filtering {
		appendBlock(d.filter.View(), 1)
	}
	appendBlock(d.help.View(d.helpKeys()), f.footerH-btoi(d.filtering))
	return strings.Join(lines[:min(len(lines), d.height)], "\n")
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
