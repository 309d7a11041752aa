package model

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// Pod.ContainerStatus takes the sanitised name the model hands out and finds the raw status,
// init and regular containers kept apart.
func TestPodContainerStatus(t *testing.T) {
	m := New(DefaultConfig())
	apply(m, t0, pod("shop", "web", func(p *corev1.Pod) {
		p.Spec.InitContainers = []corev1.Container{{Name: "app\x1b[31m", Image: "init:v1"}}
		p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "app\x1b[31m", Image: "init:v1",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"}}}}
	}))
	p := m.Pod("shop/web")
	if p == nil {
		t.Fatal("pod shop/web missing")
	}
	var initName string
	for _, c := range p.Containers {
		if c.Init {
			initName = c.Name
		}
	}
	if initName != "app" {
		t.Fatalf("init container verdict name = %q, want sanitised %q", initName, "app")
	}
	if st := p.ContainerStatus(initName, true); st == nil || st.State.Terminated == nil {
		t.Errorf("ContainerStatus(%q, init) = %+v, want the terminated init status", initName, st)
	}
	if st := p.ContainerStatus("app", false); st == nil || st.State.Running == nil {
		t.Errorf("ContainerStatus(app, regular) = %+v, want the running app status", st)
	}
	if st := p.ContainerStatus("sidecar", false); st != nil {
		t.Errorf("ContainerStatus(sidecar) = %+v, want nil", st)
	}
	var nilPod *Pod
	if nilPod.ContainerStatus("app", false) != nil {
		t.Error("nil pod returned a status")
	}
}
