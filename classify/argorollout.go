package classify

import (
	"strconv"
)

// ArgoRollout is what the verdict of an Argo Rollout (argoproj.io/v1alpha1 Rollout) reads of it,
// taken from the object by the model: classify imports no Argo types.
type ArgoRollout struct {
	Name       string
	Generation int64
	// ObservedGeneration is status.observedGeneration, which Argo Rollouts writes as a string:
	// the generation since v0.10, a hash before.
	ObservedGeneration string
	// Phase and Message are status.phase and status.message, which the controller computes since
	// v1.0 (utils/rollout/rolloututil.go CalculateRolloutPhase).
	Phase, Message string
	// Abort is status.abort: the update was aborted, by a failed analysis or by hand.
	Abort bool
	// ControllerPause is status.controllerPause; PauseReasons are the reasons of
	// status.pauseConditions (CanaryPauseStep, BlueGreenPause, InconclusiveAnalysisRun, ...).
	ControllerPause bool
	PauseReasons    []string
	// SpecPaused is spec.paused: paused by hand.
	SpecPaused bool
}

// Argo Rollouts' phases (pkg/apis/rollouts/v1alpha1/types.go RolloutPhase).
const (
	argoHealthy  = "Healthy"
	argoDegraded = "Degraded"
	argoPaused   = "Paused"
)

// ArgoRolloutVerdict judges an Argo Rollout as `kubectl argo rollouts status` does, and earlier.
// The phase and message are Argo's own (utils/rollout/rolloututil.go GetRolloutPhase, which the
// status command reads: Healthy ends it, Degraded fails it, anything else waits), so in order:
//
//   - until the controller has observed the latest spec (a numeric status.observedGeneration
//     below metadata.generation), or while it has not yet reacted to an unpause, progressing with
//     GetRolloutPhase's messages;
//   - Degraded or aborted: doomed, with the controller's message ("RolloutAborted: Rollout aborted
//     update to revision 2", "ProgressDeadlineExceeded: ...");
//   - the new pods (the ReplicaSet of status.currentPodHash) judged as a Deployment's are
//     (newPodsDoom): a canary whose pods crash-loop is doomed in seconds, where Argo waits for its
//     progress deadline (600 s by default) and, without progressDeadlineAbort, stays Progressing
//     (argoproj/argo-rollouts#3765, #4128);
//   - Healthy: complete;
//   - Paused (a canary step, an analysis, by hand): progressing, never doomed, with why;
//   - otherwise progressing with the controller's message.
//
// The name is the API's, unsanitised.
func ArgoRolloutVerdict(r *ArgoRollout, pods NewPods) RolloutVerdict {
	if g, err := strconv.ParseInt(r.ObservedGeneration, 10, 64); err == nil && g < r.Generation {
		return RolloutVerdict{RolloutProgressing, "waiting for rollout spec update to be observed"}
	}
	if r.ControllerPause && len(r.PauseReasons) == 0 {
		return RolloutVerdict{RolloutProgressing, "waiting for rollout to unpause"}
	}
	if r.Phase == argoDegraded || r.Abort {
		reason := "Degraded"
		if r.Abort {
			reason = "Aborted"
		}
		if r.Message != "" {
			reason += ": " + oneLine(r.Message)
		}
		if pods.Doomed > 0 {
			reason += "; " + pods.String()
		}
		return RolloutVerdict{RolloutDoomed, reason}
	}
	if v, doomed := newPodsDoom(pods); doomed {
		return v
	}
	switch r.Phase {
	case argoHealthy:
		return RolloutVerdict{RolloutComplete, "rollout \"" + r.Name + "\" is Healthy"}
	case argoPaused:
		why := r.Message
		if why == "" && r.SpecPaused {
			why = "manually paused"
		}
		if why == "" && len(r.PauseReasons) > 0 {
			why = r.PauseReasons[0]
		}
		return RolloutVerdict{RolloutProgressing, "Paused: " + oneLine(why)}
	}
	msg := "Progressing"
	if r.Phase != "" {
		msg = r.Phase
	}
	if r.Message != "" {
		msg += ": " + oneLine(r.Message)
	}
	return RolloutVerdict{RolloutProgressing, msg}
}
