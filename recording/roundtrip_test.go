package recording

import (
	"path/filepath"
	"testing"
	"time"

	"doomwatch/model"
	"doomwatch/model/scaletest"
)

// TestRoundTrip records the demo scenario's hour, as the informers deliver it, and replays the
// recording into a fresh model: after every batch the replayed model is the live one (the --once
// document, every pod's record, its events and the failure ledger).
func TestRoundTrip(t *testing.T) {
	for _, fleet := range []bool{false, true} {
		name := "one cluster"
		if fleet {
			name = "fleet of 3"
		}
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "rec")
			steps := recordDemo(t, dir, fleet, 62*time.Minute, Options{SnapshotEvery: 5 * time.Minute})
			// A segment ends at the first batch 5 minutes of the source's clock after its start,
			// which is the batch before it (Writer.due, startSegment): a quiet stretch, when the
			// story has been told, has no batch to end one. How many is the steps' to say, and how
			// busy the machine was.
			want, start := 1, steps[0].at
			for i := 1; i < len(steps); i++ {
				if steps[i].at.Sub(start) >= 5*time.Minute {
					want, start = want+1, steps[i-1].at
				}
			}
			if n := len(segments(t, dir)); n < want {
				t.Errorf("%d segments for %s, want %d at 5m each", n, steps[len(steps)-1].at.Sub(steps[0].at), want)
			}
			n := replay(t, dir, func(i int, f *model.Fleet, fr Frame) {
				if i >= len(steps) {
					t.Fatalf("frame %d at %s: more frames than batches recorded (%d)", i, fr.At, len(steps))
				}
				s := &steps[i]
				if !fr.At.Equal(s.at) || fr.Batch.Cluster != s.batch.Cluster || fr.Batch.Len() != s.batch.Len() {
					t.Fatalf("frame %d: at %s cluster %d, %d changes; recorded at %s cluster %d, %d changes",
						i, fr.At, fr.Batch.Cluster, fr.Batch.Len(), s.at, s.batch.Cluster, s.batch.Len())
				}
				if got := state(t, f, fr.At); got != s.state {
					t.Fatalf("after batch %d at %s the replay differs from the live model: %s", i, fr.At, firstDiff(s.state, got))
				}
			})
			if n != len(steps) {
				t.Fatalf("replayed %d batches, recorded %d", n, len(steps))
			}
		})
	}
}

// TestLargeRecords: a batch record larger than recordChunk (the initial list of 2,500 pods, built
// in parts) and the snapshot that holds it (written in chunks) replay to the model the batches
// made, and so does a seek to that snapshot.
func TestLargeRecords(t *testing.T) {
	const pods = 2_500
	dir := filepath.Join(t.TempDir(), "rec")
	w, err := Create(dir, Options{Contexts: []string{"big"}, Start: scaletest.T0, SnapshotEvery: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	load := scaletest.LoadBatches(pods)
	// The pods' record is built in parts, or this test tests nothing.
	e := newEncoder(1)
	for i := range load {
		e.appendBatch(nil, scaletest.T0, &load[i])
		if i == 1 && len(e.takeParts()) < 2 {
			t.Fatalf("the list of %d pods is a record of fewer than 3 parts", pods)
		}
	}
	live := model.NewFleet(model.DefaultConfig(), []string{"big"})
	at := scaletest.T0
	for _, b := range load {
		live.Apply(&b, at)
		if err := w.Append(at, &b); err != nil {
			t.Fatal(err)
		}
	}
	// A second segment, which starts with a snapshot of every pod, then a batch in it.
	at = at.Add(time.Minute + time.Second)
	b := scaletest.ChurnBatch(0, 50, pods)
	live.Apply(&b, at)
	if err := w.Append(at, &b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(segments(t, dir)); n != 2 {
		t.Fatalf("%d segments, want 2", n)
	}
	want := state(t, live, at)
	replayed := model.NewFleet(model.DefaultConfig(), []string{"big"})
	replay(t, dir, func(_ int, f *model.Fleet, _ Frame) { replayed = f })
	if got := state(t, replayed, at); got != want {
		t.Fatalf("the replay differs from the live model: %s", firstDiff(want, got))
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sought, err := seek(r, model.DefaultConfig(), at)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := objects(t, sought), objects(t, live); got != want {
		t.Fatalf("a seek to the snapshot differs: %s", firstDiff(want, got))
	}
}
