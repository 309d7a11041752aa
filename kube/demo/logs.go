package demo

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"doomwatch/kube"
)

// logsOf is the demo's kube.LogFunc: client-go's fake clientset answers every pods/log request
// with the same placeholder, so the demo answers as a kubelet would for its own pods: the kubelet's
// refusals for containers that never ran (kubernetes pkg/kubelet/kubelet_pods.go,
// validateContainerLogStatus: `previous terminated container %q in pod %q not found`, `container
// %q in pod %q is waiting to start: %v`, with "image can't be pulled" for ErrImagePull and "trying
// and failing to pull image" for ImagePullBackOff; as kubectl prints them in public reports, e.g.
// "Error from server (BadRequest): container "app" in pod "..." is waiting to start: trying and
// failing to pull image"), and otherwise a plausible log for the app, made up for the demo: application output, not
// a runtime or kubelet message. The search pods, OOMKilled while loading their index, stop
// mid-load, as a process killed by the kernel does.
func logsOf(client kubernetes.Interface) kube.LogFunc {
	return func(ctx context.Context, ns, name, container string, previous bool, lines int) ([]string, error) {
		pod, err := client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		var cs *corev1.ContainerStatus
		for i := range pod.Status.ContainerStatuses {
			if pod.Status.ContainerStatuses[i].Name == container {
				cs = &pod.Status.ContainerStatuses[i]
			}
		}
		if cs == nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("container %s is not valid for pod %s", container, name))
		}
		// The kubelet's order: the previous instance when asked; else the running or terminated
		// one; else, for a container waiting to restart, the one that last terminated.
		state, last := cs.State, cs.LastTerminationState
		switch {
		case previous && last.Terminated == nil:
			return nil, apierrors.NewBadRequest(fmt.Sprintf("previous terminated container %q in pod %q not found", container, name))
		case previous, state.Running == nil && state.Terminated == nil && last.Terminated != nil:
			state = last
		}
		var started time.Time
		switch {
		case state.Running != nil:
			started = state.Running.StartedAt.Time
		case state.Terminated != nil:
			started = state.Terminated.StartedAt.Time
		default:
			reason := "ContainerCreating"
			if w := state.Waiting; w != nil && w.Reason != "" {
				reason = w.Reason
			}
			switch reason {
			case "ErrImagePull":
				reason = "image can't be pulled"
			case "ImagePullBackOff":
				reason = "trying and failing to pull image"
			}
			return nil, apierrors.NewBadRequest(fmt.Sprintf("container %q in pod %q is waiting to start: %s", container, name, reason))
		}
		out := appLog(pod, container, started)
		if len(out) > lines {
			out = out[len(out)-lines:]
		}
		return out, nil
	}
}

// appLog is what the demo's app wrote since started: a startup, then for the search pods the index
// load the kernel cut short.
func appLog(pod *corev1.Pod, container string, started time.Time) []string {
	image := ""
	for _, c := range pod.Spec.Containers {
		if c.Name == container {
			image = c.Image
		}
	}
	at := func(d time.Duration) string { return started.Add(d).UTC().Format("2006-01-02T15:04:05.000Z") }
	version := image[strings.LastIndexByte(image, ':')+1:]
	out := []string{
		fmt.Sprintf(`%s level=info msg="starting %s" version=%s`, at(0), container, version),
		fmt.Sprintf(`%s level=info msg="config loaded" path=/etc/%s/config.yaml`, at(40*time.Millisecond), container),
	}
	if container == "search" {
		out = append(out,
			fmt.Sprintf(`%s level=info msg="memory limit" GOMEMLIMIT=256MiB`, at(45*time.Millisecond)),
			fmt.Sprintf(`%s level=info msg="loading index" shards=4 path=/data/index size=1.1GiB`, at(60*time.Millisecond)),
			fmt.Sprintf(`%s level=info msg="shard loaded" shard=1/4 heap=212MiB`, at(1200*time.Millisecond)),
			fmt.Sprintf(`%s level=warn msg="heap near limit, GC running continuously" heap=251MiB limit=256MiB`, at(2100*time.Millisecond)),
		)
		return out // it never gets past the load: killed there, OOMKilled writes nothing more
	}
	out = append(out,
		fmt.Sprintf(`%s level=info msg="listening" addr=:8080`, at(120*time.Millisecond)),
		fmt.Sprintf(`%s level=info msg="ready"`, at(900*time.Millisecond)),
	)
	return out
}
