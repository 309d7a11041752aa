package main

import (
	"strings"
	"testing"
)

// TestDashboardNeedsATerminal: with stdout not a terminal (a pipe, as under go test, or a file),
// the dashboard exits 1 with one line saying so, rather than drawing escape codes into it.
func TestDashboardNeedsATerminal(t *testing.T) {
	code, stdout, stderr := runCLI("--demo")
	if code != exitError {
		t.Errorf("exit code %d, want %d", code, exitError)
	}
	if !strings.Contains(oneErrorLine(t, stderr), "the dashboard needs a terminal, and stdout is not one") || stdout != "" {
		t.Errorf("stdout %q, stderr %q: want one line about the missing terminal", stdout, stderr)
	}
}
