package tui

import (
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/help"
	"github.com/charmbracelet/x/ansi"
)

// Below this size the dashboard shows "terminal too small" instead of a broken layout.
const (
	minWidth  = 60
	minHeight = 15
)

// frame is the vertical layout: header, body and footer heights, and what the body shows.
type frame struct {
	headerH, bodyTop, bodyH, footerH int
	// main is what has the keyboard, the open pane or the focused panel; below, when its h is
	// not 0, is a panel shown under it: the nodes panel, in brief when briefNodes.
	main, below part
	briefNodes  bool
}

// part is a panel's place in the body: its first line on screen and its height.
type part struct {
	p      panel
	top, h int
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
	f.main = part{p: d.active(), top: f.bodyTop, h: f.bodyH}
	if d.focus == FocusPods && !d.showDetail {
		if h, brief := d.nodesBelow(f.bodyH); h > 0 {
			f.main.h = f.bodyH - h - 1
			f.below = part{p: d.nodes, top: f.bodyTop + f.main.h + 1, h: h}
			f.briefNodes = brief
		}
	}
	return f
}

// Under the pods the nodes panel takes at most two fifths of the body (more only to show a
// suspect whole), and leaves the pods at least minPodsH lines: their title, column header, three
// rows and the marker.
const (
	minPodsH = 6
	// roomyBodyH is the body's height from which the nodes panel is under the pods even without
	// a suspect node.
	roomyBodyH = 20
)

// nodesBelow is the height of the nodes panel under the pods in a body bodyH lines high, 0 for
// none, and whether it shows its nodes in brief. With room to spare the pods view also shows the
// nodes panel underneath, so the suspect node and the failing pods are on one screen; with a
// suspect, whatever the room, at least its row, its why and its msg: the flaky node is the
// point of the tool, and at 80×24 there is no room for every node. A panel cut short says how
// many nodes it leaves out.
func (d *dashboard) nodesBelow(bodyH int) (h int, brief bool) {
	n := d.nodes
	if len(d.snap.nodes) == 0 {
		return 0, false
	}
	need := n.briefMin()
	if need == 0 && bodyH < roomyBodyH {
		return 0, false
	}
	room := max(bodyH*2/5, need)
	if bodyH-room-1 < minPodsH {
		return 0, false
	}
	switch full := n.height(false); {
	case full <= room:
		return full, false
	case need > 0:
		return min(n.height(true), room), true
	}
	return room, false
}

// helpKeys is the key map the footer shows: the keys that work in the current mode, from the
// query bar, the pane or the panel that has them, and on the one-line footer only those that fit
// the width (see fitShort).
func (d *dashboard) helpKeys() help.KeyMap {
	var km rankedHelp
	if d.filtering {
		km = d.queryBar.Help(d.c.keys)
	} else {
		km = d.active().Help()
	}
	if d.help.ShowAll {
		return km
	}
	return modeHelp{short: fitShort(km.shortRanked(), d.width, ansi.StringWidth(d.help.ShortSeparator))}
}

func lipglossHeight(s string) int { return strings.Count(s, "\n") + 1 }

// layout hands each component its size: the header, the footer, and the panels on screen. A
// panel that is not shown keeps its size (and its scroll position) until it is.
func (d *dashboard) layout() {
	// The nodes panel's height under the pods depends on how its whys wrap at this width.
	d.nodes.setWidth(d.width)
	f := d.computeFrame()
	d.nodes.setBrief(f.briefNodes)
	d.header.SetSize(d.width)
	d.help.SetWidth(d.width)
	d.queryBar.SetWidth(d.width)
	f.main.p.SetSize(d.width, f.main.h)
	if f.below.h > 0 {
		f.below.p.SetSize(d.width, f.below.h)
	}
}

func (d *dashboard) setSize(w, h int) {
	d.width, d.height = w, h
	d.layout()
	if d.showDetail {
		d.pane.Refresh(&d.snap)
	}
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
		return tooSmall(d.width, d.height)
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
	appendBlock(f.main.p.View(true), f.main.h)
	if f.below.h > 0 {
		lines = append(lines, "")
		appendBlock(f.below.p.View(false), f.below.h)
	}
	if d.filtering {
		appendBlock(d.queryBar.View(), 1)
	}
	appendBlock(d.footer(), f.footerH-btoi(d.filtering))
	return strings.Join(lines[:min(len(lines), d.height)], "\n")
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// tooSmall is the screen of a terminal smaller than minWidth×minHeight: that it is too small, its
// size and the size needed, in the longest wording whose every line fits w×h, down to the two
// sizes alone on one line.
func tooSmall(w, h int) string {
	size, need := fmt.Sprintf("%d×%d", w, h), fmt.Sprintf("%d×%d", minWidth, minHeight)
	wordings := [][]string{
		{"terminal too small (" + size + "): doomwatch needs at least " + need},
		{"terminal too small (" + size + ")", "doomwatch needs at least " + need},
		{"terminal too small", size + ", needs " + need},
		{"too small: " + size, "needs " + need},
		{size + " < " + need},
		{size},
	}
	for _, lines := range wordings {
		if len(lines) <= h && !slices.ContainsFunc(lines, func(l string) bool { return width(l) > w }) {
			return strings.Join(lines, "\n")
		}
	}
	return clip(wordings[len(wordings)-1][0], max(w, 1))
}
