package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestWatchDiff: the first diff prints everything; later ones only what changed in a verdict,
// a reason, a pod's node or a suspect call, and a line for what went; counts moving are not news.
func TestWatchDiff(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	snap := Snapshot{
		Rollouts: []SnapshotRollout{{Namespace: "shop", Kind: "Deployment", Name: "web", Verdict: "progressing", Reason: "1 of 3"}},
		Pods:     []SnapshotPod{{Namespace: "shop", Name: "web-1", UID: "u1", Node: "n1", Owner: "Deployment/web", Verdict: "transient", Reason: "Failed to start on node"}},
		Nodes:    []SnapshotNode{{Name: "n1", UID: "n1-uid"}},
	}
	var w WatchState
	if got := w.Diff(&snap, at); len(got) != 3 {
		t.Fatalf("first diff: %d lines, want 3: %+v", len(got), got)
	}
	snap.Rollouts[0].Updated, snap.Rollouts[0].Ready = 2, 2
	if got := w.Diff(&snap, at.Add(time.Second)); len(got) != 0 {
		t.Errorf("counts only: %+v, want nothing", got)
	}
	snap.Rollouts[0].Verdict, snap.Rollouts[0].Reason = "doomed", "3/3 new pods doomed"
	snap.Nodes[0].Suspect, snap.Nodes[0].Why = true, "4 pods failed to start here"
	snap.Pods = nil
	got := w.Diff(&snap, at.Add(2*time.Second))
	if len(got) != 3 {
		t.Fatalf("changes: %+v, want the rollout, the pod gone and the node", got)
	}
	if got[0].Type != "rollout" || got[0].Verdict != "doomed" || got[0].Time != "2026-03-01T12:00:02Z" {
		t.Errorf("rollout line %+v", got[0])
	}
	if got[1].Type != "pod" || !got[1].Deleted || got[1].Name != "web-1" {
		t.Errorf("pod line %+v", got[1])
	}
	if got[2].Type != "node" || got[2].Suspect == nil || !*got[2].Suspect || got[2].Reason != "4 pods failed to start here" {
		t.Errorf("node line %+v", got[2])
	}
	var buf bytes.Buffer
	if err := WatchPrinters.Print(&buf, "json", got); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d JSON lines: %q", len(lines), buf.String())
	}
	var back WatchLine
	if err := json.Unmarshal([]byte(lines[2]), &back); err != nil || back.Name != "n1" || !*back.Suspect {
		t.Errorf("node line %q: %+v %v", lines[2], back, err)
	}
	buf.Reset()
	if err := WatchPrinters.Print(&buf, "table", got[:1]); err != nil {
		t.Fatal(err)
	}
	if want := "2026-03-01T12:00:02Z\trollout\tshop/Deployment/web\tdoomed\t3/3 new pods doomed\n"; buf.String() != want {
		t.Errorf("table line %q, want %q", buf.String(), want)
	}
}

// TestWatchDiffAcrossContexts: the same pod and node names in two clusters (UIDs too, as they are
// only unique within one) are two objects, each line names its context, and the table says it.
func TestWatchDiffAcrossContexts(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	snap := Snapshot{
		Pods: []SnapshotPod{
			{Context: "eu", Namespace: "shop", Name: "web-1", UID: "u1", Verdict: "doomed"},
			{Context: "us", Namespace: "shop", Name: "web-1", UID: "u1", Verdict: "healthy"},
		},
		Nodes: []SnapshotNode{{Context: "eu", Name: "n1"}, {Context: "us", Name: "n1"}},
	}
	var w WatchState
	got := w.Diff(&snap, at)
	if len(got) != 4 {
		t.Fatalf("first diff: %d lines, want the 2 pods and 2 nodes: %+v", len(got), got)
	}
	snap.Pods[1].Verdict = "doomed"
	got = w.Diff(&snap, at.Add(time.Second))
	if len(got) != 1 || got[0].Context != "us" || got[0].Verdict != "doomed" {
		t.Fatalf("us's pod turning doomed: %+v", got)
	}
	var buf bytes.Buffer
	if err := writeWatchTable(got, &buf); err != nil {
		t.Fatal(err)
	}
	if want := "2026-03-01T12:00:01Z\tpod\tus:shop/web-1\tdoomed\t\n"; buf.String() != want {
		t.Errorf("table %q, want %q", buf.String(), want)
	}
}
