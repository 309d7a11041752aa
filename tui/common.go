package tui

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
	"k8s.io/apimachinery/pkg/util/duration"

	"doomwatch/classify"
)

// common is what every component shares (soft-serve's common.Common): styles, keys and the clock
// of the last update. Components read it; only the root writes it.
type common struct {
	st   *styles
	keys KeyMap
	// now is the source's time at the last update; View never reads a clock.
	now time.Time
	// until is when the first text drawn from now (an age, "2m ago") reads differently: the
	// earliest of every such text drawn since the last update. Zero: none was drawn. The clock's
	// tick redraws only once it has passed (dashboard.tick).
	until time.Time
}

// age is kubectl's AGE of t at the last update: HumanDuration of now minus t (printers.go
// translateTimestampSince). When it next reads differently is noted in until.
func (c *common) age(t time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	d := c.now.Sub(t)
	c.note(c.now.Add(classify.HumanDurationHolds(d)))
	return duration.HumanDuration(d)
}

// note records that text drawn from now reads differently at t (zero: never).
func (c *common) note(t time.Time) {
	if !t.IsZero() && (c.until.IsZero() || t.Before(c.until)) {
		c.until = t
	}
}

// width is the number of cells s takes on screen. What the views show is mostly printable ASCII
// (names, nodes, numbers), the dashboard's own glyphs (uiGlyphs) and SGR styling, which are counted
// byte by byte; anything else goes to ansi.StringWidth, whose grapheme segmentation was a third of
// a frame's CPU when it measured everything.
func width(s string) int {
	w := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c >= 0x20 && c < 0x7f:
			w++
			i++
		case c == 0x1b && i+1 < len(s) && s[i+1] == '[':
			// A CSI sequence (SGR styling): parameters and intermediates, then one final byte.
			j := i + 2
			for j < len(s) && s[j] >= 0x20 && s[j] < 0x40 {
				j++
			}
			if j == len(s) || s[j] < 0x40 || s[j] > 0x7e {
				return ansi.StringWidth(s)
			}
			i = j + 1
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRuneInString(s[i:])
			g, ok := uiGlyphs[r]
			if !ok || i+n < len(s) && s[i+n] >= utf8.RuneSelf && !isGlyph(s[i+n:]) {
				return ansi.StringWidth(s) // may start a cluster: measure it properly
			}
			w += g
			i += n
		default:
			return ansi.StringWidth(s)
		}
	}
	return w
}

// uiGlyphs are the dashboard's own symbols, with the width ansi.StringWidth gives each alone.
var uiGlyphs = func() map[rune]int {
	m := make(map[rune]int)
	for _, r := range "·…⚠▶✗✖⌫→↑↓•×✓◐●▲█▇▆▅▄▃▂▁" {
		m[r] = ansi.StringWidth(string(r))
	}
	return m
}()

// isGlyph reports whether s starts with one of uiGlyphs.
func isGlyph(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	_, ok := uiGlyphs[r]
	return ok
}

// fit truncates s (which may hold styling) to w cells and pads it with spaces to exactly w.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	sw := width(s)
	if sw > w {
		return ansi.Truncate(s, w, "…")
	}
	if sw < w {
		return s + strings.Repeat(" ", w-sw)
	}
	return s
}

// clip truncates s to w cells without padding.
func clip(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if width(s) > w {
		return ansi.Truncate(s, w, "…")
	}
	return s
}

// thousands formats n as "3,412".
func thousands(n int) string {
	if n < 0 {
		return "-" + thousands(-n)
	}
	s := strconv.Itoa(n)
	if len(s) <= 3 {
		return s
	}
	var b strings.Builder
	pre := len(s) % 3
	if pre > 0 {
		b.WriteString(s[:pre])
	}
	for i := pre; i < len(s); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s[i : i+3])
	}
	return b.String()
}
