package replay

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"doomwatch/model"
	"doomwatch/model/scaletest"
	"doomwatch/recording"
)

// recordScale records a 10,000-pod cluster's load, then d of BENCHMARKS.md's churn (500 status
// changes a second as batches of 50 every 100 ms, half with a Warning event), into dir, as
// recording's BenchmarkRecord does, with the default snapshot every minute.
func recordScale(b *testing.B, dir string, d time.Duration) {
	b.Helper()
	const pods, size, every = 10_000, 50, 100 * time.Millisecond
	w, err := recording.Create(dir, recording.Options{Contexts: []string{"bench"}, Start: scaletest.T0})
	if err != nil {
		b.Fatal(err)
	}
	at := scaletest.T0
	for _, lb := range scaletest.LoadBatches(pods) {
		if err := w.Append(at, &lb); err != nil {
			b.Fatal(err)
		}
	}
	for k := range int(d / every) {
		at = at.Add(every)
		cb := scaletest.ChurnBatch(k, size, pods)
		if err := w.Append(at, &cb); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkSeekKey is the player's side of a seek key at 10,000 pods under churn: from Seek to
// the frame on Frames(), paused. forward=10s is the `.` key (the batches in between, exact):
// back-to-back, pressed as soon as the last frame came, it decodes them; paced, pressed 200 ms
// after it, as a hand does, it finds them decoded ahead while it waited (prefetch). back=10s is
// the `,` key more than a minute from the start (the snapshot before the target, then the batches
// up to it: recording.Reader.Seek, BenchmarkSeek's cost; its target is the seek's, 1 s, not a
// key's). The dashboard's side, which applies the frame and draws it, is tui's
// BenchmarkReplayFrame.
func BenchmarkSeekKey(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "rec")
	recordScale(b, dir, 5*time.Minute)
	for _, c := range []struct {
		name  string
		step  time.Duration
		pause time.Duration
	}{{"forward=10s/back-to-back", 10 * time.Second, 0}, {"forward=10s/paced", 10 * time.Second, 200 * time.Millisecond},
		{"back=10s", -10 * time.Second, 0}} {
		b.Run(c.name, func(b *testing.B) {
			r, err := recording.Open(dir)
			if err != nil {
				b.Fatal(err)
			}
			p, _, err := NewPlayer(r, model.DefaultConfig())
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); p.run(ctx) }() // paused: no frame but a seek's
			defer func() { cancel(); <-done }()
			// From 1:30 forward to 4:50, or from 4:50 back to 1:30, then again from there.
			from, to := p.start.Add(90*time.Second), p.start.Add(290*time.Second)
			if c.step < 0 {
				from, to = to, from
			}
			seekTo := func(t time.Time) {
				p.mu.Lock()
				p.seekLocked(t, "")
				p.mu.Unlock()
				<-p.Frames()
			}
			seekTo(from)
			steps := 0
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				if at := p.Now(); (c.step > 0 && !at.Before(to)) || (c.step < 0 && !at.After(to)) {
					seekTo(from)
				}
				time.Sleep(c.pause)
				b.StartTimer()
				p.Seek(c.step)
				f := <-p.Frames()
				steps += len(f.Steps)
				if f.Model == nil && len(f.Steps) == 0 {
					b.Fatal("a seek's frame has neither a model nor steps")
				}
			}
			b.ReportMetric(float64(steps)/float64(b.N), "steps/op")
		})
	}
}

// BenchmarkAt is `replay --once --at T` on that recording at 10,000 pods: the state at T, replayed
// from the start (exact, and so linear in T: the figure per recorded minute is what a longer
// recording costs).
func BenchmarkAt(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "rec")
	recordScale(b, dir, 5*time.Minute)
	r, err := recording.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	for _, at := range []time.Duration{30 * time.Second, time.Minute, 5 * time.Minute} {
		b.Run(fmt.Sprintf("at=%s", at), func(b *testing.B) {
			cpu, n := scaletest.StartCPU(), 0
			for b.Loop() {
				m, err := At(r, model.DefaultConfig(), scaletest.T0.Add(at))
				if err != nil {
					b.Fatal(err)
				}
				if got := m.Counts().Pods; got != 10_000 {
					b.Fatalf("%d pods at %s", got, at)
				}
				n++
			}
			cpu.Report(b, n)
			b.ReportMetric(float64(r.BytesUntil(scaletest.T0.Add(at)))/(1<<20), "MiB-read")
		})
	}
}
