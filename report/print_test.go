package report

import (
	"io"
	"strings"
	"testing"
)

// TestPrinters: -o's error and help name the formats as kubectl's do, and a format prints with
// its own printer.
func TestPrinters(t *testing.T) {
	if err := SnapshotPrinters.Check("yaml"); err == nil || err.Error() != `-o/--output must be table or json, not "yaml"` {
		t.Errorf("Check(yaml) = %v", err)
	}
	if err := GatePrinters.Check("text"); err != nil {
		t.Errorf("Check(text) = %v", err)
	}
	three := Printers[int]{{"a", nil}, {"b", nil}, {"c", nil}}
	if got := three.List(); got != "a, b or c" {
		t.Errorf("List = %q", got)
	}
	var b strings.Builder
	if err := GatePrinters.Print(&b, "json", &Gate{Verdict: Doomed, ExitCode: 1}); err != nil ||
		!strings.Contains(b.String(), `"verdict": "doomed"`) || !strings.Contains(b.String(), `"exitCode": 1`) {
		t.Errorf("json: %q %v", b.String(), err)
	}
	if err := GatePrinters.Print(io.Discard, "yaml", &Gate{}); err == nil {
		t.Errorf("an unknown format printed")
	}
}
