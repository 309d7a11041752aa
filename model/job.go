package model

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"doomwatch/classify"
	"doomwatch/contract"
	"doomwatch/sanitize"
)

// A Job judges its pods: a failed attempt is what its retries make of it (classify.JobAttempt),
// so its pods are judged again whenever the Job changes. Its pods belong to its CronJob, when it
// has one. A Job has no rollout to show; a deploy gate judges it from its conditions and its pods
// (classify.JobVerdict).
func init() {
	registerKind(&kindModel{
		kind: contract.KindJob,
		owner: func(m *Model, k nsName) string {
			if j := m.job(k); j != nil {
				if c := controllerOf(j.OwnerReferences); c != nil {
					return sanitize.Text(c.Kind) + "/" + sanitize.Text(c.Name)
				}
			}
			return ""
		},
		gate: func(m *Model, k nsName, st *GateStatus) []gateCtrl {
			if m.job(k) == nil {
				return nil
			}
			st.Found = true
			return []gateCtrl{{ctrl: ownerKey{k.ns, string(contract.KindJob), k.name}, current: true}}
		},
		gateRollout: func(m *Model, t Target, pods classify.NewPods) (Rollout, bool) {
			j := m.job(nsName{t.Namespace, t.Name})
			if j == nil {
				return Rollout{}, false
			}
			desired := int32(1)
			if j.Spec.Completions != nil {
				desired = *j.Spec.Completions
			}
			// A Job's "updated" and "ready" are its succeeded pods: what it has done of what it must.
			r := newRollout(contract.KindJob, j.Namespace, j.Name, &desired, j.Status.Succeeded, j.Status.Succeeded, j.Status.Succeeded)
			return r.judged(classify.JobVerdict(j, pods), pods), true
		},
		judgesPods: true,
		podVerdict: func(m *Model, k nsName, pod *corev1.Pod, v classify.Verdict) classify.Verdict {
			if j := m.job(k); j != nil {
				v = classify.JobAttempt(pod, v, j)
				sanitizeVerdict(&v)
			}
			return v
		},
	})
}

// jobFinishedBefore says Job j finished (its Complete or Failed condition, or SuccessCriteriaMet
// and FailureTarget, which the Job controller writes first) before t.
func jobFinishedBefore(j *batchv1.Job, t time.Time) bool {
	for _, c := range j.Status.Conditions {
		switch c.Type {
		case batchv1.JobComplete, batchv1.JobFailed, batchv1.JobSuccessCriteriaMet, batchv1.JobFailureTarget:
			// Conditions' times are whole seconds: one in the second t falls in is not before it.
			if c.Status == corev1.ConditionTrue && c.LastTransitionTime.Time.Before(t.Truncate(time.Second)) {
				return true
			}
		}
	}
	return false
}

// job is the Job stored under k, or nil.
func (m *Model) job(k nsName) *batchv1.Job { return objectAs[*batchv1.Job](m, contract.KindJob, k) }
