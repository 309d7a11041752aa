package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"

	"doomwatch/contract"
	"doomwatch/kube/demo"
	"doomwatch/recording"
	"doomwatch/sanitize"
)

// Defaults of record's bounds: a day of history, as much as a day of a 10,000-pod cluster's churn
// takes (BENCHMARKS.md, "The flight recorder"), well short of sloop's 14 days and 32 GiB, which
// fill disks.
const (
	defaultRetention = 24 * time.Hour
	defaultMaxSize   = "1Gi"
)

// record is `doomwatch record -o DIR`: headless, it records what the informers deliver until
// interrupted or --for has passed, for `doomwatch replay`.
type record struct {
	*common
	pods     sourceOptions // -A, -l
	rec      recordFlags
	duration time.Duration
}

func newRecord() command { return &record{} }

func (r *record) name() string { return "record" }

// recordFlags are where and how much a recording keeps: record's -o, --retention and
// --max-size, and the root's --record with the same bounds.
type recordFlags struct {
	path      string
	retention time.Duration
	maxSize   string
	// max is maxSize in bytes, once validated.
	max int64
}

func (f *recordFlags) bounds(fs *pflag.FlagSet) {
	fs.DurationVar(&f.retention, "retention", defaultRetention, "Keep this much of the recorded time, dropping the oldest as it records (0: keep all).")
	fs.StringVar(&f.maxSize, "max-size", defaultMaxSize, "Keep the recording within this size on disk, dropping the oldest as it records (a quantity: 512Mi, 2Gi; 0: unbounded).")
}

// validate checks the bounds, and that path can be a recording: a new or empty directory, so
// that a mistake is told before connecting to the cluster.
func (f *recordFlags) validate(flag string) error {
	if f.retention < 0 {
		return fmt.Errorf("--retention must not be negative, got %s", f.retention)
	}
	q, err := resource.ParseQuantity(f.maxSize)
	if err != nil {
		return fmt.Errorf("--max-size %q is not a quantity such as 512Mi or 2Gi", f.maxSize)
	}
	if f.max = q.Value(); f.max < 0 {
		return fmt.Errorf("--max-size must not be negative, got %s", f.maxSize)
	}
	if f.max > 0 && f.max < minRecordingSize {
		return fmt.Errorf("--max-size %s is less than a recording's least (%s): one snapshot would not fit", f.maxSize, resource.NewQuantity(minRecordingSize, resource.BinarySI))
	}
	entries, err := os.ReadDir(f.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		if st, serr := os.Stat(f.path); serr == nil && !st.IsDir() {
			return fmt.Errorf("%s %s: a file is there; a recording is a directory", flag, f.path)
		}
		return fmt.Errorf("%s %s: %w", flag, f.path, err)
	case len(entries) > 0:
		return fmt.Errorf("%s %s: the directory is not empty; record into a new one (a recording is a directory of segments)", flag, f.path)
	}
	return nil
}

// minRecordingSize is the least --max-size: a snapshot of a small cluster, with room to spare.
const minRecordingSize = 1 << 20

func (r *record) addFlags(fs *pflag.FlagSet) *common {
	r.common = newCommon()
	fs.StringVarP(&r.rec.path, "output", "o", "", "The directory to record into, `DIR` (required): new, or empty.")
	fs.DurationVar(&r.duration, "for", 0, "Stop after recording this long (with --demo, of simulated time; default: until SIGINT or SIGTERM).")
	r.rec.bounds(fs)
	r.pods.podFlags(fs, "Record")
	r.demoFlags(fs, false)
	r.intervalFlag(fs)
	r.programFlags(fs)
	return r.common
}

func (r *record) usage(prog string) string {
	return fmt.Sprintf(`Record what the cluster says (pods, nodes, Warning events, workloads) for %[1]s replay.

Usage:
  %[1]s record -o DIR [--for DURATION] [--retention 24h] [--max-size 1Gi] [flags]
  %[1]s record -o DIR --demo --for 2m      a recording of the demo's story

It runs headless until SIGINT or SIGTERM, or for --for, and keeps at most --retention of history
and --max-size on disk, dropping the oldest as it goes. What it wrote is flushed at least once a
second: after a crash the recording replays up to its last flushed second. It says on stderr when
it has synced, when it cannot write (a full disk, say) and when it writes again; it goes on
recording meanwhile.

It takes the dashboard's connection and scope flags, and --context with several contexts.
doomwatch only gets, lists and watches; it never writes to the cluster.
Exit codes: 0 recorded, 1 error (e.g. cluster unreachable, the recording could not be written at
the end), 2 usage error.

Flags:
`, prog)
}

func (r *record) validate(fs *pflag.FlagSet, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("unexpected argument %q: the recording's directory is -o DIR", args[0])
	}
	if r.rec.path == "" {
		return errors.New("record needs -o DIR, the directory to record into")
	}
	if err := r.common.validate(fs); err != nil {
		return err
	}
	if err := r.pods.validate(); err != nil {
		return err
	}
	if r.duration < 0 {
		return fmt.Errorf("--for must not be negative, got %s", r.duration)
	}
	if err := r.rec.validate("-o"); err != nil {
		return err
	}
	return r.validateValues()
}

func (r *record) validateFleet() error { return nil }

func (r *record) source() sourceOptions { return r.pods }

// recordEvery is how often the recorder looks at the clock without a batch: --for's end.
const recordEvery = 100 * time.Millisecond

func (r *record) run(ctx context.Context, e *env) error {
	rec, err := startRecorder(e, &r.rec, r.demo, func(s string) { fmt.Fprintln(e.Stderr, "doomwatch: "+s) })
	if err != nil {
		return err
	}
	go governMemory(ctx, e.src.Synced())
	fmt.Fprintf(e.Stderr, "doomwatch: recording %s (%s) into %s; Ctrl-C stops\n", sanitize.Text(rec.of), sanitize.Text(e.src.Scope()), r.rec.path)
	// --for counts from the recording's start, the story's for the demo: its clock runs while
	// the informers list, 20 s of story a second at --speed 20 on a busy machine.
	start := rec.start
	tick := time.NewTicker(recordEvery)
	defer tick.Stop()
	batches, synced := e.src.Batches(), e.src.Synced()
	began := time.Now()
	var stopped error
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-synced:
			synced = nil
			fmt.Fprintf(e.Stderr, "doomwatch: synced after %s; recording the changes\n", time.Since(began).Round(time.Millisecond))
		case <-tick.C:
		case bs, ok := <-batches:
			if !ok {
				stopped = e.src.Err()
				break loop
			}
			rec.append(e.src.Now(), bs)
		}
		if r.duration > 0 && e.src.Now().Sub(start) >= r.duration {
			break
		}
	}
	end := e.src.Now()
	if r.duration > 0 && end.After(start.Add(r.duration)) {
		end = start.Add(r.duration)
	}
	if err := rec.close(end); err != nil {
		return err
	}
	rec.summary(e.Stderr)
	return stopped
}

// summary says what was recorded, once the recording is closed.
func (rc *recorder) summary(w io.Writer) {
	first, last := rc.w.Span()
	rc.mu.Lock()
	batches := rc.batches
	rc.mu.Unlock()
	if batches == 0 {
		fmt.Fprintf(w, "doomwatch: nothing was recorded: no batch came from the source\n")
		return
	}
	fmt.Fprintf(w, "doomwatch: recorded %s (%d batches, %s) into %s\n", last.Sub(first).Truncate(time.Millisecond),
		batches, humanize.IBytes(uint64(max(rc.w.Size(), 0))), rc.path)
}

// recorder appends what a source delivers to a recording and tells when it cannot write, and when
// it can again: on stderr for record, in the dashboard's header for --record.
type recorder struct {
	w    *recording.Writer
	path string
	of   string
	// start is the recording's start: the story's for the demo, else the source's clock then.
	start time.Time
	// say reports a change of state (nil: the dashboard shows note instead).
	say func(string)

	mu      sync.Mutex
	batches int
	failing error
	since   time.Time
}

// startRecorder creates the recording for e's source; say reports its failures to write and
// its recoveries (nil: only note does). A recording of the demo starts at the story's start, so
// that an offset into it is the story's time (replay --at 90s is the story at 90 s).
func startRecorder(e *env, f *recordFlags, isDemo bool, say func(string)) (*recorder, error) {
	start := e.src.Now()
	if isDemo {
		start = demo.Epoch
	}
	w, err := recording.Create(f.path, recording.Options{
		Contexts: e.src.Contexts(), Servers: e.src.Servers(), Scope: e.src.Scope(), Start: start,
		Retention: f.retention, MaxSize: f.max,
	})
	if err != nil {
		return nil, err
	}
	return &recorder{w: w, path: f.path, of: e.m.Name(), say: say, start: start}, nil
}

// append records bs, delivered together at at: each cluster's batch as a batch of its own, marked
// with its cluster, as replay feeds them back.
func (rc *recorder) append(at time.Time, bs []contract.Batch) {
	for i := range bs {
		err := rc.w.Append(at, &bs[i])
		rc.mu.Lock()
		rc.batches++
		rc.saw(err)
		rc.mu.Unlock()
	}
}

// saw notes the result of a write; rc.mu is held.
func (rc *recorder) saw(err error) {
	switch {
	case err != nil && rc.failing == nil:
		rc.failing, rc.since = err, time.Now()
		if rc.say != nil {
			rc.say(fmt.Sprintf("recording: cannot write (%v); still recording, and the gap will be marked", sanitize.Text(err.Error())))
		}
	case err != nil:
		rc.failing = err
	case rc.failing != nil:
		rc.failing = nil
		if rc.say != nil {
			rc.say(fmt.Sprintf("recording: writing again, after %s", time.Since(rc.since).Truncate(time.Second)))
		}
	}
}

// note is the dashboard's header note (tui.Options.Recording).
func (rc *recorder) note() (string, bool) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	// The path is the user's and the error the file system's: the header shows the note as it is.
	if rc.failing != nil {
		return sanitize.Text("rec " + rc.path + ": cannot write: " + rc.failing.Error()), true
	}
	return sanitize.Text("rec " + rc.path), false
}

// close marks the recording's end at at, the source's clock when recording stopped, writes what is
// left out and closes the recording. Without the mark a recording ends at its last batch: a quiet
// cluster's (or the demo's, once its story is told) would end before --for did, and replay --at
// between the two would be past its end. The mark is a batch without changes, not counted.
func (rc *recorder) close(at time.Time) error {
	rc.mu.Lock()
	recorded := rc.batches > 0
	rc.mu.Unlock()
	if _, last := rc.w.Span(); recorded && at.After(last) {
		err := rc.w.Append(at, &contract.Batch{})
		rc.mu.Lock()
		rc.saw(err)
		rc.mu.Unlock()
	}
	if err := rc.w.Close(); err != nil {
		return fmt.Errorf("recording %s: %w", rc.path, err)
	}
	return nil
}

// tee records every batch of in, then passes each delivery on as it came, until in is closed, ctx
// ends or stop is called. stop returns once the last Append has returned, so that close and
// summary come after every write: the dashboard quits while a batch may be on its way through.
func (rc *recorder) tee(ctx context.Context, in <-chan []contract.Batch, now func() time.Time) (out <-chan []contract.Batch, stop func()) {
	ch := make(chan []contract.Batch)
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		defer close(ch)
		for {
			var bs []contract.Batch
			var ok bool
			select {
			case bs, ok = <-in:
			case <-quit:
				return
			case <-ctx.Done():
				return
			}
			if !ok {
				return
			}
			rc.append(now(), bs)
			select {
			case ch <- bs:
			case <-quit:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	// The source's senders give up when ctx ends, so in need not be drained here.
	return ch, sync.OnceFunc(func() { close(quit); <-done })
}
