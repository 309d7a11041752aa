// Package scaletest builds large, realistic clusters for the model's and the dashboard's
// benchmarks: the objects are what kube/'s informer transform keeps of a real pod (two containers
// with probes, five conditions, IPs, container and image IDs), each string allocated per object as
// the informer's decoder allocates it, so memory figures include what the informer really holds.
// It is imported only by tests.
package scaletest

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"doomwatch/contract"
	"doomwatch/model"
	"doomwatch/podrec"
)

// T0 is the clusters' "now".
var T0 = time.Date(2026, time.January, 15, 10, 10, 0, 0, time.UTC)

// The shape of a cluster: Deployments of PodsPerDeployment pods, PodsPerNamespace pods to a
// namespace, spread round-robin over Nodes nodes (BENCHMARKS.md's setup: 100 nodes, churn on the 10,000
// pods of one namespace).
const (
	PodsPerDeployment = 100
	PodsPerNamespace  = 10_000
	Nodes             = 100
)

// runtime128 is a transient exit-128 runtime message, verbatim from kubernetes/kubernetes#131087
// (classify fixture rt-containerd-procHooks-unable-to-freeze).
const runtime128 = `failed to create containerd task: failed to create shim task: OCI runtime create failed: ` +
	`runc create failed: unable to start container process: error during container init: ` +
	`error setting cgroup config for procHooks process: unable to freeze: unknown`

// fresh copies s, as a decoder allocates every string of every object it decodes.
func fresh(s string) string { return strings.Clone(s) }

func namespace(i int) string  { return fmt.Sprintf("team-%02d", i/PodsPerNamespace) }
func deployment(i int) string { return fmt.Sprintf("svc-%04d", i/PodsPerDeployment) }
func replicaSet(i int) string { return deployment(i) + "-7d9f8c6b5" }

// DeploymentOf is pod i's Deployment: its namespace and name.
func DeploymentOf(i int) (ns, name string) { return namespace(i), deployment(i) }

// NodeName is the node pod i runs on.
func NodeName(i int) string {
	return fmt.Sprintf("ip-10-0-%d-%d.ec2.internal", i%Nodes/250, i%Nodes%250)
}

// PodName is pod i's namespace and name.
func PodName(i int) (ns, name string) {
	return namespace(i), fmt.Sprintf("%s-%05x", replicaSet(i), i)
}

// State is what a pod's containers are doing.
type State int

// The states Pod builds.
const (
	Running        State = iota // both containers running and ready
	CrashLooping                // the app container is in CrashLoopBackOff after an error exit
	StartFailed128              // the app container failed to start with exit 128 (transient)
	Pulling                     // the app container waits on an image pull back-off
)

// StateOf is pod i's state at update number version. At version 0 (the initial load) most pods
// run and a few crash-loop, wait on a pull or fail to start. Every update after that changes the
// pod's verdict, the most expensive kind of update for the views: odd versions crash-loop, even
// ones run again, except on three nodes, where they fail to start with exit 128 (a bad node).
func StateOf(i, version int) State {
	bad := i%Nodes < 3
	switch {
	case version == 0 && i%97 == 0:
		return CrashLooping
	case version == 0 && i%89 == 0:
		return Pulling
	case version == 0 && i%83 == 0 && bad:
		return StartFailed128
	case version == 0:
		return Running
	case version%2 == 1:
		return CrashLooping
	case bad:
		return StartFailed128
	}
	return Running
}

// Pod builds pod i at update number version, as kube/'s transform leaves it.
func Pod(i, version int) *corev1.Pod {
	ns, name := PodName(i)
	created := T0.Add(-time.Duration(i%86400) * time.Second)
	started := metav1.NewTime(created.Add(4 * time.Second))
	yes := true
	probe := &corev1.Probe{
		ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Path: fresh("/healthz"), Port: intstr.FromInt32(8080), Scheme: corev1.URISchemeHTTP}},
		PeriodSeconds: 10, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3,
	}
	appImage := fmt.Sprintf("registry.example.com/team/%s:v1.%d.0", deployment(i), i/PodsPerDeployment%7)
	sidecarImage := fresh("registry.example.com/platform/envoy:v1.31.2")
	ip := fmt.Sprintf("10.%d.%d.%d", 64+i>>16&63, i>>8&255, i&255)
	hostIP := fmt.Sprintf("10.0.%d.%d", i%Nodes/250, i%Nodes%250)
	cond := func(t corev1.PodConditionType, ok bool) corev1.PodCondition {
		s := corev1.ConditionTrue
		if !ok {
			s = corev1.ConditionFalse
		}
		return corev1.PodCondition{Type: t, Status: s, ObservedGeneration: 1, LastTransitionTime: started}
	}
	state := StateOf(i, version)
	ready := state == Running
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: fresh(ns), UID: types.UID(fmt.Sprintf("0b9a6c8e-%04x-4c1d-9e2f-%012x", i&0xffff, i)),
			ResourceVersion: fmt.Sprint(1_000_000 + i*7 + version), Generation: 1,
			CreationTimestamp: metav1.NewTime(created),
			Labels: map[string]string{fresh("app.kubernetes.io/name"): deployment(i),
				fresh("pod-template-hash"): fresh("7d9f8c6b5")},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: fresh("apps/v1"), Kind: fresh("ReplicaSet"),
				Name: replicaSet(i), UID: types.UID(fmt.Sprintf("5e1f2a3b-%04x-4d5e-8f90-%012x", i/PodsPerDeployment, i/PodsPerDeployment)),
				Controller: &yes, BlockOwnerDeletion: &yes}},
		},
		Spec: corev1.PodSpec{
			NodeName: NodeName(i),
			Containers: []corev1.Container{
				{Name: fresh("app"), Image: appImage, ReadinessProbe: probe},
				{Name: fresh("envoy"), Image: sidecarImage, ReadinessProbe: probe},
			},
			RestartPolicy: corev1.RestartPolicyAlways,
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{
				cond(corev1.PodReadyToStartContainers, true), cond(corev1.PodInitialized, true),
				cond(corev1.PodReady, ready), cond(corev1.ContainersReady, ready), cond(corev1.PodScheduled, true),
			},
			HostIP: hostIP, HostIPs: []corev1.HostIP{{IP: fresh(hostIP)}},
			PodIP: ip, PodIPs: []corev1.PodIP{{IP: fresh(ip)}},
			StartTime: &started, QOSClass: corev1.PodQOSBurstable,
			ContainerStatuses: []corev1.ContainerStatus{
				containerStatus("app", appImage, i, version, started, state),
				containerStatus("envoy", sidecarImage, i, 0, started, Running),
			},
		},
	}
	return p
}

func containerStatus(name, image string, i, version int, started metav1.Time, state State) corev1.ContainerStatus {
	yes, no := true, false
	cs := corev1.ContainerStatus{
		Name: fresh(name), Image: fresh(image),
		ImageID:     fmt.Sprintf("%s@sha256:%064x", image[:strings.LastIndexByte(image, ':')], i/PodsPerDeployment),
		ContainerID: fmt.Sprintf("containerd://%032x%032x", i, version),
		Ready:       true, Started: &yes, RestartCount: int32(version / 97),
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}},
	}
	finished := metav1.NewTime(T0.Add(-time.Duration(version%60) * time.Second))
	switch state {
	case CrashLooping:
		cs.Ready, cs.Started, cs.RestartCount = false, &no, cs.RestartCount+4
		cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: fresh("CrashLoopBackOff"),
			Message: fmt.Sprintf("back-off 1m20s restarting failed container=%s pod=%s_%s(0b9a6c8e-%04x-4c1d-9e2f-%012x)",
				name, replicaSet(i), namespace(i), i&0xffff, i)}}
		cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1, Reason: fresh("Error"),
			StartedAt: started, FinishedAt: finished, ContainerID: cs.ContainerID}
	case StartFailed128:
		cs.Ready, cs.Started, cs.RestartCount = false, &no, cs.RestartCount+1
		cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: fresh("ContainerCreating")}}
		cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 128, Reason: fresh("StartError"),
			Message: fresh(runtime128), StartedAt: metav1.NewTime(time.Unix(0, 0)), FinishedAt: finished,
			ContainerID: cs.ContainerID}
	case Pulling:
		cs.Ready, cs.Started, cs.ImageID, cs.ContainerID = false, &no, "", ""
		cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: fresh("ImagePullBackOff"),
			Message: fmt.Sprintf("Back-off pulling image %q", image)}}
	}
	return cs
}

// ReplicaSets returns the new ReplicaSet of every Deployment of an n-pod cluster.
func ReplicaSets(n int) []*appsv1.ReplicaSet {
	out := make([]*appsv1.ReplicaSet, 0, n/PodsPerDeployment)
	for i := 0; i < n; i += PodsPerDeployment {
		yes := true
		replicas := int32(PodsPerDeployment)
		out = append(out, &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace(i), Name: replicaSet(i), Generation: 1,
				UID:         types.UID(fmt.Sprintf("5e1f2a3b-%04x-4d5e-8f90-%012x", i/PodsPerDeployment, i/PodsPerDeployment)),
				Annotations: map[string]string{contract.RevisionAnnotation: "1"},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: deployment(i),
					UID: types.UID("d-" + deployment(i)), Controller: &yes}}},
			Spec:   appsv1.ReplicaSetSpec{Replicas: &replicas},
			Status: appsv1.ReplicaSetStatus{ObservedGeneration: 1, Replicas: replicas, ReadyReplicas: replicas},
		})
	}
	return out
}

// Deployments returns every Deployment of an n-pod cluster, each with its rollout complete.
func Deployments(n int) []*appsv1.Deployment {
	out := make([]*appsv1.Deployment, 0, n/PodsPerDeployment)
	for i := 0; i < n; i += PodsPerDeployment {
		replicas := int32(PodsPerDeployment)
		out = append(out, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace(i), Name: deployment(i), UID: types.UID("d-" + deployment(i)),
				Generation: 1, Annotations: map[string]string{contract.RevisionAnnotation: "1"}},
			Spec: appsv1.DeploymentSpec{Replicas: &replicas},
			Status: appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: replicas, UpdatedReplicas: replicas,
				ReadyReplicas: replicas, AvailableReplicas: replicas,
				Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue,
					Reason: "NewReplicaSetAvailable"}}},
		})
	}
	return out
}

// NodeObjects returns the cluster's Node objects, all Ready.
func NodeObjects() []*corev1.Node {
	out := make([]*corev1.Node, Nodes)
	for k := range out {
		name := NodeName(k)
		out[k] = &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("node-uid-" + name)},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady,
				Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: metav1.NewTime(T0)}}},
		}
	}
	return out
}

// interner shares what the records repeat, as kube's informer transform does for a real
// cluster's pods. Benchmarks run on one goroutine.
var interner = podrec.NewInterner()

// Record is pod i at version as the informer holds it: Pod, made a record by the interner kube's
// transform would use.
func Record(i, version int) *podrec.Record { return interner.Pod(Pod(i, version)) }

// LoadBatches is what the informers of an n-pod cluster deliver first: nodes and owners, the
// pods in batches of 10,000, then the Warning events listed with them, one for each pod that is
// not running.
func LoadBatches(n int) []contract.Batch {
	out := []contract.Batch{{Nodes: NodeObjects(), Workloads: append(contract.WorkloadsOf(ReplicaSets(n)), contract.WorkloadsOf(Deployments(n))...),
		Health: &contract.Health{Synced: true, PodsSeen: n}}}
	pods := make([]*podrec.Record, n)
	const size = 10_000
	for start := 0; start < n; start += size {
		end := min(start+size, n)
		for i := start; i < end; i++ {
			pods[i] = Record(i, 0)
		}
		out = append(out, contract.Batch{Pods: pods[start:end]})
	}
	var events contract.Batch
	for i := range n {
		if e, ok := Event(i, 0); ok {
			events.Events = append(events.Events, e)
		}
	}
	return append(out, events)
}

// Load applies an n-pod cluster to m as LoadBatches delivers it, and returns the pod records
// (the informer's cache).
func Load(m *model.Model, n int) []*podrec.Record {
	pods := make([]*podrec.Record, 0, n)
	for _, b := range LoadBatches(n) {
		m.Apply(&b, T0)
		pods = append(pods, b.Pods...)
	}
	return pods
}

// Event is the Warning event the kubelet posts about pod i at update number version, as kube/'s
// transform leaves it, and whether the pod's state has one: BackOff while it crash-loops ("Back-off
// restarting failed container %s in pod %s" with format.Pod's "name_namespace(uid)", kubernetes
// pkg/kubelet/kuberuntime/kuberuntime_manager.go doBackOff), Failed with "Error: %v" of the runtime's
// message for an exit-128 start failure or of ImagePullBackOff while it backs off pulling
// (kuberuntime_container.go startContainer). The same event of a pod again has a count one higher:
// its count is version+1.
func Event(i, version int) (*corev1.Event, bool) {
	ns, name := PodName(i)
	var reason, msg string
	switch state := StateOf(i, version); state {
	case CrashLooping:
		reason = "BackOff"
		msg = fmt.Sprintf("Back-off restarting failed container app in pod %s_%s(0b9a6c8e-%04x-4c1d-9e2f-%012x)", name, ns, i&0xffff, i)
	case StartFailed128:
		reason, msg = "Failed", "Error: "+runtime128
	case Pulling:
		reason, msg = "Failed", "Error: ImagePullBackOff"
	default:
		return nil, false
	}
	at := metav1.NewTime(T0.Add(time.Duration(version) * time.Second))
	return &corev1.Event{
		// One event per pod and reason, named as client-go names events: the object and a time.
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s.%x", name, T0.UnixNano()+int64(len(reason))),
			ResourceVersion: fmt.Sprint(2_000_000 + i*7 + version)},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: name,
			UID: types.UID(fmt.Sprintf("0b9a6c8e-%04x-4c1d-9e2f-%012x", i&0xffff, i))},
		Reason: reason, Message: fresh(msg), Type: corev1.EventTypeWarning, Count: int32(version + 1),
		FirstTimestamp: metav1.NewTime(T0), LastTimestamp: at,
		Source: corev1.EventSource{Component: "kubelet", Host: NodeName(i)},
	}, true
}

// Churn returns count batches of size status updates on the pods of the first namespace (the one
// under churn), taken in a scattered order, with the Warning event each update's state has (Event):
// half of them crash-loop, so a batch carries about size/2 events. Pass p over the namespace updates each pod to version
// p+1, so every update changes its pod's verdict (StateOf), and so does applying the batches again
// from the first once the last is applied, when count*size spans an even number of passes.
func Churn(count, size int) []contract.Batch {
	out := make([]contract.Batch, count)
	for k := range out {
		out[k] = ChurnBatch(k, size, PodsPerNamespace)
	}
	return out
}

// ChurnBatch is batch k of that churn over the first n pods, made on its own so that a long run
// never holds all of its batches at once. For n = PodsPerNamespace it is Churn's batch k.
func ChurnBatch(k, size, n int) contract.Batch {
	var b contract.Batch
	b.Pods = make([]*podrec.Record, size)
	for j := range size {
		seq := k*size + j
		i, version := seq*7919%n, 1+seq/n
		b.Pods[j] = Record(i, version)
		if e, ok := Event(i, version); ok {
			b.Events = append(b.Events, e)
		}
	}
	return b
}
