package classify

// This file is the package's contract; the rules live in container.go and pod.go, the kubectl
// columns in printer.go.

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Pod returns the pod's verdict: the most severe of its containers' verdicts and its own
// pod-level verdict, naming the container that decided it. It allocates nothing for a healthy pod.
func Pod(pod *corev1.Pod) Verdict { return podVerdict(pod) }

// PodAndContainers judges every container once and returns both Pod's verdict and Containers'
// verdicts appended to dst: the pair Pod and Containers return, at the cost of one judgement per
// container. Callers that need both (the model, on every pod update) use this.
func PodAndContainers(pod *corev1.Pod, dst []ContainerVerdict) (Verdict, []ContainerVerdict) {
	return podAndContainers(pod, dst)
}

// Containers appends one verdict per container to dst (init containers first, in spec order, then
// regular containers) and returns the extended slice.
func Containers(pod *corev1.Pod, dst []ContainerVerdict) []ContainerVerdict {
	return containerVerdicts(pod, dst)
}

// ContainsFold reports whether s contains lower under ASCII case folding, without allocating.
// lower must already be lower-case ASCII (strings.ToLower of a filter, or a fixed marker).
func ContainsFold(s, lower string) bool { return containsFold(s, lower) }

// LowerASCII lower-cases one ASCII letter and returns any other byte unchanged.
func LowerASCII(b byte) byte { return toLower(b) }

// StartFailure judges a terminated state as a container start failure (reason ContainerCannotRun
// or StartError). ok is false when t is not a start failure. The verdict is transient,
// RuleStartFailure128, for exit 128 (Krane's rule) and, beyond Krane, for a cri-dockerd 126 or 127
// whose message is not about the container's command or working directory (moby derives those
// codes from errno texts anywhere in the message); it is doomed for a command or working-directory
// error and for any other exit code. The model's start-failure ledger records only
// RuleStartFailure128, so it counts all three codes as node evidence. Source is left unset
// (FromNone): the caller knows whether t came from state or lastState.
func StartFailure(t *corev1.ContainerStateTerminated) (v Verdict, ok bool) { return startFailure(t) }

// Columns returns exactly what `kubectl get pods` prints in READY, STATUS and RESTARTS, from one
// pass of kubectl's printPod. Status, Ready and Restarts each return one of the three.
func Columns(pod *corev1.Pod, now time.Time) (ready, status, restarts string) {
	if pod == nil {
		return "", "", ""
	}
	r := printPod(pod)
	return formatReady(r), r.reason, formatRestarts(r, now)
}

// Status returns exactly what `kubectl get pods` prints in STATUS. Use Columns for all three.
func Status(pod *corev1.Pod, now time.Time) string {
	if pod == nil {
		return ""
	}
	return printPod(pod).reason
}

// Ready returns exactly what `kubectl get pods` prints in READY ("1/2").
func Ready(pod *corev1.Pod) string {
	if pod == nil {
		return ""
	}
	return formatReady(printPod(pod))
}

// Restarts returns exactly what `kubectl get pods` prints in RESTARTS ("5 (2m ago)").
func Restarts(pod *corev1.Pod, now time.Time) string {
	if pod == nil {
		return ""
	}
	return formatRestarts(printPod(pod), now)
}

// IsSidecar reports whether the pod's init container named name is a restartable sidecar
// (restartPolicy Always; kubernetes pkg/api/v1/pod IsRestartableInitContainer). Regular
// containers are never sidecars. name is the raw spec name: classify does not sanitise. Container
// names are DNS-1123 labels (validated by the API server), which model.Sanitize returns unchanged,
// so the sanitised name a model.Pod carries matches too.
func IsSidecar(pod *corev1.Pod, name string) bool {
	if pod == nil {
		return false
	}
	return isSidecar(initSpec(pod, name))
}
