package classify

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// defaultBackoffLimit is spec.backoffLimit when unset (kubernetes pkg/apis/batch/v1 defaults). With
// spec.backoffLimitPerIndex set the API server defaults it to math.MaxInt32 instead: no Job-wide
// limit.
const defaultBackoffLimit = 6

// JobAttempt judges a Job's pod as one attempt of the Job rather than on its own. A failed
// attempt is not the end of a Job: the Job controller retries it until spec.backoffLimit is spent,
// and it is the Job that fails. So, for a pod whose own verdict is a failure (doomed, or a
// restarting transient):
//   - the Job has failed (condition Failed, or FailureTarget while the controller terminates the
//     rest, kubernetes pkg/controller/job): doomed, RuleJobFailed, with the Job's reason;
//   - the Job has succeeded (Complete or SuccessCriteriaMet): the attempt is history, completed,
//     RuleJobSucceeded;
//   - otherwise, with retries left: transient, RuleJobRetrying, "Job has 3 of 6 retries left";
//     with none left and no condition yet, doomed (the controller is about to fail it).
//
// "Retries left" is how many more failures the Job survives, so "0 of 6" is its last try. The Job
// controller fails a Job when status.failed > spec.backoffLimit (job_controller.go
// exceedsBackoffLimit): at failed == backoffLimit the last retry still runs. Krane's job.rb
// deploy_failed? calls it failed one attempt earlier, at failed >= backoffLimit; a dashboard
// that doomed the Job's last try while it runs would be wrong whenever that try succeeds.
//
// Under restartPolicy OnFailure the kubelet retries in place and the controller fails the Job when
// the restarts of all its running and pending pods add up to spec.backoffLimit (or to 1 with a
// limit of 0; pastBackoffLimitOnFailure), separately from status.failed. Only this pod's restarts
// are known here, so with spec.parallelism > 1 the reason says "at most N retries left": the other
// pods' restarts may have spent some.
//
// An Indexed Job with spec.backoffLimitPerIndex retries each index on its own: an index fails once
// a pod of it fails with batch.kubernetes.io/job-index-failure-count >= backoffLimitPerIndex
// (indexed_job_utils.go isIndexFailed), and a Job with a failed index fails. The pod's index
// (batch.kubernetes.io/job-completion-index) and failure count are read from its annotations, and
// status.failedIndexes is checked; without them the reason names the per-index limit only. No
// count derived from the math.MaxInt32 default of spec.backoffLimit is ever printed.
//
// Pod-level verdicts that say nothing about the Job's own pods (evicted, rejected by the node,
// terminating) and non-failures are returned unchanged, as is v when job is nil. A Job with a
// podFailurePolicy may fail on the first attempt (action FailJob) or not count one (Ignore): its
// Failed or FailureTarget condition then dooms, as above; until the controller writes it, the
// retry count is what is known.
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
		out.Class, out.Rule, out.Reason = Doomed, RuleJobFailed, withDetail(head, c.Message)
		return out
	}
	if jobCondition(job, batchv1.JobComplete, batchv1.JobSuccessCriteriaMet) != nil {
		out.Class, out.Rule = Completed, RuleJobSucceeded
		out.Reason = "Failed attempt; the Job succeeded"
		return out
	}
	limit := int32(defaultBackoffLimit)
	if job.Spec.BackoffLimit != nil {
		limit = *job.Spec.BackoffLimit
	}
	if limit != math.MaxInt32 && job.Status.Failed > limit {
		return jobSpent(out, limit, v.Reason)
	}
	if job.Spec.BackoffLimitPerIndex != nil {
		return indexAttempt(pod, v, job, out)
	}
	if limit == math.MaxInt32 {
		// backoffLimitPerIndex is set but not known here, or the limit was set to MaxInt32.
		out.Class, out.Rule = Transient, RuleJobRetrying
		out.Reason = withDetail("Job will retry (no Job-wide backoff limit)", v.Reason)
		return out
	}
	left := limit - job.Status.Failed
	atMost := false
	if pod != nil && pod.Spec.RestartPolicy == corev1.RestartPolicyOnFailure {
		r := podRestarts(pod)
		// pastBackoffLimitOnFailure fails the Job at restarts >= limit (> 0 for a limit of 0), so
		// limit-1 restarts survive.
		byRestarts := limit - 1 - r
		if limit == 0 {
			byRestarts = -r
		}
		left = min(left, byRestarts)
		atMost = job.Spec.Parallelism != nil && *job.Spec.Parallelism > 1
	}
	if left < 0 {
		return jobSpent(out, limit, v.Reason)
	}
	head := "Job has "
	if atMost {
		head += "at most "
	}
	out.Class, out.Rule = Transient, RuleJobRetrying
	out.Reason = withDetail(head+strconv.Itoa(int(left))+" of "+strconv.Itoa(int(limit))+" retries left", v.Reason)
	return out
}

// jobSpent returns out doomed because the Job has used its backoff limit.
func jobSpent(out Verdict, limit int32, detail string) Verdict {
	out.Class, out.Rule = Doomed, RuleJobFailed
	out.Reason = withDetail("Job has used all "+strconv.Itoa(int(limit))+" retries", detail)
	return out
}

// indexAttempt judges a failed attempt of an Indexed Job with spec.backoffLimitPerIndex.
func indexAttempt(pod *corev1.Pod, v Verdict, job *batchv1.Job, out Verdict) Verdict {
	per := *job.Spec.BackoffLimitPerIndex
	perText := strconv.Itoa(int(per))
	idx, hasIdx := podIntMeta(pod, batchv1.JobCompletionIndexAnnotation)
	if hasIdx && job.Status.FailedIndexes != nil && inIndexList(*job.Status.FailedIndexes, idx) {
		out.Class, out.Rule = Doomed, RuleJobFailed
		out.Reason = withDetail("Job index "+strconv.Itoa(int(idx))+" failed (per-index limit "+perText+")", v.Reason)
		return out
	}
	failures, hasCount := podIntMeta(pod, batchv1.JobIndexFailureCountAnnotation)
	if !hasIdx || !hasCount {
		out.Class, out.Rule = Transient, RuleJobRetrying
		out.Reason = withDetail("Job retries each index up to "+perText+" times", v.Reason)
		return out
	}
	// This attempt failed: the index fails when the failures before it already reach the limit.
	left := per - failures - 1
	index := "Job index " + strconv.Itoa(int(idx))
	if left < 0 {
		out.Class, out.Rule = Doomed, RuleJobFailed
		out.Reason = withDetail(index+" has used all "+perText+" retries", v.Reason)
		return out
	}
	out.Class, out.Rule = Transient, RuleJobRetrying
	out.Reason = withDetail(index+" has "+strconv.Itoa(int(left))+" of "+perText+" retries left", v.Reason)
	return out
}

// podRestarts sums the restart counts of a pod's containers, as pastBackoffLimitOnFailure does.
func podRestarts(pod *corev1.Pod) int32 {
	var n int32
	for i := range pod.Status.InitContainerStatuses {
		n += pod.Status.InitContainerStatuses[i].RestartCount
	}
	for i := range pod.Status.ContainerStatuses {
		n += pod.Status.ContainerStatuses[i].RestartCount
	}
	return n
}

// podIntMeta reads a non-negative integer the Job controller put on its pod, from the annotation
// key or, failing that, the label of the same name (the completion index is both since
// Kubernetes 1.28).
func podIntMeta(pod *corev1.Pod, key string) (int32, bool) {
	if pod == nil {
		return 0, false
	}
	s, ok := pod.Annotations[key]
	if !ok {
		if s, ok = pod.Labels[key]; !ok {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil || n < 0 {
		return 0, false
	}
	return int32(n), true
}

// inIndexList reports whether idx is in a Job's index list, "1,3-5,7"
// (status.failedIndexes, status.completedIndexes).
func inIndexList(list string, idx int32) bool {
	for list != "" {
		var item string
		item, list, _ = strings.Cut(list, ",")
		lo, hi, isRange := strings.Cut(item, "-")
		if !isRange {
			hi = lo
		}
		a, err1 := strconv.ParseInt(lo, 10, 32)
		b, err2 := strconv.ParseInt(hi, 10, 32)
		if err1 == nil && err2 == nil && int64(idx) >= a && int64(idx) <= b {
			return true
		}
	}
	return false
}

// attemptFailed reports whether a Job pod's verdict is a failure of the attempt itself.
func attemptFailed(v Verdict) bool {
	switch v.Rule {
	case RuleTerminatedError, RulePodFailed, RuleCrashLoop, RuleRestarting, RuleStartFailure,
		RuleStartFailureConfig, RuleStartFailure128, RuleCrashLoopRunning, RuleStartFailureBackOff,
		RuleStartFailureRepeated:
		return v.Class == Doomed || v.Class == Transient
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

// JobVerdict judges a Job as a deploy gate waits for it, from its conditions and its pods'
// verdicts (JobAttempt has already made each failed attempt what the Job's retries make of it):
//   - the Job controller's Failed condition, or FailureTarget while it terminates the rest
//     (kubernetes pkg/controller/job): doomed, with the condition's reason and message, as
//     `kubectl wait --for=condition=Failed` and Krane's Job#deploy_failed? see it;
//   - Complete, or SuccessCriteriaMet before it: complete;
//   - a doomed pod: doomed at once, with the pods' reasons. A failed attempt with retries left is
//     transient, not doomed, so what dooms here is what a retry cannot fix: an image that does not
//     exist, a missing Secret, the last retry spent;
//   - otherwise progressing (suspended, or running).
//
// pods are the Job's pods (Total, Doomed, Reasons). The name in the messages is the API's,
// unsanitised.
func JobVerdict(job *batchv1.Job, pods NewPods) RolloutVerdict {
	if c := jobCondition(job, batchv1.JobFailed, batchv1.JobFailureTarget); c != nil {
		head := "Job failed"
		if c.Reason != "" {
			head += " (" + oneLine(c.Reason) + ")"
		}
		return RolloutVerdict{RolloutDoomed, withDetail(head, c.Message)}
	}
	st := &job.Status
	if jobCondition(job, batchv1.JobComplete, batchv1.JobSuccessCriteriaMet) != nil {
		return RolloutVerdict{RolloutComplete, fmt.Sprintf("job %q completed: %d succeeded", job.Name, st.Succeeded)}
	}
	if pods.Doomed > 0 {
		list := pods.Reasons
		if len(list) > maxDoomReasons {
			list = append(list[:maxDoomReasons:maxDoomReasons], fmt.Sprintf("and %d more", len(list)-maxDoomReasons))
		}
		return RolloutVerdict{RolloutDoomed, fmt.Sprintf("%d/%d pods doomed: %s", pods.Doomed, pods.Total, strings.Join(list, "; "))}
	}
	if job.Spec.Suspend != nil && *job.Spec.Suspend {
		return RolloutVerdict{RolloutProgressing, fmt.Sprintf("job %q is suspended", job.Name)}
	}
	want := "1"
	if job.Spec.Completions != nil {
		want = strconv.Itoa(int(*job.Spec.Completions))
	}
	return RolloutVerdict{RolloutProgressing, fmt.Sprintf("Waiting for job %q to complete: %d of %s succeeded, %d active, %d failed",
		job.Name, st.Succeeded, want, st.Active, st.Failed)}
}

// CronJobVerdict judges a CronJob by latest, its Job of this wait (nil: none), as JobVerdict judges
// that Job with its pods, the reason naming it ("job/nightly-28: Job failed …"). Without one it is
// complete, as Krane passes a CronJob once it exists (lib/krane/kubernetes_resource/cron_job.rb
// deploy_succeeded?): nothing of it has run to judge, and its next run may be hours away. Names in
// the reason are the API's, unsanitised.
func CronJobVerdict(c *batchv1.CronJob, latest *batchv1.Job, pods NewPods) RolloutVerdict {
	if latest == nil {
		msg := fmt.Sprintf("cronjob %q has no Job running or made since the wait began (schedule %q", c.Name, c.Spec.Schedule)
		if c.Spec.Suspend != nil && *c.Spec.Suspend {
			msg += ", suspended"
		}
		return RolloutVerdict{RolloutComplete, msg + "): complete as it exists, as Krane judges a CronJob"}
	}
	v := JobVerdict(latest, pods)
	v.Reason = "job/" + latest.Name + ": " + v.Reason
	return v
}
