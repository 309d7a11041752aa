package model

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"doomwatch/classify"
	"doomwatch/contract"
)

func TestLedgerRecordsEachFailureOnce(t *testing.T) {
	m := New(DefaultConfig())
	at := t0.Add(-time.Minute)
	// The same termination is reported as state, then (after the restart) as lastState, then
	// repeated by every later status update: one failure.
	apply(m, t0, pod("shop", "web-1", onNode("node-3"), startFailing128Now(at, 0)))
	apply(m, t0.Add(time.Second), pod("shop", "web-1", onNode("node-3"), startFailed128(at, 1)))
	apply(m, t0.Add(2*time.Second), pod("shop", "web-1", onNode("node-3"), startFailed128(at, 1)))
	apply(m, t0.Add(3*time.Second), pod("shop", "web-1", onNode("node-3"), recoveredAfter128(at, 1)))
	fs := m.Failures(t0.Add(3 * time.Second))
	if len(fs) != 1 {
		t.Fatalf("failures = %d, want 1: %+v", len(fs), fs)
	}
	f := fs[0]
	if f.Pod != "shop/web-1" || f.Container != "app" || f.Node != "node-3" || !f.FinishedAt.Equal(at) ||
		f.ExitCode != 128 || f.Reason != "StartError" {
		t.Errorf("failure = %+v", f)
	}
	if strings.Contains(f.Message, "ea2bc2acf887") || strings.Contains(f.Message, "e849e27b") ||
		!strings.Contains(f.Message, "kubepods-burstable-pod<uid>.slice/cri-containerd-<id>.scope/memory.memsw.limit_in_bytes") {
		t.Errorf("message not normalised: %q", f.Message)
	}

	// A second failure of the same container (a new finishedAt) is a new entry.
	at2 := t0.Add(10 * time.Second)
	apply(m, at2, pod("shop", "web-1", onNode("node-3"), startFailed128(at2, 2)))
	if n := len(m.Failures(at2)); n != 2 {
		t.Fatalf("failures after a second failure = %d, want 2", n)
	}
}

func TestLedgerIgnoresDeterministicStartFailures(t *testing.T) {
	m := New(DefaultConfig())
	p := pod("shop", "web-1", onNode("node-1"), startFailed128(t0, 1))
	// runc 1.2 under containerd, the command missing from the image: verbatim from
	// aws/eks-pod-identity-agent#75 (also a classify fixture).
	p.Status.ContainerStatuses[0].LastTerminationState.Terminated.Message =
		`failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: ` +
			`unable to start container process: error during container init: exec: "/go-runner": stat /go-runner: no such file or directory: unknown`
	apply(m, t0, p)
	if n := len(m.Failures(t0)); n != 0 {
		t.Fatalf("a missing executable (StartError 128, doomed by classify) is not node evidence; got %d failures", n)
	}
}

func TestLedgerWindowSeedingAndExpiry(t *testing.T) {
	m := New(DefaultConfig())
	// Opened mid-incident: a failure 5m ago is seeded, one 20m ago is outside the window.
	apply(m, t0,
		pod("shop", "recent", onNode("node-1"), recoveredAfter128(t0.Add(-5*time.Minute), 1)),
		pod("shop", "old", onNode("node-1"), recoveredAfter128(t0.Add(-20*time.Minute), 1)))
	fs := m.Failures(t0)
	if len(fs) != 1 || fs[0].Pod != "shop/recent" {
		t.Fatalf("seeded failures = %+v, want only shop/recent", fs)
	}

	v := m.Version()
	m.Expire(t0.Add(9 * time.Minute)) // 14m after the failure: still inside
	if len(m.Failures(t0.Add(9*time.Minute))) != 1 || m.Version() != v {
		t.Fatalf("failure expired too early (or version changed without a change)")
	}
	m.Expire(t0.Add(11 * time.Minute)) // 16m after
	if n := len(m.Failures(t0.Add(11 * time.Minute))); n != 0 {
		t.Fatalf("failures after the window = %d, want 0", n)
	}
	if m.Version() == v {
		t.Errorf("Expire dropped evidence without bumping the version")
	}
	// The pod still reports the expired failure in lastState: it is not re-admitted.
	apply(m, t0.Add(12*time.Minute), pod("shop", "recent", onNode("node-1"), recoveredAfter128(t0.Add(-5*time.Minute), 1)))
	if n := len(m.Failures(t0.Add(12 * time.Minute))); n != 0 {
		t.Fatalf("expired failure re-admitted: %d", n)
	}
}

func TestLedgerIsBounded(t *testing.T) {
	cfg := DefaultConfig()
	cfg.LedgerMax = 3
	m := New(cfg)
	for i := 0; i < 5; i++ {
		name := "web-" + string(rune('a'+i))
		apply(m, t0, pod("shop", name, onNode("node-1"), recoveredAfter128(t0.Add(time.Duration(i-10)*time.Second), 1)))
	}
	fs := m.Failures(t0)
	if len(fs) != 3 || fs[0].Pod != "shop/web-c" || fs[2].Pod != "shop/web-e" {
		t.Fatalf("bounded ledger = %+v, want the 3 newest, oldest first", fs)
	}
	// The dropped pods report their failures again: they stay dropped.
	apply(m, t0, pod("shop", "web-a", onNode("node-1"), recoveredAfter128(t0.Add(-10*time.Second), 1)))
	if fs := m.Failures(t0); len(fs) != 3 || fs[0].Pod != "shop/web-c" {
		t.Fatalf("dropped failure re-admitted: %+v", fs)
	}
}

func TestStickyImageNotFound(t *testing.T) {
	m := New(DefaultConfig())
	apply(m, t0, pod("shop", "pay-1", image("registry.example/app:v9"), imageNotFound()))
	p := m.Pod("shop/pay-1")
	if p.Verdict.Class != classify.Doomed || p.Verdict.Rule != classify.RuleImageNotFound {
		t.Fatalf("ErrImagePull not found: verdict %v/%v", p.Verdict.Class, p.Verdict.Rule)
	}
	notFound := p.Verdict.Reason

	// containerd timing out on the registry, in the 1.x wording of imageNotFound: open-webui/helm-charts#35
	// (also a classify fixture), its placeholders filled with the test image (registry host,
	// repository and tag; the dialled address kept).
	timeout := waiting("ErrImagePull", `rpc error: code = DeadlineExceeded desc = failed to pull and unpack image "registry.example/app:v9": `+
		`failed to resolve reference "registry.example/app:v9": failed to do request: Head "https://registry.example/v2/app/manifests/v9": `+
		`dial tcp 142.182.19.19:443: i/o timeout`)
	// The back-off that follows no longer says why; the pod stays doomed, with the same reason.
	for i, opt := range []podOpt{imageBackOff(), imageNotFound(), imageBackOff(), timeout} {
		apply(m, t0.Add(time.Duration(i+1)*time.Second), pod("shop", "pay-1", image("registry.example/app:v9"), opt))
		p = m.Pod("shop/pay-1")
		if p.Verdict.Class != classify.Doomed || p.Verdict.Reason != notFound || p.Verdict.Container != "app" {
			t.Fatalf("step %d: verdict %v %q (container %q), want doomed %q", i, p.Verdict.Class, p.Verdict.Reason, p.Verdict.Container, notFound)
		}
		if c := m.Counts(); c.Doomed != 1 || c.Transient != 0 {
			t.Fatalf("step %d: counts %+v", i, c)
		}
	}
	if p.Verdict.Rule != classify.RuleStickyImageNotFound || p.Containers[0].Rule != classify.RuleStickyImageNotFound {
		t.Errorf("sticky rule = %v / container %v", p.Verdict.Rule, p.Containers[0].Rule)
	}

	// Once the container runs (the image was pushed), the memory is gone.
	apply(m, t0.Add(time.Minute), pod("shop", "pay-1", image("registry.example/app:v9")))
	apply(m, t0.Add(2*time.Minute), pod("shop", "pay-1", image("registry.example/app:v9"), imageBackOff()))
	if p = m.Pod("shop/pay-1"); p.Verdict.Class != classify.Transient {
		t.Fatalf("after running, ImagePullBackOff should be transient again; got %v %q", p.Verdict.Class, p.Verdict.Reason)
	}
}

func TestStickyClearsOnImageChangeAndNeverAppliesWithoutNotFound(t *testing.T) {
	m := New(DefaultConfig())
	apply(m, t0, pod("shop", "pay-1", image("registry.example/app:v9"), imageNotFound()))
	apply(m, t0.Add(time.Second), pod("shop", "pay-1", image("registry.example/app:v10"), imageBackOff()))
	if p := m.Pod("shop/pay-1"); p.Verdict.Class != classify.Transient {
		t.Errorf("image changed: want transient, got %v", p.Verdict.Class)
	}
	apply(m, t0, pod("shop", "pay-2", imageBackOff()))
	if p := m.Pod("shop/pay-2"); p.Verdict.Class != classify.Transient {
		t.Errorf("ImagePullBackOff without a prior not found: want transient, got %v", p.Verdict.Class)
	}
	// A new pod under the same name (new UID) does not inherit the memory.
	apply(m, t0.Add(2*time.Second), pod("shop", "pay-1", uid("new"), image("registry.example/app:v9"), imageNotFound()))
	apply(m, t0.Add(3*time.Second), pod("shop", "pay-1", uid("newer"), image("registry.example/app:v9"), imageBackOff()))
	if p := m.Pod("shop/pay-1"); p.Verdict.Class != classify.Transient {
		t.Errorf("recreated pod inherited sticky doom: %v", p.Verdict.Class)
	}
}

func TestCrossNodeEscalation(t *testing.T) {
	m := New(DefaultConfig())
	m.Apply(&contract.Batch{Workloads: contract.Workloads(replicaSet("shop", "web-7d9f", "web", "2"))}, t0)
	web := func(name, nodeName string, opts ...podOpt) *corev1.Pod {
		return pod("shop", name, append([]podOpt{onNode(nodeName), ownedBy("ReplicaSet", "web-7d9f")}, opts...)...)
	}
	apply(m, t0,
		web("web-1", "node-1", startFailed128(t0.Add(-3*time.Minute), 1)),
		web("web-2", "node-2", startFailed128(t0.Add(-2*time.Minute), 1)),
		web("web-ok", "node-2"),
		pod("shop", "other-1", onNode("node-4"), ownedBy("StatefulSet", "other"), startFailed128(t0.Add(-time.Minute), 1)))
	for _, k := range []string{"shop/web-1", "shop/web-2", "shop/other-1"} {
		if v := m.Pod(k).Verdict; v.Class != classify.Transient {
			t.Fatalf("%s on 2 nodes: want transient, got %v %q", k, v.Class, v.Reason)
		}
	}

	// A third node: the trouble follows the workload, not the node.
	apply(m, t0, web("web-3", "node-3", startFailing128Now(t0.Add(-time.Minute), 0)))
	want := "failed to start with exit 128 on 3 nodes: not node-local"
	for _, k := range []string{"shop/web-1", "shop/web-2", "shop/web-3"} {
		v := m.Pod(k).Verdict
		if v.Class != classify.Doomed || v.Rule != classify.RuleEscalated || v.Reason != want || v.Container != "app" {
			t.Errorf("%s: got %v %v %q, want doomed %q", k, v.Class, v.Rule, v.Reason, want)
		}
	}
	if v := m.Pod("shop/web-ok").Verdict; v.Class != classify.Healthy {
		t.Errorf("a running pod of the workload stays healthy, got %v", v.Class)
	}
	if v := m.Pod("shop/other-1").Verdict; v.Class != classify.Transient {
		t.Errorf("another workload stays transient, got %v", v.Class)
	}
	if c := m.Counts(); c.Doomed != 3 || c.Transient != 1 || c.Healthy != 1 {
		t.Errorf("counts = %+v", c)
	}

	// When the oldest failure leaves the window the workload is on 2 nodes again.
	m.Expire(t0.Add(12*time.Minute + 30*time.Second))
	if v := m.Pod("shop/web-2").Verdict; v.Class != classify.Transient {
		t.Errorf("after expiry: want transient, got %v %q", v.Class, v.Reason)
	}
}

func TestEscalationThresholdIsConfigurable(t *testing.T) {
	cfg := DefaultConfig()
	cfg.EscalateNodes = 2
	m := New(cfg)
	apply(m, t0,
		pod("shop", "job-1", onNode("node-1"), ownedBy("Job", "batch"), startFailed128(t0, 1)),
		pod("shop", "job-2", onNode("node-2"), ownedBy("Job", "batch"), startFailed128(t0, 1)))
	if v := m.Pod("shop/job-1").Verdict; v.Rule != classify.RuleEscalated ||
		v.Reason != "failed to start with exit 128 on 2 nodes: not node-local" {
		t.Errorf("EscalateNodes=2: got %v %q", v.Rule, v.Reason)
	}
}

// A start failure without finishedAt cannot be dated or matched, so it is never node evidence:
// dated "now", it would come back after every window expiry, and it would be counted a second
// time when the same termination later shows up with a finishedAt.
func TestLedgerIgnoresFailuresWithoutFinishedAt(t *testing.T) {
	undated := func(restarts int32, inState bool) podOpt {
		return app(func(cs *corev1.ContainerStatus) {
			cs.RestartCount = restarts
			f := terminated128(time.Time{}, runtimeMsg)
			f.FinishedAt = metav1.Time{}
			if inState {
				cs.State.Terminated = f
			} else {
				cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
				cs.LastTerminationState.Terminated = f
			}
		})
	}

	t.Run("repeated across window expiry", func(t *testing.T) {
		m := New(DefaultConfig())
		for i, at := range []time.Time{t0, t0.Add(time.Second), t0.Add(16 * time.Minute), t0.Add(40 * time.Minute)} {
			apply(m, at, pod("shop", "web-1", onNode("node-3"), undated(1, false)))
			if fs := m.Failures(at); len(fs) != 0 {
				t.Fatalf("update %d: undated failure recorded: %+v", i, fs)
			}
		}
		if p := m.Pod("shop/web-1"); p.Verdict.Class != classify.Transient {
			t.Errorf("the pod is still judged (transient exit 128); got %v", p.Verdict.Class)
		}
	})

	t.Run("state without finishedAt, then lastState with it", func(t *testing.T) {
		m := New(DefaultConfig())
		at := t0.Add(-time.Minute)
		apply(m, t0, pod("shop", "web-1", onNode("node-3"), undated(0, true)))
		apply(m, t0.Add(time.Second), pod("shop", "web-1", onNode("node-3"), startFailed128(at, 1)))
		apply(m, t0.Add(2*time.Second), pod("shop", "web-1", onNode("node-3"), recoveredAfter128(at, 1)))
		fs := m.Failures(t0.Add(2 * time.Second))
		if len(fs) != 1 || !fs[0].FinishedAt.Equal(at) {
			t.Fatalf("one failure at its finishedAt expected, got %+v", fs)
		}
	})
}

// Sticky doom ends when the container leaves the pull states or its image is pulled, whether or
// not the model ever saw it running: batches coalesce.
func TestStickyEndsWithoutSeeingTheContainerRun(t *testing.T) {
	img := image("registry.example/app:v9")
	tests := []struct {
		name  string
		after podOpt // the update after the "not found"
	}{
		{"creating", waiting("ContainerCreating", "")},
		{"crash-looping", crashLoop()},
		{"completed", app(func(cs *corev1.ContainerStatus) {
			cs.State.Terminated = &corev1.ContainerStateTerminated{Reason: "Completed", FinishedAt: metav1.NewTime(t0)}
		})},
		{"back-off with the image pulled", app(func(cs *corev1.ContainerStatus) {
			cs.ImageID = "registry.example/app@sha256:4f1c8b7e2a9d6f3c5b8e1a4d7f0c3b6e9a2d5f8c1b4e7a0d3f6c9b2e5a8d1f4c"
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: `Back-off pulling image "registry.example/app:v9"`} // as imageBackOff
		})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := New(DefaultConfig())
			apply(m, t0, pod("shop", "pay-1", img, imageNotFound()))
			apply(m, t0.Add(time.Second), pod("shop", "pay-1", img, tc.after))
			// A later pull fails again (imagePullPolicy Always, a restart): back-off alone says
			// nothing about the image, so it is transient.
			apply(m, t0.Add(time.Minute), pod("shop", "pay-1", img, imageBackOff()))
			if v := m.Pod("shop/pay-1").Verdict; v.Class != classify.Transient {
				t.Errorf("after %s: ImagePullBackOff = %v %v %q, want transient", tc.name, v.Class, v.Rule, v.Reason)
			}
		})
	}
}

// A registry that refuses access is sticky like one that does not have the image.
func TestStickyAccessDenied(t *testing.T) {
	m := New(DefaultConfig())
	img := image("docker.io/appscode/kubed:v0.13.2")
	// containerd's message, verbatim from appscode/charts#1069 (as classify/match.go cites it).
	denied := waiting("ErrImagePull", `rpc error: code = Unknown desc = failed to pull and unpack image "docker.io/appscode/kubed:v0.13.2": `+
		`failed to resolve reference "docker.io/appscode/kubed:v0.13.2": pull access denied, repository does not exist or may require authorization: `+
		`server message: insufficient_scope: authorization failed`)
	apply(m, t0, pod("shop", "pay-1", img, denied))
	p := m.Pod("shop/pay-1")
	if p.Verdict.Rule != classify.RuleImageAccessDenied {
		t.Fatalf("ErrImagePull access denied: %v %q", p.Verdict.Rule, p.Verdict.Reason)
	}
	reason := p.Verdict.Reason
	backOff := waiting("ImagePullBackOff", `Back-off pulling image "docker.io/appscode/kubed:v0.13.2"`) // as imageBackOff
	apply(m, t0.Add(time.Second), pod("shop", "pay-1", img, backOff))
	if v := m.Pod("shop/pay-1").Verdict; v.Class != classify.Doomed || v.Rule != classify.RuleStickyImageNotFound || v.Reason != reason {
		t.Errorf("back-off after access denied: %v %v %q, want doomed %q", v.Class, v.Rule, v.Reason, reason)
	}
}

// CRI-O's transient create errors are start failures in the ledger, one per stay in the state,
// dated when the model first saw it.
func TestLedgerRecordsCreateErrors(t *testing.T) {
	m := New(DefaultConfig())
	web := func(opts ...podOpt) *corev1.Pod {
		return pod("shop", "web-1", append([]podOpt{onNode("node-2")}, opts...)...)
	}
	// The kubelet retries CreateContainer on every sync; CRI-O fails it the same way each time.
	apply(m, t0, web(createError(crioRuntimeMsg)))
	apply(m, t0.Add(10*time.Second), web(createError(crioRuntimeMsg)))
	apply(m, t0.Add(20*time.Second), web(createError(crioRuntimeMsg)))
	fs := m.Failures(t0.Add(20 * time.Second))
	if len(fs) != 1 {
		t.Fatalf("one stay in the create errors, %d failures: %+v", len(fs), fs)
	}
	f := fs[0]
	if !f.At.Equal(t0) || !f.FinishedAt.IsZero() || f.ExitCode != 0 || f.Reason != "CreateContainerError" ||
		f.Node != "node-2" || f.Container != "app" || !strings.Contains(f.Message, "lstat /proc/<n>/ns/ipc") {
		t.Errorf("failure = %+v", f)
	}
	if v := m.Pod("shop/web-1").Verdict; v.Class != classify.Transient || v.Rule != classify.RuleCreateErrorTransient {
		t.Errorf("verdict = %v %v", v.Class, v.Rule)
	}

	// It leaves the state and comes back: a second failure, dated when it came back.
	apply(m, t0.Add(30*time.Second), web(waiting("ContainerCreating", "")))
	apply(m, t0.Add(40*time.Second), web(createError(crioRuntimeMsg)))
	if fs = m.Failures(t0.Add(40 * time.Second)); len(fs) != 2 || !fs[1].At.Equal(t0.Add(40*time.Second)) {
		t.Fatalf("came back: failures = %+v", fs)
	}

	// A missing executable is the workload's fault, not the node's.
	apply(m, t0, pod("shop", "bad-1", onNode("node-2"), createError(crioExecMsg)))
	for _, f := range m.Failures(t0.Add(40 * time.Second)) {
		if f.Pod == "shop/bad-1" {
			t.Errorf("a deterministic create error was recorded: %+v", f)
		}
	}
}

// A container that stays in a create error keeps failing (the kubelet retries it on every sync)
// though its status does not change: when its failure leaves the window it is recorded again.
// When the pod is gone or recovers, nothing is renewed.
func TestCreateErrorRenewedWhileItLasts(t *testing.T) {
	m := New(DefaultConfig())
	apply(m, t0,
		pod("shop", "stuck", onNode("node-2"), createError(crioRuntimeMsg)),
		pod("shop", "gone", onNode("node-2"), createError(crioRuntimeMsg)),
		pod("shop", "healed", onNode("node-2"), createError(crioRuntimeMsg)))
	m.Apply(&contract.Batch{Deletes: []contract.Ref{{Kind: contract.KindPod, Namespace: "shop", Name: "gone"}}}, t0.Add(time.Minute))
	apply(m, t0.Add(time.Minute), pod("shop", "healed", onNode("node-2")))

	later := t0.Add(16 * time.Minute)
	m.Expire(later)
	fs := m.Failures(later)
	if len(fs) != 1 || fs[0].Pod != "shop/stuck" || !fs[0].At.Equal(later) {
		t.Fatalf("after the window: failures = %+v, want shop/stuck renewed at %v", fs, later)
	}
	m.Expire(later.Add(time.Minute))
	if fs = m.Failures(later.Add(time.Minute)); len(fs) != 1 {
		t.Errorf("renewed once per window, got %+v", fs)
	}
}

// The window is measured on doomwatch's clock: a failure that shows up on a pod the model already
// knew is dated when the model saw it; its finishedAt only identifies it.
func TestLiveFailuresAreDatedWhenSeen(t *testing.T) {
	tests := []struct {
		name string
		skew time.Duration // the node's clock minus doomwatch's
	}{
		{"node clock 20m behind", -20 * time.Minute},
		{"node clock 1h ahead", time.Hour},
		{"clocks agree", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := New(DefaultConfig())
			seen := t0.Add(time.Minute)
			apply(m, t0, pod("shop", "web-1", onNode("node-3")))
			// The start failed a second before the batch; the node stamped it with its own clock.
			finished := seen.Add(-time.Second + tc.skew)
			apply(m, seen, pod("shop", "web-1", onNode("node-3"), startFailed128(finished, 1)))
			fs := m.Failures(seen)
			if len(fs) != 1 || !fs[0].At.Equal(seen) || !fs[0].FinishedAt.Equal(finished) {
				t.Fatalf("failures = %+v, want one dated %v with finishedAt %v", fs, seen, finished)
			}
			// It counts for exactly the window after it was seen.
			m.Expire(seen.Add(14 * time.Minute))
			if n := len(m.Failures(seen.Add(14 * time.Minute))); n != 1 {
				t.Errorf("14m after it was seen: %d failures, want 1", n)
			}
			m.Expire(seen.Add(16 * time.Minute))
			if n := len(m.Failures(seen.Add(16 * time.Minute))); n != 0 {
				t.Errorf("16m after it was seen: %d failures, want 0", n)
			}
			// The pod repeats it (recovered, the failure in lastState): not re-dated.
			apply(m, seen.Add(17*time.Minute), pod("shop", "web-1", onNode("node-3"), recoveredAfter128(finished, 1)))
			if n := len(m.Failures(seen.Add(17 * time.Minute))); n != 0 {
				t.Errorf("an expired failure repeated by the pod came back: %d", n)
			}
		})
	}
}

// Failures already present when a pod is first seen (startup, --once) can only be dated by their
// finishedAt, but never later than the moment they were seen.
func TestSeededFailuresAreNotInTheFuture(t *testing.T) {
	m := New(DefaultConfig())
	ahead := t0.Add(time.Hour) // the node's clock is an hour ahead
	apply(m, t0,
		pod("shop", "ahead", onNode("node-3"), recoveredAfter128(ahead, 1)),
		pod("shop", "past", onNode("node-3"), recoveredAfter128(t0.Add(-5*time.Minute), 1)))
	fs := m.Failures(t0)
	if len(fs) != 2 || fs[0].Pod != "shop/past" || !fs[0].At.Equal(t0.Add(-5*time.Minute)) ||
		fs[1].Pod != "shop/ahead" || !fs[1].At.Equal(t0) || !fs[1].FinishedAt.Equal(ahead) {
		t.Fatalf("seeded failures = %+v", fs)
	}
	m.Expire(t0.Add(16 * time.Minute))
	if fs = m.Failures(t0.Add(16 * time.Minute)); len(fs) != 0 {
		t.Errorf("a failure from the node's future outlived the window: %+v", fs)
	}
}

// Escalation covers CRI-O's create errors too, and its reason does not claim exit 128 for them.
func TestCreateErrorsEscalate(t *testing.T) {
	m := New(DefaultConfig())
	web := func(name, nodeName string) *corev1.Pod {
		return pod("shop", name, onNode(nodeName), ownedBy("StatefulSet", "web"), createError(crioRuntimeMsg))
	}
	apply(m, t0, web("web-0", "node-1"), web("web-1", "node-2"), web("web-2", "node-3"))
	v := m.Pod("shop/web-0").Verdict
	if v.Class != classify.Doomed || v.Rule != classify.RuleEscalated || v.Reason != "failed to start on 3 nodes: not node-local" {
		t.Errorf("got %v %v %q", v.Class, v.Rule, v.Reason)
	}
}
