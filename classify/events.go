package classify

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Event is one Warning event about a pod or node, reduced to what a verdict and a view read.
type Event struct {
	Reason, Message string
	// Count is how many times the event occurred (kubectl's COUNT: series.count for an event of
	// the events.k8s.io API, count otherwise, 1 for a singleton).
	Count int32
	// First and Last are when it first and last occurred (kubectl's FIRST SEEN and LAST SEEN).
	First, Last time.Time
}

// eventOf implements EventOf, after kubernetes pkg/printers/internalversion/printers.go
// printEvent.
func eventOf(e *corev1.Event) Event {
	out := Event{Reason: e.Reason, Message: e.Message, Count: e.Count, First: e.FirstTimestamp.Time, Last: e.LastTimestamp.Time}
	if out.First.IsZero() {
		out.First = e.EventTime.Time
	}
	if out.Last.IsZero() {
		out.Last = out.First
	}
	switch {
	case e.Series != nil:
		out.Count, out.Last = e.Series.Count, e.Series.LastObservedTime.Time
	case out.Count == 0:
		out.Count = 1 // a singleton event of the events.k8s.io API has no count
	}
	return out
}

// eventSource implements EventSource, after kubernetes pkg/printers/internalversion/printers.go
// formatEventSource.
func eventSource(e *corev1.Event) string {
	component, instance := e.Source.Component, e.Source.Host
	if component == "" {
		component = e.ReportingController
	}
	if instance == "" {
		instance = e.ReportingInstance
	}
	if instance == "" {
		return component
	}
	return component + ", " + instance
}

// Event reasons PodEvents reads. The kubelet posts FailedCreatePodSandBox when the runtime's
// RunPodSandbox fails ("Failed to create pod sandbox: %v", kubernetes
// pkg/kubelet/kuberuntime/kuberuntime_manager.go; "Failed create pod sandbox: %v" before v1.15)
// and FailedMount when a volume does not mount (pkg/kubelet/volumemanager, pkg/volume/util/
// operationexecutor); the attach/detach controller and the kubelet post FailedAttachVolume
// (pkg/controller/volume/attachdetach/reconciler), FailedMapVolume is a block volume's mount.
const (
	reasonFailedSandbox = "FailedCreatePodSandBox"
	reasonFailedMount   = "FailedMount"
	reasonFailedAttach  = "FailedAttachVolume"
	reasonFailedMap     = "FailedMapVolume"
)

// The kubelet's Warning event for a failed image pull (kubernetes pkg/kubelet/images/
// image_manager.go pullImage: events.FailedToPullImage, "Failed", with `Failed to pull image %q: %v`
// of the image the spec names and the runtime's error, the error the ErrImagePull status carries
// too: evalCRIPullErr). The kubelet posts other events under the same reason, `Error: ErrImagePull`
// and `Error: ImagePullBackOff` (pkg/kubelet/kuberuntime/kuberuntime_container.go startContainer,
// FailedToCreateContainer), which name no cause.
const (
	reasonFailed     = "Failed"
	pullFailedPrefix = `Failed to pull image "`
)

// PullFailure reads a Warning event about a pod as the kubelet's report of a failed image pull:
// the image the pull was for and the runtime's error. ok is false for any other event. An image
// the kubelet pulls has no character %q escapes: one distribution/reference's grammar rejects never
// reaches a pull (image_manager.go applyDefaultImageTag: InvalidImageName), so the image is the
// text between the quotes. The prefix client-go's correlator puts on an aggregated event is
// dropped: the pull failures of one container and its `Error: …` events share a reason and differ
// in their message, so a long pull failure is folded into one combined event (uncombined).
func PullFailure(reason, message string) (img, err string, ok bool) {
	if reason != reasonFailed {
		return "", "", false
	}
	rest, ok := strings.CutPrefix(uncombined(message), pullFailedPrefix)
	if !ok {
		return "", "", false
	}
	img, err, ok = strings.Cut(rest, `": `)
	if !ok || img == "" || err == "" {
		return "", "", false
	}
	return img, err, true
}

// eventReason implements EventReason.
func eventReason(reason string) bool {
	switch reason {
	case reasonFailedSandbox, reasonFailedMount, reasonFailedAttach, reasonFailedMap:
		return true
	}
	return false
}

// podEvents implements PodEvents.
func podEvents(pod *corev1.Pod, v Verdict, events []Event) (Verdict, bool) {
	if v.Rule != RuleStarting || len(events) == 0 || pod == nil || sandboxReady(pod) {
		return v, false
	}
	var sandbox *Event
	for i := range events {
		if e := &events[i]; e.Reason == reasonFailedSandbox && (sandbox == nil || e.Last.After(sandbox.Last)) {
			sandbox = e
		}
	}
	var best *Event
	bestRank := 0
	for i := range events {
		e := &events[i]
		if e.Reason == reasonFailedSandbox || !eventReason(e.Reason) || sandbox != nil && !e.Last.After(sandbox.Last) {
			continue
		}
		if r := volumeRank(e); r > bestRank || r == bestRank && e.Last.After(best.Last) {
			best, bestRank = e, r
		}
	}
	if best != nil {
		return volumeVerdict(best, bestRank), true
	}
	if sandbox != nil {
		return Verdict{Class: Transient, Rule: RuleSandboxFailed, Source: FromEvents, Message: sandbox.Message,
			Reason: withDetail("Failed to create pod sandbox, will retry", sandboxError(sandbox.Message))}, true
	}
	return v, false
}

// sandboxReady reports whether the kubelet has created the pod's sandbox and set up its network.
func sandboxReady(pod *corev1.Pod) bool {
	if c := condition(pod, corev1.PodReadyToStartContainers); c != nil {
		return c.Status == corev1.ConditionTrue
	}
	return pod.Status.PodIP != ""
}

// The volume events from the most to the least specific: a missing object names the cause, a
// Multi-Attach error names what the kubelet waits for, anything else (a timeout) only that it waits.
const (
	volumeNotReady = 1 + iota
	volumeMultiAttach
	volumeMissing
)

// volumeRank says which kind of volume event e is.
func volumeRank(e *Event) int {
	msg := uncombined(e.Message)
	switch {
	case e.Reason == reasonFailedMount && missingVolumeSource(msg):
		return volumeMissing
	case strings.HasPrefix(msg, "Multi-Attach error for volume "):
		// pkg/controller/volume/attachdetach/reconciler reportMultiAttachError: "Multi-Attach
		// error" for the volume, then "Volume is already exclusively attached to one node and
		// can't be attached to another" or "Volume is already used by pod(s) …".
		return volumeMultiAttach
	}
	return volumeNotReady
}

// volumeVerdict is the verdict of volume event e of the given rank.
func volumeVerdict(e *Event, rank int) Verdict {
	msg := uncombined(e.Message)
	v := Verdict{Source: FromEvents, Message: e.Message}
	switch rank {
	case volumeMissing:
		v.Class, v.Rule = Doomed, RuleVolumeConfigMissing
		v.Reason = withDetail("Volume source does not exist", msg)
	case volumeMultiAttach:
		v.Class, v.Rule = Transient, RuleMultiAttach
		v.Reason = withDetail("Volume attached to another node, waiting for it to detach", msg)
	default:
		v.Class, v.Rule = Transient, RuleVolumeNotReady
		v.Reason = withDetail("Volume not ready, will retry", msg)
	}
	return v
}

// uncombined drops the prefix client-go's event correlator puts on an event that stands for
// similar ones it aggregated (client-go tools/record/events_cache.go EventAggregate: more than 10
// events in 10 minutes that differ only in their message, such as each attempt's sandbox ID).
func uncombined(msg string) string {
	return strings.TrimPrefix(msg, "(combined from similar events): ")
}

// sandboxError is the runtime's error in a FailedCreatePodSandBox message.
func sandboxError(msg string) string {
	msg = uncombined(msg)
	for _, prefix := range [...]string{"Failed to create pod sandbox: ", "Failed create pod sandbox: "} {
		if rest, ok := strings.CutPrefix(msg, prefix); ok {
			return rest
		}
	}
	return msg
}

// missingVolumeSource reports a secret or configmap volume whose object does not exist. The
// kubelet's operation generator formats `MountVolume.SetUp failed for volume %q : %v` (kubernetes
// pkg/volume/util/operationexecutor/operation_executor.go GenerateError, with errSuffix's ": "
// after generateVolumeMsg's "%v for volume %q %v"); the secret and configmap plugins return the
// API's NotFound, `secret "x" not found` (`secrets "x" not found` from kubelets before the
// watch-based managers, pkg/kubelet/secret), and a projected volume returns its sources' errors
// aggregated, `[configmap "a" not found, secret "b" not found]`. Any one such object dooms the pod:
// a volume that is not optional never mounts without it.
func missingVolumeSource(msg string) bool {
	rest, ok := strings.CutPrefix(msg, `MountVolume.SetUp failed for volume "`)
	if !ok {
		return false
	}
	i := strings.Index(rest, `" : `)
	if i < 0 {
		return false
	}
	errs := rest[i+len(`" : `):]
	if strings.HasPrefix(errs, "[") && strings.HasSuffix(errs, "]") {
		errs = errs[1 : len(errs)-1]
	}
	for _, e := range strings.Split(errs, ", ") {
		if notFoundObject(e) {
			return true
		}
	}
	return false
}

// notFoundObject matches one `secret "x" not found` or `configmap "x" not found` error, the API's
// NotFound for the object (apimachinery pkg/api/errors NewNotFound: "%s %q not found").
func notFoundObject(e string) bool {
	kind, rest, ok := strings.Cut(e, ` "`)
	if !ok {
		return false
	}
	name, ok := strings.CutSuffix(rest, `" not found`)
	if !ok || name == "" || strings.Contains(name, `"`) {
		return false
	}
	switch kind {
	case "secret", "secrets":
		return true
	case "configmap", "configmaps":
		// Published into every namespace by kube-controller-manager's root CA publisher; the
		// kubelet mounts it in every pod's service account token volume.
		return name != "kube-root-ca.crt"
	}
	return false
}
