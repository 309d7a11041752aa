package tui

import (
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestWidthAgreesWithAnsi: the fast count is ansi.StringWidth's answer for everything the views
// draw, and it leaves what it cannot count to ansi.StringWidth: wide characters, combining marks,
// emoji sequences, other escape sequences.
func TestWidthAgreesWithAnsi(t *testing.T) {
	for _, s := range []string{
		"", "shop/checkout-7d9f8b6c5-h03", "node-3  ⚠ SUSPECT", "▶ shop", "✖ doomed", "1,234 of ~150,000 …",
		"\x1b[1;38;5;196mdoomed\x1b[0m · \x1b[2mreason\x1b[m", "▁▂▃▄▅▆▇█", "a\x1b]0;title\x07b",
		"日本語のメッセージ", "e\u0301", "⚠\ufe0f", "👨\u200d👩\u200d👧", "●\u0301", "tab\there", "\x1b[", "\x1b[12",
	} {
		if got, want := width(s), ansi.StringWidth(s); got != want {
			t.Errorf("width(%q) = %d, ansi.StringWidth = %d", s, got, want)
		}
	}
}
