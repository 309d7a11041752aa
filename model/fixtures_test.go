package model

import (
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	extensionsv1beta1 "k8s.io/api/extensions/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"doomwatch/podrec"
)

// The labels a record keeps the pod's revision from (podrec.Record.Revision): the StatefulSet and
// DaemonSet controllers' revision hash and the DaemonSet controller's template generation.
const (
	revisionHashLabel       = appsv1.ControllerRevisionHashLabelKey
	templateGenerationLabel = extensionsv1beta1.DaemonSetTemplateGenerationKey
)

// t0 is the tests' clock origin; every test passes time explicitly.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// runtimeMsg is a transient exit-128 runtime message (no deterministic configuration error): runc
// could not set the swap limit because the node's kernel has no swap accounting, so every pod with a
// memory limit fails there. Verbatim from kubernetes/kubernetes#119403 (a pod status printed by the
// e2e framework; also a classify fixture). It names a pod UID in the systemd slice and a container
// ID in the scope, which normalizeMessage removes.
const runtimeMsg = "failed to create containerd task: failed to create shim task: OCI runtime create failed: " +
	"runc create failed: unable to start container process: error during container init: " +
	"error setting cgroup config for procHooks process: open /sys/fs/cgroup/memory/kubepods.slice/kubepods-burstable.slice/" +
	"kubepods-burstable-pode849e27b_8c98_4309_9b4c_64e0fde3a760.slice/" +
	"cri-containerd-ea2bc2acf887fdb627838cf2dd78ff46d1a9571176fbf969f00569bb2cd6c195.scope/" +
	"memory.memsw.limit_in_bytes: no such file or directory: unknown"

type podOpt func(*corev1.Pod)

// pod builds a running, ready pod with one container "app" on no node.
func pod(ns, name string, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: name, UID: types.UID(ns + "-" + name + "-uid"),
			CreationTimestamp: metav1.NewTime(t0.Add(-time.Hour)),
		},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:v1"}}},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning,
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "app", Ready: true, Image: "registry.example/app:v1",
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0.Add(-time.Hour))}},
			}},
		},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func onNode(n string) podOpt { return func(p *corev1.Pod) { p.Spec.NodeName = n } }

func uid(u string) podOpt { return func(p *corev1.Pod) { p.UID = types.UID(u) } }

func created(t time.Time) podOpt {
	return func(p *corev1.Pod) { p.CreationTimestamp = metav1.NewTime(t) }
}

func ownedBy(kind, name string) podOpt {
	return func(p *corev1.Pod) { p.OwnerReferences = []metav1.OwnerReference{controllerRef(kind, name)} }
}

func controllerRef(kind, name string) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{Kind: kind, Name: name, Controller: &yes, UID: types.UID(kind + "-" + name)}
}

func image(img string) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Image = img
		p.Status.ContainerStatuses[0].Image = img
	}
}

// app replaces the status of container "app".
func app(f func(cs *corev1.ContainerStatus)) podOpt {
	return func(p *corev1.Pod) {
		cs := &p.Status.ContainerStatuses[0]
		cs.Ready = false
		cs.State = corev1.ContainerState{}
		f(cs)
	}
}

func terminated128(at time.Time, msg string) *corev1.ContainerStateTerminated {
	return &corev1.ContainerStateTerminated{Reason: "StartError", ExitCode: 128, Message: msg,
		StartedAt: metav1.NewTime(time.Unix(0, 0)), FinishedAt: metav1.NewTime(at)}
}

// startFailed128: the container failed to start with exit 128 at `at` and waits to be recreated
// (transient, from lastState).
func startFailed128(at time.Time, restarts int32) podOpt {
	return app(func(cs *corev1.ContainerStatus) {
		cs.RestartCount = restarts
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
		cs.LastTerminationState.Terminated = terminated128(at, runtimeMsg)
	})
}

// startFailing128Now: the failure is still the current state (before the kubelet restarts it).
func startFailing128Now(at time.Time, restarts int32) podOpt {
	return app(func(cs *corev1.ContainerStatus) {
		cs.RestartCount = restarts
		cs.State.Terminated = terminated128(at, runtimeMsg)
	})
}

// recoveredAfter128: running and ready again, the 128 only in lastState (history, still evidence).
func recoveredAfter128(at time.Time, restarts int32) podOpt {
	return app(func(cs *corev1.ContainerStatus) {
		cs.Ready, cs.RestartCount = true, restarts
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(at.Add(time.Second))}
		cs.LastTerminationState.Terminated = terminated128(at, runtimeMsg)
	})
}

func waiting(reason, msg string) podOpt {
	return app(func(cs *corev1.ContainerStatus) {
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: reason, Message: msg}
	})
}

// imageNotFound: containerd 1.7's tag-not-found, its placeholders filled with the test image
// (containerd/containerd pkg/cri/server/image_pull.go, release/1.7: `failed to pull and unpack image
// %q: %w`, `failed to resolve reference %q: %w`, `%v: not found`; the same text for another image in
// substratusai/runbooks#42), carried by gRPC as NotFound and put in the waiting message by the
// kubelet (kubernetes/kubernetes pkg/kubelet/images/image_manager.go).
func imageNotFound() podOpt {
	return waiting("ErrImagePull", `rpc error: code = NotFound desc = failed to pull and unpack image "registry.example/app:v9": `+
		`failed to resolve reference "registry.example/app:v9": registry.example/app:v9: not found`)
}

// imageBackOff: the kubelet's back-off message without the previous pull error, as every kubelet
// before v1.30 writes it and v1.30+ does when it holds no previous error (kubernetes/kubernetes
// pkg/kubelet/images/image_manager.go EnsureImageExists: `Back-off pulling image %q`).
func imageBackOff() podOpt {
	return waiting("ImagePullBackOff", `Back-off pulling image "registry.example/app:v9"`)
}

// crashLoop: OOMKilled (containerd's oomExitReason, internal/cri/server/helpers.go), restarted at
// the kubelet's maximum back-off (kubernetes/kubernetes pkg/kubelet/kuberuntime/kuberuntime_manager.go
// doBackOff: `back-off %s restarting failed container=%s pod=%s`, the pod as name_namespace(uid),
// 5m0s the cap).
func crashLoop() podOpt {
	return func(p *corev1.Pod) {
		msg := fmt.Sprintf("back-off 5m0s restarting failed container=%s pod=%s_%s(%s)",
			p.Status.ContainerStatuses[0].Name, p.Name, p.Namespace, p.UID)
		app(func(cs *corev1.ContainerStatus) {
			cs.RestartCount = 5
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: msg}
			cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137}
		})(p)
	}
}

func node(name string, ready, cordoned bool) *corev1.Node {
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.NodeSpec{Unschedulable: cordoned},
		Status:     corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: st}}},
	}
}

func replicaSet(ns, name, deployment, revision string) *appsv1.ReplicaSet {
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("ReplicaSet-" + name)}}
	if deployment != "" {
		rs.OwnerReferences = []metav1.OwnerReference{controllerRef("Deployment", deployment)}
	}
	if revision != "" {
		rs.Annotations = map[string]string{RevisionAnnotation: revision}
	}
	return rs
}

type deployOpt func(*appsv1.Deployment)

// deployment builds a Deployment whose rollout kubectl would call complete.
func deployment(ns, name string, replicas int32, revision string, opts ...deployOpt) *appsv1.Deployment {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("Deployment-" + name),
			Generation: 2, Annotations: map[string]string{RevisionAnnotation: revision}},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: replicas, UpdatedReplicas: replicas,
			ReadyReplicas: replicas, AvailableReplicas: replicas},
	}
	for _, o := range opts {
		o(d)
	}
	return d
}

func apply(m *Model, now time.Time, pods ...*corev1.Pod) {
	m.Apply(&Batch{Pods: records(pods...)}, now)
}

// records makes the pods' records, as kube's transform does.
func records(pods ...*corev1.Pod) []*podrec.Record {
	out := make([]*podrec.Record, len(pods))
	for i, p := range pods {
		out[i] = podrec.RecordOf(p)
	}
	return out
}

// withUID gives a Node object its UID, as the API server does; node() leaves it empty, like a
// hand-made object.
func withUID(n *corev1.Node, uid string) *corev1.Node {
	n.UID = types.UID(uid)
	return n
}

// CRI-O reports runtime start failures as waiting create errors. Both messages are verbatim from
// classify/testdata: crioRuntimeMsg (rt-crio-runc-ns-lstat-enoent.yaml, opencontainers/runc#4111)
// is node trouble, create-error-transient; crioExecMsg (rt-crio-runc-exec-not-found.yaml,
// opencontainers/runc#4713) is a missing executable, create-error (doomed).
const (
	crioRuntimeMsg = `container create failed: container_linux.go:338: creating new parent process caused "container_linux.go:1897: running lstat on namespace path \"/proc/63538/ns/ipc\" caused \"lstat /proc/63538/ns/ipc: no such file or directory\""`
	crioExecMsg    = `container create failed: runc create failed: unable to start container process: exec: "/cluster/kube-apiserver-operator": executable file not found in $PATH`
)

// createError: container "app" waits in CreateContainerError with msg, as CRI-O reports it.
func createError(msg string) podOpt { return waiting("CreateContainerError", msg) }
