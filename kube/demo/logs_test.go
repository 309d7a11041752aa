package demo

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// TestLogsAnswerAsAKubelet: the demo's logs refuse what a kubelet refuses (a previous instance
// that does not exist, a container that never started) in the kubelet's words, and give the crash
// loop's log otherwise, its last lines when asked for fewer.
func TestLogsAnswerAsAKubelet(t *testing.T) {
	started := metav1.NewTime(Epoch.Add(14 * time.Second))
	pods := []*corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "search", Name: "search-1"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "search", Image: "registry.example.com/search:v3.2.0"}}},
			Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "search",
				State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137, StartedAt: started}},
			}}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "payments-1"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "payments", Image: "registry.example.com/payments:v2.4.1-typo"}}},
			Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "payments",
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}}}}},
	}
	cs := fake.NewClientset(pods[0], pods[1])
	logs := logsOf(cs)
	ctx := context.Background()
	got, err := logs(ctx, "search", "search-1", "search", true, 100)
	if err != nil || len(got) != 6 || !strings.Contains(got[0], `msg="starting search" version=v3.2.0`) ||
		!strings.HasPrefix(got[0], "2026-01-15T10:00:14.000Z") || !strings.Contains(got[5], "heap near limit") {
		t.Errorf("previous log of the crash loop: %q, %v", got, err)
	}
	if got, _ := logs(ctx, "search", "search-1", "search", true, 2); len(got) != 2 || !strings.Contains(got[1], "heap near limit") {
		t.Errorf("the last 2 lines: %q", got)
	}
	// Waiting to restart, the current log is the instance that last terminated, as the kubelet has it.
	if cur, err := logs(ctx, "search", "search-1", "search", false, 100); err != nil || len(cur) != 6 {
		t.Errorf("current log of the crash loop: %q, %v", cur, err)
	}
	for _, tc := range []struct {
		ns, pod, container string
		previous           bool
		want               string
	}{
		{"shop", "payments-1", "payments", false, `container "payments" in pod "payments-1" is waiting to start: trying and failing to pull image`},
		{"shop", "payments-1", "payments", true, `previous terminated container "payments" in pod "payments-1" not found`},
		{"shop", "payments-1", "sidecar", false, `container sidecar is not valid for pod payments-1`},
	} {
		if _, err := logs(ctx, tc.ns, tc.pod, tc.container, tc.previous, 100); err == nil || err.Error() != tc.want {
			t.Errorf("%s/%s previous=%v: %v, want %q", tc.pod, tc.container, tc.previous, err, tc.want)
		}
	}
}
