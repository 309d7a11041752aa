package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"doomwatch/kube/demo"
)

// story is what --once says of the demo's story: each pod's verdict and reason (by name: the
// demo's names come from its seed), each rollout's verdict, and the suspect nodes.
type story struct {
	pods, rollouts, suspects []string
}

func storyOf(t *testing.T, out string) story {
	t.Helper()
	var snap struct {
		Pods []struct {
			Namespace, Name, Verdict, Reason string
		} `json:"pods"`
		Rollouts []struct {
			Namespace, Kind, Name, Verdict string
		} `json:"rollouts"`
		Nodes []struct {
			Name    string
			Suspect bool
		} `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(out), &snap); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	var s story
	for _, p := range snap.Pods {
		s.pods = append(s.pods, fmt.Sprintf("%s/%s %s: %s", p.Namespace, p.Name, p.Verdict, p.Reason))
	}
	for _, r := range snap.Rollouts {
		s.rollouts = append(s.rollouts, fmt.Sprintf("%s/%s/%s %s", r.Namespace, r.Kind, r.Name, r.Verdict))
	}
	for _, n := range snap.Nodes {
		if n.Suspect {
			s.suspects = append(s.suspects, n.Name)
		}
	}
	slices.Sort(s.pods)
	return s
}

// TestRecordReplayDemo: a recording of the live demo (at 20× its pace, so its batches come
// 2 s of story apart), replayed at 90 s of its time, tells the story --demo --once --at 90s
// tells: the same pods with the same verdicts and reasons, the same rollouts' verdicts, the
// same suspect node. Its timeline has the doom of the payments rollout and the suspect call.
func TestRecordReplayDemo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rec")
	code, _, stderr := runCLI("record", "-o", dir, "--demo", "--speed", "20", "--for", "115s")
	if code != exitOK {
		t.Fatalf("record: exit %d, stderr %q", code, stderr)
	}
	if !strings.Contains(stderr, "recorded ") || !strings.Contains(stderr, dir) {
		t.Errorf("record's stderr does not say what it recorded: %q", stderr)
	}
	code, replayed, stderr := runCLI("replay", dir, "--once", "--at", "90s", "-o", "json")
	if code != exitOK {
		t.Fatalf("replay --once: exit %d, stderr %q", code, stderr)
	}
	code, sought, stderr := runCLI("replay", dir, "--once", "--at", "90s", "--seek", "-o", "json")
	if code != exitOK {
		t.Fatalf("replay --once --seek: exit %d, stderr %q", code, stderr)
	}
	code, live, stderr := runCLI("--demo", "--once", "--at", "90s", "-o", "json")
	if code != exitOK {
		t.Fatalf("--demo --once: exit %d, stderr %q", code, stderr)
	}
	got, want := storyOf(t, replayed), storyOf(t, live)
	if len(want.suspects) == 0 || len(want.pods) == 0 {
		t.Fatalf("the demo at 90s has no suspect or no pods: %+v", want)
	}
	for _, c := range []struct {
		what      string
		got, want []string
	}{{"pods", got.pods, want.pods}, {"rollouts", got.rollouts, want.rollouts}, {"suspect nodes", got.suspects, want.suspects}} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s replayed at 90s:\n  %s\nwant (--demo --once --at 90s):\n  %s", c.what,
				strings.Join(c.got, "\n  "), strings.Join(c.want, "\n  "))
		}
	}
	// From the snapshot at about 60s, then the batches up to 90s: the same verdicts here
	// (TestSnapshotSeekLoses says what such a seek can lose).
	if s := storyOf(t, sought); !slices.Equal(s.pods, want.pods) || !slices.Equal(s.suspects, want.suspects) {
		t.Errorf("replay --once --at 90s --seek:\n  %s\n  suspects %v\nwant:\n  %s\n  suspects %v",
			strings.Join(s.pods, "\n  "), s.suspects, strings.Join(want.pods, "\n  "), want.suspects)
	}

	code, timeline, stderr := runCLI("replay", dir, "--timeline")
	if code != exitOK {
		t.Fatalf("replay --timeline: exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{"rollout\tshop/Deployment/payments\tdoomed", "node\tnode-3\tsuspect"} {
		if !strings.Contains(timeline, want) {
			t.Errorf("the timeline lacks %q:\n%s", want, timeline)
		}
	}
	// The recording lasts as long as --for, though the story's last change may come before: the
	// recorder marks its end, where replay --once without --at looks.
	code, end, stderr := runCLI("replay", dir, "--once", "-o", "json")
	if code != exitOK {
		t.Fatalf("replay --once: exit %d, stderr %q", code, stderr)
	}
	var doc struct {
		GeneratedAt string `json:"generatedAt"`
	}
	if err := json.Unmarshal([]byte(end), &doc); err != nil {
		t.Fatal(err)
	}
	if want := demo.Epoch.Add(115 * time.Second).Format(time.RFC3339); doc.GeneratedAt != want {
		t.Errorf("the recording --for 115s ends at %s, want %s", doc.GeneratedAt, want)
	}
}
