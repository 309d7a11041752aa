package classify

import (
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/duration"
)

// row holds the three kubectl columns before formatting.
type row struct {
	ready, total int
	reason       string
	restarts     int
	lastRestart  time.Time
}

// printPod is a line-for-line port of printPod in kubernetes/kubernetes
// pkg/printers/internalversion/printers.go (v1.37), which both kubectl and the API server's Table
// conversion run. Keep it literal: the e2e suite compares it with a real API server.
func printPod(pod *corev1.Pod) row {
	restarts := 0
	restartableInitContainerRestarts := 0
	totalContainers := len(pod.Spec.Containers)
	readyContainers := 0
	var lastRestartDate, lastRestartableInitContainerRestartDate time.Time

	podPhase := pod.Status.Phase
	reason := string(podPhase)
	if pod.Status.Reason != "" {
		reason = pod.Status.Reason
	}

	// If the Pod carries {type:PodScheduled, reason:SchedulingGated}, set reason to 'SchedulingGated'.
	for i := range pod.Status.Conditions {
		c := &pod.Status.Conditions[i]
		if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonSchedulingGated {
			reason = corev1.PodReasonSchedulingGated
		}
	}

	for i := range pod.Spec.InitContainers {
		if isSidecar(&pod.Spec.InitContainers[i]) {
			totalContainers++
		}
	}

	initializing := false
	for i := range pod.Status.InitContainerStatuses {
		container := &pod.Status.InitContainerStatuses[i]
		restarts += int(container.RestartCount)
		if t := container.LastTerminationState.Terminated; t != nil {
			if lastRestartDate.Before(t.FinishedAt.Time) {
				lastRestartDate = t.FinishedAt.Time
			}
		}
		restartable := isSidecar(initSpec(pod, container.Name))
		if restartable {
			restartableInitContainerRestarts += int(container.RestartCount)
			if t := container.LastTerminationState.Terminated; t != nil {
				if lastRestartableInitContainerRestartDate.Before(t.FinishedAt.Time) {
					lastRestartableInitContainerRestartDate = t.FinishedAt.Time
				}
			}
		}
		switch {
		case container.State.Terminated != nil && container.State.Terminated.ExitCode == 0:
			continue
		case restartable && container.Started != nil && *container.Started:
			if container.Ready {
				readyContainers++
			}
			continue
		case container.State.Terminated != nil:
			// initialization is failed
			t := container.State.Terminated
			if len(t.Reason) == 0 {
				if t.Signal != 0 {
					reason = "Init:Signal:" + strconv.Itoa(int(t.Signal))
				} else {
					reason = "Init:ExitCode:" + strconv.Itoa(int(t.ExitCode))
				}
			} else {
				reason = "Init:" + t.Reason
			}
			initializing = true
		case container.State.Waiting != nil && len(container.State.Waiting.Reason) > 0 && container.State.Waiting.Reason != reasonPodInitializing:
			reason = "Init:" + container.State.Waiting.Reason
			initializing = true
		default:
			reason = "Init:" + strconv.Itoa(i) + "/" + strconv.Itoa(len(pod.Spec.InitContainers))
			initializing = true
		}
		break
	}

	if !initializing || podConditionTrue(pod, corev1.PodInitialized) {
		restarts = restartableInitContainerRestarts
		lastRestartDate = lastRestartableInitContainerRestartDate
		hasRunning := false
		errorReason := ""
		for i := len(pod.Status.ContainerStatuses) - 1; i >= 0; i-- {
			container := &pod.Status.ContainerStatuses[i]

			restarts += int(container.RestartCount)
			if t := container.LastTerminationState.Terminated; t != nil {
				if lastRestartDate.Before(t.FinishedAt.Time) {
					lastRestartDate = t.FinishedAt.Time
				}
			}
			switch {
			case container.State.Waiting != nil && container.State.Waiting.Reason != "":
				reason = container.State.Waiting.Reason
			case container.State.Terminated != nil:
				t := container.State.Terminated
				if len(t.Reason) > 0 {
					reason = t.Reason
				} else if t.Signal != 0 {
					reason = "Signal:" + strconv.Itoa(int(t.Signal))
				} else {
					reason = "ExitCode:" + strconv.Itoa(int(t.ExitCode))
				}
				if t.ExitCode != 0 {
					errorReason = reason
				}
			case container.Ready && container.State.Running != nil:
				hasRunning = true
				readyContainers++
			}
		}

		// change pod status back to "Running" if there is at least one container still reporting as "Running" status
		if reason == "Completed" {
			if hasRunning && podConditionTrue(pod, corev1.PodReady) {
				reason = "Running"
			} else if errorReason != "" {
				reason = errorReason
			} else if hasRunning {
				reason = "NotReady"
			}
		}
	}

	if pod.DeletionTimestamp != nil && pod.Status.Reason == reasonNodeLost {
		reason = "Unknown"
	} else if pod.DeletionTimestamp != nil && podPhase != corev1.PodFailed && podPhase != corev1.PodSucceeded {
		reason = "Terminating"
	}

	return row{
		ready:       readyContainers,
		total:       totalContainers,
		reason:      reason,
		restarts:    restarts,
		lastRestart: lastRestartDate,
	}
}

// initSpec finds an init container's spec by name (printPod's initContainers map, without the map).
func initSpec(pod *corev1.Pod, name string) *corev1.Container {
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return &pod.Spec.InitContainers[i]
		}
	}
	return nil
}

// podConditionTrue mirrors printers.go isPodInitializedConditionTrue (first condition of the type
// decides) and hasPodReadyCondition (any condition of the type that is True). The two differ only
// when a type repeats, which the API server's status strategy does not allow.
func podConditionTrue(pod *corev1.Pod, t corev1.PodConditionType) bool {
	for i := range pod.Status.Conditions {
		c := &pod.Status.Conditions[i]
		if c.Type != t {
			continue
		}
		if c.Status == corev1.ConditionTrue {
			return true
		}
		if t == corev1.PodInitialized {
			return false
		}
	}
	return false
}

func formatRestarts(r row, now time.Time) string {
	s := strconv.Itoa(r.restarts)
	if r.restarts != 0 && !r.lastRestart.IsZero() {
		// printers.go translateTimestampSince: duration.HumanDuration(time.Since(t)).
		s += " (" + duration.HumanDuration(now.Sub(r.lastRestart)) + " ago)"
	}
	return s
}

func formatReady(r row) string {
	return strconv.Itoa(r.ready) + "/" + strconv.Itoa(r.total)
}

// HumanDurationHolds is how long duration.HumanDuration's text for d stays the same as d grows:
// to the next second below ten minutes ("2m5s"), the next minute below eight hours ("3h12m"), the
// next hour below eight days ("5d3h"), the next day below eight years, the next year after. A
// view that shows ages redraws when the first of them changes, not on every tick.
func HumanDurationHolds(d time.Duration) time.Duration {
	var unit time.Duration
	switch {
	case d < 0:
		return time.Second - (d % time.Second) // d%unit is ≤ 0 here
	case d < 10*time.Minute:
		unit = time.Second
	case d < 8*time.Hour:
		unit = time.Minute
	case d < 8*24*time.Hour:
		unit = time.Hour
	case d < 8*365*24*time.Hour:
		unit = 24 * time.Hour
	default:
		unit = 365 * 24 * time.Hour
	}
	return unit - d%unit
}
