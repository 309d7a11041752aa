package kube

import (
	"context"
	"errors"
	"io"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"

	"doomwatch/contract"
	"doomwatch/sanitize"
)

// kindState is one informer's part of the connection health.
type kindState struct {
	kind contract.Kind
	// hasSynced reports that the informer has listed and the consumer (the coalescer, for the kinds
	// it handles) has been handed every listed object.
	hasSynced func() bool
	synced    bool
	// forbidden is set when RBAC refused a list or watch, cleared once data flows again.
	forbidden bool
	// err is the last watch error while this informer's watch is broken.
	err   string
	errAt uint64 // sequence number, so Health.WatchError is the most recent error
}

// healthTracker turns informer sync state, events and watch errors into contract.Health.
type healthTracker struct {
	mu        sync.Mutex
	now       func() time.Time
	kinds     []*kindState
	lastEvent time.Time
	podsSeen  int
	// podsTotal estimates how many pods the initial list holds (0: unknown), see podSync.
	podsTotal int
	seq       uint64
	// failures counts the list and watch calls that failed (Health.Failures): counted by the
	// ListWatch wrapper, which sees each call once, and not by the error handler, to which the
	// reflector passes most of the same errors again.
	failures uint64
	last     contract.Health
	reported bool
	// changed, when set, is told of every change to a watch's state (broken, forbidden, recovered)
	// and to the estimate, outside the lock: the coalescer polls health on its own only until the
	// informers have synced.
	changed func()
	// unreachable is the probe's last failure while the API server does not answer (probe.go),
	// and since when.
	unreachable      string
	unreachableSince time.Time
}

// probed records the probe's answer: nil when the API server answered.
func (h *healthTracker) probed(err error) {
	h.mu.Lock()
	was := h.unreachable
	if err == nil {
		h.unreachable, h.unreachableSince = "", time.Time{}
	} else {
		if h.unreachable == "" {
			h.unreachableSince = h.now()
		}
		h.unreachable = sanitize.Text(err.Error())
	}
	changed := was != h.unreachable
	h.mu.Unlock()
	if changed {
		h.notify()
	}
}

func (h *healthTracker) notify() {
	if h.changed != nil {
		h.changed()
	}
}

func (h *healthTracker) add(kind contract.Kind) *kindState {
	ks := &kindState{kind: kind}
	h.kinds = append(h.kinds, ks)
	return ks
}

// event records an informer event. It does not clear a watch error: events queued before a failure
// can be delivered after it.
func (h *healthTracker) event(kind contract.Kind, podDelta int) {
	t := h.now()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lastEvent = t
	if kind == contract.KindPod {
		h.podsSeen = max(0, h.podsSeen+podDelta)
	}
}

// estimate records how many pods the initial list is expected to hold.
func (h *healthTracker) estimate(total int) {
	h.mu.Lock()
	h.podsTotal = total
	h.mu.Unlock()
	h.notify()
}

// ok records a successful list or watch call for one kind: the server answered and RBAC allowed
// it, so that kind is neither broken nor forbidden any more.
func (h *healthTracker) ok(ks *kindState) {
	h.mu.Lock()
	was := ks.err != "" || ks.forbidden
	ks.err, ks.forbidden = "", false
	h.mu.Unlock()
	if was {
		h.notify()
	}
}

// watchErrorHandler records an informer's list/watch failure. The reflector retries on its own with
// backoff (client-go tools/cache/reflector.go RunWithContext); we only make the failure visible.
func (h *healthTracker) watchErrorHandler(ks *kindState) cache.WatchErrorHandlerWithContext {
	return func(ctx context.Context, r *cache.Reflector, err error) {
		// Keep client-go's own logging; klog goes to --log-file or nowhere, never the terminal.
		cache.DefaultWatchErrorHandler(ctx, r, err)
		h.fail(ks, err)
	}
}

// fail records a failed list or watch call. It is called from the ListWatch wrapper as well as the
// watch error handler: while the server refuses connections, the reflector retries the watch call
// inside its watch loop and never reaches the error handler (reflector.go isWatchErrorRetriable).
func (h *healthTracker) fail(ks *kindState, err error) {
	if isRoutineWatchEnd(err) {
		return
	}
	defer h.notify()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	if apierrors.IsForbidden(err) {
		// RBAC says no: show "forbidden" for this kind and let the rest work. The reflector keeps
		// retrying with its backoff (up to 30s), so a later grant is picked up without a restart.
		ks.forbidden, ks.err = true, ""
		return
	}
	// Sanitize puts API and transport errors, which can span several lines, on one, and strips
	// what a terminal would interpret: the message reaches the dashboard's header.
	ks.err = sanitize.Text(ks.kind.Resource() + ": " + err.Error())
	ks.errAt = h.seq
}

// callFailed records a list or watch call that failed: fail, and counted in Health.Failures.
func (h *healthTracker) callFailed(ks *kindState, err error) {
	if !isRoutineWatchEnd(err) {
		h.mu.Lock()
		h.failures++
		h.mu.Unlock()
	}
	h.fail(ks, err)
}

// isRoutineWatchEnd reports errors that are part of a healthy watch's life: the server closing a
// watch at its timeout, "resource version too old" (after which the reflector relists) and our own
// shutdown.
func isRoutineWatchEnd(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, context.Canceled) ||
		apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
}

// poll refreshes sync state and returns the current health and whether it differs from the last
// poll.
func (h *healthTracker) poll() (contract.Health, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	hl := contract.Health{Synced: true, PodsSeen: h.podsSeen, LastEvent: h.lastEvent,
		Unreachable: h.unreachable, UnreachableSince: h.unreachableSince, Failures: h.failures}
	if h.podsTotal > 0 {
		// The estimate is the list's size when it began; pods created since count too.
		hl.PodsTotal = max(h.podsTotal, h.podsSeen)
	}
	var errAt uint64
	for _, ks := range h.kinds {
		if !ks.synced && ks.hasSynced() {
			ks.synced = true
		}
		if ks.forbidden {
			hl.Forbidden = append(hl.Forbidden, ks.kind)
			continue
		}
		if !ks.synced {
			hl.Synced = false
		}
		if ks.err != "" && ks.errAt >= errAt {
			hl.WatchError, errAt = ks.err, ks.errAt
		}
	}
	changed := !h.reported || !healthEqual(hl, h.last)
	h.last, h.reported = hl, true
	return hl, changed
}

func healthEqual(a, b contract.Health) bool {
	return a.Synced == b.Synced && a.PodsSeen == b.PodsSeen && a.PodsTotal == b.PodsTotal && a.LastEvent.Equal(b.LastEvent) &&
		a.WatchError == b.WatchError && slices.Equal(a.Forbidden, b.Forbidden) && a.Failures == b.Failures &&
		a.Unreachable == b.Unreachable && a.UnreachableSince.Equal(b.UnreachableSince)
}
