package tui

import (
	"errors"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"doomwatch/contract"
	"doomwatch/model"
)

// Connection is what a dashboard started before its source (Options.Connected) runs with once
// the source has connected: the Options it did not have yet, or the error that ends it.
type Connection struct {
	Model     *model.Fleet
	Batches   <-chan []contract.Batch
	Now       func() time.Time
	Scope     string
	Logs      LogSource
	Recording func() (note string, failing bool)
	// Err ends the dashboard: Run returns it as it is.
	Err error
}

// errNoSource is the end of a dashboard whose source stopped before it connected.
var errNoSource = errors.New("dashboard: the source stopped before it connected")

// connectedMsg carries the Connection the dashboard waited for on screen.
type connectedMsg struct{ c Connection }

// waitForConnection waits for the source to connect. It captures only the channel, never the
// dashboard (waitForBatch); a channel closed without a Connection is one without a source.
func waitForConnection(ch <-chan Connection) tea.Cmd {
	return func() tea.Msg {
		c, ok := <-ch
		if !ok {
			c.Err = errNoSource
		}
		return connectedMsg{c: c}
	}
}

// connecting is the screen while the source connects: it says where to at once, rather than a
// blank terminal for as long as --request-timeout, and becomes the dashboard once connected. Only
// quitting works meanwhile.
type connecting struct {
	opts    Options
	noColor bool
	st      *styles
	keys    KeyMap
	spin    spinner.Model
	width   int
	height  int
	// d is the dashboard, once connected; err is the connection's error, when it failed.
	d   *dashboard
	err error
	// onPanic is handed to the dashboard (set by Run).
	onPanic func(error)
}

func newConnecting(opts Options, noColor bool) *connecting {
	return &connecting{opts: opts, noColor: noColor, st: newStyles(noColor), keys: DefaultKeyMap(),
		spin: spinner.New(spinner.WithSpinner(spinner.Dot)), width: 80, height: 24}
}

// Init waits for the connection and starts the spinner.
func (c *connecting) Init() tea.Cmd {
	return tea.Batch(waitForConnection(c.opts.Connected), c.spin.Tick)
}

// Update hands over to the dashboard once connected, with the size the terminal has; until then
// it quits on q and ctrl+c and turns the spinner.
func (c *connecting) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case connectedMsg:
		if msg.c.Err != nil {
			c.err = msg.c.Err
			return c, tea.Quit
		}
		opts := c.opts
		opts.Model, opts.Batches, opts.Now, opts.Scope = msg.c.Model, msg.c.Batches, msg.c.Now, msg.c.Scope
		opts.Logs, opts.Recording = msg.c.Logs, msg.c.Recording
		c.d = newDashboard(opts, c.noColor)
		c.d.onPanic = c.onPanic
		c.d.setSize(c.width, c.height)
		return c.d, c.d.Init()
	case tea.WindowSizeMsg:
		c.width, c.height = msg.Width, msg.Height
	case tea.KeyPressMsg:
		if key.Matches(msg, c.keys.Quit, c.keys.ForceQuit) {
			return c, tea.Quit
		}
	case spinner.TickMsg:
		var cmd tea.Cmd
		c.spin, cmd = c.spin.Update(msg)
		return c, cmd
	}
	return c, nil
}

// View draws the screen as the dashboard's: on the alternate screen, at most width cells a line.
func (c *connecting) View() tea.View {
	v := tea.NewView(c.render())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = "doomwatch"
	return v
}

// render is the title, where the dashboard connects, wrapped to the width, and how to quit on the
// last line, in as many of them as the terminal has.
func (c *connecting) render() string {
	w, h := max(c.width, 1), max(c.height, 1)
	lines := []string{c.st.title.Render("doomwatch"), ""}
	text := strings.TrimSpace(c.spin.View()) + " " + c.opts.Connecting
	for l := range strings.SplitSeq(ansi.Wrap(text, max(w-2, 1), ""), "\n") {
		lines = append(lines, "  "+l)
	}
	if h < len(lines) {
		// The title and the blank under it go first: where it connects is the point.
		lines = lines[min(2, len(lines)-h):]
	}
	for len(lines) < h-1 {
		lines = append(lines, "")
	}
	if len(lines) < h {
		lines = append(lines, c.st.dim.Render("q quit"))
	}
	out := lines[:min(len(lines), h)]
	for i, l := range out {
		out[i] = clip(l, w)
	}
	return strings.Join(out, "\n")
}

// failed is the error the program ended with: the connection's, or the dashboard's once it runs.
func (c *connecting) failed() error {
	if c.d != nil {
		return c.d.err
	}
	return c.err
}
