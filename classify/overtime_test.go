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
	if !ok || got.Class != Doomed || got.Rule != RuleStartFailureRepeated ||
		!strings.HasPrefix(got.Reason, "Failed to start again after the kubelet's back-off") ||
		!strings.HasSuffix(got.Reason, strings.TrimPrefix(c.Reason, startBackOffHead)) {
		t.Errorf("a higher restart count: %v %v %q (from %q)", got.Class, got.Rule, got.Reason, c.Reason)
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
	got, ok := StillNotFound(ContainerVerdict{Verdict: Verdict{Class: Transient, Rule: RuleImagePullBackOff, Container: first.Name}, Name: first.Name}, first.Verdict)
	if !ok || got.Class != Doomed || got.Rule != RuleStickyImageNotFound || got.Reason != first.Reason || got.Container != first.Name {
		t.Errorf("back-off after not found: %+v", got.Verdict)
	}
	if _, ok := StillNotFound(ContainerVerdict{Verdict: Verdict{Rule: RuleRunningReady}}, first.Verdict); ok {
		t.Errorf("a running container stays doomed")
	}
}

// TestEscalate: the reason names the exit code of a runtime start failure, none for a create
// error.
func TestEscalate(t *testing.T) {
	v := Verdict{Class: Transient, Rule: RuleStartFailure128, ExitCode: 128, HasExitCode: true}
	if got := Escalate(v, 3); got.Class != Doomed || got.Rule != RuleEscalated || got.Reason != "failed to start with exit 128 on 3 nodes: not node-local" {
		t.Errorf("exit 128: %+v", got)
	}
	v = Verdict{Class: Transient, Rule: RuleCreateErrorTransient}
	if got := Escalate(v, 2); got.Reason != "failed to start on 2 nodes: not node-local" {
		t.Errorf("create error: %q", got.Reason)
	}
	if !Escalates(RuleStartFailure128) || !Escalates(RuleCreateErrorTransient) || Escalates(RuleCrashLoop) {
		t.Errorf("Escalates: the runtime's start failures, nothing else")
	}
}

// waitingMessage is the waiting message of the fixture's first container.
func waitingMessage(t *testing.T, fx fixture) string {
	t.Helper()
	w := fx.pod.Status.ContainerStatuses[0].State.Waiting
	if w == nil {
		t.Fatalf("%s: not waiting", fx.file)
	}
	return w.Message
}

// TestPullBackOff: a back-off whose message says nothing, given the error of the pull before it,
// gets the verdict a kubelet v1.32+ message with that error appended gets from the status alone,
// for the same image: a rate limit named and transient, a timeout transient with its error, a
// missing or refused image doomed (sticky, since the status alone does not show it).
func TestPullBackOff(t *testing.T) {
	fixtures := map[string]fixture{}
	for _, fx := range loadFixtures(t) {
		fixtures[fx.file] = fx
	}
	named := func(file string) fixture {
		fx, ok := fixtures[file]
		if !ok {
			t.Fatalf("no fixture %s", file)
		}
		return fx
	}
	bare := containerOf(t, named("pull-backoff-rate-limit-event.yaml"), RuleImagePullBackOff)
	tests := []struct {
		name      string
		errFrom   string // the fixture whose ErrImagePull message is the last pull's error
		img       string
		kind      Class
		rule      Rule
		reasonAs  string // the fixture whose status gives the same reason in one snapshot
		reasonHas string
	}{
		{"rate limit", "pull-containerd-429-rate-limit.yaml", "centos", Transient, RuleImagePullBackOff,
			"pull-backoff-containerd-429-rate-limit.yaml", "Image pull rate-limited by the registry (back-off): toomanyrequests: "},
		{"timeout", "errimagepull-timeout.yaml", "ghcr.io/ollama/open-webui:main", Transient, RuleImagePullBackOff,
			"imagepullbackoff.yaml", "i/o timeout"},
		{"not found", "errimagepull-not-found.yaml", "registry.example.com/shop/web:v43", Doomed, RuleStickyImageNotFound,
			"errimagepull-not-found.yaml", "Image not found: registry.example.com/shop/web:v43"},
		{"access denied", "pull-docker-access-denied.yaml", "suedostcargo-web", Doomed, RuleStickyImageNotFound,
			"pull-docker-access-denied.yaml", "Image pull access denied"},
	}
	for _, tt := range tests {
		lastErr := waitingMessage(t, named(tt.errFrom))
		got, ok := PullBackOff(bare, tt.img, lastErr)
		if !ok || got.Class != tt.kind || got.Rule != tt.rule || got.Message != lastErr || got.Name != bare.Name || got.Container != bare.Name {
			t.Errorf("%s: %v %v %v (message %q, container %q)", tt.name, ok, got.Class, got.Rule, got.Message, got.Container)
		}
		same := named(tt.reasonAs)
		if want := Pod(same.pod, same.now).Reason; got.Reason != want || !strings.Contains(got.Reason, tt.reasonHas) {
			t.Errorf("%s: reason %q, want %q (the status's), containing %q", tt.name, got.Reason, want, tt.reasonHas)
		}
	}

	notFound := waitingMessage(t, named("errimagepull-not-found.yaml"))
	if got, ok := PullBackOff(bare, "nextcloud:29.0.6", ""); ok || got != bare {
		t.Errorf("no error: %v %+v, want the verdict unchanged", ok, got)
	}
	// A v1.32+ message carries the kubelet's own last error, which the model's can only repeat.
	carrying := containerOf(t, named("pull-backoff-containerd-429-rate-limit.yaml"), RuleImagePullBackOff)
	if got, ok := PullBackOff(carrying, "centos", notFound); ok || got != carrying {
		t.Errorf("a message with its error: %v %+v, want the verdict unchanged", ok, got)
	}
	pull := containerOf(t, named("pull-containerd-429-rate-limit.yaml"), RuleImagePull)
	if got, ok := PullBackOff(pull, "centos", notFound); ok || got != pull {
		t.Errorf("ErrImagePull: %v %+v, want the verdict unchanged", ok, got)
	}
}

// Cross-node escalation: which nodes count, and when none do.
func TestNotNodeLocal(t *testing.T) {
	tests := []struct {
		name                                             string
		failedNodes, notSuspect, healthy, failing, total int
		want                                             int
	}{
		{"three nodes, none suspect, nothing healthy", 3, 3, 0, 6, 6, 3},
		{"three nodes, none suspect, a few healthy", 3, 3, 2, 8, 10, 3},
		{"two flaky nodes and one failure elsewhere", 3, 1, 6, 14, 20, 0},
		{"healthy on half the pods: where, not what", 5, 5, 10, 10, 20, 0},
		{"nothing healthy: every node counts, suspects too", 3, 1, 0, 8, 8, 3},
		{"the rollout's first failures, its other pods still starting", 3, 3, 0, 3, 5, 0},
		{"two nodes are not enough", 2, 2, 0, 4, 4, 0},
		{"every pod it had is gone", 4, 3, 0, 0, 0, 4},
	}
	for _, tc := range tests {
		if got := NotNodeLocal(tc.failedNodes, tc.notSuspect, tc.healthy, tc.failing, tc.total, 3); got != tc.want {
			t.Errorf("%s: NotNodeLocal(%d, %d, %d, %d, %d, 3) = %d, want %d", tc.name, tc.failedNodes, tc.notSuspect, tc.healthy,
				tc.failing, tc.total, got, tc.want)
		}
	}
}
