package kube

import (
	"bytes"
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
	klog.Error("watch of pods failed: connection refused")
	flush()
	if !strings.Contains(buf.String(), "watch of pods failed: connection refused") {
		t.Errorf("log writer holds %q, want klog's error", buf.String())
	}
}
