package model

import (
	"sort"
	"strings"
	"time"
)

// Failure is one start failure in the ledger, recorded once: a transient exit 128
// (RuleStartFailure128, containerd and cri-dockerd), a transient CreateContainerError /
// RunContainerError (RuleCreateErrorTransient, how CRI-O reports the same runtime trouble), or a
// pod sandbox the runtime failed to create (a FailedCreatePodSandBox event, events.go).
type Failure struct {
	PodUID    string
	Pod       string // namespace/name
	Container string // "" for a sandbox failure, which is the pod's
	Node      string // the node's name
	// NodeUID is the UID of the Node object the pod ran on when the failure was recorded, so a
	// node deleted and registered again under the same name does not inherit it. It is "" when
	// the model knows no Node object of that name (nodes forbidden by RBAC): the name stands in.
	NodeUID      string
	Workload     string // namespace/Owner, or the pod key for an unmanaged pod
	RestartCount int32
	// At is the time the window measures: when doomwatch saw the failure happen (the batch's now)
	// for a pod it already knew, or, for a failure already present when the pod was first seen,
	// its FinishedAt no later than the moment it was seen (see recordFailures).
	At time.Time
	// FinishedAt is the runtime's finishedAt, part of the failure's identity; zero for a create
	// error, which has none (it is identified by the moment doomwatch first saw it, At).
	FinishedAt time.Time
	ExitCode   int32  // 128; 0 for a create error or a sandbox failure, which have no exit code
	Reason     string // ContainerCannotRun, StartError, CreateContainerError, RunContainerError or FailedCreatePodSandBox
	Message    string // normalised: IDs, hashes and numbers replaced, so equal causes compare equal
}

// ledger is the start failure ledger: every transient start failure (classify's
// RuleStartFailure128 and RuleCreateErrorTransient) seen within the window, recorded once, oldest
// first by Failure.At.
//
// Deduplication: an exit-128 failure is identified by pod UID, container and the time it finished.
// The same termination first shows in state.terminated and, after the restart, in
// lastState.terminated with an unchanged finishedAt, so the pair is counted once however many
// updates repeat it. Failures without finishedAt are not recorded at all (see
// recorder.terminated). A create error has no finishedAt; it is identified by the moment the model
// first saw the container waiting in it (see recordCreateErrors). A sandbox failure is identified by
// its FailedCreatePodSandBox event and that event's count (see recordSandboxFailure).
type ledger struct {
	entries []ledgerEntry // sorted by At; entries[head:] are live
	head    int
	seen    map[failureKey]struct{}
	// horizon: entries at or before it were dropped for capacity; they are not re-admitted when
	// their pod reports them again.
	horizon time.Time
	// gen counts the changes to the live entries, for the caches judged from them.
	gen uint64
}

type ledgerEntry struct {
	Failure
	key failureKey
}

type failureKey struct {
	uid, container string // for a sandbox failure, container is the event's name
	// at is finishedAt (exit 128) or first seen (create error), in Unix nanoseconds; a sandbox
	// failure's event count.
	at                   int64
	createError, sandbox bool
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
	l.gen++
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
	l.gen++
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
		l.gen++
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
			l.gen++
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
//   - pod UIDs → <uid>: hyphenated as the API writes them, or with underscores as the systemd
//     cgroup driver writes them in slice names ("kubepods-burstable-pod<uid>.slice"); glued to a
//     "pod" prefix, as cgroup paths write them, a UID in either form or a static pod's 32 hex
//     digits → pod<uid>
//   - hex runs of 12+ characters with a digit (container IDs, image digests, sandbox IDs) → <id>
//   - digit runs of 4+ (PIDs, ports, timestamps, byte counts) → <n>
//
// A UID or hex run counts only as a whole word: it starts and ends at the ends of the message or
// at a character that is not an ASCII letter or digit. "_" bounds it as "-", "." or "/" do (systemd
// slices, "cri-containerd-<id>.scope", the kubelet's container names "app_web-1_shop_<uid>_0"); a
// hex tail of a longer word ("xyz0123456789abcdef") stays. Short numbers stay (exit codes,
// "container_linux.go:380" line numbers), and paths stay: they usually name the cause
// ("/proc/self/fd", "mount /var/lib/kubelet/...").
//
// normalizeMessage is one pass over the words (maximal runs of ASCII letters and digits), since an
// ID can only start where a word does.
func normalizeMessage(s string) string {
	var b []byte // nil until something is replaced
	last := 0    // s[last:] is not in b yet
	replace := func(start, end int, with string) {
		if b == nil {
			b = make([]byte, 0, len(s))
		}
		b = append(append(b, s[last:start]...), with...)
		last = end
	}
	for i := 0; i < len(s); {
		if !isAlnum(s[i]) {
			i++
			continue
		}
		if strings.HasPrefix(s[i:], "pod") {
			if end, _ := idAt(s, i+3); end > 0 {
				replace(i, end, "pod<uid>")
				i = end
				continue
			}
		}
		if end, uid := idAt(s, i); end > 0 {
			if uid {
				replace(i, end, "<uid>")
			} else {
				replace(i, end, "<id>")
			}
			i = end
			continue
		}
		// Any other word: only its digit runs of 4+ go.
		for i < len(s) && isAlnum(s[i]) {
			if !isDigit(s[i]) {
				i++
				continue
			}
			j := i
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			if j-i >= 4 {
				replace(i, j, "<n>")
			}
			i = j
		}
	}
	if b == nil {
		return s
	}
	return string(append(b, s[last:]...))
}

// idAt returns the end of the UID or hex run that starts at s[i] and ends a word (0 if there is
// none), and whether it is a UID.
func idAt(s string, i int) (end int, uid bool) {
	if e := uuidAt(s, i); e > 0 && wordEnds(s, e) {
		return e, true
	}
	e, digit := i, false
	for e < len(s) && isHex(s[e]) {
		digit = digit || isDigit(s[e])
		e++
	}
	if e-i >= 12 && digit && wordEnds(s, e) {
		return e, false
	}
	return 0, false
}

// uuidAt returns the end of the 8-4-4-4-12 hex digits at s[i], separated throughout by "-" or
// throughout by "_", or 0.
func uuidAt(s string, i int) int {
	if i+36 > len(s) {
		return 0
	}
	sep := s[i+8]
	if sep != '-' && sep != '_' {
		return 0
	}
	for k := 0; k < 36; k++ {
		switch c := s[i+k]; k {
		case 8, 13, 18, 23:
			if c != sep {
				return 0
			}
		default:
			if !isHex(c) {
				return 0
			}
		}
	}
	return i + 36
}

func wordEnds(s string, i int) bool { return i == len(s) || !isAlnum(s[i]) }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHex(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func isAlnum(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
