package classify

import "testing"

// TestArgoRolloutVerdict: Argo's own phase decides what it can (Degraded and aborted doom, Healthy
// completes, Paused waits), the new pods doom earlier than Argo's progress deadline, and a spec the
// controller has not observed says nothing. Phases and messages are Argo Rollouts v1.10.1's:
// utils/rollout/rolloututil.go CalculateRolloutPhase ("%s: %s" of a condition's reason and
// message; a pause condition's reason), utils/conditions/conditions.go (RolloutAbortedMessage
// "Rollout aborted update to revision %d", RolloutTimeOutMessage "Rollout %q has timed out
// progressing.").
func TestArgoRolloutVerdict(t *testing.T) {
	crash := NewPods{Total: 1, Doomed: 1, Reasons: []string{"Crashing repeatedly (exit 1, 3 restarts)"}}
	tests := []struct {
		name   string
		r      ArgoRollout
		pods   NewPods
		class  RolloutClass
		reason string
	}{
		{"healthy", ArgoRollout{Name: "web", Generation: 2, ObservedGeneration: "2", Phase: "Healthy"}, NewPods{Total: 2, Healthy: 2},
			RolloutComplete, `rollout "web" is Healthy`},
		{"not observed", ArgoRollout{Name: "web", Generation: 3, ObservedGeneration: "2", Phase: "Healthy"}, crash,
			RolloutProgressing, "waiting for rollout spec update to be observed"},
		{"a hash for observedGeneration (before v0.10) is observed", ArgoRollout{Name: "web", Generation: 3, ObservedGeneration: "7d9f8b6c5", Phase: "Healthy"},
			NewPods{}, RolloutComplete, `rollout "web" is Healthy`},
		{"unpausing", ArgoRollout{Name: "web", Generation: 2, ObservedGeneration: "2", Phase: "Paused", ControllerPause: true},
			NewPods{}, RolloutProgressing, "waiting for rollout to unpause"},
		{"paused at a canary step", ArgoRollout{Name: "web", Generation: 2, ObservedGeneration: "2", Phase: "Paused",
			Message: "CanaryPauseStep", ControllerPause: true, PauseReasons: []string{"CanaryPauseStep"}}, NewPods{Total: 1, Healthy: 1},
			RolloutProgressing, "Paused: CanaryPauseStep"},
		{"paused by hand", ArgoRollout{Name: "web", Generation: 2, ObservedGeneration: "2", Phase: "Paused", Message: "manually paused", SpecPaused: true},
			NewPods{}, RolloutProgressing, "Paused: manually paused"},
		{"a crash-looping canary while Argo says Progressing", ArgoRollout{Name: "web", Generation: 2, ObservedGeneration: "2",
			Phase: "Progressing", Message: "more replicas need to be updated"}, crash,
			RolloutDoomed, "1/1 new pods doomed: Crashing repeatedly (exit 1, 3 restarts)"},
		{"degraded at the progress deadline", ArgoRollout{Name: "web", Generation: 2, ObservedGeneration: "2", Phase: "Degraded",
			Message: `ProgressDeadlineExceeded: Rollout "web" has timed out progressing.`}, crash,
			RolloutDoomed, `Degraded: ProgressDeadlineExceeded: Rollout "web" has timed out progressing.; 1/1 new pods doomed: Crashing repeatedly (exit 1, 3 restarts)`},
		{"aborted", ArgoRollout{Name: "web", Generation: 2, ObservedGeneration: "2", Phase: "Degraded", Abort: true,
			Message: "RolloutAborted: Rollout aborted update to revision 2"}, NewPods{},
			RolloutDoomed, "Aborted: RolloutAborted: Rollout aborted update to revision 2"},
		{"progressing", ArgoRollout{Name: "web", Generation: 2, ObservedGeneration: "2", Phase: "Progressing",
			Message: "updated replicas are still becoming available"}, NewPods{Total: 1},
			RolloutProgressing, "Progressing: updated replicas are still becoming available"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ArgoRolloutVerdict(&tc.r, tc.pods)
			if got.Class != tc.class || got.Reason != tc.reason {
				t.Errorf("ArgoRolloutVerdict = %s %q, want %s %q", got.Class, got.Reason, tc.class, tc.reason)
			}
		})
	}
}
