package recording

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"doomwatch/contract"
	"doomwatch/model"
	"doomwatch/model/scaletest"
)

// smallPods is the cluster the file-level tests record: small enough to replay a recording once
// per byte of its tail.
const smallPods = 60

// recordSmall records the load of a smallPods cluster and then batches of churn, one a second
// (so each is flushed as a frame of its own), with w; it returns the live model's steps, with
// the live model's state after the batches from keep on (what the test compares costs more than
// the recording). each, when not nil, is handed each Append's error.
func recordSmall(t *testing.T, w *Writer, batches, keep int, each func(i int, err error)) []step {
	t.Helper()
	live := model.NewFleet(model.DefaultConfig(), []string{"small"})
	var steps []step
	at := scaletest.T0
	add := func(b contract.Batch) {
		live.Apply(&b, at)
		err := w.Append(at, &b)
		if each != nil {
			each(len(steps), err)
		} else if err != nil {
			t.Fatalf("Append: %v", err)
		}
		st := step{at: at, batch: b}
		if len(steps) >= keep {
			st.state, st.objects = state(t, live, at), objects(t, live)
		}
		steps = append(steps, st)
		at = at.Add(time.Second)
	}
	for _, b := range scaletest.LoadBatches(smallPods) {
		add(b)
	}
	for k := range batches {
		add(scaletest.ChurnBatch(k, 10, smallPods))
	}
	return steps
}

// frameEnds are the offsets in a segment file just past its header and past each frame.
func frameEnds(t *testing.T, b []byte) []int {
	t.Helper()
	n := len(magic) + 2
	off := n + 8 + int(binary.LittleEndian.Uint32(b[n:]))
	ends := []int{off}
	for off+8 <= len(b) {
		off += 8 + int(binary.LittleEndian.Uint32(b[off:]))
		ends = append(ends, off)
	}
	if off != len(b) {
		t.Fatalf("frames end at %d, the file at %d", off, len(b))
	}
	return ends
}

// TestTornTail cuts the last segment of a recording, as a crash leaves it, at every byte of its
// last frames, and appends garbage or flips a byte in its last frame: the recording opens, and
// replays and seeks up to its last whole batch.
func TestTornTail(t *testing.T) {
	src := filepath.Join(t.TempDir(), "rec")
	w, err := Create(src, Options{Contexts: []string{"small"}, SnapshotEvery: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// Two segments: the first is closed when the second starts; the second is cut as a SIGKILL
	// leaves it (every batch flushed, the zstd stream not ended).
	steps := recordSmall(t, w, 30, 0, nil)
	segs := segments(t, src)
	if len(segs) != 2 {
		t.Fatalf("%d segments, want 2", len(segs))
	}
	whole, err := os.ReadFile(segs[1])
	if err != nil {
		t.Fatal(err)
	}
	ends := frameEnds(t, whole)
	// The second segment holds its snapshot (frame 1), then one batch a frame: the batches from
	// first on, the first that came 20s after the first segment's start.
	first := len(steps) - (len(ends) - 2)
	if first != 20 {
		t.Fatalf("the second segment starts after batch %d; its frames: %v", first, ends)
	}
	cut := func(t *testing.T, data []byte) (*Reader, string) {
		t.Helper()
		dir := filepath.Join(t.TempDir(), "rec")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		old, err := os.ReadFile(segs[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(segs[0])), old, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(segs[1])), data, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := Open(dir)
		if err != nil {
			t.Fatalf("Open of the recording cut at %d of %d bytes: %v", len(data), len(whole), err)
		}
		return r, dir
	}
	// want is the last batch a cut at n keeps: the last whole frame's; a cut within the header or
	// the snapshot leaves the first segment, whose last batch is the one before the second's.
	want := func(n int) int {
		kept := first - 1
		for i, e := range ends[2:] {
			if e <= n {
				kept = first + i
			}
		}
		return kept
	}
	check := func(t *testing.T, data []byte, wantLast int) {
		t.Helper()
		r, dir := cut(t, data)
		defer r.Close()
		if _, last := r.Span(); !last.Equal(steps[wantLast].at) {
			t.Fatalf("cut at %d: span ends at %s, want batch %d's %s", len(data), last, wantLast, steps[wantLast].at)
		}
		// The replay from the start is the live model after the last whole batch.
		var final *model.Fleet
		var at time.Time
		n := replay(t, dir, func(_ int, f *model.Fleet, fr Frame) { final, at = f, fr.At })
		if n != wantLast+1 {
			t.Fatalf("cut at %d: replayed %d batches, want %d", len(data), n, wantLast+1)
		}
		if got := state(t, final, at); got != steps[wantLast].state {
			t.Fatalf("cut at %d: the replay's end is not batch %d's state: %s", len(data), wantLast, firstDiff(steps[wantLast].state, got))
		}
		// A seek past the end holds the objects of the last whole batch.
		f, err := seek(r, model.DefaultConfig(), steps[len(steps)-1].at.Add(time.Hour))
		if err != nil {
			t.Fatalf("cut at %d: Seek: %v", len(data), err)
		}
		if got := objects(t, f); got != steps[wantLast].objects {
			t.Fatalf("cut at %d: the seek's objects are not batch %d's: %s", len(data), wantLast, firstDiff(steps[wantLast].objects, got))
		}
	}
	// Every byte of the last two frames, and a few of the segment's start.
	for n := ends[len(ends)-3]; n <= len(whole); n++ {
		check(t, whole[:n], want(n))
	}
	for _, n := range []int{0, 5, ends[0] - 1, ends[0], ends[1] - 1} {
		check(t, whole[:n], want(n))
	}
	last := len(steps) - 1
	garbage := append(append([]byte(nil), whole...), "not a frame, and longer than a frame's header"...)
	check(t, garbage, last)
	long := binary.LittleEndian.AppendUint32(append([]byte(nil), whole...), 1<<30) // a length past the end
	check(t, append(long, 0, 0, 0, 0, 1, 2, 3), last)
	flipped := append([]byte(nil), whole...)
	flipped[len(flipped)-3] ^= 0x40
	check(t, flipped, last-1)
}

// TestEmpty: a directory without a readable segment is ErrEmpty.
func TestEmpty(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "00000001"+segmentExt), []byte("DOOM"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir); !errors.Is(err, ErrEmpty) {
		t.Fatalf("Open = %v, want ErrEmpty", err)
	}
}
