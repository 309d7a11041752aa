package model

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"doomwatch/classify"
	"doomwatch/sanitize"
)

// evil is what a container can write into its termination message: a window title, a screen
// clear, an 8-bit CSI, a right-to-left override and a line break.
const evil = "\x1b]0;pwned\x07\x1b[2Jgone\x9b31m\u202e\nbad"

// hostilePod has an init container whose name needs sanitising (it could not pass the API
// server's validation, but the record keeps what came), a native sidecar, and an app container
// crash-looping with hostile text in every string of its states and the pod's conditions.
func hostilePod() *corev1.Pod {
	always, started := corev1.ContainerRestartPolicyAlways, true
	return pod("shop", "web", ownedBy("ReplicaSet", "web-7d9f\x1b[2J"), func(p *corev1.Pod) {
		p.Spec.InitContainers = []corev1.Container{{Name: "init\x1b[31m", Image: "init:v1\x1b[2J"},
			{Name: "proxy", Image: "proxy:v1", RestartPolicy: &always}}
		p.Status.InitContainerStatuses = []corev1.ContainerStatus{
			{Name: "init\x1b[31m", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"}}},
			{Name: "proxy", Ready: true, Started: &started, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0.Add(-time.Minute))}}}}
		p.Status.ContainerStatuses[0] = corev1.ContainerStatus{Name: "app", RestartCount: 3,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff\x1b[5A", Message: evil}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Signal: 9,
				Reason: "Error\u202e", Message: evil, StartedAt: metav1.NewTime(t0.Add(-2 * time.Minute)),
				FinishedAt: metav1.NewTime(t0.Add(-time.Minute))}}}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse,
			Reason: "ContainersNotReady\x1b[2J", Message: evil, LastTransitionTime: metav1.NewTime(t0.Add(-time.Minute))}}
	})
}

// mustBeClean fails the test when s is not as Sanitize leaves it.
func mustBeClean(t *testing.T, what, s string) {
	t.Helper()
	if sanitize.Text(s) != s || strings.ContainsAny(s, "\x1b\x07\n\u202e\u009b") {
		t.Errorf("%s is not sanitised: %q", what, s)
	}
}

// The view of a pod reads its record once per call and hands out only sanitised text: every
// container in spec order (init first, as p.Containers), its spec image, its state and last state.
// The name as the API knows it is kept for the log request alone.
func TestPodStates(t *testing.T) {
	m := New(DefaultConfig())
	apply(m, t0, hostilePod())
	p := m.Pod("shop/web")
	states := p.States()
	if len(states) != 3 || len(p.Containers) != 3 {
		t.Fatalf("States() = %d containers, p.Containers %d; want 3 and 3", len(states), len(p.Containers))
	}
	for i, c := range states {
		if c.Name != p.Containers[i].Name || c.Init != p.Containers[i].Init {
			t.Errorf("States()[%d] is %s (init %v), p.Containers[%d] is %s (init %v): not the same order",
				i, c.Name, c.Init, i, p.Containers[i].Name, p.Containers[i].Init)
		}
		for what, s := range map[string]string{"name": c.Name, "image": c.Image, "state reason": c.State.Reason,
			"state message": c.State.Message, "last state reason": c.LastState.Reason, "last state message": c.LastState.Message} {
			mustBeClean(t, c.Name+" "+what, s)
		}
	}
	init, proxy, app := states[0], states[1], states[2]
	if init.Name != "init" || init.LogName() != "init\x1b[31m" || !init.Init || init.Sidecar || init.Image != "init:v1" {
		t.Errorf("init container %+v (log name %q)", init, init.LogName())
	}
	if !proxy.Sidecar || !proxy.Ready || proxy.State.Kind != StateRunning || !proxy.State.StartedAt.Equal(t0.Add(-time.Minute)) {
		t.Errorf("sidecar %+v", proxy)
	}
	if app.Init || !app.Reported || app.RestartCount != 3 || app.State.Summary() != "waiting CrashLoopBackOff" ||
		app.LastState.Summary() != "terminated Error" {
		t.Errorf("app %+v", app)
	}
	if code, ok := app.LastState.Exit(); !ok || code != 1 || app.LastState.Signal != 9 || !app.LastState.FinishedAt.Equal(t0.Add(-time.Minute)) {
		t.Errorf("app's last state %+v", app.LastState)
	}
	if _, ok := app.State.Exit(); ok {
		t.Error("a waiting state has an exit code")
	}
	if app.State.Message != "gone bad" {
		t.Errorf("message %q, want the text without its escape sequences, the line break a space", app.State.Message)
	}

	// One container by the name the model hands out, init and app containers kept apart.
	if c, ok := p.State("init", true); !ok || c.State.Kind != StateTerminated {
		t.Errorf("State(init, init) = %+v, %v", c, ok)
	}
	if _, ok := p.State("init", false); ok {
		t.Error("State(init, app) found an init container")
	}
	if _, ok := p.State("sidecar", false); ok {
		t.Error("State(sidecar) found a container the pod does not have")
	}
	var none *Pod
	if s := none.States(); s != nil {
		t.Errorf("a nil pod has states %v", s)
	}
	if _, ok := none.State("app", false); ok {
		t.Error("a nil pod has a container")
	}
}

// Columns are classify's kubectl columns, sanitised: STATUS carries the waiting reason.
func TestPodColumns(t *testing.T) {
	m := New(DefaultConfig())
	hostile := hostilePod()
	apply(m, t0, hostile)
	got := m.Pod("shop/web").Columns(t0)
	ready, status, restarts := classify.Columns(hostile, t0)
	want := PodColumns{Ready: ready, Status: sanitize.Text(status), Restarts: restarts,
		RestartsUntil: t0.Add(time.Second)} // "60s ago" reads "61s ago" a second later
	if got != want || got.Status != "CrashLoopBackOff" {
		t.Errorf("Columns = %+v, want %+v", got, want)
	}
	var none *Pod
	if c := none.Columns(t0); c != (PodColumns{}) {
		t.Errorf("a nil pod has columns %+v", c)
	}
}

// The pod table describes the container that decided the verdict, else the first app container
// the kubelet reported, in spec order (the detail pane's and --once's order), not in the order of
// the statuses, which the kubelet sorts by name (kubernetes pkg/kubelet/kubelet_pods.go
// convertToAPIContainerStatuses).
func TestPodDeciding(t *testing.T) {
	m := New(DefaultConfig())
	apply(m, t0, hostilePod(), pod("shop", "two", func(p *corev1.Pod) {
		p.Spec.Containers = append([]corev1.Container{{Name: "unreported", Image: "x"}}, p.Spec.Containers...)
	}), pod("shop", "mesh", ownedBy("ReplicaSet", "mesh-5d8f"), func(p *corev1.Pod) {
		// Evicted: the pod's own status decides (kubernetes pkg/kubelet/eviction/helpers.go
		// evictionMessage's first sentence).
		p.Status.Phase, p.Status.Reason = corev1.PodFailed, "Evicted"
		p.Status.Message = "The node was low on resource: memory. "
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "istio-proxy", Image: "proxy:v1"})
		proxy := p.Status.ContainerStatuses[0]
		proxy.Name, proxy.Image = "istio-proxy", "proxy:v1"
		p.Status.ContainerStatuses = append([]corev1.ContainerStatus{proxy}, p.Status.ContainerStatuses...)
	}))
	if mesh := m.Pod("shop/mesh"); mesh.Verdict.Container != "" {
		t.Errorf("an evicted pod's verdict names container %q; the test expects the pod's own", mesh.Verdict.Container)
	} else if c, ok := mesh.Deciding(); !ok || c.Name != "app" {
		t.Errorf("Deciding() = %+v, %v; want app, the first in the spec", c, ok)
	}
	if c, ok := m.Pod("shop/web").Deciding(); !ok || c.Name != "app" {
		t.Errorf("the crash-looping pod's deciding container is %+v, %v; want app", c, ok)
	}
	two := m.Pod("shop/two")
	if two.Verdict.Container != "" && two.Verdict.Container != "unreported" {
		t.Fatalf("verdict %+v: the test expects the pod or its unreported container to decide", two.Verdict)
	}
	if c, ok := two.Deciding(); !ok || c.Name != "app" {
		t.Errorf("Deciding() = %+v, %v; want app, the first reported app container", c, ok)
	}
}

// What the log pane and `kubectl logs -p` need: whether a container has run, and a previous
// instance.
func TestContainerStateLog(t *testing.T) {
	for _, tc := range []struct {
		name            string
		c               ContainerState
		previous, never bool
	}{
		{"no status yet", ContainerState{}, false, true},
		{"pulling", ContainerState{Reported: true, State: State{Kind: StateWaiting, Reason: "ErrImagePull"}}, false, true},
		{"running", ContainerState{Reported: true, State: State{Kind: StateRunning}}, false, false},
		{"crash loop", ContainerState{Reported: true, State: State{Kind: StateWaiting},
			LastState: State{Kind: StateTerminated}}, true, false},
		{"exited", ContainerState{Reported: true, State: State{Kind: StateTerminated}}, false, false},
	} {
		if got := tc.c.HasPrevious(); got != tc.previous {
			t.Errorf("%s: HasPrevious = %v, want %v", tc.name, got, tc.previous)
		}
		if got := tc.c.NeverStarted(); got != tc.never {
			t.Errorf("%s: NeverStarted = %v, want %v", tc.name, got, tc.never)
		}
	}
}

// The detail pane's conditions and owner chain come sanitised.
func TestPodConditionsAndController(t *testing.T) {
	m := New(DefaultConfig())
	apply(m, t0, hostilePod())
	p := m.Pod("shop/web")
	conds := p.Conditions()
	if len(conds) != 1 || conds[0].Type != "Ready" || conds[0].Status != "False" || conds[0].Reason != "ContainersNotReady" ||
		!conds[0].Since.Equal(t0.Add(-time.Minute)) {
		t.Errorf("Conditions() = %+v", conds)
	}
	mustBeClean(t, "condition message", conds[0].Message)
	if got := p.Controller(); got != "ReplicaSet/web-7d9f" {
		t.Errorf("Controller() = %q", got)
	}
}

// A record's digest tells records apart by content, and only by content.
func TestRecordDigest(t *testing.T) {
	a, b := New(DefaultConfig()), New(DefaultConfig())
	apply(a, t0, pod("shop", "web"))
	apply(b, t0, pod("shop", "web"))
	if a.Pod("shop/web").RecordDigest() != b.Pod("shop/web").RecordDigest() {
		t.Error("equal records have different digests")
	}
	apply(b, t0, pod("shop", "web", image("registry.example/App:v2")))
	if a.Pod("shop/web").RecordDigest() == b.Pod("shop/web").RecordDigest() {
		t.Error("different records have the same digest")
	}
}
