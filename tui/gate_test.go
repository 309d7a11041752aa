package tui

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"doomwatch/classify"
	"doomwatch/contract"
	"doomwatch/model"
)

// TestProgressDrawsInline: the gate's live view draws each workload's line (its desired, updated
// and ready counts, badge counts and reason) inline, never on the alternate screen, and Stop returns once it has drawn the
// last frame.
func TestProgressDrawsInline(t *testing.T) {
	var out bytes.Buffer
	pr := startProgress(context.Background(), &out, true, tea.WithWindowSize(120, 10))
	pr.Update([]model.GateStatus{{
		Target:  model.Target{Kind: contract.KindDeployment, Namespace: "shop", Name: "web"},
		Found:   true,
		Rollout: model.Rollout{Verdict: classify.RolloutProgressing, Desired: 12, Updated: 3, Ready: 14, Reason: "Waiting for deployment \"web\" rollout to finish"},
		Pods:    model.Counts{Pods: 3, Healthy: 1, Progressing: 1, Transient: 1},
		Old:     13,
	}}, time.Now())
	done := make(chan struct{})
	go func() { pr.Stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Stop did not return")
	}
	got := out.String()
	// Mid-rollout the old pods count as ready too: 14 of 12 would read as more than asked for.
	for _, want := range []string{"deployment/web", "12 desired, 3 updated, 14 ready", "● 1", "◐ 1", "▲ 1", "13 old", "Waiting for deployment"} {
		if !strings.Contains(got, want) {
			t.Errorf("the view does not show %q:\n%q", want, got)
		}
	}
	if strings.Contains(got, "14/12") {
		t.Errorf("the view shows more ready than desired as a fraction:\n%q", got)
	}
	if strings.Contains(got, "\x1b[?1049h") {
		t.Errorf("the view entered the alternate screen")
	}
}

func TestBadgeCounts(t *testing.T) {
	if got, want := BadgeCounts(model.Counts{Pods: 4, Healthy: 2, Transient: 1, Doomed: 1}), "2 healthy, 1 transient, 1 doomed"; got != want {
		t.Errorf("BadgeCounts = %q, want %q", got, want)
	}
	if got := BadgeCounts(model.Counts{}); got != "no pods yet" {
		t.Errorf("no pods: %q", got)
	}
}
