package recording

import (
	"path/filepath"
	"testing"
	"time"

	"doomwatch/model"
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
			// The informers sync some simulated minutes in, at this speed: how many depends on how
			// busy the machine is.
			span := steps[len(steps)-1].at.Sub(steps[0].at)
			if n := len(segments(t, dir)); n < int(span/(5*time.Minute)) {
				t.Errorf("%d segments for %s at 5m each", n, span)
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
