package tui

import (
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"k8s.io/apimachinery/pkg/util/duration"

	"doomwatch/model"
)

// common is what every component shares (soft-serve's common.Common): styles, keys and the clock
// of the last update. Components read it; only the root writes it.
type common struct {
	st   *styles
	keys KeyMap
	// now is the source's time at the last update; View never reads a clock.
	now time.Time
	// scratch rebuilds the pods on screen from their records for the kubectl columns.
	scratch model.Scratch
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

// fit truncates s (which may hold styling) to w cells and pads it with spaces to exactly w.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	sw := ansi.StringWidth(s)
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
	if ansi.StringWidth(s) > w {
		return ansi.Truncate(s, w, "…")
	}
	return s
}

// age is kubectl's AGE: HumanDuration of now minus t (printers.go translateTimestampSince).
func age(t, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t))
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

// colWidth sizes a table column to its title and its n visible cells, capped at limit (0: no cap).
func colWidth(title string, limit, n int, cell func(i int) string) int {
	w := ansi.StringWidth(title)
	for i := range n {
		w = max(w, ansi.StringWidth(cell(i)))
	}
	if limit > 0 {
		w = min(w, limit)
	}
	return w
}
