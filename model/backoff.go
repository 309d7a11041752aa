package model

import (
	"strings"

	"doomwatch/classify"
)

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
		if s != nil && !startFailing(c.Rule) {
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
	if st.RestartCount() <= s.restarts {
		return false
	}
	c.Kind, c.Rule = classify.Doomed, classify.RuleStartFailureRepeated
	c.Reason = "Failed to start again after the kubelet's back-off" + strings.TrimPrefix(c.Reason, startBackOffHead)
	return true
}

// startBackOffHead is how classify's RuleStartFailureBackOff reason begins; the rest is the exit
// code and the runtime's message.
const startBackOffHead = "Failed to start on node, retrying after the kubelet's back-off"

// startFailing reports the rules a container passes through between two start attempts: the
// failure itself and the moments before the back-off is written.
func startFailing(r classify.Rule) bool {
	switch r {
	case classify.RuleStartFailure128, classify.RuleCreateErrorTransient, classify.RuleStartFailureBackOff,
		classify.RuleStartFailureRepeated, classify.RuleStarting:
		return true
	}
	return false
}
