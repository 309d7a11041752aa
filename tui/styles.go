package tui

import (
	"image/color"

	"charm.land/lipgloss/v2"

	"doomwatch/classify"
)

// styles holds every style the dashboard draws with. With colour off the styles keep only
// attributes that NO_COLOR allows (bold, reverse), and every badge still carries its text
// ("✖ doomed"), so nothing depends on colour to be read.
type styles struct {
	title, dim, bold, warn, danger, ok lipgloss.Style
	colHeader, selected, focusTitle    lipgloss.Style
	badge                              [5]lipgloss.Style // indexed by classify.Class
	rollout                            map[classify.RolloutClass]lipgloss.Style
	// badges holds rendered badges: a frame draws the same few (kind, text) pairs on every row.
	badges map[badgeKey]string
}

type badgeKey struct {
	k    classify.Class
	text string
}

// maxBadges bounds the rendered badges kept; the texts are a handful of words fitted to a column.
const maxBadges = 256

var (
	colRed    = lipgloss.Color("#FF5F5F")
	colAmber  = lipgloss.Color("#FFAF00")
	colGreen  = lipgloss.Color("#5FD75F")
	colBlue   = lipgloss.Color("#5FAFFF")
	colGrey   = lipgloss.Color("#8A8A8A")
	colSelect = lipgloss.Color("#3A3A5A")
	colTitle  = lipgloss.Color("#D7AFFF")
)

func newStyles(noColor bool) *styles {
	s := &styles{}
	fg := func(c color.Color) lipgloss.Style {
		if noColor {
			return lipgloss.NewStyle()
		}
		return lipgloss.NewStyle().Foreground(c)
	}
	s.title = fg(colTitle).Bold(true)
	s.dim = fg(colGrey)
	s.bold = lipgloss.NewStyle().Bold(true)
	s.warn = fg(colAmber).Bold(true)
	s.danger = fg(colRed).Bold(true)
	s.ok = fg(colGreen)
	s.colHeader = fg(colGrey).Bold(true)
	s.focusTitle = fg(colTitle).Bold(true).Underline(true)
	if noColor {
		s.selected = lipgloss.NewStyle().Reverse(true)
	} else {
		s.selected = lipgloss.NewStyle().Background(colSelect).Bold(true)
	}
	s.badge[classify.Healthy] = fg(colGreen)
	s.badge[classify.Completed] = fg(colGrey)
	s.badge[classify.Progressing] = fg(colBlue)
	s.badge[classify.Transient] = fg(colAmber)
	s.badge[classify.Doomed] = fg(colRed).Bold(true)
	s.rollout = map[classify.RolloutClass]lipgloss.Style{
		classify.RolloutComplete:    s.badge[classify.Healthy],
		classify.RolloutProgressing: s.badge[classify.Progressing],
		classify.RolloutDoomed:      s.badge[classify.Doomed],
	}
	return s
}

// badgeIcons are the glyphs of the five verdict classes, indexed by classify.Class.
var badgeIcons = [5]string{"●", "✓", "◐", "▲", "✖"}

// badgeText is the colourless badge, "✖ doomed": readable with NO_COLOR.
func badgeText(k classify.Class) string {
	if !k.Valid() {
		return "? " + k.String()
	}
	return badgeIcons[k] + " " + k.String()
}

// badge renders a verdict badge in its colour.
func (s *styles) badgeFor(k classify.Class, text string) string {
	if !k.Valid() {
		return text
	}
	key := badgeKey{k, text}
	if b, ok := s.badges[key]; ok {
		return b
	}
	if s.badges == nil || len(s.badges) >= maxBadges {
		s.badges = make(map[badgeKey]string)
	}
	b := s.badge[k].Render(text)
	s.badges[key] = b
	return b
}

// rolloutIcon maps a rollout verdict onto the badge glyph of the pod kind it resembles.
func rolloutIcon(v classify.RolloutClass) string {
	switch v {
	case classify.RolloutComplete:
		return badgeIcons[classify.Healthy]
	case classify.RolloutDoomed:
		return badgeIcons[classify.Doomed]
	default:
		return badgeIcons[classify.Progressing]
	}
}
