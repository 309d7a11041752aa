package classify

import (
	"strings"
	"testing"
	"time"
)

// TestColumnsMatchFixtures checks the one-pass Columns against kubectl's columns recorded in each
// fixture, and that the single-column wrappers say the same.
func TestColumnsMatchFixtures(t *testing.T) {
	for _, fx := range loadFixtures(t) {
		t.Run(strings.TrimSuffix(fx.file, ".yaml"), func(t *testing.T) {
			ready, status, restarts := Columns(fx.pod, fx.now)
			if ready != fx.want["ready"] || status != fx.want["status"] || restarts != fx.want["restarts"] {
				t.Errorf("Columns = %q %q %q, want %q %q %q", ready, status, restarts,
					fx.want["ready"], fx.want["status"], fx.want["restarts"])
			}
			if ready != Ready(fx.pod) || status != Status(fx.pod, fx.now) || restarts != Restarts(fx.pod, fx.now) {
				t.Errorf("Columns disagrees with Ready/Status/Restarts")
			}
		})
	}
	if r, s, n := Columns(nil, time.Time{}); r != "" || s != "" || n != "" {
		t.Errorf("Columns(nil) = %q %q %q", r, s, n)
	}
}
