package recording

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"

	"doomwatch/contract"
)

// DefaultSnapshotEvery is how often a writer starts a segment with a full snapshot when Options
// does not say: the most a seek replays (BENCHMARKS.md, recording: seek).
const DefaultSnapshotEvery = time.Minute

// flushEvery is how long a record may wait in memory before it is written to the file: after a
// crash (SIGKILL included) the recording replays up to its last flush.
const flushEvery = time.Second

// flushSize is how many bytes of records a writer compresses before it writes them out, even
// within the second, so that a burst does not pile up in memory.
const flushSize = 4 << 20

// Options configure a recording.
type Options struct {
	// Contexts are the clusters' context names, in the order of contract.Batch.Cluster; at least one.
	Contexts []string
	// Servers are their API servers' addresses, in the same order, as a live --once prints them
	// ("" for the demo); optional.
	Servers []string
	// Scope is what the recorder watched, as the dashboard's header says it ("ns shop · app=web").
	Scope string
	// Start is when the recording starts on the source's clock: its span begins there, with an
	// empty state, rather than at the first batch. The recorder sets it to the time it started,
	// so that an offset into a recording of the demo is the story's time.
	Start time.Time
	// Retention drops what is older than this, as recording goes on (0: keep everything). It is
	// applied a segment at a time, so up to SnapshotEvery more than it is kept.
	Retention time.Duration
	// MaxSize bounds the recording's bytes on disk (0: unbounded): the oldest segments go first.
	// The segment being written is never dropped, and a segment is rotated once it holds a quarter
	// of MaxSize, so the bound holds within that quarter.
	MaxSize int64
	// SnapshotEvery is how much recorded time a segment spans, each starting with a full snapshot
	// (default DefaultSnapshotEvery): a seek loads the snapshot before it and replays at most this
	// much.
	SnapshotEvery time.Duration
}

// A Writer records batches into a recording: a directory of segments (FORMAT.md). Its methods
// may be called from any goroutine, one at a time or not.
type Writer struct {
	mu   sync.Mutex
	dir  string
	opts Options
	enc  *encoder
	z    *zstd.Encoder
	rec  []byte // records waiting for the compressor
	snap []byte // a snapshot's chunk, on its way to the compressor
	// seg is the segment being written; nil before the first batch, and after a write failed
	// until a new segment could be started.
	seg *segment
	// old are the segments before seg still on disk, oldest first.
	old []segmentInfo
	seq uint64
	// last is the time of the last batch appended (when the state was last changed), flushedAt
	// the time of the batch that was last written out with those before it.
	last, flushedAt time.Time
	started         bool
	// gap: batches since the last segment's end were not written; the next segment says so.
	gap   bool
	timer *time.Timer
	// err is a background flush's error, handed to the next caller.
	err       error
	closed    bool
	create    func(path string) (file, error)
	frame     []byte
	frameEach bool
}

// file is what a writer needs of a segment file (*os.File; a test's failing disk).
type file interface {
	io.Writer
	Sync() error
	Close() error
	Truncate(size int64) error
}

type segmentInfo struct {
	path  string
	seq   uint64
	start time.Time
	size  int64
}

type segment struct {
	segmentInfo
	f file
	// out is the compressor's output not yet written as a frame.
	out []byte
	// snapshot is the size of the segment's header and snapshot, so that a segment is not rotated
	// for size before it holds more than its snapshot.
	snapshot int64
	dirty    bool
}

// Write takes the compressor's output.
func (s *segment) Write(p []byte) (int, error) {
	s.out = append(s.out, p...)
	return len(p), nil
}

// Create starts a recording at path, a directory that must not exist or be empty. Nothing is
// written until the first Append.
func Create(path string, opts Options) (*Writer, error) { return create(path, opts, tuning{}) }

// tuning holds the choices BenchmarkRecord measures against each other (BENCHMARKS.md); the zero
// value is what Create uses.
type tuning struct {
	// noDiff writes every version of an object whole, never as a diff against the previous one.
	noDiff bool
	// frameEach ends the zstd frame at every flush, so that no flush compresses against another.
	frameEach bool
	// level is the zstd level (0: SpeedDefault).
	level zstd.EncoderLevel
	// window is the zstd window (0: writeWindow).
	window int
}

func create(path string, opts Options, tune tuning) (*Writer, error) {
	if len(opts.Contexts) == 0 {
		return nil, errors.New("recording: no contexts")
	}
	if opts.SnapshotEvery <= 0 {
		opts.SnapshotEvery = DefaultSnapshotEvery
	}
	if opts.Retention < 0 || opts.MaxSize < 0 {
		return nil, errors.New("recording: retention and max size must not be negative")
	}
	if err := os.Mkdir(path, 0o755); err != nil {
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("creating recording: %w", err)
		}
		entries, rerr := os.ReadDir(path)
		if rerr != nil {
			return nil, fmt.Errorf("creating recording: %w", rerr)
		}
		if len(entries) > 0 {
			return nil, fmt.Errorf("creating recording: %s is not empty: %w", path, fs.ErrExist)
		}
	}
	if tune.level == 0 {
		tune.level = zstd.SpeedDefault
	}
	if tune.window == 0 {
		tune.window = writeWindow
	}
	z, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(tune.window),
		zstd.WithEncoderLevel(tune.level))
	if err != nil {
		return nil, fmt.Errorf("recording: %w", err)
	}
	if len(opts.Servers) > 0 && len(opts.Servers) != len(opts.Contexts) {
		return nil, fmt.Errorf("recording: %d servers for %d contexts", len(opts.Servers), len(opts.Contexts))
	}
	enc := newEncoder(len(opts.Contexts))
	enc.noDiff = tune.noDiff
	w := &Writer{
		dir: path, opts: opts, enc: enc, z: z, frameEach: tune.frameEach,
		create: func(p string) (file, error) {
			return os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		},
	}
	if !opts.Start.IsZero() {
		w.started, w.last = true, opts.Start
	}
	return w, nil
}

// Size is the recording's bytes on disk, as MaxSize counts them.
func (w *Writer) Size() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.size()
}

// Span is the recorded time so far: from the oldest segment kept (or Options.Start) to the last
// batch; zero before the first.
func (w *Writer) Span() (first, last time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case len(w.old) > 0:
		first = w.old[0].start
	case w.seg != nil:
		first = w.seg.start
	}
	return first, w.last
}

// Append records b, which the source delivered at at (its clock: the time the model is given with
// the batch). b.Cluster is the index of its context in Options.Contexts. The batch's objects are
// kept (not copied) until a later batch replaces them; they must not be modified, as the model
// does not modify them.
//
// An error says the batch could not be written (the disk is full, say); the writer keeps the
// state regardless, and the next Append starts a new segment from a snapshot once it can write
// again, marked as following a gap. An error also names an object the recording cannot hold (an
// unstructured object with no JSON encoding, a kind name no API server would accept), which is
// left out of the recording while the rest of the batch is recorded.
func (w *Writer) Append(at time.Time, b *contract.Batch) error {
	if b == nil {
		return errors.New("recording: no batch")
	}
	if b.Cluster < 0 || b.Cluster >= len(w.enc.clusters) {
		return fmt.Errorf("recording: batch of cluster %d, the recording has %d", b.Cluster, len(w.enc.clusters))
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return errors.New("recording: append after close")
	}
	err := w.takeErr()
	if !w.started {
		w.started, w.last = true, at
	}
	if w.seg != nil && w.due(at) {
		if rerr := w.finishSegment(); rerr != nil && err == nil {
			err = rerr
		}
	}
	if w.seg == nil {
		if serr := w.startSegment(); serr != nil {
			// Keep the state, so that the next segment's snapshot holds this batch.
			w.enc.appendBatch(w.rec[:0], at, b)
			w.enc.takeParts()
			w.last = at
			if err == nil {
				err = serr
			}
			return err
		}
	}
	var lerr error
	w.rec, lerr = w.enc.appendBatch(w.rec, at, b)
	if lerr != nil && err == nil {
		err = fmt.Errorf("recording: %w", lerr)
	}
	w.last = at
	w.seg.dirty = true
	// A large record comes in parts: all but the last go to the compressor now, the last waits as
	// a small record would.
	for _, p := range w.enc.takeParts() {
		if _, werr := w.z.Write(p); werr != nil {
			if err == nil {
				err = w.broken(werr)
			}
			return err
		}
	}
	// A second of the source's clock, or a burst, is written out at once; the timer writes out
	// what a source that went quiet left.
	if at.Sub(w.flushedAt) >= flushEvery || len(w.rec) >= flushSize {
		if ferr := w.flush(); ferr != nil && err == nil {
			err = ferr
		}
		w.flushedAt = at
	} else if w.timer == nil {
		w.timer = time.AfterFunc(flushEvery, w.timedFlush)
	}
	return err
}

// due reports whether the segment has spanned SnapshotEvery, or grown past its share of MaxSize.
func (w *Writer) due(at time.Time) bool {
	s := w.seg
	if at.Sub(s.start) >= w.opts.SnapshotEvery {
		return true
	}
	return w.opts.MaxSize > 0 && s.size > w.opts.MaxSize/4 && s.size > 2*s.snapshot
}

func (w *Writer) takeErr() error {
	err := w.err
	w.err = nil
	return err
}

func (w *Writer) timedFlush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.timer = nil
	if w.closed {
		return
	}
	if err := w.flush(); err != nil {
		w.err = err
	}
}

// Flush writes what was appended to the file now.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.takeErr(); err != nil {
		return err
	}
	return w.flush()
}

// flush compresses the records waiting and writes them out as one frame.
func (w *Writer) flush() error {
	s := w.seg
	if s == nil || !s.dirty {
		return nil
	}
	if _, err := w.z.Write(w.rec); err != nil {
		return w.broken(err)
	}
	w.rec = w.rec[:0]
	if cap(w.rec) > flushSize {
		// Only an initial list grows the buffer past a flush's worth (10,000 pods take about
		// 12 MB): it would stay live for good.
		w.rec = nil
	}
	if w.frameEach {
		if err := w.z.Close(); err != nil {
			return w.broken(err)
		}
		w.z.Reset(s)
	} else if err := w.z.Flush(); err != nil {
		return w.broken(err)
	}
	if err := w.writeFrame(); err != nil {
		return err
	}
	s.dirty = false
	w.enforceRetention()
	w.enforceSize()
	return nil
}

// writeFrame writes the compressor's output as one frame.
func (w *Writer) writeFrame() error {
	s := w.seg
	if len(s.out) == 0 {
		return nil
	}
	w.frame = appendFrame(w.frame[:0], s.out)
	n, err := s.f.Write(w.frame)
	if err != nil {
		// Cut the torn frame off, if the file lets us; a reader would skip it anyway.
		if n > 0 {
			_ = s.f.Truncate(s.size)
		}
		return w.broken(err)
	}
	s.size += int64(n)
	s.out = s.out[:0]
	return nil
}

// broken gives up the segment after a failed write: it ends where its last whole frame does, and
// the next Append starts a new one.
func (w *Writer) broken(err error) error {
	if s := w.seg; s != nil {
		_ = s.f.Close()
		w.old = append(w.old, s.segmentInfo)
		w.seg = nil
	}
	w.rec = w.rec[:0]
	w.gap = true
	return fmt.Errorf("writing recording: %w", err)
}

// finishSegment ends the segment's zstd stream, syncs and closes it.
func (w *Writer) finishSegment() error {
	if err := w.flush(); err != nil {
		return err
	}
	s := w.seg
	if s == nil {
		return nil
	}
	if err := w.z.Close(); err != nil {
		return w.broken(err)
	}
	if err := w.writeFrame(); err != nil {
		return err
	}
	if err := s.f.Sync(); err != nil {
		return w.broken(err)
	}
	if err := s.f.Close(); err != nil {
		return w.broken(err)
	}
	w.old = append(w.old, s.segmentInfo)
	w.seg = nil
	return nil
}

// startSegment starts the next segment with a snapshot of the state at the last batch.
func (w *Writer) startSegment() error {
	w.seq++
	path := filepath.Join(w.dir, fmt.Sprintf("%08d%s", w.seq, segmentExt))
	f, err := w.create(path)
	if err != nil {
		w.gap = true
		return fmt.Errorf("writing recording: %w", err)
	}
	s := &segment{segmentInfo: segmentInfo{path: path, seq: w.seq, start: w.last}, f: f}
	h := header{version: version, seq: w.seq, start: w.last, gap: w.gap && w.seq > 1, contexts: w.opts.Contexts, servers: w.opts.Servers, scope: w.opts.Scope}
	hb := h.marshal()
	if _, err := f.Write(hb); err != nil {
		_ = f.Close()
		_ = os.Remove(path)
		w.gap = true
		return fmt.Errorf("writing recording: %w", err)
	}
	s.size = int64(len(hb))
	w.seg = s
	w.z.Reset(s)
	var err2 error
	w.snap, err2 = w.enc.writeSnapshot(w.last, w.snap, func(p []byte) error {
		_, err := w.z.Write(p)
		return err
	})
	if err2 != nil {
		return w.broken(err2)
	}
	s.dirty = true
	if err := w.flush(); err != nil {
		return err
	}
	s.snapshot = s.size
	w.gap = false
	return nil
}

// enforceRetention drops the segments whose every record is older than Retention: those whose
// successor starts before the cutoff.
func (w *Writer) enforceRetention() {
	if w.opts.Retention <= 0 {
		return
	}
	cutoff := w.last.Add(-w.opts.Retention)
	for len(w.old) > 0 {
		next := w.nextStart(0)
		if !next.Before(cutoff) {
			return
		}
		w.dropOldest()
	}
}

// nextStart is the start of the segment after old[i].
func (w *Writer) nextStart(i int) time.Time {
	if i+1 < len(w.old) {
		return w.old[i+1].start
	}
	if w.seg != nil {
		return w.seg.start
	}
	return w.last
}

// enforceSize drops the oldest segments while the recording is over MaxSize.
func (w *Writer) enforceSize() {
	if w.opts.MaxSize <= 0 {
		return
	}
	for len(w.old) > 0 && w.size() > w.opts.MaxSize {
		w.dropOldest()
	}
}

func (w *Writer) size() int64 {
	var n int64
	for _, s := range w.old {
		n += s.size
	}
	if w.seg != nil {
		n += w.seg.size
	}
	return n
}

func (w *Writer) dropOldest() {
	// A segment that cannot be removed is forgotten all the same: the writer cannot do better,
	// and the reader reads whatever is there.
	_ = os.Remove(w.old[0].path)
	w.old = w.old[1:]
}

// Close writes what is left and closes the recording.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
	err := w.takeErr()
	if ferr := w.finishSegment(); ferr != nil && err == nil {
		err = ferr
	}
	return err
}
