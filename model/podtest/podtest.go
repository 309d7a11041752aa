// Package podtest builds the pods, nodes and workloads the tests of model, podrec and report
// judge: a running pod and the states a kubelet writes, each runtime message verbatim from the
// source it cites. It is imported only by tests.
package podtest

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// revisionAnnotation is the Deployment controller's revision annotation (kubernetes
// pkg/controller/deployment/util/deployment_util.go, RevisionAnnotation; contract.RevisionAnnotation),
// written out: the model's own tests import this package.
const revisionAnnotation = "deployment.kubernetes.io/revision"

// T0 is the tests' clock origin; every test passes time explicitly.
var T0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// RuntimeMsg is a transient exit-128 runtime message (no deterministic configuration error): runc
// could not set the swap limit because the node's kernel has no swap accounting, so every pod with a
// memory limit fails there. Verbatim from kubernetes/kubernetes#119403 (a pod status printed by the
// e2e framework; also a classify fixture). It names a pod UID in the systemd slice and a container
// ID in the scope, which the model's normalizeMessage removes.
const RuntimeMsg = "failed to create containerd task: failed to create shim task: OCI runtime create failed: " +
	"runc create failed: unable to start container process: error during container init: " +
	"error setting cgroup config for procHooks process: open /sys/fs/cgroup/memory/kubepods.slice/kubepods-burstable.slice/" +
	"kubepods-burstable-pode849e27b_8c98_4309_9b4c_64e0fde3a760.slice/" +
	"cri-containerd-ea2bc2acf887fdb627838cf2dd78ff46d1a9571176fbf969f00569bb2cd6c195.scope/" +
	"memory.memsw.limit_in_bytes: no such file or directory: unknown"

// PodOpt changes a pod Pod builds.
type PodOpt func(*corev1.Pod)

// Pod builds a running, ready pod with one container "app" on no node.
func Pod(ns, name string, opts ...PodOpt) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: name, UID: types.UID(ns + "-" + name + "-uid"),
			CreationTimestamp: metav1.NewTime(T0.Add(-time.Hour)),
		},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/App:v1"}}},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning,
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "app", Ready: true, Image: "registry.example/App:v1",
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(T0.Add(-time.Hour))}},
			}},
		},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func OnNode(n string) PodOpt { return func(p *corev1.Pod) { p.Spec.NodeName = n } }

func OwnedBy(kind, name string) PodOpt {
	return func(p *corev1.Pod) { p.OwnerReferences = []metav1.OwnerReference{ControllerRef(kind, name)} }
}

func ControllerRef(kind, name string) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{Kind: kind, Name: name, Controller: &yes, UID: types.UID(kind + "-" + name)}
}

// App replaces the status of container "app".
func App(f func(cs *corev1.ContainerStatus)) PodOpt {
	return func(p *corev1.Pod) {
		cs := &p.Status.ContainerStatuses[0]
		cs.Ready = false
		cs.State = corev1.ContainerState{}
		f(cs)
	}
}

func Terminated128(at time.Time, msg string) *corev1.ContainerStateTerminated {
	return &corev1.ContainerStateTerminated{Reason: "StartError", ExitCode: 128, Message: msg,
		StartedAt: metav1.NewTime(time.Unix(0, 0)), FinishedAt: metav1.NewTime(at)}
}

// StartFailed128: the container failed to start with exit 128 at `at` and waits to be recreated
// (transient, from lastState).
func StartFailed128(at time.Time, restarts int32) PodOpt {
	return App(func(cs *corev1.ContainerStatus) {
		cs.RestartCount = restarts
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
		cs.LastTerminationState.Terminated = Terminated128(at, RuntimeMsg)
	})
}

// RecoveredAfter128: running and ready again, the 128 only in lastState (history, still evidence).
func RecoveredAfter128(at time.Time, restarts int32) PodOpt {
	return App(func(cs *corev1.ContainerStatus) {
		cs.Ready, cs.RestartCount = true, restarts
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(at.Add(time.Second))}
		cs.LastTerminationState.Terminated = Terminated128(at, RuntimeMsg)
	})
}

func Waiting(reason, msg string) PodOpt {
	return App(func(cs *corev1.ContainerStatus) {
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: reason, Message: msg}
	})
}

func Node(name string, ready, cordoned bool) *corev1.Node {
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

// ReplicaSet builds a ReplicaSet of the Deployment deployment ("" for none) at revision.
func ReplicaSet(ns, name, deployment, revision string) *appsv1.ReplicaSet {
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("ReplicaSet-" + name)}}
	if deployment != "" {
		rs.OwnerReferences = []metav1.OwnerReference{ControllerRef("Deployment", deployment)}
	}
	if revision != "" {
		rs.Annotations = map[string]string{revisionAnnotation: revision}
	}
	return rs
}

// DeployOpt changes a Deployment Deployment builds.
type DeployOpt func(*appsv1.Deployment)

// Deployment builds a Deployment whose rollout kubectl would call complete.
func Deployment(ns, name string, replicas int32, revision string, opts ...DeployOpt) *appsv1.Deployment {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("Deployment-" + name),
			Generation: 2, Annotations: map[string]string{revisionAnnotation: revision}},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: replicas, UpdatedReplicas: replicas,
			ReadyReplicas: replicas, AvailableReplicas: replicas},
	}
	for _, o := range opts {
		o(d)
	}
	return d
}

// WithUID gives a Node object its UID, as the API server does; Node leaves it empty, like a
// hand-made object.
func WithUID(n *corev1.Node, uid string) *corev1.Node {
	n.UID = types.UID(uid)
	return n
}

// CrioRuntimeMsg is how CRI-O reports a runtime start failure, as a waiting create error: node
// trouble (create-error-transient). Verbatim from classify/testdata/rt-crio-runc-ns-lstat-enoent.yaml
// (opencontainers/runc#4111).
const CrioRuntimeMsg = `container create failed: container_linux.go:338: creating new parent process caused "container_linux.go:1897: running lstat on namespace path \"/proc/63538/ns/ipc\" caused \"lstat /proc/63538/ns/ipc: no such file or directory\""`

// CreateError: container "app" waits in CreateContainerError with msg, as CRI-O reports it.
func CreateError(msg string) PodOpt { return Waiting("CreateContainerError", msg) }
