package kube

import (
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"doomwatch/contract"
)

// TestHealthCountsFailures: every failed list or watch call, a forbidden one included, counts once
// in Health.Failures (serve's doomwatch_watch_errors_total), though the reflector passes it to the
// error handler too, and a new count is a change of health, so that a batch carries it; a watch's
// routine end does not count.
func TestHealthCountsFailures(t *testing.T) {
	h := &healthTracker{now: time.Now}
	ks := h.add(contract.KindPod)
	ks.hasSynced = func() bool { return true }
	if hl, _ := h.poll(); hl.Failures != 0 {
		t.Fatalf("failures before any: %d", hl.Failures)
	}
	refused := fmt.Errorf("Get \"https://10.0.0.1/api/v1/pods\": dial tcp 10.0.0.1:443: connect: connection refused")
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New("RBAC: no"))
	for _, err := range []error{refused, forbidden} {
		h.callFailed(ks, err) // the ListWatch wrapper
		h.fail(ks, err)       // the reflector's error handler, with the same error
	}
	h.callFailed(ks, io.EOF) // the server closed the watch at its timeout
	hl, changed := h.poll()
	if hl.Failures != 2 || !changed {
		t.Errorf("after two failures and a routine end: %d failures, changed %v; want 2, true", hl.Failures, changed)
	}
	if _, changed := h.poll(); changed {
		t.Error("health changed with nothing new")
	}
}
