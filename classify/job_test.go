package classify

import (
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

func TestJobAttempt(t *testing.T) {
	limit := func(n int32) *int32 { return &n }
	failedPod := fixturePod(t, "job-failed-exit-1")
	attempt := Pod(failedPod)
	if attempt.Kind != Doomed {
		t.Fatalf("fixture job-failed-exit-1 is %s on its own, want doomed", attempt.Kind)
	}
	// Job condition messages: kubernetes pkg/controller/job/job_controller.go ("Job has reached
	// the specified backoff limit", reason BackoffLimitExceeded; "Reached expected number of
	// succeeded pods", reason CompletionsReached).
	failedCond := batchv1.JobCondition{Type: batchv1.JobFailed, Status: corev1.ConditionTrue,
		Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit"}
	targetCond := failedCond
	targetCond.Type = batchv1.JobFailureTarget
	completeCond := batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue,
		Reason: "CompletionsReached", Message: "Reached expected number of succeeded pods"}
	job := func(backoff *int32, failed int32, conds ...batchv1.JobCondition) *batchv1.Job {
		return &batchv1.Job{Spec: batchv1.JobSpec{BackoffLimit: backoff},
			Status: batchv1.JobStatus{Failed: failed, Conditions: conds}}
	}
	tests := []struct {
		name   string
		pod    *corev1.Pod
		v      Verdict
		job    *batchv1.Job
		kind   Kind
		rule   Rule
		reason string
	}{
		{"no job", failedPod, attempt, nil, Doomed, attempt.Rule, attempt.Reason},
		{"retries left", failedPod, attempt, job(limit(6), 3), Transient, RuleJobRetrying, "Job has 3 of 6 retries left: "},
		{"default limit", failedPod, attempt, job(nil, 1), Transient, RuleJobRetrying, "Job has 5 of 6 retries left"},
		{"last retry", failedPod, attempt, job(limit(2), 2), Transient, RuleJobRetrying, "Job has 0 of 2 retries left"},
		{"limit spent, no condition yet", failedPod, attempt, job(limit(2), 3), Doomed, RuleJobFailed, "Job has used all 2 retries"},
		{"job failed", failedPod, attempt, job(limit(6), 7, failedCond), Doomed, RuleJobFailed,
			"Job failed (BackoffLimitExceeded): Job has reached the specified backoff limit"},
		{"failure target", failedPod, attempt, job(limit(6), 1, targetCond), Doomed, RuleJobFailed, "Job failed (BackoffLimitExceeded)"},
		{"job succeeded later", failedPod, attempt, job(limit(6), 2, completeCond), Completed, RuleJobSucceeded, "Failed attempt; the Job succeeded"},
		{"healthy pod untouched", failedPod, Verdict{Kind: Healthy, Rule: RuleRunningReady}, job(limit(6), 7, failedCond), Healthy, RuleRunningReady, ""},
		{"evicted pod untouched", failedPod, Verdict{Kind: Transient, Rule: RulePodEvicted, Reason: "Evicted, controller will replace it"},
			job(limit(6), 7, failedCond), Transient, RulePodEvicted, "Evicted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := JobAttempt(tt.pod, tt.v, tt.job)
			if got.Kind != tt.kind || got.Rule != tt.rule || !strings.Contains(got.Reason, tt.reason) {
				t.Errorf("JobAttempt = %s/%s %q, want %s/%s containing %q", got.Kind, got.Rule, got.Reason, tt.kind, tt.rule, tt.reason)
			}
		})
	}

	// Under restartPolicy OnFailure the pod's restarts count against the limit.
	onFailure := failedPod.DeepCopy()
	onFailure.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
	onFailure.Status.ContainerStatuses[0].RestartCount = 4
	crash := Verdict{Kind: Doomed, Rule: RuleCrashLoop, Reason: "Crashing repeatedly (exit 1)"}
	if got := JobAttempt(onFailure, crash, job(limit(6), 0)); got.Rule != RuleJobRetrying || !strings.Contains(got.Reason, "2 of 6") {
		t.Errorf("OnFailure with 4 restarts: %s %q, want job-retrying with 2 of 6 left", got.Rule, got.Reason)
	}
	if got := JobAttempt(onFailure, crash, job(limit(4), 0)); got.Kind != Doomed || got.Rule != RuleJobFailed {
		t.Errorf("OnFailure with restarts at the limit: %s/%s, want doomed job-failed", got.Kind, got.Rule)
	}
}
