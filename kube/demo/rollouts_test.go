package demo

import (
	"context"
	"strings"
	"testing"
	"time"

	"doomwatch/classify"
	"doomwatch/model"
)

// onceFleets keeps onceFleet's models by moment: the tests here look at the same seconds of the
// story, and a model is only read once built.
var onceFleets = map[time.Duration]*model.Fleet{}

// onceFleet is the model `doomwatch --demo --once --at at` prints (cmd/once.go), at the time it
// prints it, but for the wait after the sync: everything up to at is in the clientset before the
// informers list, so the batch that says synced holds it all, and Settle's quiet intervals after
// it would only add time.
func onceFleet(t *testing.T, at time.Duration) (*model.Fleet, time.Time) {
	t.Helper()
	if f, ok := onceFleets[at]; ok {
		return f, Epoch.Add(at)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	src, err := Start(ctx, Options{Seed: 1, At: at, Interval: time.Millisecond})
	if err != nil {
		t.Fatalf("Start at %s: %v", at, err)
	}
	f := model.NewFleet(model.DefaultConfig(), []string{src.Context()})
	for !f.Health().Synced {
		select {
		case b, ok := <-src.Batches():
			if !ok {
				t.Fatalf("at %s: the source stopped before it synced: %v", at, src.Err())
			}
			f.Apply(&b, src.Now())
		case <-ctx.Done():
			t.Fatalf("at %s: the informers did not sync", at)
		}
	}
	if !src.Now().Equal(Epoch.Add(at)) {
		t.Fatalf("snapshot clock = %s, want %s", src.Now(), Epoch.Add(at))
	}
	onceFleets[at] = f
	return f, src.Now()
}

// TestNoRolloutUndoomed looks at every rollout of the story at every second of its first three
// minutes (from 1s: --at 0s is live mode), as `--demo --once --at` shows it: a rollout once doomed
// stays doomed. Doomed says that waiting will not help; a rollout that goes doomed and then back
// to progressing or complete shows what no real controller does. In particular the deployment
// controller does not time out a Deployment whose rollout completed long ago when one of its pods
// is evicted and replaced: its Progressing condition keeps reason NewReplicaSetAvailable, which
// syncRolloutStatus leaves be and DeploymentTimedOut never times out (kubernetes
// pkg/controller/deployment/progress.go and pkg/controller/deployment/util/deployment_util.go).
func TestNoRolloutUndoomed(t *testing.T) {
	const end = 180 * time.Second
	doomedAt := map[string]time.Duration{} // rollout → when it was first seen doomed
	seen := map[string]bool{}
	for at := time.Second; at <= end; at += time.Second {
		f, _ := onceFleet(t, at)
		for _, r := range f.Rollouts() {
			key := r.Workload()
			seen[key] = true
			doomed := r.Verdict == classify.RolloutDoomed
			since, was := doomedAt[key]
			switch {
			case was && !doomed:
				t.Errorf("at %s: %s is %s (%s), doomed at %s", at, key, r.Verdict, r.Reason, since)
				delete(doomedAt, key) // each return is reported once
			case doomed && !was:
				doomedAt[key] = at
			}
		}
	}
	// The story's doomed rollouts were among those looked at: the test saw dooms that had to hold.
	for _, want := range []string{"shop/Deployment/payments", "search/Deployment/search"} {
		if _, ok := doomedAt[want]; !ok {
			t.Errorf("%s was not doomed at the end of the first %s (rollouts seen: %s)", want, end, strings.Join(sortedKeys(seen), ", "))
		}
	}
}
