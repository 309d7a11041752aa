package recording

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"doomwatch/contract"
	"doomwatch/model"
	"doomwatch/model/scaletest"
)

// The churn the benchmarks record: BENCHMARKS.md's cluster of 10,000 pods, and 500 status
// changes a second (the rate the scale harness asks for), as batches of 50 every 100 ms (the
// source's coalescing interval). Half of the changes come with a Warning event (scaletest.Churn).
const (
	benchPods     = 10_000
	batchSize     = 50
	batchInterval = 100 * time.Millisecond
)

// recorded is what recordChurn measured.
type recorded struct {
	dir                 string
	loadBytes, allBytes int64
	changes, batches    int
	cpu                 time.Duration // the writer's CPU time in Append and Flush
	end                 time.Time
}

// recordChurn records the load of a benchPods cluster, then d of churn, at dir. The batches are
// made a minute at a time, outside the CPU measured.
func recordChurn(b *testing.B, dir string, d time.Duration, opts Options, tune tuning) recorded {
	b.Helper()
	opts.Contexts = []string{"bench"}
	w, err := create(dir, opts, tune)
	if err != nil {
		b.Fatal(err)
	}
	at := scaletest.T0
	for _, lb := range scaletest.LoadBatches(benchPods) {
		if err := w.Append(at, &lb); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	res := recorded{dir: dir, loadBytes: dirSize(b, dir)}
	total := int(d / batchInterval)
	perChunk := int(time.Minute / batchInterval)
	for k := 0; k < total; k += perChunk {
		chunk := make([]contract.Batch, min(perChunk, total-k))
		for j := range chunk {
			chunk[j] = scaletest.ChurnBatch(k+j, batchSize, benchPods)
		}
		start := scaletest.CPUTime()
		for j := range chunk {
			at = at.Add(batchInterval)
			if err := w.Append(at, &chunk[j]); err != nil {
				b.Fatal(err)
			}
		}
		res.cpu += scaletest.CPUTime() - start
		res.batches += len(chunk)
		res.changes += len(chunk) * batchSize
	}
	start := scaletest.CPUTime()
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	res.cpu += scaletest.CPUTime() - start
	res.allBytes, res.end = dirSize(b, dir), at
	return res
}

// BenchmarkRecord records 10 minutes of churn into 10,000 pods (300,000 status changes, 150,000
// events) after their load, and reports the bytes per status
// change (events and snapshots included, the load not) and the writer's CPU per batch of 50. The
// variants are what each step of the format buys: each version of a pod written whole or as a
// diff against its previous one, each second's frame compressed on its own or as part of the
// segment's one zstd stream, zstd's levels, and a snapshot every 2 minutes, every minute (the
// default) or none after the load's. Target: 40 B/change.
func BenchmarkRecord(b *testing.B) {
	variants := []struct {
		name  string
		every time.Duration
		tune  tuning
	}{
		{"whole/frame-each/snapshot=2m", 2 * time.Minute, tuning{noDiff: true, frameEach: true}},
		{"whole/stream/snapshot=2m", 2 * time.Minute, tuning{noDiff: true}},
		{"diff/frame-each/snapshot=2m", 2 * time.Minute, tuning{frameEach: true}},
		{"diff/stream/snapshot=2m", 2 * time.Minute, tuning{}},
		{"diff/stream/fastest/snapshot=2m", 2 * time.Minute, tuning{level: zstd.SpeedFastest}},
		{"diff/stream/better/snapshot=2m", 2 * time.Minute, tuning{level: zstd.SpeedBetterCompression}},
		{"diff/stream/snapshot=1m", time.Minute, tuning{}}, // what Create does by default
		{"diff/stream/snapshot=none", time.Hour, tuning{}},
		{"diff/stream/window=8MiB/snapshot=1m", time.Minute, tuning{window: 8 << 20}},
		{"diff/stream/window=2MiB/snapshot=1m", time.Minute, tuning{window: 2 << 20}},
		{"diff/stream/window=1MiB/snapshot=1m", time.Minute, tuning{window: 1 << 20}},
	}
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			var res recorded
			n := 0
			for b.Loop() {
				res = recordChurn(b, filepath.Join(b.TempDir(), "rec"), 10*time.Minute, Options{SnapshotEvery: v.every}, v.tune)
				n++
			}
			b.ReportMetric(float64(res.allBytes-res.loadBytes)/float64(res.changes), "B/change")
			b.ReportMetric(float64(res.cpu.Nanoseconds())/float64(res.batches)/1e3, "cpu-µs/batch")
			b.ReportMetric(float64(res.loadBytes)/benchPods, "load-B/pod")
		})
	}
}

// BenchmarkSeek seeks in a recording of 10,000 pods under churn, with a snapshot every minute (the
// default): to a snapshot (the snapshot alone is loaded), and to the moment before the next (the
// snapshot and a minute of batches, 600 of 50 changes, are: the most a seek replays). A seek's
// cost does not grow with the recording's length: the segment is found among the segments'
// headers by a binary search, and only it is read. Target: 1 s.
func BenchmarkSeek(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "rec")
	every := DefaultSnapshotEvery
	recordChurn(b, dir, 2*every+every/2, Options{}, tuning{})
	r, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	if len(r.segs) != 3 {
		b.Fatalf("%d segments, want 3", len(r.segs))
	}
	for _, c := range []struct {
		name string
		t    time.Time
	}{{"to-snapshot", r.segs[1].start}, {"to-the-next-snapshot", r.segs[2].start.Add(-time.Nanosecond)}} {
		b.Run(c.name, func(b *testing.B) {
			cpu := scaletest.StartCPU()
			n := 0
			for b.Loop() {
				f, err := seek(r, model.DefaultConfig(), c.t)
				if err != nil {
					b.Fatal(err)
				}
				if got := f.Counts().Pods; got != benchPods {
					b.Fatalf("%d pods at %s", got, c.t)
				}
				n++
			}
			cpu.Report(b, n)
		})
	}
}
