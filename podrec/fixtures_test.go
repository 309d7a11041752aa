package podrec

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"doomwatch/model/podtest"
)

// The shared builders (model/podtest), under the names these tests use.
var (
	t0            = podtest.T0
	pod           = podtest.Pod
	controllerRef = podtest.ControllerRef
)

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
