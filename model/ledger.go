package model

import (
	"regexp"
	"sort"
	"time"
)

// ledger is the start failure ledger: every transient start failure (classify's
// RuleStartFailure128 and RuleCreateErrorTransient) seen within the window, recorded once, oldest
// first by Failure.At.
//
// Deduplication: an exit-128 failure is identified by pod UID, container and the time it finished.
// The same termination first shows in state.terminated and, after the restart, in
// lastState.terminated with an unchanged finishedAt, so the pair is counted once however many
// updates repeat it. Failures without finishedAt are not recorded at all (see
// recorder.terminated). A create error has no finishedAt; it is identified by the moment the model
// first saw the container waiting in it (see recordCreateErrors).
type ledger struct {
	entries []ledgerEntry // sorted by At; entries[head:] are live
	head    int
	seen    map[failureKey]struct{}
	// horizon: entries at or before it were dropped for capacity; they are not re-admitted when
	// their pod reports them again.
	horizon time.Time
}

type ledgerEntry struct {
	Failure
	key failureKey
}

type failureKey struct {
	uid, container string
	at             int64 // finishedAt (exit 128) or first seen (create error), in Unix nanoseconds
	createError    bool
}

func newLedger() ledger { return ledger{seen: make(map[failureKey]struct{})} }

func (l *ledger) live() []ledgerEntry { return l.entries[l.head:] }

func (l *ledger) has(k failureKey) bool {
	_, ok := l.seen[k]
	return ok
}

// add inserts f in time order (f.At) unless it is a duplicate, older than since, or older than
// what capacity already dropped, and indexes it in esc. The oldest entries are dropped to stay
// within max. It reports whether f was added.
func (l *ledger) add(f Failure, k failureKey, since time.Time, max int, esc *escalation) bool {
	if l.has(k) || f.At.Before(since) {
		return false
	}
	if !l.horizon.IsZero() && !f.At.After(l.horizon) {
		return false
	}
	live := l.live()
	i := sort.Search(len(live), func(i int) bool { return live[i].At.After(f.At) })
	e := ledgerEntry{Failure: f, key: k}
	if i == len(live) {
		l.entries = append(l.entries, e)
	} else {
		l.entries = append(l.entries, ledgerEntry{})
		copy(l.entries[l.head+i+1:], l.entries[l.head+i:])
		l.entries[l.head+i] = e
	}
	l.seen[k] = struct{}{}
	esc.add(&f)
	for len(l.entries)-l.head > max {
		l.horizon = l.entries[l.head].At
		l.drop(esc)
	}
	return true
}

// drop removes the oldest entry.
func (l *ledger) drop(esc *escalation) {
	old := &l.entries[l.head]
	delete(l.seen, old.key)
	esc.remove(&old.Failure)
	*old = ledgerEntry{}
	l.head++
	if l.head > 1024 && l.head > len(l.entries)/2 {
		n := copy(l.entries, l.entries[l.head:])
		clear(l.entries[n:])
		l.entries = l.entries[:n]
		l.head = 0
	}
}

// expire drops entries dated (At) before since and reports whether any did.
func (l *ledger) expire(since time.Time, esc *escalation) bool {
	dropped := false
	for l.head < len(l.entries) && l.entries[l.head].At.Before(since) {
		l.drop(esc)
		dropped = true
	}
	return dropped
}

// rewriteWorkloads moves entries of re-grouped pods to their new workload.
func (l *ledger) rewriteWorkloads(moved map[string]string, esc *escalation) {
	live := l.live()
	for i := range live {
		w, ok := moved[live[i].PodUID]
		if !ok || w == live[i].Workload {
			continue
		}
		esc.remove(&live[i].Failure)
		live[i].Workload = w
		esc.add(&live[i].Failure)
	}
}

// nameNodeUID sets uid on the entries recorded on node name while no UID was known for it (before
// its Node object arrived): they happened on that node as far as anyone can tell, and must count
// with its later failures, not as a second node of the same name.
func (l *ledger) nameNodeUID(name, uid string) {
	live := l.live()
	for i := range live {
		if live[i].NodeUID == "" && live[i].Node == name {
			live[i].NodeUID = uid
		}
	}
}

// Failures returns the ledger within the window at now, oldest first (by Failure.At).
func (m *Model) Failures(now time.Time) []Failure {
	since := now.Add(-m.cfg.Window)
	live := m.ledger.live()
	i := sort.Search(len(live), func(i int) bool { return !live[i].At.Before(since) })
	out := make([]Failure, 0, len(live)-i)
	for _, e := range live[i:] {
		out = append(out, e.Failure)
	}
	return out
}

// Normalisation of runtime messages, so that the same cause on different pods compares equal for
// the "dominant message". Kept deliberately small:
//   - UUIDs (pod UIDs) → <uid>
//   - hex runs of 12+ characters (container IDs, image digests, sandbox IDs) → <id>
//   - digit runs of 4+ (PIDs, ports, timestamps, byte counts) → <n>
//
// Short numbers stay (exit codes, "container_linux.go:380" line numbers), and paths stay: they
// usually name the cause ("/proc/self/fd", "mount /var/lib/kubelet/...").
var (
	reUUID   = regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
	reHex    = regexp.MustCompile(`(?i)\b[0-9a-f]*[0-9][0-9a-f]*\b`)
	reNumber = regexp.MustCompile(`[0-9]{4,}`)
)

// normalizeMessage normalises a runtime message as the ledger does (see above).
func normalizeMessage(s string) string {
	s = reUUID.ReplaceAllString(s, "<uid>")
	s = reHex.ReplaceAllStringFunc(s, func(h string) string {
		if len(h) >= 12 {
			return "<id>"
		}
		return h
	})
	return reNumber.ReplaceAllString(s, "<n>")
}
