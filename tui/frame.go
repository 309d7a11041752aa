package tui

import (
	"math"
	"time"

	"github.com/charmbracelet/x/ansi"

	"doomwatch/model"
)

// FrameOptions pin everything one rendered frame depends on, so a frame is deterministic: the
// golden tests and `make screenshots` render through RenderFrame.
type FrameOptions struct {
	Width, Height int
	// Now is the clock for ages and the evidence window.
	Now time.Time
	// NoColor renders without colour and without any escape sequence at all.
	NoColor bool
	// Focus is the panel that has the keyboard.
	Focus Focus
	// Selected is the key of the selected pod (or the name of the selected node with FocusNodes).
	Selected string
	// Detail opens the detail pane of the Selected pod.
	Detail bool
	// Query is the pod view's sort and filters (Query.Text is the `/` filter).
	Query model.Query
	// Filtering shows the filter input as if `/` had been pressed.
	Filtering bool
	// FullHelp shows the full key help as `?` does.
	FullHelp bool
	// Context and Scope are shown in the header (Context: RenderFrame's one cluster's).
	Context, Scope string
	// Replay, when set, draws the dashboard as a replay at that playback state (the time bar
	// and the playback keys).
	Replay *PlayStatus
}

// RenderFrame renders one frame of the dashboard over m, with the colour profile pinned: true
// colour when coloured, none at all with NoColor. It reads no clock and does no I/O.
func RenderFrame(m *model.Model, o FrameOptions) string {
	return RenderFleetFrame(model.FleetOf(o.Context, m), o)
}

// RenderFleetFrame is RenderFrame over a fleet: several clusters in one dashboard.
func RenderFleetFrame(f *model.Fleet, o FrameOptions) string { return frameDashboard(f, o).frame(o) }

// frameDashboard is the dashboard RenderFrame draws, set up as o asks; a test may press keys on
// it before drawing it with frame.
func frameDashboard(m *model.Fleet, o FrameOptions) *dashboard {
	now := o.Now
	opts := Options{Model: m, Now: func() time.Time { return now }, Scope: o.Scope, NoColor: o.NoColor}
	if o.Replay != nil {
		opts.Replay = stillPlayer{*o.Replay}
	}
	d := newDashboard(opts, o.NoColor)
	d.query = o.Query
	d.asyncPods = math.MaxInt // a frame shows its query's rows, however many pods
	if o.Focus >= 0 && int(o.Focus) < len(d.panels) {
		d.focus = o.Focus
	}
	d.help.ShowAll = o.FullHelp
	d.width, d.height = o.Width, o.Height
	if o.Filtering {
		d.startTyping()
	}
	d.refreshAll()
	// The program draws the first page before anything can be selected, and the tables' widths
	// follow what they drew (table.seen): so does a frame.
	d.render()
	if o.Selected != "" {
		if o.Focus == FocusNodes {
			d.nodes.selectKey(o.Selected)
		} else {
			d.pods.selectKey(o.Selected)
		}
	}
	if o.Detail && o.Selected != "" {
		d.update(openDetailMsg{key: o.Selected})
	}
	return d
}

// frame draws d as RenderFrame does.
func (d *dashboard) frame(o FrameOptions) string {
	out := d.render()
	if o.NoColor {
		// The styles carry no colour with NoColor, but bold and reverse remain; a NoColor frame
		// is plain text.
		out = ansi.Strip(out)
	}
	return out
}

// stillPlayer is a playback that stays where it is: a frame of a replay.
type stillPlayer struct{ s PlayStatus }

func (p stillPlayer) Frames() <-chan Frame { return nil }
func (p stillPlayer) Status() PlayStatus   { return p.s }
func (p stillPlayer) Toggle()              {}
func (p stillPlayer) Pace(bool)            {}
func (p stillPlayer) Seek(time.Duration)   {}
func (p stillPlayer) Jump(bool)            {}
