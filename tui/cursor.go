package tui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// cursor is the selection and scroll position of a list of n rows shown height lines at a time.
// Every list (pods, nodes, rollouts, the detail pane) moves with the same keys through it (steer).
type cursor struct {
	sel, offset, n, height int
	// rowLines, when set, is how many screen lines row i takes (a suspect node has its "why"
	// under it). View, the visibility of the selection and mouse clicks all measure rows with
	// it, so they agree on what is where. nil means one line per row.
	rowLines func(i int) int
	// scrollOnly makes the keys move the window instead of a selection (the detail pane has
	// nothing to select); sel then stays on the first visible row.
	scrollOnly bool
	// chosen is set once the user moves the selection (keys, wheel or click). Until then a list
	// keeps its top row selected as updates re-sort it, so a dashboard opened mid-incident shows
	// the worst pod, the suspect node and the doomed rollout first; afterwards the selection
	// follows the chosen item by key.
	chosen bool
}

func (c *cursor) setLen(n int) {
	c.n = n
	c.clamp()
}

func (c *cursor) setHeight(h int) {
	c.height = max(h, 1)
	c.clamp()
}

// move moves the selection by delta rows, or the window in scroll-only mode.
func (c *cursor) move(delta int) {
	if c.scrollOnly {
		c.scroll(delta)
		return
	}
	c.sel += delta
	c.clamp()
}

func (c *cursor) top()    { c.move(-c.n) }
func (c *cursor) bottom() { c.move(c.n) }

// lines is the screen height of row i.
func (c *cursor) lines(i int) int {
	if c.rowLines == nil {
		return 1
	}
	return max(c.rowLines(i), 1)
}

// firstFitting is the smallest offset from which rows offset..last all fit on screen (last
// itself when it alone is taller than the screen).
func (c *cursor) firstFitting(last int) int {
	if c.rowLines == nil {
		return max(last-c.height+1, 0)
	}
	off, used := last, c.lines(last)
	for off > 0 && used+c.lines(off-1) <= c.height {
		off--
		used += c.lines(off)
	}
	return off
}

// lastFull is the last row shown whole when the window starts at offset (at least offset).
func (c *cursor) lastFull(offset int) int {
	if c.rowLines == nil {
		return offset + c.height - 1
	}
	i, used := offset, 0
	for i < c.n && used+c.lines(i) <= c.height {
		used += c.lines(i)
		i++
	}
	return max(i-1, offset)
}

// clamp keeps the selection inside the rows and wholly on screen, and the window from scrolling
// past the last row.
func (c *cursor) clamp() {
	if c.height < 1 {
		c.height = 1
	}
	if c.sel >= c.n {
		c.sel = c.n - 1
	}
	if c.sel < 0 {
		c.sel = 0
	}
	if c.scrollOnly {
		c.sel = c.offset
	}
	if c.sel < c.offset {
		c.offset = c.sel
	}
	if c.n > 0 {
		c.offset = max(c.offset, c.firstFitting(c.sel))
		c.offset = min(c.offset, c.firstFitting(c.n-1))
	}
	if c.offset < 0 || c.n == 0 {
		c.offset = 0
	}
	if c.scrollOnly {
		c.sel = c.offset
	}
}

// visible returns the half-open range of rows with at least their first line on screen.
func (c *cursor) visible() (from, to int) {
	if c.rowLines == nil {
		return c.offset, min(c.offset+c.height, c.n)
	}
	to = c.offset
	for used := 0; to < c.n && used < c.height; to++ {
		used += c.lines(to)
	}
	return c.offset, to
}

// rowAt is the row drawn on the line'th line of the list (0 is the first row's line), if any.
func (c *cursor) rowAt(line int) (int, bool) {
	if line < 0 || line >= c.height {
		return 0, false
	}
	from, to := c.visible()
	for i := from; i < to; i++ {
		line -= c.lines(i)
		if line < 0 {
			return i, true
		}
	}
	return 0, false
}

// clickLine selects the row drawn on the line'th line and reports whether there was one.
func (c *cursor) clickLine(line int) bool {
	i, ok := c.rowAt(line)
	if ok {
		c.sel = i
		c.chosen = true
		c.clamp()
	}
	return ok
}

// scroll moves the view (and the selection with it) by delta rows, for the mouse wheel.
func (c *cursor) scroll(delta int) {
	c.chosen = true
	c.offset += delta
	if c.n > 0 {
		c.offset = min(c.offset, c.firstFitting(c.n-1))
	}
	if c.offset < 0 || c.n == 0 {
		c.offset = 0
	}
	if c.sel < c.offset {
		c.sel = c.offset
	}
	if last := c.lastFull(c.offset); c.sel > last {
		c.sel = last
	}
	c.clamp()
}

// navigate moves c for the list keys and reports whether msg was one of them.
func navigate(c *cursor, msg tea.KeyPressMsg, k KeyMap) bool {
	switch {
	case key.Matches(msg, k.Up):
		c.move(-1)
	case key.Matches(msg, k.Down):
		c.move(1)
	case key.Matches(msg, k.PageUp):
		c.move(-c.height)
	case key.Matches(msg, k.PageDown):
		c.move(c.height)
	case key.Matches(msg, k.Top):
		c.top()
	case key.Matches(msg, k.Bottom):
		c.bottom()
	default:
		return false
	}
	c.chosen = true
	return true
}

// wheelRows is how far one turn of the mouse wheel scrolls.
const wheelRows = 3

// steer moves c for a list key or a turn of the mouse wheel and reports whether msg was one.
func steer(c *cursor, msg tea.Msg, k KeyMap) bool {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		return navigate(c, msg, k)
	case tea.MouseWheelMsg:
		switch msg.Button {
		case tea.MouseWheelUp:
			c.scroll(-wheelRows)
		case tea.MouseWheelDown:
			c.scroll(wheelRows)
		default:
			return false
		}
		return true
	}
	return false
}
