package sanitize

import (
	"testing"
)

func TestText(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"clean", freezeMsg, freezeMsg},
		{"unicode kept", "über ✖ 日本", "über ✖ 日本"},
		{"OSC window title", "\x1b]0;pwned\x07after", "after"},
		{"OSC with ST", "\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\", "link"},
		{"clear screen and home", "a\x1b[2J\x1b[Hb", "ab"},
		{"cursor up", "x\x1b[10Ay", "xy"},
		{"colours", "\x1b[31mred\x1b[0m", "red"},
		{"DCS", "a\x1bP1$r0m\x1b\\b", "ab"},
		{"newlines and tabs", "line1\nline2\r\n\tx", "line1 line2   x"},
		{"C0 and DEL", "a\x00b\x07c\x08d\x7fe", "abcde"},
		{"C1 (8-bit CSI, as UTF-8)", "a\u009b2Jb\u0085c", "a2Jbc"},
		{"raw 8-bit CSI byte, parsed as CSI", "a\x9b2Jb", "ab"},
		{"invalid UTF-8", "a\xff\xfeb", "ab"},
		{"empty", "", ""},
		{"bidi override reorders a cell", "image \u202eexe.txt\u202c pulled", "image exe.txt pulled"},
		{"bidi isolates", "a\u2066b\u2067c\u2068d\u2069e", "abcde"},
		{"embeddings and marks", "\u202a\u202b\u202d\u200e\u200f\u061cx", "x"},
		{"zero-width and BOM", "ad\u200bmin\u200c\u200d\ufeff", "admin"},
		{"line and paragraph separators", "one\u2028two\u2029three", "one two three"},
		{"neighbours kept", "\u200a\u2010\u2065\u206a\u2027", "\u200a\u2010\u2065\u206a\u2027"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Text(tc.in); got != tc.want {
				t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if got := Text(Text(tc.in)); got != tc.want {
				t.Errorf("not idempotent: %q", got)
			}
		})
	}
}

// freezeMsg: runc could not freeze the container's cgroup, verbatim from kubernetes/kubernetes#131087
// (a kubelet event, its line break joined; also a classify fixture).
const freezeMsg = "failed to create containerd task: failed to create shim task: OCI runtime create failed: " +
	"runc create failed: unable to start container process: error during container init: " +
	"error setting cgroup config for procHooks process: unable to freeze: unknown"

func TestTextCleanDoesNotAllocate(t *testing.T) {
	// A runtime message (containerd/containerd#11033, a shim timing out on a loaded node) and
	// non-ASCII text.
	for _, s := range []string{
		`failed to create containerd task: failed to create shim task: failed to start io pipe copy: unable to copy pipes: ` +
			`containerd-shim: opening w/o fifo "/run/containerd/io.containerd.grpc.v1.cri/containers/base/io/1363662740/base-stdout" failed: context deadline exceeded`,
		"über ✖ 日本",
	} {
		if n := testing.AllocsPerRun(100, func() { _ = Text(s) }); n != 0 {
			t.Errorf("Sanitize of clean text %q allocates %v times", s, n)
		}
	}
}

func FuzzText(f *testing.F) {
	for _, s := range []string{"\x1b]0;pwned\x07", "\x1b[2J\x1b[H", "\x1b[10A", "a\nb", "\u009b", "\xff", "\u202e\u2066\ufeff\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Text(s)
		if !clean(out) {
			t.Fatalf("Text(%q) = %q still holds control characters", s, out)
		}
	})
}
