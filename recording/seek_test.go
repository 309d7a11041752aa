package recording

import (
	"path/filepath"
	"testing"
	"time"

	"doomwatch/contract"
	"doomwatch/model"
)

// stepAt is the last step at or before t.
func stepAt(steps []step, t time.Time) int {
	i := -1
	for k := range steps {
		if !steps[k].at.After(t) {
			i = k
		}
	}
	return i
}

// TestSeek seeks in the recorded demo hour (one cluster, and the fleet of 3) to every snapshot, a
// nanosecond before each, and between every two batches: the objects are the live model's after
// the last batch before t. Within the first segment (no snapshot before it, only batches) the
// whole state is.
func TestSeek(t *testing.T) {
	for _, fleet := range []bool{false, true} {
		dir := filepath.Join(t.TempDir(), "rec")
		steps := recordDemo(t, dir, fleet, 62*time.Minute, Options{SnapshotEvery: 5 * time.Minute})
		r, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		var times []time.Time
		for _, s := range r.segs {
			times = append(times, s.start, s.start.Add(-time.Nanosecond), s.start.Add(time.Nanosecond))
		}
		for i := 1; i < len(steps); i++ {
			times = append(times, steps[i-1].at.Add(steps[i].at.Sub(steps[i-1].at)/2))
		}
		for _, at := range times {
			i := stepAt(steps, at)
			if i < 0 {
				continue
			}
			f, err := seek(r, model.DefaultConfig(), at)
			if err != nil {
				t.Fatalf("Seek(%s): %v", at, err)
			}
			if got := objects(t, f); got != steps[i].objects {
				t.Fatalf("fleet %v: Seek(%s) is not the live model after batch %d: %s", fleet, at, i, firstDiff(steps[i].objects, got))
			}
			if r.segmentAt(at) == 0 && at.Equal(steps[i].at) {
				if got := state(t, f, at); got != steps[i].state {
					t.Fatalf("fleet %v: Seek(%s) in the first segment is not the live model after batch %d: %s", fleet, at, i, firstDiff(steps[i].state, got))
				}
			}
		}
		r.Close()
	}
}

// TestDeletedStayRecorded: a pod or an event the API server deleted (the demo's CronJob history,
// its Warning events) is in the recording until the moment of its delete: its last version is
// what the live model had, and from the delete on it is gone, as it was from the live model.
func TestDeletedStayRecorded(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rec")
	steps := recordDemo(t, dir, false, 62*time.Minute, Options{SnapshotEvery: 5 * time.Minute})
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	deleted := map[contract.Kind]int{}
	for i := 1; i < len(steps); i++ {
		for _, d := range steps[i].batch.Deletes {
			if d.Kind != contract.KindPod && d.Kind != contract.KindEvent {
				continue
			}
			deleted[d.Kind]++
			before, err := seek(r, model.DefaultConfig(), steps[i-1].at)
			if err != nil {
				t.Fatal(err)
			}
			after, err := seek(r, model.DefaultConfig(), steps[i].at)
			if err != nil {
				t.Fatal(err)
			}
			if got := objects(t, before); got != steps[i-1].objects {
				t.Fatalf("before %s %s/%s was deleted: %s", d.Kind, d.Namespace, d.Name, firstDiff(steps[i-1].objects, got))
			}
			if got := objects(t, after); got != steps[i].objects {
				t.Fatalf("after %s %s/%s was deleted: %s", d.Kind, d.Namespace, d.Name, firstDiff(steps[i].objects, got))
			}
			c := before.Clusters()[0]
			if d.Kind == contract.KindPod && c.Pod(d.Namespace+"/"+d.Name) == nil {
				t.Fatalf("pod %s/%s is not in the recording before its delete", d.Namespace, d.Name)
			}
			if d.Kind == contract.KindPod && after.Clusters()[0].Pod(d.Namespace+"/"+d.Name) != nil {
				t.Fatalf("pod %s/%s is still there after its delete", d.Namespace, d.Name)
			}
		}
	}
	if deleted[contract.KindPod] == 0 {
		t.Fatal("the demo hour deleted no pod: the test held nothing")
	}
}

// TestExpiredEventsStayRecorded: the API server drops an event an hour after its last time
// (kube-apiserver --event-ttl), and the informer delivers the delete; the recording still holds
// the event up to then.
func TestExpiredEventsStayRecorded(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rec")
	w, err := Create(dir, Options{Contexts: []string{"small"}, SnapshotEvery: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	steps := recordSmall(t, w, 20, 0, nil)
	// The events of the first churn batch expire, in a batch of their own, an hour later.
	var gone contract.Batch
	for _, e := range steps[3].batch.Events {
		gone.Deletes = append(gone.Deletes, contract.Ref{Kind: contract.KindEvent, Namespace: e.Namespace, Name: e.Name})
	}
	if len(gone.Deletes) == 0 {
		t.Fatal("the first churn batch has no events")
	}
	last := steps[len(steps)-1].at
	expired := last.Add(time.Hour)
	if err := w.Append(expired, &gone); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	before, err := seek(r, model.DefaultConfig(), last)
	if err != nil {
		t.Fatal(err)
	}
	if got := objects(t, before); got != steps[len(steps)-1].objects {
		t.Fatalf("before the events expired: %s", firstDiff(steps[len(steps)-1].objects, got))
	}
	after, err := seek(r, model.DefaultConfig(), expired)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range steps[3].batch.Events {
		key := e.InvolvedObject.Namespace + "/" + e.InvolvedObject.Name
		has := func(f *model.Fleet) bool {
			for _, ev := range f.PodEvents(key) {
				if ev.Reason == e.Reason && ev.Message == e.Message {
					return true
				}
			}
			return false
		}
		if !has(before) {
			t.Errorf("before it expired, pod %s has no %s event", key, e.Reason)
		}
		if has(after) {
			t.Errorf("after it expired, pod %s still has its %s event", key, e.Reason)
		}
	}
}
