// Package sanitize makes text from the API safe for a terminal before it enters doomwatch's model.
package sanitize

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Text makes untrusted API text safe for a terminal: escape sequences and control characters
// are removed, newlines and tabs become spaces.
//
// A container can write any bytes into its termination message, which lands in
// lastState.terminated.message (kubectl had CVE-2021-25743 for this class). It removes:
//   - ANSI escape sequences: CSI (cursor movement, erase), OSC (window title, hyperlinks), DCS,
//     APC/PM/SOS strings (ansi.Strip parses them as a terminal would);
//   - what remains of the C0 controls, DEL and the C1 controls U+0080–U+009F (8-bit CSI/OSC);
//   - invalid UTF-8 bytes (a lone 0x9b is an 8-bit CSI to some terminals);
//   - Unicode bidirectional controls (U+202A–U+202E embeddings and overrides, U+2066–U+2069
//     isolates, U+061C ALM) and zero-width characters (U+200B–U+200F, including LRM/RLM, and the
//     BOM U+FEFF). A terminal that implements bidi lets them reorder what follows, so a message
//     could make the REASON column appear to read differently or spill into the next cell (the
//     "Trojan Source" class, CVE-2021-42574).
//
// \n, \r, \t and the Unicode line and paragraph separators U+2028/U+2029 become one space each,
// so a message stays on one table row. Clean text, the common case, is returned unchanged without
// allocating.
func Text(s string) string {
	if clean(s) {
		return s
	}
	s = ansi.Strip(s)
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '\n' || c == '\r' || c == '\t':
				b.WriteByte(' ')
			case c < 0x20 || c == 0x7f:
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError || isC1(r) || invisible(r):
		case r == '\u2028' || r == '\u2029':
			b.WriteByte(' ')
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// clean reports whether s needs no sanitising: printable ASCII and valid UTF-8 without C1, bidi,
// zero-width or line-separator characters.
func clean(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || isC1(r) || invisible(r) || r == '\u2028' || r == '\u2029' {
			return false
		}
		i += n
	}
	return true
}

func isC1(r rune) bool { return r >= 0x80 && r <= 0x9f }

// invisible reports the bidi controls and zero-width characters Text drops.
func invisible(r rune) bool {
	switch {
	case r >= '\u200b' && r <= '\u200f', // ZWSP, ZWNJ, ZWJ, LRM, RLM
		r >= '\u202a' && r <= '\u202e', // LRE, RLE, PDF, LRO, RLO
		r >= '\u2066' && r <= '\u2069', // LRI, RLI, FSI, PDI
		r == '\u061c',                  // ALM
		r == '\ufeff':                  // BOM / zero-width no-break space
		return true
	}
	return false
}
