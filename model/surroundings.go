package model

import (
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	"doomwatch/classify"
	"doomwatch/sanitize"
)

// What classify cannot know from a pod alone: whether its node stopped reporting, and whether it
// is one attempt of a Job that will retry it. The model knows both (Node and Job informers) and
// applies them on top of classify's verdict, through classify's own pure functions where there is
// a rule to apply (classify.JobAttempt).

// nodeReadiness is a known node's Ready condition, kept for the pods on it.
type nodeReadiness struct {
	status corev1.ConditionStatus // False or Unknown; nodes that are Ready are not kept
	since  time.Time              // the condition's lastTransitionTime
	reason string                 // the condition's message ("Kubelet stopped posting node status."), sanitised
}

// noteNodeReadiness records a node's Ready condition and re-judges the pods on it when its
// readiness changed. A flip is rare (heartbeats do not change it), so a full pass over the pods is
// paid only then.
func (m *Model) noteNodeReadiness(obj *corev1.Node) {
	name := sanitize.Text(obj.Name)
	var nr nodeReadiness
	notReady := false
	for i := range obj.Status.Conditions {
		if c := &obj.Status.Conditions[i]; c.Type == corev1.NodeReady && c.Status != corev1.ConditionTrue {
			nr = nodeReadiness{status: c.Status, since: c.LastTransitionTime.Time, reason: sanitize.Text(c.Message)}
			notReady = true
		}
	}
	old, had := m.notReady[name]
	switch {
	case notReady && (!had || old != nr):
		m.notReady[name] = nr
	case !notReady && had:
		delete(m.notReady, name)
	default:
		return
	}
	m.rejudgeNode(name)
}

// forgetNodeReadiness drops a deleted node's readiness.
func (m *Model) forgetNodeReadiness(name string) {
	if _, ok := m.notReady[name]; ok {
		delete(m.notReady, name)
		m.rejudgeNode(name)
	}
}

func (m *Model) rejudgeNode(name string) {
	for _, p := range m.pods {
		if p.Node == name {
			m.rejudge(p)
		}
	}
}

// withSurroundings applies the pod's controller (kindModel.podVerdict) and node to its verdict v. pod is p rebuilt from its record.
func (m *Model) withSurroundings(p *Pod, pod *corev1.Pod, v classify.Verdict) classify.Verdict {
	v = m.withController(p, pod, v)
	if v.Rule == classify.RulePodNotReady {
		if nr, ok := m.notReady[p.Node]; ok {
			// The node lifecycle controller marked the pod not ready because the node stopped
			// reporting (pkg/controller/nodelifecycle): name the node and how long.
			v.Rule = classify.RuleNodeNotReady
			v.Reason = "node " + p.Node + " NotReady"
			if !nr.since.IsZero() && !m.now.IsZero() {
				v.Reason += " for " + roundDuration(m.now.Sub(nr.since))
			}
			if nr.reason != "" {
				v.Reason += ": " + nr.reason
			}
			m.nodeNotReadyPods[p] = struct{}{}
		}
	}
	return v
}

// refreshNodeNotReady re-judges the pods whose reason says how long their node has been NotReady
// when that duration, as printed, has changed at now.
func (m *Model) refreshNodeNotReady(now time.Time) bool {
	prev := m.now
	m.now = now
	if len(m.nodeNotReadyPods) == 0 || prev.IsZero() {
		return false
	}
	changed := false
	for p := range m.nodeNotReadyPods {
		nr, ok := m.notReady[p.Node]
		if p.gone || !ok || p.Verdict.Rule != classify.RuleNodeNotReady {
			delete(m.nodeNotReadyPods, p)
			continue
		}
		if roundDuration(prev.Sub(nr.since)) != roundDuration(now.Sub(nr.since)) {
			delete(m.nodeNotReadyPods, p)
			m.rejudge(p)
			changed = true
		}
	}
	return changed
}

// roundDuration prints how long ago in kubectl's coarse style: 45s, 4m, 2h, 3d.
func roundDuration(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + "s"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + "m"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d/time.Hour)) + "h"
	}
	return strconv.Itoa(int(d/(24*time.Hour))) + "d"
}
