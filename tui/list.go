package tui

// cursor is the selection and scroll position of a list of n rows shown height at a time. Every
// list (pods, nodes, rollouts, the detail pane) moves with the same keys through it.
type cursor struct {
	sel, offset, n, height int
}

func (c *cursor) setLen(n int) {
	c.n = n
	c.clamp()
}

func (c *cursor) setHeight(h int) {
	c.height = max(h, 1)
	c.clamp()
}

func (c *cursor) move(delta int) {
	c.sel += delta
	c.clamp()
}

func (c *cursor) top()    { c.sel = 0; c.clamp() }
func (c *cursor) bottom() { c.sel = c.n - 1; c.clamp() }

// clamp keeps the selection inside the rows and on screen.
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
	if c.sel < c.offset {
		c.offset = c.sel
	}
	if c.sel >= c.offset+c.height {
		c.offset = c.sel - c.height + 1
	}
	if maxOff := max(c.n-c.height, 0); c.offset > maxOff {
		c.offset = maxOff
	}
	if c.offset < 0 {
		c.offset = 0
	}
}

// visible returns the half-open range of rows on screen.
func (c *cursor) visible() (from, to int) {
	return c.offset, min(c.offset+c.height, c.n)
}

// scroll moves the view (and the selection with it) by delta rows, for the mouse wheel.
func (c *cursor) scroll(delta int) {
	c.offset += delta
	if maxOff := max(c.n-c.height, 0); c.offset > maxOff {
		c.offset = maxOff
	}
	if c.offset < 0 {
		c.offset = 0
	}
	if c.sel < c.offset {
		c.sel = c.offset
	}
	if c.sel >= c.offset+c.height {
		c.sel = c.offset + c.height - 1
	}
	c.clamp()
}
