package demo

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"doomwatch/contract"
	"doomwatch/model"
	"doomwatch/report"
)

// fleetOnce does what `doomwatch --demo --fleet --once -o json --at at` does.
func fleetOnce(t *testing.T, seed int64, at time.Duration) (report.Snapshot, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f, err := StartFleet(ctx, Options{Seed: seed, At: at})
	if err != nil {
		t.Fatalf("StartFleet: %v", err)
	}
	m := model.NewFleet(model.DefaultConfig(), f.Contexts())
	errs := f.Settle(ctx, func(b contract.Batch) { m.Apply(&b, f.Now()) })
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Settle %s: %v", f.Contexts()[i], err)
		}
	}
	snap := report.NewFleetSnapshot(m, f.Servers(), errs, f.Now())
	var buf bytes.Buffer
	if err := report.SnapshotPrinters.Print(&buf, "json", &snap); err != nil {
		t.Fatalf("writing JSON: %v", err)
	}
	return snap, buf.Bytes()
}

// TestFleetStory is the story --demo --fleet tells, for several seeds: node-3 of demo-eu and of
// demo-us fail starts with exit 128, each judged suspect within its own cluster, and they run a
// container runtime version no other node of the fleet runs, which the fleet says once; node-3 of
// demo-ap runs another version and is not suspect. payments' bad image is rolled out in eu and ap
// but not in us, where its rollout completes.
func TestFleetStory(t *testing.T) {
	for _, seed := range []int64{1, 2, 3} {
		snap, _ := fleetOnce(t, seed, 90*time.Second)
		if got := snap.Context; got != "demo-eu,demo-us,demo-ap" {
			t.Fatalf("seed %d: context %q", seed, got)
		}
		if len(snap.Clusters) != 3 {
			t.Fatalf("seed %d: %d clusters, want 3", seed, len(snap.Clusters))
		}
		for _, c := range snap.Clusters {
			if !c.Synced || c.Error != "" {
				t.Errorf("seed %d: cluster %+v did not sync cleanly", seed, c)
			}
		}
		var suspects []string
		runtimes := map[string]string{}
		for _, n := range snap.Nodes {
			if n.Context == "" {
				t.Errorf("seed %d: node %s has no context", seed, n.Name)
			}
			if n.Suspect {
				suspects = append(suspects, n.Context+"/"+n.Name)
			}
			runtimes[n.Context+"/"+n.Name] = n.NodeInfo.ContainerRuntimeVersion
		}
		if want := []string{"demo-eu/node-3", "demo-us/node-3"}; !slices.Equal(suspects, want) {
			t.Errorf("seed %d: suspects %v, want %v", seed, suspects, want)
		}
		if runtimes["demo-eu/node-3"] != runtimes["demo-us/node-3"] || runtimes["demo-ap/node-3"] == runtimes["demo-eu/node-3"] {
			t.Errorf("seed %d: node-3 runtimes eu %q us %q ap %q", seed, runtimes["demo-eu/node-3"], runtimes["demo-us/node-3"], runtimes["demo-ap/node-3"])
		}
		want := "the 2 suspect nodes of 2 clusters (demo-eu, demo-us) both run " + runtimes["demo-eu/node-3"] + " (0 of 13 others do)"
		if len(snap.SuspectsShare) == 0 || snap.SuspectsShare[0] != want {
			t.Errorf("seed %d: suspectsShare %q\nwant first %q", seed, snap.SuspectsShare, want)
		}
		for _, line := range snap.SuspectsShare[1:] {
			if !strings.HasPrefix(line, "demo-eu: ") && !strings.HasPrefix(line, "demo-us: ") {
				t.Errorf("seed %d: a cluster's sentence without its context: %q", seed, line)
			}
		}
		var payments *report.SnapshotSpread
		for i, s := range snap.Spreads {
			if s.Workload == "shop/Deployment/payments" {
				payments = &snap.Spreads[i]
			}
		}
		if payments == nil {
			t.Fatalf("seed %d: payments is not among the spreads: %v", seed, snap.Spreads)
		}
		if want := "shop/Deployment/payments: doomed in demo-eu, demo-ap; complete in demo-us"; payments.Line != want {
			t.Errorf("seed %d: payments %q, want %q", seed, payments.Line, want)
		}
		for _, p := range snap.Pods {
			if p.Context == "" {
				t.Fatalf("seed %d: pod %s/%s has no context", seed, p.Namespace, p.Name)
			}
		}
	}
}

// TestFleetGolden pins `--demo --fleet --once -o json --at 90s`, and that the same seed gives the
// same bytes.
func TestFleetGolden(t *testing.T) {
	_, got := fleetOnce(t, 1, 90*time.Second)
	_, again := fleetOnce(t, 1, 90*time.Second)
	if !bytes.Equal(got, again) {
		t.Fatalf("two fleet runs with seed 1 differ:\n%s", firstDiff(got, again))
	}
	path := filepath.Join("testdata", "fleet-at-90s.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./kube/demo -run TestFleetGolden -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("--demo --fleet --once -o json --at 90s differs from %s:\n%s", path, firstDiff(want, got))
	}
}
