package model

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"doomwatch/classify"
	"doomwatch/contract"
	"doomwatch/sanitize"
)

// A Job judges its pods: a failed attempt is what its retries make of it (classify.JobAttempt),
// so its pods are judged again whenever the Job changes. Its pods belong to its CronJob, when it
// has one.
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

// job is the Job stored under k, or nil.
func (m *Model) job(k nsName) *batchv1.Job { return objectAs[*batchv1.Job](m, contract.KindJob, k) }
