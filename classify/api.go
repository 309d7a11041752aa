package classify

// The kubectl columns and the pod-spec questions callers ask; the verdicts are in pod.go (Pod,
// PodAndContainers, Containers), container.go and rollouts.go, the kubectl printer in printer.go.

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Columns returns exactly what `kubectl get pods` prints in READY, STATUS and RESTARTS, from one
// pass of kubectl's printPod. Status, Ready and Restarts each return one of the three.
func Columns(pod *corev1.Pod, now time.Time) (ready, status, restarts string) {
	ready, status, restarts, _ = ColumnsUntil(pod, now)
	return ready, status, restarts
}

// ColumnsUntil is Columns, and when RESTARTS' "(2m ago)" next reads differently as the clock
// moves on from now: zero when RESTARTS has none.
func ColumnsUntil(pod *corev1.Pod, now time.Time) (ready, status, restarts string, restartsUntil time.Time) {
	if pod == nil {
		return "", "", "", time.Time{}
	}
	r := printPod(pod)
	if r.restarts != 0 && !r.lastRestart.IsZero() {
		restartsUntil = now.Add(HumanDurationHolds(now.Sub(r.lastRestart)))
	}
	return formatReady(r), r.reason, formatRestarts(r, now), restartsUntil
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
// names are DNS-1123 labels (validated by the API server), which sanitize.Text returns unchanged,
// so the sanitised name a model.Pod carries matches too.
func IsSidecar(pod *corev1.Pod, name string) bool {
	if pod == nil {
		return false
	}
	return isSidecar(initSpec(pod, name))
}

// IsSidecarContainer reports whether c, an init container's spec, is a restartable sidecar
// (IsSidecar, for a spec already in hand: the model's container view reads the record's).
func IsSidecarContainer(c *corev1.Container) bool { return isSidecar(c) }

// PodEvents judges a pod that is still starting by the Warning events posted about it: v is the
// pod's verdict (Pod, or PodAndContainers), events those about this pod (its UID), in any order.
// A pod stuck in ContainerCreating or PodInitializing for minutes shows its cause only in events.
// When v's rule is RuleStarting and the events name a cause, PodEvents returns that verdict and
// true; otherwise v and false. The verdict is the pod's own (Container "", Source FromEvents):
//
//   - sandbox-failed, transient: the runtime failed to create the pod sandbox, most often the CNI
//     plugin failing to set up its network. The kubelet retries on every sync; like an exit-128
//     start failure it is node evidence (the model records it in the start-failure ledger).
//   - volume-config-missing, doomed: a secret or configmap volume whose object does not exist
//     (`MountVolume.SetUp failed for volume "certs" : secret "coturn" not found`), as
//     CreateContainerConfigError is for the same object in an env var (Krane pod.rb). The
//     kube-root-ca.crt configmap, which kube-controller-manager publishes into every namespace
//     (pkg/controller/certificates/rootcacertpublisher), is the exception: it appears shortly after
//     the namespace does.
//   - multi-attach, transient: a ReadWriteOnce volume still attached to another node, typically
//     to the pod this one replaces; the attach/detach controller attaches it once it is detached.
//   - volume-not-ready, transient: any other FailedMount or FailedAttachVolume: a timeout
//     ("Unable to attach or mount volumes: … timed out waiting for the condition"), a CSI driver's
//     error, or the kubelet not having read an object yet (`object "ns"/"name" not registered`).
//
// Which events still hold: once the pod's sandbox is ready (PodReadyToStartContainers True, or,
// before that condition existed, a pod IP: kubernetes pkg/kubelet/status/generate.go), neither
// sandbox nor volume events hold any more. The kubelet mounts every volume before it creates the
// sandbox (pkg/kubelet/kubelet.go SyncPod: WaitForAttachAndMount, then the runtime's SyncPod), so a
// volume event older than the newest sandbox failure is history. Of the volume events left, the
// most specific decides (a missing object, then a Multi-Attach error, then any other), since a
// generic timeout accompanies the specific error it waited on; then the newest.
func PodEvents(pod *corev1.Pod, v Verdict, events []Event) (Verdict, bool) {
	return podEvents(pod, v, events)
}

// EventReason reports whether PodEvents reads events with this reason: an event with another
// reason cannot change a verdict, so the model re-judges a pod only for these.
func EventReason(reason string) bool { return eventReason(reason) }

// EventOf reads an event's count and times the way `kubectl get events` prints them: the
// kubelet's legacy events carry firstTimestamp, lastTimestamp and count; events written through
// events.k8s.io (the scheduler's) carry eventTime and, once repeated, a series with its own count
// and last time.
func EventOf(e *corev1.Event) Event { return eventOf(e) }

// EventSource is kubectl's SOURCE of an event, "kubelet, node-3": the component and its instance,
// from source or, for events.k8s.io events, reportingController and reportingInstance.
func EventSource(e *corev1.Event) string { return eventSource(e) }
