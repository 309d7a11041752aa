package recording

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"doomwatch/model"
)

// TestRetention records 10 minutes, one batch a second, keeping 3, a segment each 30s: while
// appending goes on, the segments older than that go, and the recording still seeks to its first
// moment and reads to its last.
func TestRetention(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rec")
	opts := Options{Contexts: []string{"small"}, Retention: 3 * time.Minute, SnapshotEvery: 30 * time.Second}
	w, err := Create(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	most := 0
	steps := recordSmall(t, w, 10*60, 10*60-int((opts.Retention+2*opts.SnapshotEvery)/time.Second), func(i int, err error) {
		if err != nil {
			t.Fatalf("Append %d: %v", i, err)
		}
		segs := segments(t, dir)
		most = max(most, len(segs))
		// Retention, the segment being written and the one that straddles the cutoff.
		if len(segs) > 8 {
			t.Fatalf("after %d batches, %d segments on disk", i, len(segs))
		}
	})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if most < 7 {
		t.Errorf("at most %d segments: retention dropped more than it should", most)
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	first, last := r.Span()
	end := steps[len(steps)-1].at
	if !last.Equal(end) {
		t.Errorf("span ends at %s, want %s", last, end)
	}
	if age := end.Sub(first); age < opts.Retention || age > opts.Retention+opts.SnapshotEvery+time.Second {
		t.Errorf("span starts %s before its end, want between %s and %s", age, opts.Retention, opts.Retention+opts.SnapshotEvery)
	}
	// The oldest moment kept is a whole state: the objects of the batch at the oldest snapshot.
	f, err := seek(r, model.DefaultConfig(), first)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range steps {
		if s.at.Equal(first) {
			if s.objects == "" {
				t.Fatalf("the first moment kept, %s, is older than the test kept states for", first)
			}
			if got := objects(t, f); got != s.objects {
				t.Errorf("seek to the first moment kept: %s", firstDiff(s.objects, got))
			}
		}
	}
}

// TestMaxSize records 20 minutes into at most 48 KiB: at every batch the recording is within its
// bound, the oldest segments going while appending goes on, and it still reads to its last batch.
func TestMaxSize(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rec")
	const maxSize = 48 << 10
	w, err := Create(dir, Options{Contexts: []string{"small"}, MaxSize: maxSize, SnapshotEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	dropped := false
	steps := recordSmall(t, w, 20*60, 20*60, func(i int, err error) {
		if err != nil {
			t.Fatalf("Append %d: %v", i, err)
		}
		if n := dirSize(t, dir); n > maxSize {
			t.Fatalf("after %d batches the recording holds %d bytes, more than %d", i, n, maxSize)
		}
		segs := segments(t, dir)
		dropped = dropped || filepath.Base(segs[0]) != "00000001"+segmentExt
	})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if !dropped {
		t.Fatal("the first segment was never dropped: the test recorded too little")
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	end := steps[len(steps)-1]
	if _, last := r.Span(); !last.Equal(end.at) {
		t.Fatalf("span ends at %s, want %s", last, end.at)
	}
	f, err := seek(r, model.DefaultConfig(), end.at)
	if err != nil {
		t.Fatal(err)
	}
	if got := objects(t, f); got != end.objects {
		t.Fatalf("seek to the end: %s", firstDiff(end.objects, got))
	}
}

// disk is a disk that fills up: while full, a write writes half of what it is given and fails
// with ENOSPC, and a file cannot be created.
type disk struct{ full bool }

type diskFile struct {
	*os.File
	d *disk
}

func (f diskFile) Write(p []byte) (int, error) {
	if f.d.full {
		n, _ := f.File.Write(p[:len(p)/2])
		return n, syscall.ENOSPC
	}
	return f.File.Write(p)
}

// TestDiskFull fills the disk for ten batches: Append says so each time and keeps going; once
// there is room again the recording goes on from a snapshot, replays up to the gap and from the
// snapshot after it, and seeks to the end.
func TestDiskFull(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rec")
	w, err := Create(dir, Options{Contexts: []string{"small"}})
	if err != nil {
		t.Fatal(err)
	}
	d := &disk{}
	w.create = func(path string) (file, error) {
		if d.full {
			return nil, &os.PathError{Op: "open", Path: path, Err: syscall.ENOSPC}
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		return diskFile{f, d}, err
	}
	const fullFrom, fullTo = 13, 23 // batch numbers, the load's 3 included
	failed := 0
	steps := recordSmall(t, w, 30, 0, func(i int, err error) {
		d.full = i+1 >= fullFrom && i+1 < fullTo // for the next batch
		switch {
		case i >= fullFrom && i < fullTo:
			if !errors.Is(err, syscall.ENOSPC) {
				t.Errorf("Append %d on a full disk: %v, want ENOSPC", i, err)
			}
			failed++
		case err != nil:
			t.Errorf("Append %d: %v", i, err)
		}
	})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if failed != fullTo-fullFrom {
		t.Fatalf("%d appends failed, want %d", failed, fullTo-fullFrom)
	}
	// The replay holds the batches written before the disk filled, then (Reset) the state when
	// there was room again, then the batches after.
	var ats []time.Time
	var final *model.Fleet
	resets := 0
	replay(t, dir, func(i int, f *model.Fleet, fr Frame) {
		if fr.Reset {
			resets++
		}
		ats = append(ats, fr.At)
		final = f
		if fr.At.Equal(steps[fullFrom-1].at) {
			if got := state(t, f, fr.At); got != steps[fullFrom-1].state {
				t.Errorf("before the disk filled: %s", firstDiff(steps[fullFrom-1].state, got))
			}
		}
	})
	if resets != 1 {
		t.Errorf("%d resets, want 1", resets)
	}
	end := steps[len(steps)-1]
	if got := objects(t, final); got != end.objects {
		t.Errorf("the replay's end: %s", firstDiff(end.objects, got))
	}
	// Batches fullFrom-1 (the first that failed to write was batch fullFrom), the snapshot (at the
	// last batch appended while full), then fullTo on.
	want := len(steps[:fullFrom]) + 1 + len(steps[fullTo:])
	if len(ats) != want {
		t.Errorf("replayed %d frames, want %d: %v", len(ats), want, ats)
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f, err := seek(r, model.DefaultConfig(), end.at)
	if err != nil {
		t.Fatal(err)
	}
	if got := objects(t, f); got != end.objects {
		t.Errorf("seek to the end: %s", firstDiff(end.objects, got))
	}
}
