package report

// The model's own fixtures (model/fixtures_test.go), as few as the documents' tests need: a test
// package cannot import another's test files.

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"doomwatch/model"
	"doomwatch/podrec"
)

// t0 is the tests' clock origin; every test passes time explicitly.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// runtimeMsg is a transient exit-128 runtime message (no deterministic configuration error): runc
// could not set the swap limit because the node's kernel has no swap accounting, so every pod with a
// memory limit fails there. Verbatim from kubernetes/kubernetes#119403 (a pod status printed by the
// e2e framework; also a classify fixture). It names a pod UID in the systemd slice and a container
// ID in the scope, which the model's normalizeMessage removes.
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

func ownedBy(kind, name string) podOpt {
	return func(p *corev1.Pod) { p.OwnerReferences = []metav1.OwnerReference{controllerRef(kind, name)} }
}

func controllerRef(kind, name string) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{Kind: kind, Name: name, Controller: &yes, UID: types.UID(kind + "-" + name)}
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
		rs.Annotations = map[string]string{model.RevisionAnnotation: revision}
	}
	return rs
}

type deployOpt func(*appsv1.Deployment)

// deployment builds a Deployment whose rollout kubectl would call complete.
func deployment(ns, name string, replicas int32, revision string, opts ...deployOpt) *appsv1.Deployment {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("Deployment-" + name),
			Generation: 2, Annotations: map[string]string{model.RevisionAnnotation: revision}},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: replicas, UpdatedReplicas: replicas,
			ReadyReplicas: replicas, AvailableReplicas: replicas},
	}
	for _, o := range opts {
		o(d)
	}
	return d
}

// withUID gives a Node object its UID, as the API server does; node() leaves it empty, like a
// hand-made object.
func withUID(n *corev1.Node, uid string) *corev1.Node {
	n.UID = types.UID(uid)
	return n
}

// crioRuntimeMsg is how CRI-O reports a runtime start failure, as a waiting create error: node
// trouble (create-error-transient). Verbatim from classify/testdata/rt-crio-runc-ns-lstat-enoent.yaml
// (opencontainers/runc#4111).
const crioRuntimeMsg = `container create failed: container_linux.go:338: creating new parent process caused "container_linux.go:1897: running lstat on namespace path \"/proc/63538/ns/ipc\" caused \"lstat /proc/63538/ns/ipc: no such file or directory\""`

// createError: container "app" waits in CreateContainerError with msg, as CRI-O reports it.
func createError(msg string) podOpt { return waiting("CreateContainerError", msg) }

func apply(m *model.Model, now time.Time, pods ...*corev1.Pod) {
	recs := make([]*podrec.Record, len(pods))
	for i, p := range pods {
		recs[i] = podrec.RecordOf(p)
	}
	m.Apply(&model.Batch{Pods: recs}, now)
}
