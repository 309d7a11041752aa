package classify

import (
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// defaultBackoffLimit is spec.backoffLimit when unset (kubernetes pkg/apis/batch/v1 defaults).
const defaultBackoffLimit = 6

// JobAttempt judges a Job's pod as one attempt of the Job rather than on its own. A failed
// attempt is not the end of a Job: the Job controller retries it until spec.backoffLimit is spent,
// and it is the Job's Failed condition that dooms (Krane job.rb deploy_failed? reads the Job's
// conditions, not its pods). So, for a pod whose own verdict is a failure (doomed, or a restarting
// transient):
//   - the Job has failed (condition Failed, or FailureTarget while the controller terminates the
//     rest, kubernetes pkg/controller/job): doomed, RuleJobFailed, with the Job's reason;
//   - the Job has succeeded (Complete or SuccessCriteriaMet): the attempt is history, completed,
//     RuleJobSucceeded;
//   - otherwise, with retries left: transient, RuleJobRetrying, "Job has 3 of 6 retries left";
//     with none left and no condition yet, doomed (the controller is about to fail it).
//
// Pod-level verdicts that say nothing about the Job's own pods (evicted, rejected by the node,
// terminating) and non-failures are returned unchanged, as is v when job is nil. A Job with a
// podFailurePolicy may fail on the first attempt (action FailJob): its Failed or FailureTarget
// condition then dooms, as above; until the controller writes it, the retry count is what is known.
//
// Under restartPolicy OnFailure the kubelet retries in place and the controller counts container
// restarts against the limit (pkg/controller/job pastBackoffLimitOnFailure); the pod's own
// restarts are added to the Job's failed count then.
func JobAttempt(pod *corev1.Pod, v Verdict, job *batchv1.Job) Verdict {
	if job == nil || !attemptFailed(v) {
		return v
	}
	out := Verdict{Source: v.Source, Container: v.Container, Init: v.Init, Message: v.Message,
		ExitCode: v.ExitCode, HasExitCode: v.HasExitCode}
	if c := jobCondition(job, batchv1.JobFailed, batchv1.JobFailureTarget); c != nil {
		head := "Job failed"
		if c.Reason != "" {
			head += " (" + oneLine(c.Reason) + ")"
		}
		out.Kind, out.Rule, out.Reason = Doomed, RuleJobFailed, withDetail(head, c.Message)
		return out
	}
	if jobCondition(job, batchv1.JobComplete, batchv1.JobSuccessCriteriaMet) != nil {
		out.Kind, out.Rule = Completed, RuleJobSucceeded
		out.Reason = "Failed attempt; the Job succeeded"
		return out
	}
	limit := int32(defaultBackoffLimit)
	if job.Spec.BackoffLimit != nil {
		limit = *job.Spec.BackoffLimit
	}
	used := job.Status.Failed
	if pod != nil && pod.Spec.RestartPolicy == corev1.RestartPolicyOnFailure {
		for i := range pod.Status.ContainerStatuses {
			used += pod.Status.ContainerStatuses[i].RestartCount
		}
		for i := range pod.Status.InitContainerStatuses {
			used += pod.Status.InitContainerStatuses[i].RestartCount
		}
	}
	left := limit - used
	if left < 0 || left == 0 && pod != nil && pod.Spec.RestartPolicy == corev1.RestartPolicyOnFailure {
		out.Kind, out.Rule = Doomed, RuleJobFailed
		out.Reason = withDetail("Job has used all "+strconv.Itoa(int(limit))+" retries", v.Reason)
		return out
	}
	out.Kind, out.Rule = Transient, RuleJobRetrying
	out.Reason = withDetail("Job has "+strconv.Itoa(int(left))+" of "+strconv.Itoa(int(limit))+" retries left", v.Reason)
	return out
}

// attemptFailed reports whether a Job pod's verdict is a failure of the attempt itself.
func attemptFailed(v Verdict) bool {
	switch v.Rule {
	case RuleTerminatedError, RulePodFailed, RuleCrashLoop, RuleRestarting, RuleStartFailure,
		RuleStartFailureConfig, RuleStartFailure128:
		return v.Kind == Doomed || v.Kind == Transient
	}
	return false
}

// jobCondition returns the first of the Job's conditions of the given types that is True.
func jobCondition(job *batchv1.Job, types ...batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range job.Status.Conditions {
		c := &job.Status.Conditions[i]
		if c.Status != corev1.ConditionTrue {
			continue
		}
		for _, t := range types {
			if c.Type == t {
				return c
			}
		}
	}
	return nil
}
