package tui

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"doomwatch/model"
)

// TestProgressDrawsInline: the gate's live view draws each workload's line (its counts, badge
// counts and reason) inline, never on the alternate screen, and Stop returns once it has drawn the
// last frame.
func TestProgressDrawsInline(t *testing.T) {
	var out bytes.Buffer
	pr := startProgress(context.Background(), &out, true, tea.WithWindowSize(120, 10))
	pr.Update([]model.GateStatus{{
		Target:  model.Target{Kind: model.KindDeployment, Namespace: "shop", Name: "web"},
		Found:   true,
		Rollout: model.Rollout{Verdict: model.RolloutProgressing, Desired: 3, Updated: 2, Ready: 1, Reason: "Waiting for deployment \"web\" rollout to finish"},
		Pods:    model.Counts{Pods: 3, Healthy: 1, Progressing: 1, Transient: 1},
	}}, time.Now())
	done := make(chan struct{})
	go func() { pr.Stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Stop did not return")
	}
	got := out.String()
	for _, want := range []string{"deployment/web", "2/3 updated", "1/3 ready", "● 1", "◐ 1", "▲ 1", "Waiting for deployment"} {
		if !strings.Contains(got, want) {
			t.Errorf("the view does not show %q:\n%q", want, got)
		}
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
