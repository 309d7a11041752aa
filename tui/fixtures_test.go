package tui

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"doomwatch/contract"
	"doomwatch/model"
	"doomwatch/podrec"
)

// t0 is the fixtures' "now".
var t0 = time.Date(2026, time.January, 15, 10, 10, 0, 0, time.UTC)

func ago(d time.Duration) metav1.Time { return metav1.NewTime(t0.Add(-d)) }

func ptr[T any](v T) *T { return &v }

// runtime128 is a containerd StartError 128 that is the node's fault, not the image's (Krane's
// exit-128 rule calls it transient): runc could not freeze the cgroup. Verbatim from
// kubernetes/kubernetes#131087 (fixture rt-containerd-procHooks-unable-to-freeze).
const runtime128 = `failed to create containerd task: failed to create shim task: OCI runtime create failed: ` +
	`runc create failed: unable to start container process: error during container init: ` +
	`error setting cgroup config for procHooks process: unable to freeze: unknown`

// config128 is a containerd StartError 128 that no retry fixes: the entrypoint does not exist.
// Verbatim from aws/eks-pod-identity-agent#75 (fixture rt-containerd-runc12-exec-stat-enoent).
const config128 = `failed to create containerd task: failed to create shim task: OCI runtime create failed: ` +
	`runc create failed: unable to start container process: error during container init: exec: "/go-runner": stat ` +
	`/go-runner: no such file or directory: unknown`

// pullNotFound is containerd 1.7's ErrImagePull for a tag that does not exist, as its CRI plugin
// formats it (`failed to pull and unpack image %q: failed to resolve reference %q: %s: not found`,
// the text of substratusai/runbooks#42 and fixture pull-containerd17-not-found) for ref.
func pullNotFound(ref string) string {
	return fmt.Sprintf(`rpc error: code = NotFound desc = failed to pull and unpack image %q: failed to resolve reference %q: %s: not found`,
		ref, ref, ref)
}

// backOff is the kubelet's CrashLoopBackOff message (pkg/kubelet/kuberuntime/kuberuntime_manager.go
// doBackOff, v1.37: `back-off %s restarting failed container=%s pod=%s`, the pod as
// name_namespace(uid)) for a pod built by mkPod. The delay doubles from 10s per restart.
func backOff(delay, container, ns, pod string) string {
	return fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(uid-%s-%s)", delay, container, pod, ns, ns, pod)
}

type podSpec struct {
	ns, name, node, rs string
	created            time.Duration
	phase              corev1.PodPhase
	init               []corev1.Container
	initStatus         []corev1.ContainerStatus
	status             []corev1.ContainerStatus
	conds              []corev1.PodCondition
}

func mkPod(s podSpec) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: s.ns, Name: s.name, UID: types.UID("uid-" + s.ns + "-" + s.name),
			CreationTimestamp: ago(s.created),
		},
		Spec: corev1.PodSpec{NodeName: s.node, InitContainers: s.init},
		Status: corev1.PodStatus{Phase: s.phase, InitContainerStatuses: s.initStatus,
			ContainerStatuses: s.status, Conditions: s.conds},
	}
	if p.Status.Phase == "" {
		p.Status.Phase = corev1.PodRunning
	}
	if s.rs != "" {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet",
			Name: s.rs, UID: types.UID("uid-rs-" + s.rs), Controller: ptr(true)}}
	}
	for _, c := range s.status {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: c.Name, Image: c.Image})
	}
	return p
}

func running(name, image string, restarts int32, last *corev1.ContainerStateTerminated) corev1.ContainerStatus {
	cs := corev1.ContainerStatus{Name: name, Image: image, Ready: true, Started: ptr(true),
		RestartCount: restarts, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: ago(3 * time.Minute)}}}
	if last != nil {
		cs.LastTerminationState.Terminated = last
	}
	return cs
}

func waiting(name, image, reason, msg string, restarts int32, last *corev1.ContainerStateTerminated) corev1.ContainerStatus {
	cs := corev1.ContainerStatus{Name: name, Image: image, RestartCount: restarts,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}}
	if last != nil {
		cs.LastTerminationState.Terminated = last
	}
	return cs
}

func terminated(reason, msg string, code int32, finished time.Duration) *corev1.ContainerStateTerminated {
	return &corev1.ContainerStateTerminated{Reason: reason, Message: msg, ExitCode: code,
		StartedAt: ago(finished + time.Second), FinishedAt: ago(finished),
		ContainerID: fmt.Sprintf("containerd://%x", finished)}
}

func readyConds(ready bool) []corev1.PodCondition {
	st := corev1.ConditionTrue
	if !ready {
		st = corev1.ConditionFalse
	}
	return []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: ago(9 * time.Minute)},
		{Type: corev1.PodReady, Status: st, LastTransitionTime: ago(2 * time.Minute)},
	}
}

func deployment(name string, replicas, updated, ready int32) (*appsv1.Deployment, *appsv1.ReplicaSet) {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID("uid-dep-" + name),
			Generation: 2, CreationTimestamp: ago(time.Hour),
			Annotations: map[string]string{"deployment.kubernetes.io/revision": "2"}},
		Spec: appsv1.DeploymentSpec{Replicas: ptr(replicas)},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: replicas, UpdatedReplicas: updated,
			ReadyReplicas: ready, AvailableReplicas: ready},
	}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name + "-7d9f8b6c5", UID: types.UID("uid-rs-" + name + "-7d9f8b6c5"),
			Annotations: map[string]string{"deployment.kubernetes.io/revision": "2"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: name,
				UID: d.UID, Controller: ptr(true)}}},
		Spec:   appsv1.ReplicaSetSpec{Replicas: ptr(replicas)},
		Status: appsv1.ReplicaSetStatus{Replicas: replicas, ReadyReplicas: ready, AvailableReplicas: ready},
	}
	return d, rs
}

// fixtureBatch is a small incident: node-3 fails container starts with exit 128 (suspect),
// payments rolls out an image that does not exist, search is OOM-crash-looping, and one api pod
// cannot start because its entrypoint is missing (doomed, lastState StartError 128).
func fixtureBatch() contract.Batch {
	var b contract.Batch
	for i := 1; i <= 5; i++ {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%d", i), UID: types.UID(fmt.Sprintf("uid-node-%d", i))},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
		if i == 4 {
			n.Spec.Unschedulable = true
		}
		b.Nodes = append(b.Nodes, n)
	}
	for _, d := range []struct {
		name                     string
		replicas, updated, ready int32
	}{{"checkout", 12, 12, 8}, {"payments", 3, 3, 0}, {"search", 2, 2, 0}, {"api", 1, 1, 0}} {
		dep, rs := deployment(d.name, d.replicas, d.updated, d.ready)
		b.Workloads = append(b.Workloads, contract.Workloads(dep, rs)...)
	}
	healthyNodes := []string{"node-1", "node-2", "node-4", "node-5"}
	for i := range 8 {
		b.Pods = appendPods(b.Pods, mkPod(podSpec{ns: "shop", name: fmt.Sprintf("checkout-7d9f8b6c5-h%02d", i),
			node: healthyNodes[i%4], rs: "checkout-7d9f8b6c5", created: 6 * time.Minute,
			status: []corev1.ContainerStatus{running("checkout", "registry.example.com/checkout:v2", 0, nil)},
			conds:  readyConds(true)}))
	}
	// node-3's pods: two are between a failed start and the kubelet's retry (state terminated
	// StartError 128: transient), two have recovered (running, lastState 128).
	for i := range 4 {
		cs := corev1.ContainerStatus{Name: "checkout", Image: "registry.example.com/checkout:v2", RestartCount: 1,
			State: corev1.ContainerState{Terminated: terminated("StartError", runtime128, 128, time.Duration(i+1)*time.Minute)}}
		if i >= 2 {
			cs = running("checkout", "registry.example.com/checkout:v2", 1,
				terminated("StartError", runtime128, 128, time.Duration(i+1)*time.Minute))
		}
		b.Pods = appendPods(b.Pods, mkPod(podSpec{ns: "shop", name: fmt.Sprintf("checkout-7d9f8b6c5-f%02d", i),
			node: "node-3", rs: "checkout-7d9f8b6c5", created: 6 * time.Minute,
			status: []corev1.ContainerStatus{cs}, conds: readyConds(i >= 2)}))
	}
	for i := range 3 {
		b.Pods = appendPods(b.Pods, mkPod(podSpec{ns: "shop", name: fmt.Sprintf("payments-7d9f8b6c5-p%02d", i),
			node: healthyNodes[i], rs: "payments-7d9f8b6c5", created: 4 * time.Minute,
			status: []corev1.ContainerStatus{waiting("payments", "registry.example.com/payments:v2.1.0-typo", "ErrImagePull",
				pullNotFound("registry.example.com/payments:v2.1.0-typo"), 0, nil)},
			conds: readyConds(false)}))
	}
	for i := range 2 {
		b.Pods = appendPods(b.Pods, mkPod(podSpec{ns: "shop", name: fmt.Sprintf("search-7d9f8b6c5-s%02d", i),
			node: healthyNodes[i+2], rs: "search-7d9f8b6c5", created: 8 * time.Minute,
			status: []corev1.ContainerStatus{waiting("search", "registry.example.com/search:v7", "CrashLoopBackOff",
				backOff("2m40s", "search", "shop", fmt.Sprintf("search-7d9f8b6c5-s%02d", i)), 5, terminated("OOMKilled", "", 137, 90*time.Second))},
			conds: readyConds(false)}))
	}
	b.Pods = appendPods(b.Pods, doomedAPIPod())
	b.Pods = appendPods(b.Pods, mkPod(podSpec{ns: "batch", name: "report-29437-xq7zt", node: "node-5", created: 9 * time.Minute,
		phase: corev1.PodSucceeded,
		status: []corev1.ContainerStatus{{Name: "report", Image: "registry.example.com/report:v1",
			State: corev1.ContainerState{Terminated: terminated("Completed", "", 0, 7*time.Minute)}}}}))
	b.Health = &contract.Health{Synced: true, PodsSeen: len(b.Pods), LastEvent: t0.Add(-time.Second)}
	return b
}

// doomedAPIPod is the detail golden's subject: an init container that completed, a native
// sidecar that runs, and a main container in CrashLoopBackOff whose last state is containerd's
// StartError exit 128 with a missing entrypoint.
func doomedAPIPod() *corev1.Pod {
	p := mkPod(podSpec{ns: "shop", name: "api-7d9f8b6c5-xk2lq", node: "node-2", rs: "api-7d9f8b6c5", created: 7 * time.Minute,
		init: []corev1.Container{{Name: "migrate", Image: "registry.example.com/api-migrate:v3"},
			{Name: "proxy", Image: "registry.example.com/proxy:v1", RestartPolicy: ptr(corev1.ContainerRestartPolicyAlways)}},
		initStatus: []corev1.ContainerStatus{
			{Name: "migrate", Image: "registry.example.com/api-migrate:v3", State: corev1.ContainerState{
				Terminated: terminated("Completed", "", 0, 6*time.Minute)}},
			running("proxy", "registry.example.com/proxy:v1", 0, nil)},
		status: []corev1.ContainerStatus{waiting("api", "registry.example.com/api:v3", "CrashLoopBackOff",
			backOff("40s", "api", "shop", "api-7d9f8b6c5-xk2lq"), 3,
			terminated("StartError", config128, 128, 50*time.Second))},
		conds: readyConds(false)})
	return p
}

// fixtureModel is the model after the fixture batch at t0.
func fixtureModel() *model.Model {
	m := model.New(model.DefaultConfig())
	b := fixtureBatch()
	m.Apply(&b, t0)
	return m
}

// fixturePod is the fixture batch's pod named key (namespace/name), rebuilt from its record: a
// test changes it and applies it again.
func fixturePod(t *testing.T, key string) *corev1.Pod {
	t.Helper()
	for _, r := range fixtureBatch().Pods {
		if r.GetNamespace()+"/"+r.GetName() == key {
			return r.Pod()
		}
	}
	t.Fatalf("no pod %s in the fixture batch", key)
	return nil
}

// appendPods appends the pods' records, as kube's transform makes them, to dst.
func appendPods(dst []*podrec.Record, pods ...*corev1.Pod) []*podrec.Record {
	for _, p := range pods {
		dst = append(dst, podrec.RecordOf(p))
	}
	return dst
}

// The events fixture's messages, each verbatim from its source or formatted as the upstream code
// formats it with only the placeholders filled in.
const (
	// gcDeadline is the kubelet's ContainerGCFailed event: err.Error() of the container garbage
	// collection (kubernetes/kubernetes pkg/kubelet/kubelet.go StartGarbageCollection), the
	// runtime's gRPC deadline, verbatim from the kubelet log in rancher/rancher#21178 (as the
	// demo's node-3 posts it, kube/demo/scenario.go containerGCFailures).
	gcDeadline = "rpc error: code = DeadlineExceeded desc = context deadline exceeded"
	// imageGCShort is the kubelet's FreeDiskSpaceFailed event, and the error its ImageGCFailed
	// event carries (kubernetes/kubernetes pkg/kubelet/images/image_gc_manager.go GarbageCollect:
	// "Failed to garbage collect required amount of images. Attempted to free %d bytes, but only
	// found %d bytes eligible to free."), verbatim from a k3s server node's `kubectl get events`
	// in Frodo-Web/frodo-tips devops/k3s.md.
	imageGCShort = "Failed to garbage collect required amount of images. Attempted to free 388231987 bytes, but only found 0 bytes eligible to free."
	// configMapMissing is the kubelet's FailedMount event for a configmap volume whose configmap
	// does not exist, verbatim from cuishuaigit/k8s-monitor#2 (classify fixture
	// ev-volume-configmap-not-found).
	configMapMissing = `MountVolume.SetUp failed for volume "config-volume" : configmap "grafana-import-dashboards" not found`
)

// attrNode sets what node-i's kubelet reports of itself and its labels as on an EKS managed node
// group (the demo's nodes, kube/demo/objects.go newNode): node-3 is the one node the containerd
// upgrade reached, two nodes share each zone.
func attrNode(n *corev1.Node, i int) {
	runtime := "containerd://2.1.4"
	if i == 3 {
		runtime = "containerd://2.2.0"
	}
	zone := fmt.Sprintf("eu-west-1%c", 'a'+rune((i-1)/2))
	n.Labels = map[string]string{"node.kubernetes.io/instance-type": "m6i.2xlarge",
		"topology.kubernetes.io/zone": zone, "topology.kubernetes.io/region": "eu-west-1",
		"eks.amazonaws.com/nodegroup": "general"}
	n.Status.NodeInfo = corev1.NodeSystemInfo{KernelVersion: "6.8.0-1031-aws", OSImage: "Ubuntu 24.04.3 LTS",
		ContainerRuntimeVersion: runtime, KubeletVersion: "v1.37.2"}
}

// eventSeq keeps the names of events made at the same instant apart (warningEvent).
var eventSeq int64

// warningEvent is a Warning event about obj (a pod, or a node when ns is "") as the kubelet's
// legacy recorder posts it (client-go tools/record/event.go makeEvent): named after the object and
// the time it was made, in the object's namespace or "default", count times from first to last.
func warningEvent(ns, obj, uid, node, reason, msg string, count int32, first, last time.Duration) *corev1.Event {
	kind, evNS := "Pod", ns
	if ns == "" {
		kind, evNS = "Node", "default"
	}
	// One nanosecond apart for events made at the same instant, as a real clock would be.
	eventSeq++
	return &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: evNS, Name: fmt.Sprintf("%s.%x", obj, t0.Add(-first).UnixNano()+eventSeq)},
		InvolvedObject: corev1.ObjectReference{Kind: kind, Namespace: ns, Name: obj, UID: types.UID(uid)},
		Reason:         reason, Message: msg, Count: count, Type: corev1.EventTypeWarning,
		FirstTimestamp: ago(first), LastTimestamp: ago(last),
		Source: corev1.EventSource{Component: "kubelet", Host: node},
	}
}

// eventsPod is the events golden's subject: shop/web-5c9d7f6b8-m2x4k cannot mount its
// configmap volume (the configmap does not exist) and waits in ContainerCreating.
func eventsPod() *corev1.Pod {
	return mkPod(podSpec{ns: "shop", name: "web-5c9d7f6b8-m2x4k", node: "node-1", created: 9 * time.Minute,
		status: []corev1.ContainerStatus{waiting("web", "registry.example.com/shop/web:v42", "ContainerCreating", "", 0, nil)},
		conds:  readyConds(false)})
}

// eventsBatch is fixtureBatch with what the nodes report of themselves (attrNode), node-2 under
// disk pressure and failing to collect images, node-3 failing container garbage collection, the
// doomed api pod's kubelet events and eventsPod with its FailedMount events.
func eventsBatch() contract.Batch {
	b := fixtureBatch()
	for i, n := range b.Nodes {
		attrNode(n, i+1)
	}
	// kubernetes/kubernetes pkg/kubelet/nodestatus/setters.go DiskPressureCondition.
	b.Nodes[1].Status.Conditions = append(b.Nodes[1].Status.Conditions, corev1.NodeCondition{Type: corev1.NodeDiskPressure,
		Status: corev1.ConditionTrue, Reason: "KubeletHasDiskPressure", Message: "kubelet has disk pressure"})
	web := eventsPod()
	b.Pods = appendPods(b.Pods, web)
	api := "api-7d9f8b6c5-xk2lq"
	b.Events = []*corev1.Event{
		warningEvent("", "node-3", "node-3", "node-3", "ContainerGCFailed", gcDeadline, 5, 5*time.Minute, 40*time.Second),
		warningEvent("", "node-2", "node-2", "node-2", "FreeDiskSpaceFailed", imageGCShort, 3, 4*time.Minute, 2*time.Minute),
		warningEvent("", "node-2", "node-2", "node-2", "ImageGCFailed", imageGCShort, 3, 4*time.Minute, 2*time.Minute),
		// The kubelet's event for the failed start, "Error: %v" of the runtime's message
		// (kubernetes/kubernetes pkg/kubelet/kuberuntime/kuberuntime_container.go startContainer),
		// and its event while it backs off, "Back-off restarting failed container %s in pod %s"
		// with format.Pod's name_namespace(uid) (kuberuntime_manager.go doBackOff).
		warningEvent("shop", api, "uid-shop-"+api, "node-2", "Failed", "Error: "+config128, 4, 6*time.Minute, 50*time.Second),
		warningEvent("shop", api, "uid-shop-"+api, "node-2", "BackOff",
			fmt.Sprintf("Back-off restarting failed container api in pod %s_shop(uid-shop-%s)", api, api), 3, 5*time.Minute, 30*time.Second),
		warningEvent("shop", web.Name, string(web.UID), "node-1", "FailedMount", configMapMissing, 12, 8*time.Minute, 20*time.Second),
	}
	return b
}

// eventsModel is the model after the events batch at t0.
func eventsModel() *model.Model {
	m := model.New(model.DefaultConfig())
	b := eventsBatch()
	m.Apply(&b, t0)
	return m
}
