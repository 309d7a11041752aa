package classify

import (
	"strings"
	"testing"
)

// fixtureNamed is the fixture from testdata/file.
func fixtureNamed(t *testing.T, file string) fixture {
	t.Helper()
	for _, fx := range loadFixtures(t) {
		if strings.HasSuffix(fx.file, file) {
			return fx
		}
	}
	t.Fatalf("no fixture %s", file)
	return fixture{}
}

// containerOf is the verdict of the fixture's container with rule r.
func containerOf(t *testing.T, fx fixture, r Rule) ContainerVerdict {
	t.Helper()
	_, cvs := PodAndContainers(fx.pod, fx.now, nil)
	for _, c := range cvs {
		if c.Rule == r {
			return c
		}
	}
	t.Fatalf("%s: no container judged %v (got %+v)", fx.file, r, cvs)
	return ContainerVerdict{}
}

// TestStartedAgain: the flake's back-off seen again at a higher restart count is a repeat,
// doomed, with the runtime's message kept; at the same count, or for another rule, nothing.
func TestStartedAgain(t *testing.T) {
	fx := fixtureNamed(t, "real-start-failure-backoff.yaml")
	c := containerOf(t, fx, RuleStartFailureBackOff)
	restarts := fx.pod.Status.ContainerStatuses[0].RestartCount
	if _, ok := StartedAgain(c, restarts, restarts); ok {
		t.Errorf("the same restart count: a repeat")
	}
	got, ok := StartedAgain(c, restarts-1, restarts)
	if !ok || got.Kind != Doomed || got.Rule != RuleStartFailureRepeated ||
		!strings.HasPrefix(got.Reason, "Failed to start again after the kubelet's back-off") ||
		!strings.HasSuffix(got.Reason, strings.TrimPrefix(c.Reason, startBackOffHead)) {
		t.Errorf("a higher restart count: %v %v %q (from %q)", got.Kind, got.Rule, got.Reason, c.Reason)
	}
	other := c
	other.Rule = RuleStartFailure128
	if _, ok := StartedAgain(other, 0, restarts); ok {
		t.Errorf("a start failure that is not the back-off: a repeat")
	}
}

// TestStillNotFound: ImagePullBackOff after a pull that said "not found" keeps that reason, doomed.
func TestStillNotFound(t *testing.T) {
	first := containerOf(t, fixtureNamed(t, "errimagepull-not-found.yaml"), RuleImageNotFound)
	got, ok := StillNotFound(ContainerVerdict{Verdict: Verdict{Kind: Transient, Rule: RuleImagePullBackOff, Container: first.Name}, Name: first.Name}, first.Verdict)
	if !ok || got.Kind != Doomed || got.Rule != RuleStickyImageNotFound || got.Reason != first.Reason || got.Container != first.Name {
		t.Errorf("back-off after not found: %+v", got.Verdict)
	}
	if _, ok := StillNotFound(ContainerVerdict{Verdict: Verdict{Rule: RuleRunningReady}}, first.Verdict); ok {
		t.Errorf("a running container stays doomed")
	}
}

// TestEscalate: the reason names the exit code of a runtime start failure, none for a create
// error.
func TestEscalate(t *testing.T) {
	v := Verdict{Kind: Transient, Rule: RuleStartFailure128, ExitCode: 128, HasExitCode: true}
	if got := Escalate(v, 3); got.Kind != Doomed || got.Rule != RuleEscalated || got.Reason != "failed to start with exit 128 on 3 nodes: not node-local" {
		t.Errorf("exit 128: %+v", got)
	}
	v = Verdict{Kind: Transient, Rule: RuleCreateErrorTransient}
	if got := Escalate(v, 2); got.Reason != "failed to start on 2 nodes: not node-local" {
		t.Errorf("create error: %q", got.Reason)
	}
	if !Escalates(RuleStartFailure128) || !Escalates(RuleCreateErrorTransient) || Escalates(RuleCrashLoop) {
		t.Errorf("Escalates: the runtime's start failures, nothing else")
	}
}
