package podrec

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

// t0 is the tests' clock origin.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// classifyFixtures reads every pod in classify/testdata, the corpus of real statuses.
func classifyFixtures(t testing.TB) map[string]*corev1.Pod {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "classify", "testdata", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no classify fixtures: %v", err)
	}
	out := make(map[string]*corev1.Pod, len(files))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p := &corev1.Pod{}
		if err := yaml.Unmarshal(data, p); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[filepath.Base(f)] = p
	}
	return out
}

// pod builds a running, ready pod with one container "app" on no node, as model's fixtures do.
func pod(ns, name string, opts ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: name, UID: types.UID(ns + "-" + name + "-uid"),
			CreationTimestamp: metav1.NewTime(t0.Add(-time.Hour)),
		},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:v1"}}},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning,
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "app", Ready: true, Image: "registry.example/app:v1",
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0.Add(-time.Hour))}},
			}},
		},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

// crashLoop makes container "app" wait out a crash loop's back-off after an OOM kill.
func crashLoop() func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		cs := &p.Status.ContainerStatuses[0]
		cs.Ready = false
		cs.RestartCount = 5
		cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
			Message: fmt.Sprintf("back-off 5m0s restarting failed container=%s pod=%s_%s(%s)", cs.Name, p.Name, p.Namespace, p.UID)}}
		cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137}
	}
}

func controllerRef(kind, name string) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{Kind: kind, Name: name, Controller: &yes, UID: types.UID(kind + "-" + name)}
}
