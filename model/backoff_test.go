package model

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"doomwatch/classify"
	"doomwatch/contract"
)

// backingOff128: the container failed to start with exit 128 on its node at `at` and waits out
// the kubelet's back-off of `delay` (kubernetes/kubernetes pkg/kubelet/kuberuntime/kuberuntime_manager.go
// doBackOff: `back-off %s restarting failed container=%s pod=%s`, the pod as name_namespace(uid)).
func backingOff128(at time.Time, restarts int32, delay string) podOpt {
	return func(p *corev1.Pod) {
		msg := fmt.Sprintf("back-off %s restarting failed container=app pod=%s_%s(%s)", delay, p.Name, p.Namespace, p.UID)
		app(func(cs *corev1.ContainerStatus) {
			cs.RestartCount = restarts
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: msg}
			cs.LastTerminationState.Terminated = terminated128(at, runtimeMsg)
		})(p)
	}
}

// TestOneBackOffAfterAStartFailureIsTransient is the one-replica rollout on a flaky node: one
// start failure, the kubelet's first back-off, then the retry runs. The pod is never doomed, and
// the failure stays node evidence.
func TestOneBackOffAfterAStartFailureIsTransient(t *testing.T) {
	m := New(DefaultConfig())
	steps := []struct {
		opt  podOpt
		want classify.Class
		rule classify.Rule
	}{
		{startFailing128Now(t0, 0), classify.Transient, classify.RuleStartFailure128},
		{backingOff128(t0, 1, "10s"), classify.Transient, classify.RuleStartFailureBackOff},
		{recoveredAfter128(t0, 1), classify.Healthy, classify.RuleRunningReady},
	}
	for i, s := range steps {
		now := t0.Add(time.Duration(i) * 5 * time.Second)
		apply(m, now, pod("shop", "web-1", onNode("node-3"), ownedBy("ReplicaSet", "web-1a"), s.opt))
		p := m.Pod("shop/web-1")
		if p.Verdict.Class != s.want || p.Verdict.Rule != s.rule {
			t.Errorf("step %d: %s %s (%s), want %s %s", i, p.Verdict.Class, p.Verdict.Rule, p.Verdict.Reason, s.want, s.rule)
		}
	}
	if n := len(m.Failures(t0.Add(time.Minute))); n != 1 {
		t.Errorf("ledger holds %d failures, want the one start failure", n)
	}
}

// TestStartFailureAgainAfterABackOffIsDoomed: the same container back in the first back-off at a
// higher restart count (a kubelet whose steps stay within 10 s) has failed to start again after a
// back-off was served: doomed, with the runtime's message.
func TestStartFailureAgainAfterABackOffIsDoomed(t *testing.T) {
	m := New(DefaultConfig())
	apply(m, t0, pod("shop", "web-1", onNode("node-3"), backingOff128(t0, 1, "1s")))
	if p := m.Pod("shop/web-1"); p.Verdict.Class != classify.Transient {
		t.Fatalf("first back-off: %s (%s), want transient", p.Verdict.Class, p.Verdict.Reason)
	}
	apply(m, t0.Add(time.Second), pod("shop", "web-1", onNode("node-3"), backingOff128(t0.Add(time.Second), 1, "1s")))
	if p := m.Pod("shop/web-1"); p.Verdict.Class != classify.Transient {
		t.Fatalf("the same back-off seen again: %s (%s), want transient", p.Verdict.Class, p.Verdict.Reason)
	}
	apply(m, t0.Add(3*time.Second), pod("shop", "web-1", onNode("node-3"), backingOff128(t0.Add(3*time.Second), 2, "2s")))
	p := m.Pod("shop/web-1")
	if p.Verdict.Class != classify.Doomed || p.Verdict.Rule != classify.RuleStartFailureRepeated {
		t.Fatalf("second back-off: %s %s (%s), want doomed start-failure-repeated", p.Verdict.Class, p.Verdict.Rule, p.Verdict.Reason)
	}
	if want := "Failed to start again after the kubelet's back-off (exit 128): " + runtimeMsg; p.Verdict.Reason != want {
		t.Errorf("reason = %q, want %q", p.Verdict.Reason, want)
	}
	// A new pod under the same name starts without the memory.
	apply(m, t0.Add(4*time.Second), pod("shop", "web-1", uid("other"), onNode("node-3"), backingOff128(t0.Add(4*time.Second), 3, "1s")))
	if p := m.Pod("shop/web-1"); p.Verdict.Class != classify.Transient {
		t.Errorf("new pod: %s (%s), want transient", p.Verdict.Class, p.Verdict.Reason)
	}
}

// runningAgain: the container's third restart runs since `since`, after an OOM kill 20 s into the
// instance before it (containerd's oomExitReason, internal/cri/server/helpers.go).
func runningAgain(since time.Time) podOpt {
	return app(func(cs *corev1.ContainerStatus) {
		cs.Ready, cs.RestartCount = true, 3
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(since)}
		cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137,
			StartedAt: metav1.NewTime(since.Add(-40 * time.Second)), FinishedAt: metav1.NewTime(since.Add(-20 * time.Second))}
	})
}

// TestCrashLoopHoldEndsWithTime: a crash-looping container that runs again stays doomed, and is
// judged again when it has been up for 10 minutes, with no update of the pod.
func TestCrashLoopHoldEndsWithTime(t *testing.T) {
	m := New(DefaultConfig())
	apply(m, t0.Add(5*time.Second), pod("search", "search-1", onNode("node-1"), runningAgain(t0)))
	p := m.Pod("search/search-1")
	if p.Verdict.Class != classify.Doomed || p.Verdict.Rule != classify.RuleCrashLoopRunning {
		t.Fatalf("running again: %s %s (%s), want doomed crash-loop-running", p.Verdict.Class, p.Verdict.Rule, p.Verdict.Reason)
	}
	v := m.Version()
	m.Expire(t0.Add(9 * time.Minute))
	if p.Verdict.Class != classify.Doomed || m.Version() != v {
		t.Errorf("at 9m up: %s, version %d → %d; want still doomed and no change", p.Verdict.Class, v, m.Version())
	}
	m.Expire(t0.Add(10 * time.Minute))
	if p.Verdict.Class != classify.Healthy || m.Version() == v {
		t.Errorf("at 10m up: %s (%s), version %d → %d; want healthy, changed", p.Verdict.Class, p.Verdict.Reason, v, m.Version())
	}
	if c := m.Counts(); c.Doomed != 0 || c.Healthy != 1 {
		t.Errorf("counts after the hold = %+v", c)
	}
	if len(m.holds) != 0 {
		t.Errorf("%d holds left", len(m.holds))
	}
	// A deleted pod leaves no hold behind.
	apply(m, t0.Add(11*time.Minute), pod("search", "search-2", onNode("node-1"), runningAgain(t0.Add(11*time.Minute))))
	m.Apply(&contract.Batch{Deletes: []contract.Ref{{Kind: contract.KindPod, Namespace: "search", Name: "search-2"}}}, t0.Add(11*time.Minute))
	if len(m.holds) != 0 {
		t.Errorf("a deleted pod kept its hold")
	}
}
