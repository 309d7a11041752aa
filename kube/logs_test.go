package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"k8s.io/klog/v2"
)

// TestQuietLogsSendsKlogToTheWriter: client-go's klog messages, errors included, land in the log
// writer (--log-file) rather than on the terminal.
func TestQuietLogsSendsKlogToTheWriter(t *testing.T) {
	var buf bytes.Buffer
	flush, err := QuietLogs(&buf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := QuietLogs(nil); err != nil {
			t.Error(err)
		}
	})
	// What a reflector logs when the API server is down: client-go v0.37 tools/cache/reflector.go
	// DefaultWatchErrorHandler ("Failed to watch", through utilruntime.HandleErrorWithContext to
	// klog), the list error verbatim from hwameistor/scheduler#7.
	err = errors.New(`failed to list *v1.CSINode: Get "https://127.0.0.1:6443/apis/storage.k8s.io/v1/csinodes?limit=500&resourceVersion=0": ` +
		`dial tcp 127.0.0.1:6443: connect: connection refused`)
	klog.ErrorS(err, "Failed to watch", "reflector", "k8s.io/client-go/informers/factory.go:134", "type", "*v1.CSINode")
	flush()
	if !strings.Contains(buf.String(), "Failed to watch") || !strings.Contains(buf.String(), "connect: connection refused") {
		t.Errorf("log writer holds %q, want klog's error", buf.String())
	}
}

// TestTailLinesKeepsTheEnd: a long log keeps its last lines, cut at a line boundary, never its
// first bytes: the end is what explains a crash.
func TestTailLinesKeepsTheEnd(t *testing.T) {
	long := strings.Repeat("x", LogBytes) // one line longer than the byte bound
	data := []byte("first line\n" + long + "\nsecond to last\npanic: boom\n")
	got := tailLines(data, 25)
	if len(got) != 2 || got[0] != "second to last" || got[1] != "panic: boom" {
		t.Errorf("tailLines = %q", got)
	}
	var many strings.Builder
	for i := range 40 {
		fmt.Fprintf(&many, "line %d\n", i)
	}
	got = tailLines([]byte(many.String()), 25)
	if len(got) != 25 || got[len(got)-1] != "line 39" || got[0] != "line 15" {
		t.Errorf("40 lines: got %d, %q … %q", len(got), got[0], got[len(got)-1])
	}
	if got := tailLines(nil, 25); got != nil {
		t.Errorf("empty log: %q", got)
	}
}

// TestTailLogSanitises: the log enters doomwatch at TailLog, so what it returns reaches the
// screen (the log pane, wait's document) without an escape sequence the container wrote, and an
// error is one line.
func TestTailLogSanitises(t *testing.T) {
	colour := &Source{logs: func(context.Context, string, string, string, bool, int) ([]string, error) {
		return []string{"level=error msg=\"\x1b[31mconfig\x1b[0m: missing\"", "\x1b]0;pwned\x07panic: boom"}, nil
	}}
	got, err := colour.TailLog(context.Background(), "shop", "api", "api", true, 10)
	if err != nil || len(got) != 2 || got[0] != `level=error msg="config: missing"` || got[1] != "panic: boom" {
		t.Errorf("TailLog = %q, %v; want the lines without their escape sequences", got, err)
	}
	cause := errors.New("pods \"api\" not found\n\x1b[2J")
	failing := &Source{logs: func(context.Context, string, string, string, bool, int) ([]string, error) {
		return nil, cause
	}}
	_, err = failing.TailLog(context.Background(), "shop", "api", "api", false, 10)
	if err == nil || err.Error() != `pods "api" not found ` || !errors.Is(err, cause) {
		t.Errorf("TailLog's error = %q, want one sanitised line wrapping the cause", err)
	}
}

// TestFleetTextIsSanitised: what a fleet hands --once to print as it is, the servers of the
// kubeconfig and the clusters' errors, comes sanitised, on one line.
func TestFleetTextIsSanitised(t *testing.T) {
	f := Join(context.Background(), nil, []string{"https://a.example\x1b]0;pwned\x07:6443"})
	if got := f.Servers(); len(got) != 1 || got[0] != "https://a.example:6443" {
		t.Errorf("Servers() = %q", got)
	}
	cause := errors.New("dial tcp: connection refused\n\x1b[2Jretrying")
	if err := oneLine(cause); err.Error() != "dial tcp: connection refused retrying" || !errors.Is(err, cause) {
		t.Errorf("oneLine = %q", err)
	}
	if oneLine(nil) != nil {
		t.Error("oneLine(nil) is not nil")
	}
}
