package model

import (
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"

	"doomwatch/classify"
	"doomwatch/contract"
)

// A CronJob has no rollout of its own: a deploy gate waits for its latest Job, the newest Job it
// controls (by creation, then name): one its controller made on schedule, or one
// `kubectl create job --from=cronjob/NAME` made, which kubectl gives the CronJob as controller
// (kubectl pkg/cmd/create/create_job.go createJobFromCronJob). That Job is judged as a Job is
// (classify.CronJobVerdict). Only a Job of this wait counts: one still running when the wait
// began, or made since (Target.Since); the runs that finished before are history, under a template
// the deploy may have changed.
func init() {
	registerKind(&kindModel{
		kind: contract.KindCronJob,
		gate: func(m *Model, k nsName, st *GateStatus) []gateCtrl {
			c := m.cronJob(k)
			if c == nil {
				return nil
			}
			st.Found = true
			if j := m.latestJob(c, st.Target.Since); j != nil {
				return []gateCtrl{{ctrl: ownerKey{k.ns, string(contract.KindJob), j.Name}, current: true}}
			}
			return nil
		},
		gateRollout: func(m *Model, t Target, pods classify.NewPods) (Rollout, bool) {
			c := m.cronJob(nsName{t.Namespace, t.Name})
			if c == nil {
				return Rollout{}, false
			}
			j := m.latestJob(c, t.Since)
			r := newRollout(contract.KindCronJob, c.Namespace, c.Name, nil, 0, 0, 0)
			if j != nil {
				r = newRollout(contract.KindCronJob, c.Namespace, c.Name, j.Spec.Completions, j.Status.Succeeded, j.Status.Succeeded, j.Status.Succeeded)
			}
			return r.judged(classify.CronJobVerdict(c, j, pods), pods), true
		},
	})
}

// cronJob is the CronJob stored under k, or nil.
func (m *Model) cronJob(k nsName) *batchv1.CronJob {
	return objectAs[*batchv1.CronJob](m, contract.KindCronJob, k)
}

// latestJob is the newest Job CronJob c controls, by creation and then name, but for those that
// finished before since; nil when it has none. A Job of an earlier CronJob of the same name
// (another UID) is not its own.
func (m *Model) latestJob(c *batchv1.CronJob, since time.Time) *batchv1.Job {
	var latest *batchv1.Job
	for k, o := range m.objects[contract.KindJob] {
		j, ok := o.(*batchv1.Job)
		if !ok || k.ns != c.Namespace {
			continue
		}
		ref := controllerOf(j.OwnerReferences)
		if ref == nil || ref.Kind != string(contract.KindCronJob) || ref.Name != c.Name || ref.UID != "" && c.UID != "" && ref.UID != c.UID ||
			jobFinishedBefore(j, since) {
			continue
		}
		if latest == nil || j.CreationTimestamp.After(latest.CreationTimestamp.Time) ||
			j.CreationTimestamp.Equal(&latest.CreationTimestamp) && strings.Compare(j.Name, latest.Name) > 0 {
			latest = j
		}
	}
	return latest
}
