package demo

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Deployed is when the story's last rollout (payments, at 15s) has begun. A deploy gate on the
// demo starts its story there (Options.From), as a gate runs after the deploy: started earlier, it
// would find payments still on its old, complete revision.
const Deployed = 15 * time.Second

// The demo scenario: what happens in the embedded cluster, and when.
//
//   - 5 Ready nodes with a DaemonSet on each, a StatefulSet and a few settled Deployments.
//   - 0s:  Deployment shop/checkout rolls 12 replicas from v1.8.2 to v1.9.0. node-3's container
//     runtime is flaky: every new pod placed there fails to start with exit 128, fails again on
//     the kubelet's immediate retry, waits out its first back-off (RunContainerError, then
//     CrashLoopBackOff "back-off 10s") and then starts. Most report containerd's StartError: a shim that
//     does not answer in time, or runc unable to open the pod's cgroup (an errno in a path under
//     /sys/fs/cgroup, node trouble although it reads "no such file or directory"). One reports
//     dockershim/cri-dockerd's ContainerCannotRun, so both spellings of the rule are on screen.
//     node-3 turns suspect; no other node sees an exit-128 failure.
//   - 1s:  Job shop/db-migrate-v2 runs and completes.
//   - 5s:  Deployment ml/recommender asks for more memory than any node has: Unschedulable.
//   - 8s:  Deployment search/search rolls out v3.2.0, which runs out of memory: OOMKilled 137,
//     CrashLoopBackOff. Doomed.
//   - 15s: Deployment shop/payments rolls out an image tag that does not exist: ErrImagePull
//     "not found", then ImagePullBackOff. Doomed, and its progress deadline (60s) passes at 75s: the
//     controller says so a second later (ProgressDeadlineExceeded).
//   - 24s: node-2 comes under memory pressure and evicts an inventory pod; its ReplicaSet replaces
//     it, on node-3, where it too fails once with exit 128 before running.
//   - ~80s: checkout's rollout completes. From then on the back-offs of payments and search tick
//     on, and every 5 minutes from 3m a CronJob run on node-3 fails once with exit 128 and then
//     completes: the story stays on screen, node-3 stays suspect.
//   - 80s: Deployment shop/notifier's one pod lands on node-3, whose CNI plugin fails to set up
//     its sandbox: it waits in ContainerCreating, the cause only in its FailedCreatePodSandBox
//     events (transient, and node evidence), and starts at 2m.
//
// Each story posts the Warning events a real cluster would (events.go): the kubelet's Failed for
// a failed start or pull, BackOff for the crash loop, Evicted, FailedCreatePodSandBox; the
// scheduler's FailedScheduling; and on the nodes EvictionThresholdMet (node-2) and, every minute,
// ContainerGCFailed (node-3's slow runtime).
//
// Every runtime, kubelet and controller message below is verbatim from the upstream code that
// formats it or from an upstream report of it; only the names, UIDs and IDs are the demo's own.
// Each cites its source.

// horizon is how far the scenario plans back-off cycles in live mode.
const horizon = time.Hour

// startFailure is how a runtime reports a container that failed to start: the terminated
// state's reason and message (exit code 128). message gets the pod and the ID of the container
// that failed, for the runtime errors that name them.
type startFailure struct {
	reason  string
	message func(p *corev1.Pod, containerID string) string
}

// containerd's CRI plugin records a failed start as reason StartError, exit code 128, with the
// error as the message: "failed to create containerd task: %w" around the shim's or runc's error
// (containerd internal/cri/server/container_start.go StartContainer; errorStartReason and
// errorStartExitCode in internal/cri/server/helpers.go). None of node-3's errors is about the
// container's own command or working directory, so classify calls them transient (Krane's rule,
// Shopify/krane#656) and they count as evidence against node-3.
var (
	// A shim that does not answer in time, verbatim from GKE's CrashLoopBackOff troubleshooting
	// page, which shows it as a StartError with exit code 128 and a 1970 start time
	// (https://docs.cloud.google.com/kubernetes-engine/docs/troubleshooting/crashloopbackoff-events).
	shimTimeout = startFailure{reason: "StartError", message: func(*corev1.Pod, string) string {
		return "failed to create containerd task: failed to create shim task: context deadline exceeded: unknown"
	}}

	// runc failing to open the new container's cgroup: an errno in a path under /sys/fs/cgroup,
	// about the node, not about the container's command. Verbatim from apecloud/kubeblocks#8063
	// (kubelet event "Error: ..." on containerd with the systemd cgroup driver, cgroup v2; the pod
	// started on a later attempt); runc formats it in libcontainer/process_linux.go ("error setting
	// cgroup config for procHooks process: %w") around the cgroup manager's openat2 error. The pod
	// UID and container ID in the path are this pod's, as runc's systemd driver names them
	// (kubepods-<qos>-pod<uid>.slice/cri-containerd-<id>.scope).
	cgroupENOENT = startFailure{reason: "StartError", message: func(p *corev1.Pod, containerID string) string {
		return "failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: " +
			"unable to start container process: error during container init: error setting cgroup config for procHooks process: " +
			"openat2 /sys/fs/cgroup/" + podCgroupSlice(p) + "/cri-containerd-" + strings.TrimPrefix(containerID, "containerd://") +
			".scope/cgroup.controllers: no such file or directory: unknown"
	}}

	// startErrors is the turn node-3's containerd StartErrors take: shim timeouts dominate, and
	// every third is the cgroup error.
	startErrors = [...]startFailure{shimTimeout, cgroupENOENT, shimTimeout}
)

// cannotRun is the same flakiness as a node running cri-dockerd (or an old kubelet's
// dockershim) reports it: a Docker start error becomes reason ContainerCannotRun with Docker's
// State.Error as the message and start and finish times set to the creation time
// (kubernetes/kubernetes pkg/kubelet/dockershim/docker_container.go ContainerStatus, now
// Mirantis/cri-dockerd). Docker's exit code is 128 for any start error it has not mapped to
// 126/127 (moby/moby daemon/start.go, exitUnknown). "read init-p: connection reset by peer" is
// runc losing its init process mid-handshake; verbatim from kubermatic/kubermatic#6847, where pods
// hit it "for some time ... before eventually being able to start correctly" (also
// moby/moby#40835). It names no configuration error, so classify calls it transient.
var cannotRun = startFailure{reason: "ContainerCannotRun", message: func(*corev1.Pod, string) string {
	return "OCI runtime create failed: container_linux.go:370: starting container process caused: process_linux.go:338: " +
		"getting the final child's pid from pipe caused: read init-p: connection reset by peer: unknown"
}}

// podCgroupSlice is the pod's cgroup under the kubelet's systemd cgroup driver:
// kubepods.slice[/kubepods-<qos>.slice]/kubepods[-<qos>]-pod<uid, dashes as underscores>.slice
// (kubernetes/kubernetes pkg/kubelet/cm/cgroup_manager_linux.go, ToSystemd).
func podCgroupSlice(p *corev1.Pod) string {
	uid := strings.ReplaceAll(string(p.UID), "-", "_")
	switch p.Status.QOSClass {
	case corev1.PodQOSBurstable, corev1.PodQOSBestEffort:
		qos := strings.ToLower(string(p.Status.QOSClass))
		return "kubepods.slice/kubepods-" + qos + ".slice/kubepods-" + qos + "-pod" + uid + ".slice"
	default:
		return "kubepods.slice/kubepods-pod" + uid + ".slice"
	}
}

// nextStartFailure returns node-3's next containerd StartError, taking turns through
// startErrors.
func (b *builder) nextStartFailure() startFailure {
	f := startErrors[b.starts%len(startErrors)]
	b.starts++
	return f
}

type builder struct {
	v      Variant
	g      *ids
	events []event
	nodes  []string
	starts int // next startErrors message
	// eventNames names the Warning events planned so far by what folds them (warning), and
	// eventSeq tells apart the names of events planned at the same instant.
	eventNames map[string]string
	eventSeq   int
}

func (b *builder) at(t time.Duration, do func(w *world, at time.Duration)) {
	b.events = append(b.events, event{at: t, seq: len(b.events), do: do})
}

func objectKey(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

func buildScenario(seed int64, v Variant) (*world, []event) {
	b := &builder{v: v, g: newIDs(seed), eventNames: map[string]string{}}
	const day = 24 * time.Hour

	for i := 1; i <= 5; i++ {
		n := newNode(b.g, i, -40*day, v)
		b.nodes = append(b.nodes, n.Name)
		b.at(-40*day, func(w *world, _ time.Duration) { w.nodes[n.Name] = n })
	}

	// Background workloads, settled long ago.
	b.daemonSet(appSpec{namespace: "kube-system", name: "kube-proxy", image: "registry.k8s.io/kube-proxy:v1.37.2", memory: "64Mi"}, -40*day)
	b.daemonSet(appSpec{namespace: "monitoring", name: "node-exporter", image: "quay.io/prometheus/node-exporter:v1.9.1", port: 9100, memory: "64Mi", probe: true}, -21*day)
	b.settled(appSpec{namespace: "kube-system", name: "coredns", image: "registry.k8s.io/coredns/coredns:v1.12.1", port: 8080, memory: "170Mi", probe: true}, 2, -40*day, 0)
	b.statefulSet(appSpec{namespace: "shop", name: "redis", image: "docker.io/library/redis:7.4.2", port: 6379, memory: "1Gi"}, 3, -12*day)
	b.settled(appSpec{namespace: "shop", name: "frontend", image: "registry.example.com/frontend:v3.7.0", port: 8080, memory: "256Mi", probe: true}, 8, -2*day, 1)
	b.settled(appSpec{namespace: "shop", name: "cart", image: "registry.example.com/cart:v2.2.3", port: 8080, memory: "256Mi", probe: true}, 4, -5*day, 2)
	inventory := b.settled(appSpec{namespace: "shop", name: "inventory", image: "registry.example.com/inventory:v1.4.0", port: 8080, memory: "512Mi", probe: true}, 3, -26*time.Hour, 1)

	checkoutApp := appSpec{namespace: "shop", name: "checkout", image: "registry.example.com/checkout:v1.8.2", port: 8080, memory: "384Mi", probe: true}
	checkout := b.settled(checkoutApp, 12, -3*day, 0, func(d *appsv1.Deployment) {
		// A conservative rollout: 3 extra pods at a time, at most one missing, and a pod must
		// stay ready 10s before it counts as available.
		surge, unavail := intstr.FromInt32(3), intstr.FromInt32(1)
		d.Spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{MaxSurge: &surge, MaxUnavailable: &unavail}
		d.Spec.MinReadySeconds = 10
	})
	payments := b.settled(appSpec{namespace: "shop", name: "payments", image: "registry.example.com/payments:v2.4.0", port: 8443, memory: "512Mi", probe: true}, 4, -6*day, 3,
		func(d *appsv1.Deployment) { d.Spec.ProgressDeadlineSeconds = int32p(60) })
	search := b.settled(appSpec{namespace: "search", name: "search", image: "registry.example.com/search:v3.1.0", port: 9200, memory: "2Gi", probe: true}, 4, -4*day, 4)

	// 0s: checkout v1.9.0. New pods go to these nodes in turn; node-3 gets three of them: a shim
	// timeout, the cgroup error, and a ContainerCannotRun in place of the third StartError. With the
	// inventory pod's shim timeout at 24s, the shim timeout stays node-3's dominant message.
	placement := []string{"node-1", "node-3", "node-2", "node-4", "node-5", "node-1", "node-3", "node-2", "node-4", "node-5", "node-3", "node-1"}
	onNode3 := 0
	b.rollout(checkout, 0, "registry.example.com/checkout:v1.9.0", func(p *corev1.Pod, i int, at time.Duration) time.Duration {
		node := placement[i%len(placement)]
		if node == "node-3" {
			onNode3++
			f := b.nextStartFailure() // taken even when replaced, so the other pods' messages stay put
			if onNode3 == 3 {
				f = cannotRun
			}
			return b.flakyPod(p, node, at, f)
		}
		return b.healthyPod(p, node, at)
	})

	b.migrationJob(1 * time.Second)
	b.unschedulable(5 * time.Second)

	// 8s: search v3.2.0 with a memory limit it cannot live within.
	searchNodes := []string{"node-2", "node-5"}
	b.rollout(search, 8*time.Second, "registry.example.com/search:v3.2.0", func(p *corev1.Pod, i int, at time.Duration) time.Duration {
		p.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory] = resource.MustParse("256Mi")
		p.Spec.Containers[0].Resources.Requests[corev1.ResourceMemory] = resource.MustParse("256Mi")
		return b.oomPod(p, searchNodes[i%2], at+time.Duration(i)*time.Second)
	})

	// 15s: payments v2.4.1-typo: the tag was never pushed.
	paymentsNodes := []string{"node-4", "node-1"}
	if v == US {
		// us deployed the tag that was pushed.
		b.rollout(payments, Deployed, "registry.example.com/payments:v2.4.1", func(p *corev1.Pod, i int, at time.Duration) time.Duration {
			return b.healthyPod(p, paymentsNodes[i%2], at)
		})
	} else {
		b.rollout(payments, Deployed, "registry.example.com/payments:v2.4.1-typo", func(p *corev1.Pod, i int, at time.Duration) time.Duration {
			return b.imageNotFoundPod(p, paymentsNodes[i%2], at)
		})
	}

	// 24s: node-2 under memory pressure evicts an inventory pod, which is replaced on node-3.
	b.eviction(inventory, "node-2", 24*time.Second)

	// From 3m on, in live mode: a CronJob's runs keep landing on node-3 and keep flaking there,
	// so node-3 stays suspect after checkout's failures age out of the 15m window.
	// Where the upgrade has not reached node-3 (ap's), none of this happens.
	if !v.calm() {
		b.cronTail(3*time.Minute, 5*time.Minute)

		// node-3's runtime is slow to answer the kubelet's garbage collection too.
		b.containerGCFailures("node-3", 40*time.Second, time.Minute)

		// 80s: Deployment shop/notifier's one pod lands on node-3, where the CNI cannot set up its
		// network: it waits in ContainerCreating, the cause only in its events, until 2m. Last, so
		// that its IDs are drawn after everyone else's and the rest of the cluster stays as it was.
		b.sandboxFailure(80*time.Second, "node-3", 2*time.Minute)
	}

	return newWorld(), b.events
}

// workload is a settled Deployment and its current ReplicaSet and pods.
type workload struct {
	app     appSpec
	deploy  *appsv1.Deployment
	rs      *appsv1.ReplicaSet
	pods    []string // keys, in creation order
	nodes   []string // node of each pod
	created time.Duration
}

// settled creates a Deployment whose only ReplicaSet is fully rolled out since created.
func (b *builder) settled(a appSpec, replicas int32, created time.Duration, firstNode int, tune ...func(*appsv1.Deployment)) *workload {
	d := newDeployment(b.g, a, replicas, created)
	for _, f := range tune {
		f(d)
	}
	rs := newReplicaSet(b.g, d, 1, replicas, created)
	rs.Spec.MinReadySeconds = d.Spec.MinReadySeconds
	wl := &workload{app: a, deploy: d, rs: rs, created: created}
	dk, rk := objectKey(d.Namespace, d.Name), objectKey(rs.Namespace, rs.Name)
	b.at(created, func(w *world, at time.Duration) {
		w.deploys[dk] = d
		w.rss[rk] = rs
		replicaSetCreated(d, rs, at)
	})
	for i := 0; i < int(replicas); i++ {
		p := newPod(b.g, rs.Namespace, rs.Name+"-"+b.g.suffix(5), rs.Spec.Template, ownerRef("ReplicaSet", rs), created)
		node := b.nodes[(firstNode+i)%len(b.nodes)]
		b.healthyPod(p, node, created)
		wl.pods = append(wl.pods, objectKey(p.Namespace, p.Name))
		wl.nodes = append(wl.nodes, node)
	}
	return wl
}

// addPod creates the pod at its creation time and binds it to node.
func (b *builder) addPod(p *corev1.Pod, node string, at time.Duration) string {
	k := objectKey(p.Namespace, p.Name)
	hostIP := fmt.Sprintf("10.0.1.%d", 10+int(node[len(node)-1]-'0'))
	podIP := b.g.podIP(node)
	b.at(at, func(w *world, at time.Duration) {
		w.pods[k] = p
		podSchedule(p, node, hostIP, podIP, at)
	})
	return k
}

// healthyPod pulls, starts and passes its readiness probe. It returns when the pod is available.
func (b *builder) healthyPod(p *corev1.Pod, node string, at time.Duration) time.Duration {
	k := b.addPod(p, node, at)
	cid, img := b.g.containerID(), imageDigest(b.g, p.Spec.Containers[0].Image)
	run := at + 2*time.Second + b.g.jitter(2*time.Second)
	b.at(run, func(w *world, at time.Duration) { podRun(w.pods[k], cid, img, at) })
	return b.ready(k, p, run)
}

// ready schedules the readiness probe's first success after its initial delay, and returns when
// the pod counts as available (after the owner's minReadySeconds).
func (b *builder) ready(k string, p *corev1.Pod, running time.Duration) time.Duration {
	readyAt := running
	if probe := p.Spec.Containers[0].ReadinessProbe; probe != nil {
		readyAt += time.Duration(probe.InitialDelaySeconds)*time.Second + b.g.jitter(time.Second)
	}
	b.at(readyAt, func(w *world, at time.Duration) { podReady(w.pods[k]) })
	return readyAt
}

// flakyPod fails to start with exit 128 as f says (node-3's runtime), as a kubelet shows it, and
// then runs:
//
//   - the start fails: state terminated (f.reason, exit 128), the kubelet's Failed event;
//   - the kubelet writes the failure it got back from StartContainer as the waiting reason,
//     RunContainerError with the runtime's message (kubernetes pkg/kubelet/kuberuntime
//     kuberuntime_container.go startContainer: `return s.Message(), kubecontainer.ErrRunContainer`),
//     the failed instance in lastState;
//   - doBackOff (kuberuntime_manager.go) retries at once after a first failure, and node-3's
//     runtime fails that start too (restart 1);
//   - the second failure finds the back-off the first one started: CrashLoopBackOff, "back-off 10s
//     restarting failed container=…", and the kubelet's BackOff event;
//   - 10s after the second failure the kubelet starts the container again, and it runs, with two
//     restarts and the last start failure in lastState.
//
// Every state but the running one is transient: a start failure on the node, and one back-off
// after it, is the flake's.
func (b *builder) flakyPod(p *corev1.Pod, node string, at time.Duration, f startFailure) time.Duration {
	if b.v.calm() {
		return b.healthyPod(p, node, at) // node-3's runtime was not upgraded here
	}
	k := b.addPod(p, node, at)
	firstID, secondID, cid := b.g.containerID(), b.g.containerID(), b.g.containerID()
	img := imageDigest(b.g, p.Spec.Containers[0].Image)
	ref, src := containerRef(p, p.Spec.Containers[0].Name), kubeletSource(node)
	fail := at + 3*time.Second + b.g.jitter(time.Second)
	failStart := func(id string, restarts int32) func(w *world, at time.Duration) {
		return func(w *world, at time.Duration) {
			pod := w.pods[k]
			cs := containerStatus(pod)
			cs.ImageID, cs.RestartCount = img, restarts
			// containerd reports a container that never started with the Unix epoch as its start
			// time; dockershim/cri-dockerd report the creation time as start and finish.
			var started *time.Duration
			if f.reason == cannotRun.reason {
				started = &at
			}
			podTerminate(pod, id, f.reason, f.message(pod, id), 128, started, at)
		}
	}
	runError := func(id string) func(w *world, at time.Duration) {
		return func(w *world, _ time.Duration) { podWaiting(w.pods[k], "RunContainerError", f.message(w.pods[k], id)) }
	}
	again := fail + 2*time.Second
	b.at(fail, failStart(firstID, 0))
	b.at(fail+time.Second, runError(firstID))
	b.at(again, failStart(secondID, 1))
	b.at(again+time.Second, func(w *world, _ time.Duration) {
		pod := w.pods[k]
		podWaiting(pod, "CrashLoopBackOff", fmt.Sprintf("back-off 10s restarting failed container=%s pod=%s_%s(%s)",
			pod.Spec.Containers[0].Name, pod.Name, pod.Namespace, pod.UID))
	})
	// The kubelet's event for each failed start: "Error: %v" of the runtime's message (kubernetes
	// pkg/kubelet/kuberuntime/kuberuntime_container.go startContainer, FailedToStartContainer), and
	// its "Back-off restarting failed container %s in pod %s" while it waits (doBackOff).
	b.warning(fail, ref, src, "Failed", "Error: "+f.message(p, firstID))
	b.warning(again, ref, src, "Failed", "Error: "+f.message(p, secondID))
	b.warning(again+time.Second, ref, src, "BackOff",
		fmt.Sprintf("Back-off restarting failed container %s in pod %s_%s(%s)", p.Spec.Containers[0].Name, p.Name, p.Namespace, p.UID))
	run := again + 10*time.Second
	b.at(run, func(w *world, at time.Duration) { podRun(w.pods[k], cid, img, at) })
	return b.ready(k, p, run)
}

// imageNotFoundPod pulls an image tag that does not exist: ErrImagePull, then ImagePullBackOff
// with kubelet's doubling back-off (10s, 20s, ... capped at 300s), retrying until the horizon.
// The pod is never available.
func (b *builder) imageNotFoundPod(p *corev1.Pod, node string, at time.Duration) time.Duration {
	k := b.addPod(p, node, at)
	image := p.Spec.Containers[0].Image
	// containerd 2.1 pulls through its transfer service by default (containerd/containerd#8515):
	// the CRI plugin wraps "failed to pull and unpack image %q: %w"
	// (internal/cri/server/images/image_pull.go pullImageWithTransferService), the transfer service
	// "failed to resolve image: %w" (core/transfer/local/pull.go), the registry's 404 "%s: %w" with
	// errdefs.ErrNotFound (core/remotes/docker/resolver.go), which gRPC carries as NotFound. The
	// kubelet puts the CRI error's text in the waiting message (kubernetes/kubernetes
	// pkg/kubelet/images/image_manager.go evalCRIPullErr).
	pullErr := fmt.Sprintf("rpc error: code = NotFound desc = failed to pull and unpack image %q: failed to resolve image: %s: not found",
		image, image)
	// Since v1.30 the back-off message carries the previous pull error as "%s: %s" of the
	// ErrImagePull reason and that message (image_manager.go prevPullErrMsg).
	backOffMsg := fmt.Sprintf("Back-off pulling image %q: ErrImagePull: %s", image, pullErr)
	// The kubelet's events: "Failed to pull image %q: %v" of the pull error (pkg/kubelet/images
	// image_manager.go EnsureImageExists, FailedToPullImage), then "Error: %v" of the error's
	// reason, ErrImagePull or, while it backs off, ImagePullBackOff (kuberuntime_container.go
	// startContainer); its "Back-off pulling image" event is Normal. Each repeats with a count.
	ref, src := containerRef(p, p.Spec.Containers[0].Name), kubeletSource(node)
	t, backoff := at+2*time.Second, 10*time.Second
	for t < horizon {
		b.at(t, func(w *world, _ time.Duration) { podWaiting(w.pods[k], "ErrImagePull", pullErr) })
		b.warning(t, ref, src, "Failed", fmt.Sprintf("Failed to pull image %q: %s", image, pullErr))
		b.warning(t, ref, src, "Failed", "Error: ErrImagePull")
		b.at(t+time.Second, func(w *world, _ time.Duration) { podWaiting(w.pods[k], "ImagePullBackOff", backOffMsg) })
		b.warning(t+time.Second, ref, src, "Failed", "Error: ImagePullBackOff")
		t += time.Second + backoff
		backoff = min(2*backoff, 300*time.Second)
	}
	return math.MaxInt64
}

// oomPod runs for a few seconds and is OOMKilled (137), again and again: restarted at once the
// first time, then through CrashLoopBackOff with kubelet's doubling back-off (10s .. 300s).
func (b *builder) oomPod(p *corev1.Pod, node string, at time.Duration) time.Duration {
	k := b.addPod(p, node, at)
	img := imageDigest(b.g, p.Spec.Containers[0].Image)
	const lifetime = 3 * time.Second
	// The kubelet's event while it backs off: "Back-off restarting failed container %s in pod %s"
	// with format.Pod's "name_namespace(uid)" (kuberuntime_manager.go doBackOff).
	ref := containerRef(p, p.Spec.Containers[0].Name)
	backOffEvent := fmt.Sprintf("Back-off restarting failed container %s in pod %s_%s(%s)", p.Spec.Containers[0].Name, p.Name, p.Namespace, p.UID)
	start, backoff := at+2*time.Second, time.Duration(0)
	for start < horizon {
		cid, started, bo := b.g.containerID(), start, backoff
		b.at(start, func(w *world, at time.Duration) { podRun(w.pods[k], cid, img, at) })
		died := start + lifetime
		b.at(died, func(w *world, at time.Duration) {
			pod := w.pods[k]
			// containerd sets reason OOMKilled on the task's OOM event and leaves the message empty
			// (internal/cri/server/events.go, oomExitReason in helpers.go).
			podTerminate(pod, cid, "OOMKilled", "", 137, &started, at)
			if bo > 0 {
				// kubernetes/kubernetes pkg/kubelet/kuberuntime/kuberuntime_manager.go doBackOff,
				// with format.Pod's "name_namespace(uid)".
				podWaiting(pod, "CrashLoopBackOff", fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)",
					bo, pod.Spec.Containers[0].Name, pod.Name, pod.Namespace, pod.UID))
			}
		})
		if bo > 0 {
			b.warning(died, ref, kubeletSource(node), "BackOff", backOffEvent)
		}
		start = died + backoff
		if backoff == 0 {
			start = died + time.Second
			backoff = 10 * time.Second
		} else {
			backoff = min(2*backoff, 300*time.Second)
		}
	}
	return math.MaxInt64
}

// terminate deletes a pod gracefully: Terminating for a moment, then gone.
func (b *builder) terminate(k string, at time.Duration) {
	b.at(at, func(w *world, at time.Duration) {
		p := w.pods[k]
		p.DeletionTimestamp = timestampPtr(at + 30*time.Second)
		p.DeletionGracePeriodSeconds = ptrTo(int64(30))
	})
	b.at(at+2*time.Second, func(w *world, _ time.Duration) { delete(w.pods, k) })
}

// rollout changes the Deployment's image at start and plays the rolling update as the
// Deployment controller does (kubernetes pkg/controller/deployment/rolling.go): scale the new
// ReplicaSet up within maxSurge, scale old ones down while at least replicas-maxUnavailable pods
// stay available, and go again whenever a new pod becomes available. planPod plans the i-th new
// pod's life from its creation time and returns when it becomes available (math.MaxInt64: never).
func (b *builder) rollout(wl *workload, start time.Duration, image string, planPod func(p *corev1.Pod, i int, at time.Duration) time.Duration) {
	d := wl.deploy
	want := int(*d.Spec.Replicas)
	surge, _ := intstr.GetScaledValueFromIntOrPercent(d.Spec.Strategy.RollingUpdate.MaxSurge, want, true)
	unavail, _ := intstr.GetScaledValueFromIntOrPercent(d.Spec.Strategy.RollingUpdate.MaxUnavailable, want, false)
	maxTotal, minAvail := want+surge, want-unavail
	minReady := time.Duration(d.Spec.MinReadySeconds) * time.Second

	rolled := d.DeepCopy()
	rolled.Generation++
	rolled.Annotations["deployment.kubernetes.io/revision"] = "2"
	rolled.Spec.Template.Spec.Containers[0].Image = image
	newRS := newReplicaSet(b.g, rolled, 2, 0, start)
	newRS.Spec.MinReadySeconds = d.Spec.MinReadySeconds
	dk, oldKey, newKey := objectKey(d.Namespace, d.Name), objectKey(wl.rs.Namespace, wl.rs.Name), objectKey(newRS.Namespace, newRS.Name)
	b.at(start, func(w *world, at time.Duration) {
		dep := w.deploys[dk]
		dep.Generation, dep.Annotations, dep.Spec = rolled.Generation, rolled.Annotations, rolled.Spec
		w.rss[newKey] = newRS
		replicaSetCreated(dep, newRS, at)
	})

	old, created := len(wl.pods), 0
	var available []time.Duration
	for t := start; ; {
		for changed := true; changed; {
			changed = false
			ready := 0
			for _, a := range available {
				if a <= t {
					ready++
				}
			}
			if up := min(want-created, maxTotal-(old+created)); up > 0 {
				for i := 0; i < up; i++ {
					p := newPod(b.g, newRS.Namespace, newRS.Name+"-"+b.g.suffix(5), newRS.Spec.Template, ownerRef("ReplicaSet", newRS), t)
					a := planPod(p, created, t)
					if a != math.MaxInt64 {
						a += minReady
					}
					available = append(available, a)
					created++
				}
				changed = true
			}
			if down := min(old, old+created-minAvail-(created-ready)); down > 0 {
				for i := 0; i < down; i++ {
					old--
					b.terminate(wl.pods[old], t)
				}
				changed = true
			}
		}
		n, o := int32(created), int32(old)
		b.at(t, func(w *world, _ time.Duration) {
			w.rss[newKey].Spec.Replicas = int32p(n)
			w.rss[oldKey].Spec.Replicas = int32p(o)
		})
		next := time.Duration(math.MaxInt64)
		for _, a := range available {
			if a > t && a < next {
				next = a
			}
		}
		if next == math.MaxInt64 {
			return
		}
		t = next
	}
}

// daemonSet runs one pod on every node.
func (b *builder) daemonSet(a appSpec, created time.Duration) {
	ds := newDaemonSet(b.g, a, created)
	dk := objectKey(ds.Namespace, ds.Name)
	b.at(created, func(w *world, _ time.Duration) { w.dss[dk] = ds })
	hash := b.g.suffix(10)
	for i, node := range b.nodes {
		tmpl := ds.Spec.Template
		tmpl.Labels = copyLabels(tmpl.Labels, "controller-revision-hash", hash, "pod-template-generation", "1")
		p := newPod(b.g, ds.Namespace, ds.Name+"-"+b.g.suffix(5), tmpl, ownerRef("DaemonSet", ds), created+time.Duration(i)*time.Second)
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}}}}}}}
		b.healthyPod(p, node, created+time.Duration(i)*time.Second)
	}
}

// statefulSet runs replicas ordinal pods, one after the other.
func (b *builder) statefulSet(a appSpec, replicas int32, created time.Duration) {
	sts := newStatefulSet(b.g, a, replicas, created)
	hash := b.g.suffix(10)
	sts.Annotations = map[string]string{"demo.doomwatch/revision": hash}
	sk := objectKey(sts.Namespace, sts.Name)
	b.at(created, func(w *world, _ time.Duration) { w.stss[sk] = sts })
	at := created
	for i := 0; i < int(replicas); i++ {
		name := fmt.Sprintf("%s-%d", sts.Name, i)
		tmpl := sts.Spec.Template
		tmpl.Labels = copyLabels(tmpl.Labels, "controller-revision-hash", sts.Name+"-"+hash,
			"statefulset.kubernetes.io/pod-name", name, "apps.kubernetes.io/pod-index", fmt.Sprint(i))
		p := newPod(b.g, sts.Namespace, name, tmpl, ownerRef("StatefulSet", sts), at)
		p.Spec.Hostname, p.Spec.Subdomain = name, sts.Spec.ServiceName
		at = b.healthyPod(p, b.nodes[(i+2)%len(b.nodes)], at) + time.Second
	}
}

// migrationJob is checkout's schema migration: one pod that runs ~10s and exits 0.
func (b *builder) migrationJob(at time.Duration) {
	app := appSpec{namespace: "shop", name: "migrate", image: "registry.example.com/checkout-migrations:v1.9.0", memory: "128Mi"}
	job := newJob(b.g, "shop", "db-migrate-v2", app, at)
	jk := objectKey(job.Namespace, job.Name)
	b.at(at, func(w *world, at time.Duration) {
		w.jobs[jk] = job
		job.Status.StartTime = timestampPtr(at)
	})
	p := newPod(b.g, job.Namespace, job.Name+"-"+b.g.suffix(5), job.Spec.Template, ownerRef("Job", job), at)
	p.Status.QOSClass = corev1.PodQOSBurstable
	k := b.addPod(p, "node-4", at)
	cid, img := b.g.containerID(), imageDigest(b.g, app.image)
	run := at + 3*time.Second
	b.at(run, func(w *world, at time.Duration) { podRun(w.pods[k], cid, img, at); podReady(w.pods[k]) })
	done := run + 10*time.Second
	b.at(done, func(w *world, at time.Duration) {
		pod := w.pods[k]
		started := run
		podTerminate(pod, cid, "Completed", "", 0, &started, at)
		pod.Status.Phase = corev1.PodSucceeded
		setPodCondition(pod, corev1.PodReadyToStartContainers, corev1.ConditionFalse, "", "", at)
		setPodCondition(pod, corev1.ContainersReady, corev1.ConditionFalse, "PodCompleted", "", at)
		setPodCondition(pod, corev1.PodReady, corev1.ConditionFalse, "PodCompleted", "", at)
		completeJob(w.jobs[jk], at)
	})
}

// unschedulable creates a Deployment whose single pod asks for more memory than any node has.
func (b *builder) unschedulable(at time.Duration) {
	app := appSpec{namespace: "ml", name: "recommender", image: "registry.example.com/recommender:v0.9.3", port: 8080, memory: "48Gi", probe: true}
	d := newDeployment(b.g, app, 1, at)
	d.Spec.Template.Spec.Containers[0].Resources.Limits = nil
	rs := newReplicaSet(b.g, d, 1, 1, at)
	dk, rk := objectKey(d.Namespace, d.Name), objectKey(rs.Namespace, rs.Name)
	p := newPod(b.g, rs.Namespace, rs.Name+"-"+b.g.suffix(5), rs.Spec.Template, ownerRef("ReplicaSet", rs), at)
	pk := objectKey(p.Namespace, p.Name)
	b.at(at, func(w *world, at time.Duration) {
		w.deploys[dk], w.rss[rk], w.pods[pk] = d, rs, p
		replicaSetCreated(d, rs, at)
		// Verbatim from aws/karpenter-provider-aws#4450 (4 nodes there, 5 here): kube-scheduler's
		// FitError with NodeResourcesFit's "Insufficient memory", then the preemption postfilter's
		// summary; no pod on any node has a lower priority, so SelectVictimsOnNode finds no victims
		// (kubernetes/kubernetes pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go).
		podUnschedulable(p, unschedulableMsg, at)
	})
	// The scheduler's event says the same (pkg/scheduler/schedule_one.go handleSchedulingFailure:
	// FailedScheduling, action Scheduling), again each time it retries the pod, at the latest every
	// 5 minutes (podMaxInUnschedulablePodsDuration).
	var retries []time.Duration
	for r := at + 5*time.Minute; r < horizon; r += 5 * time.Minute {
		retries = append(retries, r)
	}
	b.schedulerWarning(at, p, unschedulableMsg, retries)
}

// unschedulableMsg is ml/recommender's FitError, verbatim from aws/karpenter-provider-aws#4450 (4
// nodes there, 5 here).
const unschedulableMsg = "0/5 nodes are available: 5 Insufficient memory. preemption: 0/5 nodes are available: 5 No preemption victims found for incoming pod."

// eviction puts node under memory pressure at t: the kubelet evicts one of wl's pods there
// (pkg/kubelet/eviction), the ReplicaSet replaces it, and the scheduler, avoiding the tainted
// node, puts the replacement on node-3. The pressure clears half a minute later.
func (b *builder) eviction(wl *workload, node string, t time.Duration) {
	taint := corev1.Taint{Key: "node.kubernetes.io/memory-pressure", Effect: corev1.TaintEffectNoSchedule, TimeAdded: timestampPtr(t)}
	// Node condition reasons and messages: kubernetes/kubernetes pkg/kubelet/nodestatus/setters.go
	// MemoryPressureCondition.
	b.at(t, func(w *world, at time.Duration) {
		n := w.nodes[node]
		n.Spec.Taints = append(n.Spec.Taints, taint)
		setNodeCondition(n, corev1.NodeMemoryPressure, corev1.ConditionTrue, "KubeletHasInsufficientMemory", "kubelet has insufficient memory available", at)
	})
	b.at(t+31*time.Second, func(w *world, at time.Duration) {
		n := w.nodes[node]
		n.Spec.Taints = nil
		setNodeCondition(n, corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available", at)
	})
	victim := ""
	for i, n := range wl.nodes {
		if n == node {
			victim = wl.pods[i]
		}
	}
	evictAt := t + 2*time.Second
	// The kubelet's eviction message (kubernetes/kubernetes pkg/kubelet/eviction/helpers.go
	// evictionMessage): nodeLowMessageFmt and thresholdMetMessageFmt, for the default hard
	// threshold memory.available<100Mi. A "Container %s was using %s, request is %s, has larger
	// consumption of %v. " sentence follows only for containers using more than their request,
	// which this one cannot: its memory limit equals its request.
	msg := "The node was low on resource: memory. Threshold quantity: 100Mi, available: 87412Ki. "
	// The eviction manager's events: "Attempting to reclaim %s" on the node (EvictionThresholdMet),
	// then the eviction message on the pod (Evicted; pkg/kubelet/eviction/eviction_manager.go
	// synchronize and evictPod).
	b.warning(evictAt, nodeRef(node), kubeletSource(node), "EvictionThresholdMet", "Attempting to reclaim memory")
	b.at(evictAt, func(w *world, at time.Duration) {
		p := w.pods[victim]
		// Status reason Evicted and the DisruptionTarget condition, both with the message
		// (pkg/kubelet/eviction/eviction_manager.go evictPods); the conditions the kubelet
		// generates for a failed pod (pkg/kubelet/status/generate.go, reason PodFailed).
		p.Status.Phase, p.Status.Reason, p.Status.Message = corev1.PodFailed, "Evicted", msg
		setPodCondition(p, corev1.DisruptionTarget, corev1.ConditionTrue, "TerminationByKubelet", msg, at)
		setPodCondition(p, corev1.PodReadyToStartContainers, corev1.ConditionFalse, "", "", at)
		setPodCondition(p, corev1.ContainersReady, corev1.ConditionFalse, "PodFailed", "", at)
		setPodCondition(p, corev1.PodReady, corev1.ConditionFalse, "PodFailed", "", at)
		// The container is gone before the kubelet reads its exit: TerminatePod writes this state,
		// with no times (pkg/kubelet/status/status_manager.go TerminatePod).
		cs := containerStatus(p)
		cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "ContainerStatusUnknown",
			Message: "The container could not be located when the pod was terminated"}}
		cs.Ready, cs.Started = false, boolp(false)
		p.Status.PodIP, p.Status.PodIPs = "", nil
		name := eventName(p.Name, at)
		w.events[objectKey(p.Namespace, name)] = newWarning(p.Namespace, name, podRef(p), kubeletSource(node), "Evicted", msg, at)
	})
	p := newPod(b.g, wl.rs.Namespace, wl.rs.Name+"-"+b.g.suffix(5), wl.rs.Spec.Template, ownerRef("ReplicaSet", wl.rs), evictAt+time.Second)
	b.flakyPod(p, "node-3", evictAt+time.Second, b.nextStartFailure())
}

func setNodeCondition(n *corev1.Node, t corev1.NodeConditionType, s corev1.ConditionStatus, reason, msg string, at time.Duration) {
	for i := range n.Status.Conditions {
		c := &n.Status.Conditions[i]
		if c.Type == t {
			if c.Status != s {
				c.LastTransitionTime = timestamp(at)
			}
			c.Status, c.Reason, c.Message, c.LastHeartbeatTime = s, reason, msg, timestamp(at)
		}
	}
}

// cronTail plays CronJob shop/ledger-export every period from first until the horizon. Each run
// is a Job whose one pod (restartPolicy OnFailure) lands on node-3, fails to start with exit 128,
// is restarted in place by the kubelet and completes. The CronJob keeps its 3 latest successful
// Jobs (successfulJobsHistoryLimit) and deletes older ones with their pods.
//
// The CronJob's status is the CronJob controller's (kubernetes pkg/controller/cronjob
// cronjob_controllerv2.go syncCronJob): each Job it makes joins status.active and sets
// lastScheduleTime to its scheduled time; a finished one leaves status.active, and a successful
// one sets lastSuccessfulTime to its completion time.
func (b *builder) cronTail(first, period time.Duration) {
	app := appSpec{namespace: "shop", name: "export", image: "registry.example.com/ledger-export:v0.7.2", memory: "256Mi"}
	cronUID := b.g.uid()
	cron := &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "ledger-export", UID: cronUID, Generation: 1, CreationTimestamp: timestamp(-9 * 24 * time.Hour)},
		Spec: batchv1.CronJobSpec{
			// The runs' minutes: first past Epoch's hour, every period.
			Schedule:          fmt.Sprintf("%d-59/%d * * * *", int(first.Minutes())%int(period.Minutes()), int(period.Minutes())),
			ConcurrencyPolicy: batchv1.AllowConcurrent, Suspend: boolp(false),
			SuccessfulJobsHistoryLimit: int32p(3), FailedJobsHistoryLimit: int32p(1),
		},
	}
	ck := objectKey(cron.Namespace, cron.Name)
	b.at(-9*24*time.Hour, func(w *world, _ time.Duration) { w.crons[ck] = cron })
	var runs []string // job keys, oldest first
	var pods []string
	for at := first; at < horizon; at += period {
		name := fmt.Sprintf("ledger-export-%d", Epoch.Add(at).Unix()/60)
		job := newJob(b.g, "shop", name, app, at)
		job.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		t := true
		job.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob", Name: "ledger-export", UID: cronUID, Controller: &t, BlockOwnerDeletion: &t}}
		jk := objectKey(job.Namespace, job.Name)
		ref := corev1.ObjectReference{APIVersion: "batch/v1", Kind: "Job", Namespace: job.Namespace, Name: job.Name, UID: job.UID}
		b.at(at, func(w *world, at time.Duration) {
			w.jobs[jk] = job
			job.Status.StartTime = timestampPtr(at)
			cron.Status.Active = append(cron.Status.Active, ref)
			cron.Status.LastScheduleTime = timestampPtr(at)
		})
		p := newPod(b.g, job.Namespace, job.Name+"-"+b.g.suffix(5), job.Spec.Template, ownerRef("Job", job), at)
		k := objectKey(p.Namespace, p.Name)
		b.flakyPod(p, "node-3", at, b.nextStartFailure())
		done := at + 25*time.Second
		b.at(done, func(w *world, at time.Duration) {
			pod := w.pods[k]
			cs := containerStatus(pod)
			started := cs.State.Running.StartedAt.Sub(Epoch)
			podTerminate(pod, cs.ContainerID, "Completed", "", 0, &started, at)
			pod.Status.Phase = corev1.PodSucceeded
			setPodCondition(pod, corev1.PodReadyToStartContainers, corev1.ConditionFalse, "", "", at)
			setPodCondition(pod, corev1.ContainersReady, corev1.ConditionFalse, "PodCompleted", "", at)
			setPodCondition(pod, corev1.PodReady, corev1.ConditionFalse, "PodCompleted", "", at)
			completeJob(w.jobs[jk], at)
			cron.Status.Active = slices.DeleteFunc(cron.Status.Active, func(r corev1.ObjectReference) bool { return r.UID == ref.UID })
			cron.Status.LastSuccessfulTime = timestampPtr(at)
		})
		runs, pods = append(runs, jk), append(pods, k)
		if len(runs) > 3 {
			oldJob, oldPod := runs[0], pods[0]
			runs, pods = runs[1:], pods[1:]
			b.at(done, func(w *world, _ time.Duration) {
				delete(w.jobs, oldJob)
				delete(w.pods, oldPod)
			})
		}
	}
}

// completeJob writes what the Job controller does when the last pod succeeds (k8s 1.31+:
// SuccessCriteriaMet, then Complete, both with reason CompletionsReached and the message
// "Reached expected number of succeeded pods"; kubernetes/kubernetes
// pkg/controller/job/job_controller.go).
func completeJob(j *batchv1.Job, at time.Duration) {
	j.Status.CompletionTime = timestampPtr(at)
	j.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
	j.Status.Conditions = []batchv1.JobCondition{
		{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonCompletionsReached,
			Message: "Reached expected number of succeeded pods", LastProbeTime: timestamp(at), LastTransitionTime: timestamp(at)},
		{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonCompletionsReached,
			Message: "Reached expected number of succeeded pods", LastProbeTime: timestamp(at), LastTransitionTime: timestamp(at)},
	}
}

// containerGCFailures plays the kubelet's container garbage collection on node timing out
// against its runtime every period from first until the horizon. The kubelet posts the error as a
// ContainerGCFailed event on its node (kubernetes/kubernetes pkg/kubelet/kubelet.go
// StartGarbageCollection: err.Error(), every ContainerGCPeriod, 1 minute); the error is gRPC's
// deadline, verbatim from the kubelet log in rancher/rancher#21178 ("Container garbage collection
// failed: rpc error: code = DeadlineExceeded desc = context deadline exceeded"; also
// kubernetes/kubernetes#42164). The same message each time: one event whose count grows.
func (b *builder) containerGCFailures(node string, first, period time.Duration) {
	for at := first; at < horizon; at += period {
		b.warning(at, nodeRef(node), kubeletSource(node), "ContainerGCFailed", "rpc error: code = DeadlineExceeded desc = context deadline exceeded")
	}
}

// calicoUnauthorized is the error of Calico's CNI plugin whose token the API server no longer
// accepts, verbatim from kubernetes-sigs/nfs-subdir-external-provisioner#257 (also
// easzlab/kubeasz#1332, where calico-node on the node had to renew it), as the runtime reports
// it for a sandbox (containerd internal/cri/server/sandbox_run.go: "failed to setup network for
// sandbox %q: %w" of the sandbox ID).
func calicoUnauthorized(sandboxID string) string {
	return `rpc error: code = Unknown desc = failed to setup network for sandbox "` + sandboxID +
		`": plugin type="calico" failed (add): connection is unauthorized: Unauthorized`
}

// sandboxRetries are the intervals between the kubelet's attempts at a pod sandbox that keeps
// failing: the pod worker retries a failed sync after its back-off period, 10s with jitter
// (kubernetes/kubernetes pkg/kubelet/pod_workers.go completeWork, backOffPeriod).
var sandboxRetries = [...]time.Duration{12 * time.Second, 11 * time.Second, 14 * time.Second, 10 * time.Second, 13 * time.Second}

// sandboxFailure creates Deployment shop/notifier at t with one pod that the scheduler binds to
// node. The kubelet cannot create its sandbox: each attempt fails in the CNI plugin with a new
// sandbox ID, and so posts a new FailedCreatePodSandBox event ("Failed to create pod sandbox: %v",
// kubernetes/kubernetes pkg/kubelet/kuberuntime/kuberuntime_manager.go SyncPod). The pod stays in
// ContainerCreating, PodReadyToStartContainers False and without an IP
// (pkg/kubelet/status/generate.go), until the first attempt after recover succeeds; then it starts
// as any pod does. It recovers before ten such events, after which client-go's correlator would
// post the rest as one "(combined from similar events)" event (tools/record/events_cache.go).
func (b *builder) sandboxFailure(t time.Duration, node string, recover time.Duration) {
	app := appSpec{namespace: "shop", name: "notifier", image: "registry.example.com/notifier:v0.4.1", port: 8080, memory: "128Mi", probe: true}
	d := newDeployment(b.g, app, 1, t)
	rs := newReplicaSet(b.g, d, 1, 1, t)
	p := newPod(b.g, rs.Namespace, rs.Name+"-"+b.g.suffix(5), rs.Spec.Template, ownerRef("ReplicaSet", rs), t)
	dk, rk, k := objectKey(d.Namespace, d.Name), objectKey(rs.Namespace, rs.Name), objectKey(p.Namespace, p.Name)
	hostIP := fmt.Sprintf("10.0.1.%d", 10+int(node[len(node)-1]-'0'))
	podIP := b.g.podIP(node)
	b.at(t, func(w *world, at time.Duration) {
		w.deploys[dk], w.rss[rk], w.pods[k] = d, rs, p
		replicaSetCreated(d, rs, at)
		podSchedule(p, node, hostIP, podIP, at)
		setPodCondition(p, corev1.PodReadyToStartContainers, corev1.ConditionFalse, "", "", at)
		p.Status.PodIP, p.Status.PodIPs = "", nil
	})
	attempt := t + 2*time.Second
	for i := 0; attempt < recover; i++ {
		b.warning(attempt, podRef(p), kubeletSource(node), "FailedCreatePodSandBox", "Failed to create pod sandbox: "+calicoUnauthorized(b.g.hex(64)))
		attempt += sandboxRetries[i%len(sandboxRetries)]
	}
	cid, img := b.g.containerID(), imageDigest(b.g, app.image)
	b.at(attempt, func(w *world, at time.Duration) {
		pod := w.pods[k]
		setPodCondition(pod, corev1.PodReadyToStartContainers, corev1.ConditionTrue, "", "", at)
		pod.Status.PodIP, pod.Status.PodIPs = podIP, []corev1.PodIP{{IP: podIP}}
	})
	run := attempt + 2*time.Second
	b.at(run, func(w *world, at time.Duration) { podRun(w.pods[k], cid, img, at) })
	b.ready(k, p, run)
}
