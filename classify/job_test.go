package classify

import (
	"math"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

func TestJobAttempt(t *testing.T) {
	limit := func(n int32) *int32 { return &n }
	failedPod := fixturePod(t, "job-failed-exit-1")
	attempt := Pod(failedPod, testNow)
	if attempt.Class != Doomed {
		t.Fatalf("fixture job-failed-exit-1 is %s on its own, want doomed", attempt.Class)
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
		kind   Class
		rule   Rule
		reason string
	}{
		{"no job", failedPod, attempt, nil, Doomed, attempt.Rule, attempt.Reason},
		{"retries left", failedPod, attempt, job(limit(6), 3), Transient, RuleJobRetrying, "Job has 3 of 6 retries left: "},
		{"default limit", failedPod, attempt, job(nil, 1), Transient, RuleJobRetrying, "Job has 5 of 6 retries left"},
		// Krane's job.rb dooms here (status.failed >= backoffLimit); the Job controller fails the
		// Job only at failed > backoffLimit, so the last retry is still to come.
		{"last retry", failedPod, attempt, job(limit(2), 2), Transient, RuleJobRetrying, "Job has 0 of 2 retries left"},
		{"limit spent, no condition yet", failedPod, attempt, job(limit(2), 3), Doomed, RuleJobFailed, "Job has used all 2 retries"},
		{"job failed", failedPod, attempt, job(limit(6), 7, failedCond), Doomed, RuleJobFailed,
			"Job failed (BackoffLimitExceeded): Job has reached the specified backoff limit"},
		{"failure target", failedPod, attempt, job(limit(6), 1, targetCond), Doomed, RuleJobFailed, "Job failed (BackoffLimitExceeded)"},
		{"job succeeded later", failedPod, attempt, job(limit(6), 2, completeCond), Completed, RuleJobSucceeded, "Failed attempt; the Job succeeded"},
		{"healthy pod untouched", failedPod, Verdict{Class: Healthy, Rule: RuleRunningReady}, job(limit(6), 7, failedCond), Healthy, RuleRunningReady, ""},
		{"evicted pod untouched", failedPod, Verdict{Class: Transient, Rule: RulePodEvicted, Reason: "Evicted, controller will replace it"},
			job(limit(6), 7, failedCond), Transient, RulePodEvicted, "Evicted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := JobAttempt(tt.pod, tt.v, tt.job)
			if got.Class != tt.kind || got.Rule != tt.rule || !strings.Contains(got.Reason, tt.reason) {
				t.Errorf("JobAttempt = %s/%s %q, want %s/%s containing %q", got.Class, got.Rule, got.Reason, tt.kind, tt.rule, tt.reason)
			}
		})
	}

	// Under restartPolicy OnFailure the controller fails the Job when the restarts of its running
	// pods reach the limit (pastBackoffLimitOnFailure: restarts >= backoffLimit, or > 0 for a
	// limit of 0), apart from status.failed. Only this pod's restarts are known: with parallelism
	// above 1 the count is an upper bound.
	onFailure := failedPod.DeepCopy()
	onFailure.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
	onFailure.Status.ContainerStatuses[0].RestartCount = 4
	crash := Verdict{Class: Doomed, Rule: RuleCrashLoop, Reason: "Crashing repeatedly (exit 1)"}
	fresh := onFailure.DeepCopy()
	fresh.Status.ContainerStatuses[0].RestartCount = 0
	parallel := func(j *batchv1.Job, n int32) *batchv1.Job { j.Spec.Parallelism = &n; return j }
	onFailureTests := []struct {
		name   string
		pod    *corev1.Pod
		job    *batchv1.Job
		kind   Class
		rule   Rule
		reason string
	}{
		{"4 restarts of 6", onFailure, job(limit(6), 0), Transient, RuleJobRetrying, "Job has 1 of 6 retries left"},
		{"restarts and failed pods are separate limits", onFailure, job(limit(6), 3), Transient, RuleJobRetrying, "Job has 1 of 6 retries left"},
		{"failed pods leave fewer", onFailure, job(limit(6), 6), Transient, RuleJobRetrying, "Job has 0 of 6 retries left"},
		{"restarts at the limit", onFailure, job(limit(4), 0), Doomed, RuleJobFailed, "Job has used all 4 retries"},
		{"limit 0, not restarted yet", fresh, job(limit(0), 0), Transient, RuleJobRetrying, "Job has 0 of 0 retries left"},
		{"limit 0, restarted", onFailure, job(limit(0), 0), Doomed, RuleJobFailed, "Job has used all 0 retries"},
		{"parallel pods share the limit", onFailure, parallel(job(limit(6), 0), 3), Transient, RuleJobRetrying, "Job has at most 1 of 6 retries left"},
		{"parallelism 1 is exact", onFailure, parallel(job(limit(6), 0), 1), Transient, RuleJobRetrying, "Job has 1 of 6 retries left"},
	}
	for _, tt := range onFailureTests {
		t.Run("OnFailure/"+tt.name, func(t *testing.T) {
			got := JobAttempt(tt.pod, crash, tt.job)
			if got.Class != tt.kind || got.Rule != tt.rule || !strings.HasPrefix(got.Reason, tt.reason) {
				t.Errorf("JobAttempt = %s/%s %q, want %s/%s starting %q", got.Class, got.Rule, got.Reason, tt.kind, tt.rule, tt.reason)
			}
		})
	}
}

// TestJobAttemptPerIndex covers Indexed Jobs with spec.backoffLimitPerIndex, whose backoffLimit the
// API server defaults to math.MaxInt32: each index has its own retries, counted in the pod's
// batch.kubernetes.io/job-index-failure-count annotation (kubernetes pkg/controller/job
// indexed_job_utils.go isIndexFailed: the index fails when a pod of it fails with a count >=
// backoffLimitPerIndex).
func TestJobAttemptPerIndex(t *testing.T) {
	base := fixturePod(t, "job-reindex-2") // completion index 2, annotation and label
	attempt := Pod(base, testNow)
	withCount := func(n string) *corev1.Pod {
		p := base.DeepCopy()
		p.Annotations[batchv1.JobIndexFailureCountAnnotation] = n
		return p
	}
	labelOnly := withCount("0")
	delete(labelOnly.Annotations, batchv1.JobCompletionIndexAnnotation)
	maxInt := int32(math.MaxInt32)
	perIndex := func(per int32, failedIndexes string) *batchv1.Job {
		j := &batchv1.Job{Spec: batchv1.JobSpec{BackoffLimit: &maxInt, BackoffLimitPerIndex: &per},
			Status: batchv1.JobStatus{Failed: 5}}
		if failedIndexes != "" {
			j.Status.FailedIndexes = &failedIndexes
		}
		return j
	}
	tests := []struct {
		name   string
		pod    *corev1.Pod
		job    *batchv1.Job
		kind   Class
		rule   Rule
		reason string
	}{
		{"first failure of 2", withCount("0"), perIndex(2, ""), Transient, RuleJobRetrying, "Job index 2 has 1 of 2 retries left"},
		{"last try", withCount("1"), perIndex(2, ""), Transient, RuleJobRetrying, "Job index 2 has 0 of 2 retries left"},
		{"index spent", withCount("2"), perIndex(2, ""), Doomed, RuleJobFailed, "Job index 2 has used all 2 retries"},
		{"index in failedIndexes", withCount("0"), perIndex(2, "0,2-4"), Doomed, RuleJobFailed, "Job index 2 failed (per-index limit 2)"},
		{"other indexes failed", withCount("0"), perIndex(2, "0,3-4"), Transient, RuleJobRetrying, "Job index 2 has 1 of 2 retries left"},
		{"index from the label", labelOnly, perIndex(1, ""), Transient, RuleJobRetrying, "Job index 2 has 0 of 1 retries left"},
		{"no failure count", base, perIndex(3, ""), Transient, RuleJobRetrying, "Job retries each index up to 3 times"},
		// backoffLimitPerIndex dropped on the way (or backoffLimit set to MaxInt32): never a count
		// derived from MaxInt32.
		{"MaxInt32 Job-wide limit", base, &batchv1.Job{Spec: batchv1.JobSpec{BackoffLimit: &maxInt}, Status: batchv1.JobStatus{Failed: 1}},
			Transient, RuleJobRetrying, "Job will retry (no Job-wide backoff limit)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := JobAttempt(tt.pod, attempt, tt.job)
			if got.Class != tt.kind || got.Rule != tt.rule || !strings.HasPrefix(got.Reason, tt.reason) {
				t.Errorf("JobAttempt = %s/%s %q, want %s/%s starting %q", got.Class, got.Rule, got.Reason, tt.kind, tt.rule, tt.reason)
			}
			if strings.Contains(got.Reason, "2147483") {
				t.Errorf("reason %q prints a count derived from MaxInt32", got.Reason)
			}
		})
	}
}

func TestInIndexList(t *testing.T) {
	tests := []struct {
		list string
		idx  int32
		want bool
	}{
		{"", 0, false},
		{"2", 2, true},
		{"1,3-5,7", 4, true},
		{"1,3-5,7", 5, true},
		{"1,3-5,7", 6, false},
		{"1,3-5,7", 7, true},
		{"10-12", 1, false},
	}
	for _, tt := range tests {
		if got := inIndexList(tt.list, tt.idx); got != tt.want {
			t.Errorf("inIndexList(%q, %d) = %v, want %v", tt.list, tt.idx, got, tt.want)
		}
	}
}

// TestJobVerdict: the Job controller's conditions decide first, in the order it writes them
// (FailureTarget before Failed, SuccessCriteriaMet before Complete); a doomed pod dooms before any
// condition; otherwise the Job is progressing.
func TestJobVerdict(t *testing.T) {
	// kubernetes pkg/controller/job/job_controller.go: reason BackoffLimitExceeded, "Job has reached
	// the specified backoff limit"; CompletionsReached, "Reached expected number of succeeded pods".
	cond := func(typ batchv1.JobConditionType, reason, msg string) batchv1.JobCondition {
		return batchv1.JobCondition{Type: typ, Status: corev1.ConditionTrue, Reason: reason, Message: msg}
	}
	failed := cond(batchv1.JobFailed, "BackoffLimitExceeded", "Job has reached the specified backoff limit")
	target := cond(batchv1.JobFailureTarget, "BackoffLimitExceeded", "Job has reached the specified backoff limit")
	complete := cond(batchv1.JobComplete, "CompletionsReached", "Reached expected number of succeeded pods")
	met := cond(batchv1.JobSuccessCriteriaMet, "CompletionsReached", "Reached expected number of succeeded pods")
	notTrue := complete
	notTrue.Status = corev1.ConditionFalse
	three, yes := int32(3), true
	job := func(st batchv1.JobStatus, spec ...func(*batchv1.JobSpec)) *batchv1.Job {
		j := &batchv1.Job{Status: st}
		j.Name = "migrate"
		for _, f := range spec {
			f(&j.Spec)
		}
		return j
	}
	doomedPods := NewPods{Total: 2, Doomed: 1, Reasons: []string{"Image not found: registry.example.com/migrate:v9"}}
	tests := []struct {
		name   string
		job    *batchv1.Job
		pods   NewPods
		class  RolloutClass
		reason string
	}{
		{"failed", job(batchv1.JobStatus{Failed: 7, Conditions: []batchv1.JobCondition{failed}}), NewPods{}, RolloutDoomed,
			"Job failed (BackoffLimitExceeded): Job has reached the specified backoff limit"},
		{"failure target first", job(batchv1.JobStatus{Conditions: []batchv1.JobCondition{target}}), NewPods{}, RolloutDoomed,
			"Job failed (BackoffLimitExceeded): Job has reached the specified backoff limit"},
		{"failed over doomed pods", job(batchv1.JobStatus{Conditions: []batchv1.JobCondition{failed}}), doomedPods, RolloutDoomed,
			"Job failed (BackoffLimitExceeded): Job has reached the specified backoff limit"},
		{"complete", job(batchv1.JobStatus{Succeeded: 1, Conditions: []batchv1.JobCondition{complete}}), NewPods{}, RolloutComplete,
			`job "migrate" completed: 1 succeeded`},
		{"success criteria met first", job(batchv1.JobStatus{Succeeded: 3, Conditions: []batchv1.JobCondition{met}}), NewPods{}, RolloutComplete,
			`job "migrate" completed: 3 succeeded`},
		{"a condition that is not true", job(batchv1.JobStatus{Active: 1, Conditions: []batchv1.JobCondition{notTrue}}), NewPods{}, RolloutProgressing,
			`Waiting for job "migrate" to complete: 0 of 1 succeeded, 1 active, 0 failed`},
		{"doomed pod before any condition", job(batchv1.JobStatus{Active: 2}), doomedPods, RolloutDoomed,
			"1/2 pods doomed: Image not found: registry.example.com/migrate:v9"},
		{"running", job(batchv1.JobStatus{Active: 1, Succeeded: 1, Failed: 2}, func(s *batchv1.JobSpec) { s.Completions = &three }),
			NewPods{Total: 2}, RolloutProgressing, `Waiting for job "migrate" to complete: 1 of 3 succeeded, 1 active, 2 failed`},
		{"suspended", job(batchv1.JobStatus{}, func(s *batchv1.JobSpec) { s.Suspend = &yes }), NewPods{}, RolloutProgressing,
			`job "migrate" is suspended`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := JobVerdict(tc.job, tc.pods)
			if got.Class != tc.class || got.Reason != tc.reason {
				t.Errorf("JobVerdict = %s %q, want %s %q", got.Class, got.Reason, tc.class, tc.reason)
			}
		})
	}
}
