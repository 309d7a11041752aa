package replay

import (
	"path/filepath"
	"testing"
	"time"

	"doomwatch/kube/demo"
	"doomwatch/model"
	"doomwatch/recording"
)

// TestSnapshotSeekLoses is what a long seek (recording.Reader.Seek: the snapshot before the moment,
// then the batches up to it) keeps of the exact replay (At) on the demo's story, recorded with a
// snapshot every 10 s so that every moment is a seek from a snapshot: every pod's verdict and
// reason, and the suspect nodes; and what it loses: start failures of pods replaced before the
// snapshot, which only the exact replay's model still counts in the window. It never finds more
// than the exact replay. The README's account of long seeks rests on this.
func TestSnapshotSeekLoses(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rec")
	const story = 200 * time.Second
	recordDemoUntil(t, dir, story, 10*time.Second)
	r, err := recording.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cfg := model.DefaultConfig()
	lost := 0
	for off := 15 * time.Second; off < story; off += 10 * time.Second {
		at := demo.Epoch.Add(off)
		exact, err := At(r, cfg, at)
		if err != nil {
			t.Fatal(err)
		}
		sought, err := Seek(r, cfg, at)
		if err != nil {
			t.Fatal(err)
		}
		sought.Expire(at)
		for _, p := range exact.Clusters()[0].View(model.Query{}) {
			q := sought.Pod(p.Key)
			switch {
			case q == nil:
				t.Errorf("+%s: pod %s is missing after the seek", off, p.Key)
			case q.Verdict.Class != p.Verdict.Class || q.Verdict.Reason != p.Verdict.Reason:
				t.Errorf("+%s: pod %s is %v (%s) after the seek, %v (%s) replayed exactly", off, p.Key, q.Verdict.Class, q.Verdict.Reason, p.Verdict.Class, p.Verdict.Reason)
			}
		}
		if n, m := exact.Counts().Pods, sought.Counts().Pods; n != m {
			t.Errorf("+%s: %d pods after the seek, %d replayed exactly", off, m, n)
		}
		want := map[string]model.Node{}
		for _, n := range exact.Clusters()[0].Nodes(at) {
			want[n.Name] = n
		}
		for _, n := range sought.Clusters()[0].Nodes(at) {
			e := want[n.Name]
			if n.Suspect != e.Suspect {
				t.Errorf("+%s: node %s suspect %v after the seek, %v replayed exactly", off, n.Name, n.Suspect, e.Suspect)
			}
			if n.Failures > e.Failures {
				t.Errorf("+%s: node %s has %d start failures after the seek, more than the exact replay's %d", off, n.Name, n.Failures, e.Failures)
			}
			lost += e.Failures - n.Failures
		}
	}
	// What the test is about: were nothing lost, the README would say too much.
	if lost == 0 {
		t.Errorf("no start failure lost to a seek: the README's account of long seeks is out of date")
	}
	t.Logf("start failures lost to the seeks, summed over the moments: %d", lost)
}
