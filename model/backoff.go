package model

import "doomwatch/classify"

// applyBackOff remembers a container that classify saw waiting out the kubelet's first back-off
// after a start failure on its node (RuleStartFailureBackOff, transient: the flake's back-off),
// with its restart count, and promotes the verdict to doomed (RuleStartFailureRepeated) when the
// container is seen there again at a higher restart count: it has failed to start once more after a
// back-off was served. classify reads the back-off's length from one status (a second step
// dooms); this catches the repeat over time whatever the kubelet's steps are (kubelets with
// ReduceDefaultCrashLoopBackOffDecay start at 1 s, a maxContainerRestartPeriod below 10 s
// caps every step). It reports whether it promoted the verdict.
//
// The memory ends when the container runs, or when it leaves the start-failure states for any
// other verdict; a new pod under the same name starts without it (upsertPod).
func (m *Model) applyBackOff(p *Pod, c *classify.ContainerVerdict) bool {
	s := p.findMemory(memoryBackOff, c.Name, c.Init)
	if c.Rule != classify.RuleStartFailureBackOff {
		if s != nil && !classify.StartFailing(c.Rule) {
			p.dropMemory(memoryBackOff, c.Name, c.Init)
		}
		return false
	}
	st := containerStatus(p.rec, c.Name, c.Init)
	if st == nil {
		return false
	}
	if s == nil {
		p.sticky = append(p.sticky, stickyDoom{kind: memoryBackOff, container: c.Name, init: c.Init, restarts: st.RestartCount()})
		return false
	}
	var promoted bool
	*c, promoted = classify.StartedAgain(*c, s.restarts, st.RestartCount())
	return promoted
}
