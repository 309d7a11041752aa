package recording

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"

	"doomwatch/contract"
	"doomwatch/podrec"
	"doomwatch/sanitize"
)

// A Reader reads a recording. It is not safe for concurrent use.
type Reader struct {
	dir      string
	contexts []string
	servers  []string
	scope    string
	segs     []segmentInfo
	last     time.Time
	z        *zstd.Decoder
	in       *podrec.Interner
}

// Frame is one batch of a recording, at the time it was recorded.
type Frame struct {
	At    time.Time
	Batch *contract.Batch
	// Reset says that batches before this one were not recorded (the recorder could not write
	// for a while): this frame and those that follow at the same time are a snapshot of every
	// cluster, to be applied to a fresh fleet, which then goes on with the frames after.
	Reset bool
}

// ErrEmpty is returned by Open for a recording that holds no segment that can be read.
var ErrEmpty = errors.New("the recording holds nothing")

// init lists the recording's segments and reads the last one to its end.
func (r *Reader) init() error {
	entries, err := os.ReadDir(r.dir)
	if err != nil {
		return fmt.Errorf("opening recording: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		num, ok := strings.CutSuffix(name, segmentExt)
		if !ok || e.IsDir() {
			continue
		}
		if _, err := strconv.ParseUint(num, 10, 64); err != nil {
			continue
		}
		path := filepath.Join(r.dir, name)
		h, err := readHeaderFile(path)
		if err != nil {
			if errors.Is(err, errNotSegment) || errors.Is(err, os.ErrNotExist) {
				continue // a segment torn at its start, or dropped by the writer meanwhile
			}
			return fmt.Errorf("opening recording: %s: %w", name, err)
		}
		if r.contexts == nil {
			// The servers and the scope are for the screen: a recording is a file anyone may
			// have written, and they enter doomwatch here.
			r.contexts, r.scope = h.contexts, sanitize.Text(h.scope)
			for _, s := range h.servers {
				r.servers = append(r.servers, sanitize.Text(s))
			}
		} else if !slices.Equal(r.contexts, h.contexts) {
			return fmt.Errorf("opening recording: %s records contexts %v, the others %v", name, h.contexts, r.contexts)
		}
		var size int64
		if fi, err := e.Info(); err == nil {
			size = fi.Size()
		}
		r.segs = append(r.segs, segmentInfo{path: path, seq: h.seq, start: h.start, size: size})
	}
	slices.SortFunc(r.segs, func(a, b segmentInfo) int { return cmp.Compare(a.seq, b.seq) })
	if len(r.segs) == 0 {
		return ErrEmpty
	}
	// The span ends at the last intact record of the last segment that holds one: a segment torn
	// before the end of its snapshot holds nothing.
	for len(r.segs) > 0 {
		found := false
		for f, err := range r.segment(len(r.segs) - 1) {
			if err != nil {
				return err
			}
			r.last, found = f.At, true
		}
		if found {
			return nil
		}
		r.segs = r.segs[:len(r.segs)-1]
	}
	return ErrEmpty
}

// Open opens the recording at path, the directory Create made. A torn or truncated tail, of the
// last segment or of any, is not an error: each segment is read up to its last intact record.
func Open(path string) (*Reader, error) {
	z, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(window))
	if err != nil {
		return nil, fmt.Errorf("opening recording: %w", err)
	}
	r := &Reader{dir: path, z: z, in: podrec.NewInterner()}
	if err := r.init(); err != nil {
		z.Close()
		return nil, err
	}
	return r, nil
}

// Close releases the reader's decompressor.
func (r *Reader) Close() error {
	r.z.Close()
	return nil
}

// Contexts are the recorded clusters' context names, in the order of Batch.Cluster.
func (r *Reader) Contexts() []string { return r.contexts }

// Servers are the recorded clusters' API servers, in the order of Contexts, sanitised; nil when
// the recorder did not know them (the demo's are "").
func (r *Reader) Servers() []string { return r.servers }

// Scope is what the recorder watched, as the dashboard's header said it, sanitised.
func (r *Reader) Scope() string { return r.scope }

// Span is the recorded time: from the oldest snapshot kept to the last batch.
func (r *Reader) Span() (first, last time.Time) { return r.segs[0].start, r.last }

// SnapshotBefore is the time of the snapshot Restore starts from for t: the start of t's segment.
func (r *Reader) SnapshotBefore(t time.Time) time.Time { return r.segs[r.segmentAt(t)].start }

// BytesUntil is the size on disk of the segments a replay from the start to t reads: what it
// costs, roughly, as decoding and applying is most of it.
func (r *Reader) BytesUntil(t time.Time) int64 {
	var n int64
	for i := 0; i <= r.segmentAt(t) && i < len(r.segs); i++ {
		n += r.segs[i].size
	}
	return n
}

func readHeaderFile(path string) (*header, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readHeader(bufio.NewReaderSize(f, 4096))
}

// Restore hands apply the frames that make the state at t: the last snapshot at or before t and
// the batches after it up to t, in order, each to be applied to a fresh fleet of the recorded
// contexts (replay.Seek does). It returns the moment that state is at, to which the fleet is to
// be aged: t, or the snapshot's time if t was before it, or the span's end if t was after it.
//
// The state is rebuilt from the snapshot's objects as a dashboard opened at the snapshot's time
// rebuilds it (a start failure is dated by its finishedAt, an event by its last time); what the
// live model remembered only from updates it saw before then, and no object still shows, is not
// in the snapshot (FORMAT.md, "What a snapshot holds").
func (r *Reader) Restore(t time.Time, apply func(Frame)) (time.Time, error) {
	if t.After(r.last) {
		t = r.last
	}
	// A segment torn within its snapshot (the disk filled up as it was written) holds nothing:
	// the one before it is read to its end instead.
	for i := r.segmentAt(t); i >= 0; i-- {
		found := false
		for fr, err := range r.decoded(i, t) {
			if err != nil {
				return time.Time{}, err
			}
			apply(fr)
			found = true
		}
		if found {
			if start := r.segs[i].start; t.Before(start) {
				t = start
			}
			return t, nil
		}
	}
	return t, nil
}

// decoded yields segment i's frames up to t as segment does, decoded on a goroutine of its own
// while the caller applies them: a seek's time is about half decoding and half the model's Apply
// (BenchmarkSeek), and the two overlap on two cores.
func (r *Reader) decoded(i int, t time.Time) iter.Seq2[Frame, error] {
	return func(yield func(Frame, error) bool) {
		const chunk = 32 // frames per send, so that the channel costs nothing next to a frame
		chunks := make(chan []Frame, 4)
		stop := make(chan struct{})
		var err error
		go func() {
			defer close(chunks)
			var c []Frame
			for fr, e := range r.segment(i) {
				if e != nil {
					err = e
					break
				}
				if fr.At.After(t) {
					break
				}
				if c = append(c, fr); len(c) == chunk {
					select {
					case chunks <- c:
					case <-stop:
						return
					}
					c = nil
				}
			}
			if len(c) > 0 {
				select {
				case chunks <- c:
				case <-stop:
				}
			}
		}()
		defer func() {
			close(stop)
			for range chunks { // wait for the decoder to let go of the reader's decompressor
			}
		}()
		for c := range chunks {
			for _, fr := range c {
				if !yield(fr, nil) {
					return
				}
			}
		}
		if err != nil {
			yield(Frame{}, err)
		}
	}
}

// segmentAt is the index of the last segment that starts at or before t (the first, if none).
func (r *Reader) segmentAt(t time.Time) int {
	i, _ := slices.BinarySearchFunc(r.segs, t, func(s segmentInfo, t time.Time) int {
		if s.start.After(t) {
			return 1
		}
		return -1
	})
	return max(i-1, 0)
}

// Batches yields the batches recorded after from and up to to, in order; the error, if any, is
// an I/O error reading the recording (a torn tail is not one). Reaching from costs a seek: the
// segment's snapshot and its batches before from are decoded, not applied.
//
// The frames of a segment's snapshot are yielded only when the segment follows a gap (Frame.Reset).
func (r *Reader) Batches(from, to time.Time) iter.Seq2[Frame, error] {
	return func(yield func(Frame, error) bool) {
		for i := r.segmentAt(from); i < len(r.segs) && !r.segs[i].start.After(to); i++ {
			first := i == r.segmentAt(from)
			for fr, err := range r.segment(i) {
				if err != nil {
					yield(Frame{}, err)
					return
				}
				if fr.At.After(to) {
					return
				}
				snapshot := fr.Reset
				fr.Reset = false
				if snapshot {
					// A segment that continues the one before starts with the state the batches so
					// far made: not news. After a gap it is, and says so.
					if first || !r.gapBefore(i) {
						continue
					}
					fr.Reset = fr.Batch.Cluster == 0
				}
				if !fr.At.After(from) {
					continue
				}
				if !yield(fr, nil) {
					return
				}
			}
		}
	}
}

func (r *Reader) gapBefore(i int) bool {
	h, err := readHeaderFile(r.segs[i].path)
	return err == nil && h.gap
}

// segment yields segment i's frames: its snapshot's, one per cluster, marked Reset, then its
// batches', up to the last intact record.
func (r *Reader) segment(i int) iter.Seq2[Frame, error] {
	return func(yield func(Frame, error) bool) {
		f, err := os.Open(r.segs[i].path)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return // dropped by the writer since Open
			}
			yield(Frame{}, fmt.Errorf("reading recording: %w", err))
			return
		}
		defer f.Close()
		br := bufio.NewReaderSize(f, 64<<10)
		h, err := readHeader(br)
		if err != nil {
			return
		}
		if err := r.z.Reset(&frameReader{r: br}); err != nil {
			return
		}
		dec := newSegmentDecoder(h.version, len(r.contexts), h.start, r.in)
		zr := bufio.NewReaderSize(r.z, 64<<10)
		var body []byte
		for {
			n, err := binary.ReadUvarint(zr)
			if err != nil || n == 0 || n > maxFrame {
				return // the end of the intact records
			}
			if cap(body) < int(n) {
				body = make([]byte, n)
			}
			body = body[:n]
			if _, err := io.ReadFull(zr, body); err != nil {
				return
			}
			at, batches, err := dec.record(body[0], body[1:])
			if err != nil {
				// An intact frame holding a record this reader cannot decode: the recording is
				// read up to it, as up to a torn tail.
				return
			}
			for k := range batches {
				if !yield(Frame{At: at, Batch: &batches[k], Reset: body[0] == recSnapshot}, nil) {
					return
				}
			}
		}
	}
}
