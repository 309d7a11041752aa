package recording

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"doomwatch/contract"
	"doomwatch/kube"
	"doomwatch/kube/demo"
	"doomwatch/model"
	"doomwatch/report"
)

// step is one batch as the live model got it, and what the live model was after it: all of it
// (state) and its objects (objects).
type step struct {
	at             time.Time
	batch          contract.Batch
	state, objects string
}

// recordDemo plays the demo scenario (or its fleet) in live mode at high speed through the real
// informers, into a live fleet model and a recording at dir, until the simulated clock reaches
// until; it returns every step.
func recordDemo(t *testing.T, dir string, fleet bool, until time.Duration, opts Options) []step {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	var f *kube.Fleet
	if fleet {
		var err error
		if f, err = demo.StartFleet(ctx, demo.Options{Seed: 1, Speed: 1000, Interval: 20 * time.Millisecond}); err != nil {
			t.Fatalf("StartFleet: %v", err)
		}
	} else {
		src, err := demo.Start(ctx, demo.Options{Seed: 1, Speed: 1000, Interval: 20 * time.Millisecond})
		if err != nil {
			t.Fatalf("Start: %v", err)
		}
		f = kube.Join(ctx, []*kube.Source{src}, []string{""})
	}
	batches, now := f.Batches(), f.Now
	opts.Contexts = f.Contexts()
	w, err := Create(dir, opts)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	live := model.NewFleet(model.DefaultConfig(), opts.Contexts)
	var steps []step
	var last time.Time
	// The story ends before until, and the source then goes quiet: the simulated clock is looked
	// at between batches too.
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	// Until every cluster has synced, however long that took on a busy machine, and the clock has
	// reached until.
	synced := map[int]bool{}
	for len(synced) < len(opts.Contexts) || now().Sub(demo.Epoch) < until {
		var bs []contract.Batch
		select {
		case <-ctx.Done():
			t.Fatalf("the demo did not reach %s: at %s", until, now().Sub(demo.Epoch))
		case <-tick.C:
			continue
		case bs = <-batches:
		}
		for _, b := range bs {
			at := now()
			// Two batches at one time would make "the state at t" ambiguous for Seek's tests: a
			// simulated clock that has not moved is moved a nanosecond.
			if !at.After(last) {
				at = last.Add(time.Nanosecond)
			}
			last = at
			if b.Health != nil && b.Health.Synced {
				synced[b.Cluster] = true
			}
			live.Apply(&b, at)
			if err := w.Append(at, &b); err != nil {
				t.Fatalf("Append: %v", err)
			}
			steps = append(steps, step{at: at, batch: b, state: state(t, live, at), objects: objects(t, live)})
		}
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return steps
}

// state is everything a user sees of f at now, as text: the --once JSON document of the fleet
// (pods, verdicts, nodes, rollouts, health, events), and what it does not print: each pod's
// record (compared by content, its digest: the model hands out no record), its events and the
// failure ledger.
func state(t testing.TB, f *model.Fleet, now time.Time) string {
	t.Helper()
	var buf bytes.Buffer
	snap := report.NewFleetSnapshot(f, nil, nil, now)
	if err := report.SnapshotPrinters.Print(&buf, "json", &snap); err != nil {
		t.Fatalf("printing the snapshot: %v", err)
	}
	for _, c := range f.Clusters() {
		fmt.Fprintf(&buf, "cluster %s\n", c.Context)
		pods := c.View(model.Query{Sort: model.ByName})
		for _, p := range pods {
			fmt.Fprintf(&buf, "pod %s %v record %s\nevents %+v\n", p.Key, p.Verdict.Class, p.RecordDigest(), c.PodEvents(p.Key))
		}
		for _, fl := range c.Failures(now) {
			fmt.Fprintf(&buf, "failure %+v\n", fl)
		}
	}
	return buf.String()
}

// objects is the part of state that is the recorded objects themselves, which a seek from a
// snapshot restores exactly: every pod's record and revision, its events, the counts of pods; not
// the evidence the live model gathered from updates before the snapshot (replay.Seek).
func objects(t testing.TB, f *model.Fleet) string {
	t.Helper()
	var buf bytes.Buffer
	for _, c := range f.Clusters() {
		fmt.Fprintf(&buf, "cluster %s health %+v pods %d\n", c.Context, c.Health(), c.Counts().Pods)
		for _, p := range c.View(model.Query{Sort: model.ByName}) {
			// The digest compares the record whole; the pod's view says what differs.
			fmt.Fprintf(&buf, "pod %s record %s\ncontainers %+v\nconditions %+v\nevents %+v\n", p.Key, p.RecordDigest(),
				p.States(), p.Conditions(), c.PodEvents(p.Key))
		}
		// By workload: the model lists rollouts doomed first, and a verdict may rest on what the
		// model remembered from updates before a seek's snapshot (README, "A longer seek").
		var rollouts []string
		for _, r := range c.Rollouts() {
			rollouts = append(rollouts, fmt.Sprintf("rollout %s desired %d updated %d ready %d available %d\n", r.Workload(), r.Desired, r.Updated, r.Ready, r.Available))
		}
		slices.Sort(rollouts)
		for _, l := range rollouts {
			buf.WriteString(l)
		}
	}
	return buf.String()
}

// firstDiff shows where two states part.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d:\n  want %s\n  got  %s", i+1, al[i], bl[i])
		}
	}
	return fmt.Sprintf("lengths %d and %d lines", len(al), len(bl))
}

// replay applies the whole recording at dir to a fresh fleet, calling check after each frame.
func replay(t *testing.T, dir string, check func(i int, f *model.Fleet, fr Frame)) int {
	t.Helper()
	r, err := Open(dir)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer r.Close()
	first, last := r.Span()
	f := model.NewFleet(model.DefaultConfig(), r.Contexts())
	i := 0
	for fr, err := range r.Batches(first.Add(-time.Nanosecond), last) {
		if err != nil {
			t.Fatalf("Batches: %v", err)
		}
		if fr.Reset {
			f = model.NewFleet(model.DefaultConfig(), r.Contexts())
		}
		f.Apply(fr.Batch, fr.At)
		check(i, f, fr)
		i++
	}
	return i
}

// segments lists the recording's segment files, in order.
func segments(t testing.TB, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*"+segmentExt))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	return names
}

func dirSize(t testing.TB, dir string) int64 {
	t.Helper()
	var n int64
	for _, name := range segments(t, dir) {
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		n += fi.Size()
	}
	return n
}

// seek is replay.Seek, which these tests cannot import (replay imports recording): the state at t
// restored into a fresh fleet of the recorded contexts.
func seek(r *Reader, cfg model.Config, t time.Time) (*model.Fleet, error) {
	f := model.NewFleet(cfg, r.Contexts())
	at, err := r.Restore(t, func(fr Frame) { f.Apply(fr.Batch, fr.At) })
	if err != nil {
		return nil, err
	}
	f.Expire(at)
	return f, nil
}
