package kube

import (
	"bytes"
	"errors"
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
