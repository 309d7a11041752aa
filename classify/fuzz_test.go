package classify

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// msgPullNotFound is containerd 1.7's ErrImagePull for a tag that was never pushed, verbatim from
// substratusai/runbooks#42 (fixture pull-containerd17-not-found).
const msgPullNotFound = `rpc error: code = NotFound desc = failed to pull and unpack image "docker.io/substratusai/controller-manager:v0.0.2-alpha": failed to resolve reference "docker.io/substratusai/controller-manager:v0.0.2-alpha": docker.io/substratusai/controller-manager:v0.0.2-alpha: not found`

// FuzzClassify feeds arbitrary pods (seeded with every fixture, as JSON) and then overwrites one
// container state with fuzzed reason, message and exit code, so the fuzzer reaches every rule
// quickly. It checks the invariants callers rely on.
func FuzzClassify(f *testing.F) {
	for _, fx := range loadFixtures(f) {
		data, err := json.Marshal(fx.pod)
		if err != nil {
			f.Fatal(err)
		}
		// Seeds pair a reason with a real message for it (see classify_test.go and the fixtures'
		// cite annotations): a runc 128 runtime hiccup, containerd's missing executable, docker's
		// two-line ENOTDIR text, containerd 1.7's missing tag, and cri-dockerd 127s from a cgroup
		// ENOENT and from the shim failing to execute the OCI runtime.
		f.Add(data, "ContainerCannotRun", msgRunc128EOF, int32(128), uint8(0x01))
		f.Add(data, "StartError", msgContainerdNotFound, int32(128), uint8(0x25))
		f.Add(data, "ContainerCannotRun", msgDockerENOTDIR, int32(127), uint8(0x12))
		f.Add(data, "ErrImagePull", msgPullNotFound, int32(0), uint8(0x00))
		f.Add(data, "ContainerCannotRun", msgDockerCgroupENOENT, int32(127), uint8(0x01))
		f.Add(data, "ContainerCannotRun", msgDockerRuntimeMissing, int32(127), uint8(0x12))
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte, reason, msg string, code int32, sel uint8) {
		pod := &corev1.Pod{}
		if json.Unmarshal(data, pod) != nil {
			return
		}
		mutate(pod, reason, msg, code, sel)

		v := Pod(pod, testNow)
		if !v.Class.Valid() {
			t.Fatalf("invalid kind %d", v.Class)
		}
		// Every verdict but healthy says why, completed included ("Completed" for exit 0,
		// "Succeeded" for the pod's phase).
		if v.Class != Healthy && v.Reason == "" {
			t.Fatalf("%s verdict (rule %s) without a reason", v.Class, v.Rule)
		}
		if strings.ContainsAny(v.Reason, "\r\n") {
			t.Fatalf("reason is not one line: %q", v.Reason)
		}
		cvs := Containers(pod, testNow, nil)
		if len(cvs) != len(pod.Spec.InitContainers)+len(pod.Spec.Containers) {
			t.Fatalf("Containers returned %d verdicts", len(cvs))
		}
		terminalOverride := pod.Status.Phase == corev1.PodSucceeded ||
			(pod.Status.Phase == corev1.PodFailed && v.Class == Transient)
		for _, cv := range cvs {
			if !cv.Class.Valid() {
				t.Fatalf("container %s: invalid kind", cv.Name)
			}
			if cv.Class != Healthy && cv.Reason == "" {
				t.Fatalf("container %s: %s verdict without a reason", cv.Name, cv.Class)
			}
			if strings.ContainsAny(cv.Reason, "\r\n") {
				t.Fatalf("container %s: reason is not one line: %q", cv.Name, cv.Reason)
			}
			if !terminalOverride && MoreSevere(cv.Verdict, v) {
				t.Fatalf("pod verdict %s is less severe than container %s's %s", v.Class, cv.Name, cv.Class)
			}
		}
		checkPodAndContainers(t, pod, ContainerVerdict{Name: "prefix"})
		ready, status, restarts := Columns(pod, now)
		if ready != Ready(pod) || status != Status(pod, now) || restarts != Restarts(pod, now) {
			t.Fatalf("Columns = %q %q %q disagrees with Ready/Status/Restarts", ready, status, restarts)
		}
	})
}

// mutate overwrites one container's state (sel picks which and how) with the fuzzed values.
func mutate(pod *corev1.Pod, reason, msg string, code int32, sel uint8) {
	sts := &pod.Status.ContainerStatuses
	if sel&0x80 != 0 {
		sts = &pod.Status.InitContainerStatuses
	}
	if len(*sts) == 0 {
		return
	}
	cs := &(*sts)[int(sel>>4&0x7)%len(*sts)]
	term := &corev1.ContainerStateTerminated{Reason: reason, Message: msg, ExitCode: code,
		Signal: code % 64, FinishedAt: metav1.NewTime(time.Unix(int64(code)*1000, 0))}
	switch sel & 0xf {
	case 0:
		cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}
	case 1:
		cs.State = corev1.ContainerState{Terminated: term}
	case 2:
		cs.LastTerminationState = corev1.ContainerState{Terminated: term}
	case 3:
		cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}
		cs.LastTerminationState = corev1.ContainerState{Terminated: term}
	case 4:
		cs.State = corev1.ContainerState{}
		cs.LastTerminationState = corev1.ContainerState{Terminated: term}
	case 5:
		cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
		cs.Ready = code%2 == 0
		cs.LastTerminationState = corev1.ContainerState{Terminated: term}
	case 6:
		pod.Status.Phase = corev1.PodPhase(reason)
		pod.Status.Reason = msg
	case 7:
		cs.Name = reason
	}
}
