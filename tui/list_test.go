package tui

import (
	"slices"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// row is a list item: its key and how many screen lines it takes.
type row struct {
	key   string
	lines int
}

// testList is a list over rows, with one line of title above them, and a count of the look-ups
// by key it made through index.
type testList struct {
	list[row]
	rows    []row
	lookups int
}

func newTestList(keys ...string) *testList {
	l := &testList{}
	l.list = newList(1, func(i int) *row { return &l.rows[i] }, func(r *row) string { return r.key })
	l.index = func(key string) int {
		l.lookups++
		return slices.IndexFunc(l.rows, func(r row) bool { return r.key == key })
	}
	l.set(keys...)
	return l
}

// set replaces the rows, one line each.
func (l *testList) set(keys ...string) {
	l.rows = l.rows[:0]
	for _, k := range keys {
		l.rows = append(l.rows, row{key: k, lines: 1})
	}
	l.setLen(len(l.rows))
}

func (l *testList) selKey(t *testing.T) string {
	t.Helper()
	if r := l.selected(); r != nil {
		return r.key
	}
	return ""
}

var (
	keyDown  = tea.KeyPressMsg{Code: 'j', Text: "j"}
	keyEnd   = tea.KeyPressMsg{Code: 'G', Text: "G"}
	wheelDn  = tea.MouseWheelMsg{Button: tea.MouseWheelDown}
	wheelUp  = tea.MouseWheelMsg{Button: tea.MouseWheelUp}
	wheelRgt = tea.MouseWheelMsg{Button: tea.MouseWheelRight}
)

// TestListKeepsTheTopRowUntilChosen: before the user moves, an update that re-sorts the rows
// selects the new top row (the worst pod, the suspect node); afterwards the chosen item, wherever
// it went, with one look-up, and none when it did not move.
func TestListKeepsTheTopRowUntilChosen(t *testing.T) {
	l := newTestList("a", "b", "c", "d")
	l.setHeight(1 + 3)
	l.set("c", "a", "b", "d")
	if got := l.selKey(t); got != "c" || l.cur.sel != 0 {
		t.Fatalf("unchosen selection after a re-sort: %q at %d, want the top row c", got, l.cur.sel)
	}
	if !l.update(keyDown, DefaultKeyMap()) || l.selKey(t) != "a" || !l.cur.chosen {
		t.Fatalf("down: %q chosen=%v, want a chosen", l.selKey(t), l.cur.chosen)
	}
	l.lookups = 0
	l.set("d", "c", "b", "a")
	if got := l.selKey(t); got != "a" || l.cur.sel != 3 {
		t.Errorf("after the re-sort the selection is %q at %d, want a at 3", got, l.cur.sel)
	}
	if l.lookups != 1 {
		t.Errorf("finding a took %d look-ups by key, want 1", l.lookups)
	}
	l.lookups = 0
	l.set("d", "b", "c", "a")
	if l.selKey(t) != "a" || l.lookups != 0 {
		t.Errorf("a did not move: selection %q, %d look-ups, want a and none", l.selKey(t), l.lookups)
	}
	// The chosen item leaves: the selection stays at its place and takes what is there now.
	l.set("d", "b", "c")
	if got := l.selKey(t); got != "c" || l.key != "c" {
		t.Errorf("a left: selection %q (key %q), want c, the row now at its place", got, l.key)
	}
	// An empty list selects nothing; the selection is then at the top when rows come back.
	l.set()
	if l.selected() != nil || l.key != "" {
		t.Errorf("empty list: selected %v, key %q", l.selected(), l.key)
	}
	l.set("x", "c", "y")
	if got := l.selKey(t); got != "x" {
		t.Errorf("rows back after an empty list: selection %q, want the top row x", got)
	}
	// selectKey chooses an item as a key would.
	l.selectKey("y")
	if got := l.selKey(t); got != "y" || !l.cur.chosen {
		t.Errorf("selectKey(y): %q chosen=%v", got, l.cur.chosen)
	}
}

// TestListScrollsWithTheWheel: a turn of the wheel moves the window three rows and the selection
// with it while it would leave the screen; the wheel's sideways buttons do nothing.
func TestListScrollsWithTheWheel(t *testing.T) {
	l := newTestList("a", "b", "c", "d", "e", "f", "g", "h", "i", "j")
	l.setHeight(1 + 4 + 1) // four rows and the marker
	if !l.update(wheelDn, DefaultKeyMap()) {
		t.Fatal("the wheel did nothing")
	}
	if l.cur.offset != 3 || l.selKey(t) != "d" || !l.cur.chosen {
		t.Errorf("wheel down: offset %d selection %q, want 3 and d, the first row on screen", l.cur.offset, l.selKey(t))
	}
	l.update(wheelDn, DefaultKeyMap())
	l.update(wheelDn, DefaultKeyMap())
	if l.cur.offset != 6 || l.selKey(t) != "g" {
		t.Errorf("wheel down past the end: offset %d selection %q, want 6 (the last screenful) and g", l.cur.offset, l.selKey(t))
	}
	l.update(keyEnd, DefaultKeyMap())
	l.update(wheelUp, DefaultKeyMap())
	if l.cur.offset != 3 || l.selKey(t) != "g" {
		t.Errorf("wheel up from the bottom: offset %d selection %q, want 3 and g, the last row on screen", l.cur.offset, l.selKey(t))
	}
	if l.update(wheelRgt, DefaultKeyMap()) || l.cur.offset != 3 {
		t.Errorf("the sideways wheel moved the list to %d", l.cur.offset)
	}
}

// TestListClickSelectsTheRowDrawnThere: a left click on any line of a row (a row may take several)
// selects it; a click on the title, below the rows or with another button selects nothing.
func TestListClickSelectsTheRowDrawnThere(t *testing.T) {
	l := newTestList()
	l.cur.rowLines = func(i int) int { return l.rows[i].lines }
	l.rows = []row{{"a", 1}, {"b", 3}, {"c", 1}, {"d", 2}, {"e", 1}}
	l.setLen(len(l.rows))
	l.setHeight(1 + 6 + 1) // a, b's three lines, c and d's first line, and the marker
	click := func(y int, b tea.MouseButton) bool {
		return l.update(tea.MouseClickMsg{X: 4, Y: y, Button: b}, DefaultKeyMap())
	}
	for y, want := range []string{1: "a", 2: "b", 3: "b", 4: "b", 5: "c"} {
		if y == 0 {
			continue
		}
		if !click(y, tea.MouseLeft) || l.selKey(t) != want {
			t.Errorf("click on line %d selected %q, want %q", y, l.selKey(t), want)
		}
	}
	// d is cut off at the bottom: a click on its first line selects it and scrolls it into view.
	if !click(6, tea.MouseLeft) || l.selKey(t) != "d" || l.cur.offset == 0 {
		t.Errorf("click on d's first line: selection %q offset %d, want d scrolled into view", l.selKey(t), l.cur.offset)
	}
	l.update(tea.KeyPressMsg{Code: 'g', Text: "g"}, DefaultKeyMap())
	for _, c := range []struct {
		y int
		b tea.MouseButton
	}{{0, tea.MouseLeft}, {7, tea.MouseLeft}, {40, tea.MouseLeft}, {3, tea.MouseRight}} {
		if click(c.y, c.b) || l.selKey(t) != "a" {
			t.Errorf("click on line %d with button %v selected %q", c.y, c.b, l.selKey(t))
		}
	}
}

// TestListCutShortSaysHowManyMore: a list whose rows do not all fit gives its last line to a
// "+N more" marker, counting the rows below the screen, or above it once scrolled to the end; a
// list that fits has none and keeps every line for rows.
func TestListCutShortSaysHowManyMore(t *testing.T) {
	l := newTestList("a", "b", "c", "d", "e", "f")
	l.setHeight(1 + 6)
	if got := l.more(); got != "" || l.cur.height != 6 {
		t.Errorf("six rows in six lines: marker %q, %d lines of rows, want none and 6", got, l.cur.height)
	}
	l.setHeight(1 + 4)
	if got := l.more(); got != "+3 more" || l.cur.height != 3 {
		t.Errorf("six rows in four lines: marker %q, %d lines of rows, want +3 more and 3", got, l.cur.height)
	}
	l.update(keyEnd, DefaultKeyMap())
	if got := l.more(); got != "+3 more above" {
		t.Errorf("at the end: marker %q, want +3 more above", got)
	}
	// Rows of several lines are measured whole: three rows of two lines in five lines are cut.
	l.cur.rowLines = func(int) int { return 2 }
	l.set("a", "b", "c")
	l.setHeight(1 + 5)
	l.update(tea.KeyPressMsg{Code: 'g', Text: "g"}, DefaultKeyMap())
	if got := l.more(); got != "+1 more" || l.cur.height != 4 {
		t.Errorf("three rows of two lines in five: marker %q, %d lines of rows, want +1 more and 4", got, l.cur.height)
	}
}
