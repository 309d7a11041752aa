package model

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"doomwatch/classify"
)

// hold records that classify held container c of pod p doomed while it runs between crashes
// (RuleCrashLoopRunning): the verdict changes with time alone, when the container has been up long
// enough to count as recovered (classify.RecoveredAt), and no update of the pod need come then.
func (m *Model) hold(p *Pod, pod *corev1.Pod, c *classify.ContainerVerdict) {
	until := classify.RecoveredAt(containerStatusOf(pod, c.Name, c.Init))
	if until.IsZero() {
		return // exited again: the next status decides, and brings an update
	}
	if old, ok := m.holds[p]; !ok || until.Before(old) {
		m.holds[p] = until
	}
}

// releaseHolds judges again the pods whose hold has ended at now and reports whether any did.
func (m *Model) releaseHolds(now time.Time) bool {
	var due []*Pod
	for p, until := range m.holds {
		if !now.Before(until) {
			due = append(due, p)
		}
	}
	for _, p := range due {
		delete(m.holds, p)
		m.rejudge(p)
	}
	return len(due) > 0
}
