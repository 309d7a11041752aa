package replay

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"doomwatch/classify"
	"doomwatch/contract"
	"doomwatch/model"
	"doomwatch/recording"
)

// TestReplayArgoRollout records the statuses the real Argo Rollouts controller wrote for a canary
// that crash-looped past its progress deadline and was aborted (e2e/testdata/argo), a batch a
// second as its informer would deliver them, and replays the recording: the model the replay
// builds at each moment judges the Rollout as the live one did, progressing through the update
// and doomed, with the controller's message, once it was aborted.
func TestReplayArgoRollout(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "e2e", "testdata", "argo", "crashloop-abort.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var statuses []*unstructured.Unstructured
	for _, doc := range strings.Split(string(b), "\n---\n") {
		// As the API's JSON decodes: integers int64.
		j, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if string(j) == "null" {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(j); err != nil {
			t.Fatal(err)
		}
		statuses = append(statuses, u)
	}
	start := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	dir := filepath.Join(t.TempDir(), "rec")
	w, err := recording.Create(dir, recording.Options{Contexts: []string{"kwok"}, Start: start})
	if err != nil {
		t.Fatal(err)
	}
	synced := &contract.Health{Synced: true}
	for i, u := range statuses {
		batch := contract.Batch{Workloads: []contract.Object{{Kind: contract.KindRollout, Obj: u}}}
		if i == 0 {
			batch.Health = synced
		}
		if err := w.Append(start.Add(time.Duration(i)*time.Second), &batch); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := recording.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	verdictAt := func(i int) model.Rollout {
		t.Helper()
		m, err := At(r, model.DefaultConfig(), start.Add(time.Duration(i)*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for _, ro := range m.Rollouts() {
			if ro.Kind == string(contract.KindRollout) && ro.Name == "crashloop-abort" {
				return ro
			}
		}
		t.Fatalf("at status %d the replayed model has no Rollout: %+v", i, m.Rollouts())
		return model.Rollout{}
	}
	doomedFrom := -1
	for i, u := range statuses {
		ro := verdictAt(i)
		abort, _, _ := unstructured.NestedBool(u.Object, "status", "abort")
		switch {
		case abort && ro.Verdict != classify.RolloutDoomed:
			t.Errorf("status %d aborted, replayed as %s: %s", i, ro.Verdict, ro.Reason)
		case !abort && ro.Verdict == classify.RolloutDoomed:
			t.Errorf("status %d not aborted, replayed as doomed: %s", i, ro.Reason)
		case abort && doomedFrom < 0:
			doomedFrom = i
			if !strings.HasPrefix(ro.Reason, "Aborted: RolloutAborted: Rollout aborted update to revision 2") {
				t.Errorf("status %d replayed doomed for %q, want the controller's abort message", i, ro.Reason)
			}
		}
	}
	if doomedFrom < 0 {
		t.Error("no status of the fixture is aborted")
	}
}
