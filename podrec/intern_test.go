package podrec

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"
)

// TestInternTableStaysBounded: however many distinct strings pass through, the table holds at
// most two generations, and a string in use survives a rotation.
func TestInternTableStaysBounded(t *testing.T) {
	tb := newTable[string](8)
	keep := str(&tb, strings.Clone("node-1"))
	for i := range 100 {
		str(&tb, fmt.Sprint("msg-", i))
		if got := str(&tb, strings.Clone("node-1")); unsafe.StringData(got) != unsafe.StringData(keep) {
			t.Fatalf("after %d strings, node-1 is a new copy", i)
		}
	}
	if n := len(tb.cur) + len(tb.old); n > 16 {
		t.Errorf("table holds %d entries, want at most 16", n)
	}
}
