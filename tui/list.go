package tui

import tea "charm.land/bubbletea/v2"

// list is the selection over the rows of a panel (pods, nodes, rollouts): the cursor, moved by
// the list keys, the wheel and clicks, and the key of the selected item, which the selection
// follows when an update re-sorts the rows. The panel keeps its rows; the list reads them
// through at.
type list[T any] struct {
	cur cursor
	// key is the selected item's key; "" when nothing is selected.
	key string
	// above is how many lines the panel draws above its rows (title and column header): a click
	// on the panel's line y is on the rows' line y-above.
	above int
	at    func(i int) *T
	keyOf func(*T) string
	// index, when set, finds a key's row faster than a scan (the pod view's O(log n) look-up);
	// nil means scanning the rows.
	index func(key string) int
	// room is the lines the panel has for its rows: its height less the lines above. When the
	// rows do not all fit in it, the last of them is the "+N more" line (more), so a list cut
	// short says so.
	room int
	// total, when set, is the height of all the rows, or more: what decides whether the list is
	// cut short. nil means measuring every row (cursor.lines).
	total func() int
}

func newList[T any](above int, at func(i int) *T, keyOf func(*T) string) list[T] {
	return list[T]{above: above, at: at, keyOf: keyOf}
}

// setLen tells the list its rows were replaced (n of them now) and keeps the selection on the
// chosen item while it is still shown.
func (l *list[T]) setLen(n int) {
	l.cur.setLen(n)
	l.fitRows()
	l.follow()
}

// setHeight sets the panel's height, the lines above the rows included.
func (l *list[T]) setHeight(h int) {
	l.room = h - l.above
	l.fitRows()
	l.follow()
}

// fitRows gives the rows the list's room, less the line of the "+N more" marker when they do
// not all fit in it. The rows' heights changed (a node's detail lines came or went) when it is
// called on its own.
func (l *list[T]) fitRows() {
	total := l.cur.n
	switch {
	case l.total != nil:
		total = l.total()
	case l.cur.rowLines != nil:
		total = 0
		for i := range l.cur.n {
			total += l.cur.lines(i)
		}
	}
	h := l.room
	if total > h {
		h--
	}
	l.cur.setHeight(h)
}

// more is the marker under a list cut short: how many rows are below the screen, else how many
// above it; "" when every row is on screen.
func (l *list[T]) more() string {
	from, to := l.cur.visible()
	switch {
	case to < l.cur.n:
		return "+" + thousands(l.cur.n-to) + " more"
	case from > 0:
		return "+" + thousands(from) + " more above"
	}
	return ""
}

// follow moves the cursor back onto key: nothing to do when the item did not move, else a
// look-up. Until the user chooses, the top row stays selected, whichever item it holds
// (cursor.chosen).
func (l *list[T]) follow() {
	if !l.cur.chosen {
		l.cur.sel = 0
		l.cur.clamp()
		l.remember()
		return
	}
	if l.key == "" || l.cur.n == 0 {
		l.remember()
		return
	}
	if s := l.cur.sel; s < l.cur.n && l.keyOf(l.at(s)) == l.key {
		l.cur.clamp()
		return
	}
	if i := l.find(l.key); i >= 0 {
		l.cur.sel = i
		l.cur.clamp()
		return
	}
	// The item left the rows: stay at the same place and select what is there now.
	l.cur.clamp()
	l.remember()
}

// find is the row holding key, or -1.
func (l *list[T]) find(key string) int {
	if l.index != nil {
		return l.index(key)
	}
	for i := range l.cur.n {
		if l.keyOf(l.at(i)) == key {
			return i
		}
	}
	return -1
}

func (l *list[T]) remember() {
	if it := l.selected(); it != nil {
		l.key = l.keyOf(it)
	} else {
		l.key = ""
	}
}

// selected is the item under the cursor, or nil.
func (l *list[T]) selected() *T {
	if l.cur.sel >= 0 && l.cur.sel < l.cur.n {
		return l.at(l.cur.sel)
	}
	return nil
}

// selectKey puts the cursor on the item with key, if it is shown, as if the user had chosen it.
func (l *list[T]) selectKey(key string) {
	l.cur.chosen = true
	l.key = key
	l.follow()
}

// update moves the selection for a list key, a turn of the wheel or a left click (on the panel's
// line msg.Y) and reports whether it did.
func (l *list[T]) update(msg tea.Msg, k KeyMap) bool {
	moved := false
	switch msg := msg.(type) {
	case tea.MouseClickMsg:
		if msg.Button != tea.MouseLeft {
			return false
		}
		moved = l.cur.clickLine(msg.Y - l.above)
	default:
		moved = steer(&l.cur, msg, k)
	}
	if moved {
		l.remember()
	}
	return moved
}
