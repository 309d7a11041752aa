package model

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"doomwatch/classify"
)

// recordFailures adds the pod's transient exit-128 start failures to the ledger. Both state and
// lastState of every container, init containers included, are read, so a pod seen for the first
// time (the dashboard opened mid-incident, or --once) seeds the ledger with the failures whose
// finishedAt is still inside the window.
//
// Only classify's RuleStartFailure128 is node evidence: a start failure classify calls
// deterministic (a missing executable reported as StartError 128) is the workload's fault, not
// the node's.
func (m *Model) recordFailures(p *Pod, now time.Time) {
	st := &p.Object.Status
	if len(st.InitContainerStatuses) == 0 && len(st.ContainerStatuses) == 0 {
		return
	}
	since := now.Add(-m.cfg.Window)
	for i := range st.InitContainerStatuses {
		m.recordStatus(p, &st.InitContainerStatuses[i], since)
	}
	for i := range st.ContainerStatuses {
		m.recordStatus(p, &st.ContainerStatuses[i], since)
	}
}

func (m *Model) recordStatus(p *Pod, cs *corev1.ContainerStatus, since time.Time) {
	if t := cs.State.Terminated; t != nil {
		m.recordTerminated(p, cs, t, since)
	}
	if t := cs.LastTerminationState.Terminated; t != nil {
		m.recordTerminated(p, cs, t, since)
	}
}

// recordTerminated records one terminated state. A failure without finishedAt is not evidence:
// the kubelet copies the runtime's finishedAt into every terminated state (kubernetes
// pkg/kubelet/kubelet_pods.go, convertToAPIContainerStatuses), and containerd sets it when a start
// fails (containerd internal/cri/server/container_start.go, StartContainer), so only a hand-made
// object lacks it. Without a time such a failure could not be placed in the
// window nor matched between state and lastState: dated "now" it would be re-added after every
// window expiry, and counted again when the same termination showed up with a time.
func (m *Model) recordTerminated(p *Pod, cs *corev1.ContainerStatus, t *corev1.ContainerStateTerminated, since time.Time) {
	at := t.FinishedAt.Time
	if at.IsZero() {
		return
	}
	id := p.UID
	if id == "" {
		id = p.Key // objects without a UID (hand-made fixtures) still deduplicate per pod
	}
	k := failureKey{uid: id, container: cs.Name, at: at.UnixNano()}
	// Dedup and window checks come first: they are map lookups, and an update repeating a known
	// failure costs no classification.
	if at.Before(since) || m.ledger.has(k) {
		return
	}
	v, ok := classify.StartFailure(t)
	if !ok || v.Rule != classify.RuleStartFailure128 {
		return
	}
	f := Failure{
		PodUID:       p.UID,
		Pod:          p.Key,
		Container:    Sanitize(cs.Name),
		Node:         p.Node,
		Workload:     p.workload,
		RestartCount: cs.RestartCount,
		FinishedAt:   at,
		ExitCode:     t.ExitCode,
		Reason:       Sanitize(t.Reason),
		Message:      normalizeMessage(Sanitize(t.Message)),
	}
	if m.ledger.add(f, k, since, m.cfg.LedgerMax, &m.esc) {
		m.nodeView.valid = false
	}
}
