package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"k8s.io/apimachinery/pkg/util/duration"

	"doomwatch/contract"
	"doomwatch/model"
)

// Player is a recording played back (doomwatch replay): the dashboard shows its time bar, hands
// it the replay keys, and takes its frames instead of a live source's batches. Its methods are
// called on the UI goroutine and must not block.
type Player interface {
	// Frames delivers the playback in order: the batches as the position passes them, and after
	// a seek the model at the new position, which the dashboard shows from then on. One channel
	// keeps the two in order: a batch read before a seek is never applied to the model after it.
	Frames() <-chan Frame
	// Status is the position, the span and the pace, for the time bar.
	Status() PlayStatus
	// Toggle pauses or plays; Pace speeds up or slows down; Seek moves the position by d (back
	// when negative); Jump goes to the next (or previous) verdict change or suspect-node call.
	Toggle()
	Pace(faster bool)
	Seek(d time.Duration)
	Jump(next bool)
}

// Frame is one step of a playback: the state at a new position (Model, when non-nil, shown from
// then on), then the batches played, each applied at its recorded time, with one refresh for all.
// A short seek forward is the batches up to the new position in one frame: the model that played
// them is the one a live dashboard had.
type Frame struct {
	Model *model.Fleet
	Steps []Step
}

// Step is a recorded batch and the time the source delivered it.
type Step struct {
	At    time.Time
	Batch contract.Batch
}

// PlayStatus is a playback's state. Its text is shown as it is: the player sanitises it (the
// contexts as the model does, the note where it is made).
type PlayStatus struct {
	// Of names what was recorded: the context or contexts ("demo" for the demo).
	Of string
	// Start and End are the recording's span, At the position within it.
	Start, End, At time.Time
	Playing        bool
	Speed          float64
	// Note says what the last jump found ("pod shop/web-1 doomed"), or why it found nothing.
	Note string
}

// frameMsg carries a playback frame into Update.
type frameMsg struct{ f Frame }

// waitForFrame waits for the next frame of a playback, as waitForBatch does for a batch.
func waitForFrame(ch <-chan Frame) tea.Cmd {
	return func() tea.Msg {
		f, ok := <-ch
		if !ok {
			return sourceClosedMsg{}
		}
		return frameMsg{f: f}
	}
}

// replaceModel shows m from now on, once the panels refresh: a seek of a playback. A text filter
// over the old model's rows is built again over the new one's, as a query is, off the UI
// goroutine when it is large; meanwhile the table shows the query without its text.
func (d *dashboard) replaceModel(m *model.Fleet) {
	d.m, d.snap.m = m, m
	d.text.drop()
	d.shown.Text = ""
}

// replayKey handles the playback keys; ok is false for any other key.
func (d *dashboard) replayKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	p, k := d.opts.Replay, d.c.keys
	if p == nil {
		return nil, false
	}
	switch {
	case key.Matches(msg, k.Pause):
		p.Toggle()
	case key.Matches(msg, k.Faster):
		p.Pace(true)
	case key.Matches(msg, k.Slower):
		p.Pace(false)
	case key.Matches(msg, k.SeekBack):
		p.Seek(-seekStep)
	case key.Matches(msg, k.SeekForward):
		p.Seek(seekStep)
	case key.Matches(msg, k.PrevChange):
		p.Jump(false)
	case key.Matches(msg, k.NextChange):
		p.Jump(true)
	default:
		return nil, false
	}
	d.header.replay = p.Status()
	return nil, true
}

// seekStep is how far ← and → move a playback.
const seekStep = 10 * time.Second

// replayLine is the time bar: what is replayed, the position in the span, the pace, a bar, and
// the player's note. The bar is never given up for the rest: where all of it does not fit (at 80
// columns), the date gives way first (the time of day stays), then the time, then the note is
// clipped (or left out when too little of it would show), then the name of what is replayed.
func (h *header) replayLine() string {
	st, s := h.c.st, h.replay
	state := "▶ playing"
	if !s.Playing {
		state = "‖ paused" // not U+23F8: common terminal fonts (DejaVu Sans Mono) lack it
	}
	if !s.End.After(s.At) && !s.Playing {
		state = "■ at the end"
	}
	span := s.End.Sub(s.Start)
	pos := s.At.Sub(s.Start)
	at := s.At.UTC()
	of, note := s.Of, s.Note
	rest := "  " + st.dim.Render(fmt.Sprintf("+%s of %s", shortDuration(pos), shortDuration(span))) +
		"  " + state + fmt.Sprintf(" ×%g", s.Speed)
	line := func(of, stamp string) string {
		if stamp != "" {
			stamp = "  " + stamp
		}
		return st.warn.Render("replay") + " of " + of + stamp + rest
	}
	noteW := 0
	if note != "" {
		noteW = 2 + width(note)
	}
	var head string
	for _, stamp := range []string{at.Format(time.RFC3339), at.Format("15:04:05Z"), ""} {
		head = line(of, stamp)
		if width(head)+barFrame+minBar+noteW <= h.width {
			break
		}
	}
	if over := width(head) + barFrame + minBar - h.width; over > 0 {
		if width(of)-over < minOf {
			return clip(head, h.width) // too narrow for a bar
		}
		of = clip(of, width(of)-over)
		head = line(of, "")
	}
	barW := h.width - width(head) - barFrame
	tail := ""
	if room := barW - minBar - 2; note != "" && room >= min(minNote, width(note)) {
		tail = "  " + st.dim.Render(clip(note, room))
		barW -= width(tail)
	}
	filled := barW
	if span > 0 {
		filled = int(int64(barW) * int64(pos) / int64(span))
	}
	filled = min(max(filled, 0), barW)
	return clip(head+"  ["+strings.Repeat("█", filled)+strings.Repeat("░", barW-filled)+"]"+tail, h.width)
}

// The time bar's least widths: of the bar (with barFrame around it), of a note clipped to fit
// beside it (shorter than "pod shop/pa…" it says nothing), and of the name of what is replayed.
const (
	minBar, barFrame = 10, 4
	minNote          = 12
	minOf            = 8
)

// shortDuration is d as kubectl's ages are ("90s", "5m", "3h10m"), 0s for none.
func shortDuration(d time.Duration) string {
	if d <= 0 {
		return "0s"
	}
	return duration.HumanDuration(d)
}
