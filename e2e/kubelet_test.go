package e2e

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

// env is one test's slice of the shared cluster: its own namespace, and helpers that write
// objects the way the control plane and the kubelet would. No controller-manager or kubelet runs
// in this cluster, so the tests write spec through the API and status through the status
// subresource. They play the kubelet because each writes an exact status (the cited fixtures, a
// node's conditions) that no simulated node produces on demand, and they play the Deployment and
// ReplicaSet controllers because with the real ones running a hand-made pod of a ReplicaSet is
// replaced and a Node without a lease goes Unknown and has its pods evicted. The same verdicts over
// time, under the real controllers, scheduler and kwok's nodes, are the scenarios'
// (e2e/scenarios, controlplane.go).
type env struct {
	t      *testing.T
	c      *Cluster
	ctx    context.Context
	ns     string
	client kubernetes.Interface
}

var nsCounter atomic.Int32

var notDNS = regexp.MustCompile(`[^a-z0-9]+`)

func newEnv(t *testing.T) *env {
	t.Helper()
	c := needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	name := strings.Trim(notDNS.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	if len(name) > 40 {
		name = strings.Trim(name[:40], "-")
	}
	name = fmt.Sprintf("%s-%d", name, nsCounter.Add(1))
	e := &env{t: t, c: c, ctx: ctx, ns: name, client: c.AdminClient}
	_, err := e.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	return e
}

// nodeName returns a node name unique to this test.
func (e *env) nodeName(short string) string { return e.ns + "-" + short }

// node creates a Node and reports it Ready (or not) as its kubelet would.
func (e *env) node(name string, ready bool) *corev1.Node {
	e.t.Helper()
	n, err := e.client.CoreV1().Nodes().Create(e.ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatalf("creating node %s: %v", name, err)
	}
	cond := corev1.ConditionTrue
	if !ready {
		cond = corev1.ConditionFalse
	}
	n.Status.Conditions = []corev1.NodeCondition{{
		Type: corev1.NodeReady, Status: cond, Reason: "KubeletReady",
		LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(),
	}}
	n, err = e.client.CoreV1().Nodes().UpdateStatus(e.ctx, n, metav1.UpdateOptions{})
	if err != nil {
		e.t.Fatalf("updating node %s status: %v", name, err)
	}
	e.t.Cleanup(func() {
		_ = e.client.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return n
}

// podSpec is what a test asks for: containers named after the status it will write.
type podSpec struct {
	name  string
	node  string
	owner *metav1.OwnerReference
	// labels, e.g. pod-template-hash for a ReplicaSet's pods.
	labels map[string]string
	// status is written through the status subresource after the pod is created.
	status corev1.PodStatus
	// restartPolicy defaults to Always.
	restartPolicy corev1.RestartPolicy
	// containers, when set, are the spec's containers (with their probes); by default they are
	// named after the status's container statuses.
	containers []corev1.Container
}

// pod creates a pod bound to its node (as the scheduler would) and writes its status (as the
// kubelet would). Containers are named after the status's container statuses.
func (e *env) pod(s podSpec) *corev1.Pod {
	e.t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: e.ns, Labels: s.labels},
		Spec: corev1.PodSpec{
			NodeName:                      s.node,
			RestartPolicy:                 s.restartPolicy,
			TerminationGracePeriodSeconds: ptr.To[int64](0),
		},
	}
	if s.owner != nil {
		p.OwnerReferences = []metav1.OwnerReference{*s.owner}
	}
	for _, cs := range s.status.InitContainerStatuses {
		p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{Name: cs.Name, Image: imageOf(cs)})
	}
	for _, cs := range s.status.ContainerStatuses {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: cs.Name, Image: imageOf(cs)})
	}
	if s.containers != nil {
		p.Spec.Containers = s.containers
	}
	if len(p.Spec.Containers) == 0 {
		p.Spec.Containers = []corev1.Container{{Name: "app", Image: "registry.example/app:v1"}}
	}
	created, err := e.client.CoreV1().Pods(e.ns).Create(e.ctx, p, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatalf("creating pod %s: %v", s.name, err)
	}
	return e.setStatus(created.Name, s.status)
}

func imageOf(cs corev1.ContainerStatus) string {
	if cs.Image != "" {
		return cs.Image
	}
	return "registry.example/" + cs.Name + ":v1"
}

// setStatus replaces the pod's status through the status subresource, retrying on conflicts.
func (e *env) setStatus(name string, st corev1.PodStatus) *corev1.Pod {
	e.t.Helper()
	var out *corev1.Pod
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p, err := e.client.CoreV1().Pods(e.ns).Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		p.Status = st
		out, err = e.client.CoreV1().Pods(e.ns).UpdateStatus(e.ctx, p, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		e.t.Fatalf("updating pod %s status: %v", name, err)
	}
	return out
}

// deletePod removes a pod at once: with no kubelet, a graceful delete would wait forever.
func (e *env) deletePod(name string) {
	e.t.Helper()
	err := e.client.CoreV1().Pods(e.ns).Delete(e.ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	if err != nil && !apierrors.IsNotFound(err) {
		e.t.Fatalf("deleting pod %s: %v", name, err)
	}
}

// deployment creates a Deployment and one ReplicaSet it owns (revision 1), as the deployment
// controller would, and writes both statuses. It returns the ReplicaSet's owner reference for pods.
func (e *env) deployment(name string, replicas, ready int32) (*appsv1.Deployment, metav1.OwnerReference) {
	e.t.Helper()
	labels := map[string]string{"app": name}
	const hash = "5d9c7b6f4"
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/" + name + ":v1"}}},
			},
		},
	}
	d, err := e.client.AppsV1().Deployments(e.ns).Create(e.ctx, d, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatalf("creating deployment %s: %v", name, err)
	}
	rsLabels := map[string]string{"app": name, "pod-template-hash": hash}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Name: name + "-" + hash, Namespace: e.ns, Labels: rsLabels,
			Annotations: map[string]string{"deployment.kubernetes.io/revision": "1"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: rsLabels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: rsLabels},
				Spec:       d.Spec.Template.Spec,
			},
		},
	}
	rs, err = e.client.AppsV1().ReplicaSets(e.ns).Create(e.ctx, rs, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatalf("creating replicaset for %s: %v", name, err)
	}
	rs.Status = appsv1.ReplicaSetStatus{Replicas: replicas, ReadyReplicas: ready, AvailableReplicas: ready, ObservedGeneration: rs.Generation}
	if _, err := e.client.AppsV1().ReplicaSets(e.ns).UpdateStatus(e.ctx, rs, metav1.UpdateOptions{}); err != nil {
		e.t.Fatalf("updating replicaset %s status: %v", rs.Name, err)
	}
	d.Status = appsv1.DeploymentStatus{
		ObservedGeneration: d.Generation, Replicas: replicas, UpdatedReplicas: replicas,
		ReadyReplicas: ready, AvailableReplicas: ready, UnavailableReplicas: replicas - ready,
		Conditions: []appsv1.DeploymentCondition{{
			Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "ReplicaSetUpdated",
			LastUpdateTime: metav1.Now(), LastTransitionTime: metav1.Now(),
		}},
	}
	if d, err = e.client.AppsV1().Deployments(e.ns).UpdateStatus(e.ctx, d, metav1.UpdateOptions{}); err != nil {
		e.t.Fatalf("updating deployment %s status: %v", name, err)
	}
	return d, metav1.OwnerReference{
		APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}
}

// The container states a kubelet reports, as small builders.

func running(name string, ready bool, restarts int32, last *corev1.ContainerStateTerminated) corev1.ContainerStatus {
	cs := corev1.ContainerStatus{
		Name: name, Ready: ready, RestartCount: restarts, Started: ptr.To(true),
		Image: "registry.example/" + name + ":v1", ImageID: "registry.example/" + name + "@sha256:0",
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(time.Now().Add(-time.Minute).Truncate(time.Second))}},
	}
	if last != nil {
		cs.LastTerminationState.Terminated = last
	}
	return cs
}

func waiting(name, reason, message string, restarts int32, last *corev1.ContainerStateTerminated) corev1.ContainerStatus {
	cs := corev1.ContainerStatus{
		Name: name, RestartCount: restarts, Started: ptr.To(false),
		Image: "registry.example/" + name + ":v1",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}},
	}
	if last != nil {
		cs.LastTerminationState.Terminated = last
	}
	return cs
}

func terminatedStatus(name string, restarts int32, t *corev1.ContainerStateTerminated, last *corev1.ContainerStateTerminated) corev1.ContainerStatus {
	cs := corev1.ContainerStatus{
		Name: name, RestartCount: restarts, Started: ptr.To(false),
		Image: "registry.example/" + name + ":v1",
		State: corev1.ContainerState{Terminated: t},
	}
	if last != nil {
		cs.LastTerminationState.Terminated = last
	}
	return cs
}

// backOff is the kubelet's CrashLoopBackOff message (pkg/kubelet/kuberuntime/kuberuntime_manager.go
// doBackOff, v1.37: `back-off %s restarting failed container=%s pod=%s`, the pod as format.Pod
// prints it, name_namespace(uid)). The delay is 10s doubled per restart, at most 5m0s. The API
// server assigns the uid only when the pod is created, after this status is built, so a fixed one
// stands in for it.
func backOff(delay, container, pod, ns string) string {
	return fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)", delay, container, pod, ns,
		"3f9b2c1e-8d4a-4b6f-9e2d-7a1c5b8e0f42")
}

// term is a terminated state that finished ago before now.
func term(reason string, code int32, message string, ago time.Duration) *corev1.ContainerStateTerminated {
	fin := time.Now().Add(-ago).Truncate(time.Second)
	return &corev1.ContainerStateTerminated{
		Reason: reason, ExitCode: code, Message: message,
		StartedAt: metav1.NewTime(fin), FinishedAt: metav1.NewTime(fin),
		ContainerID: fmt.Sprintf("containerd://%x", fin.UnixNano()),
	}
}

// podStatus wraps container statuses in a Running pod's status with the conditions a kubelet sets
// (pkg/kubelet/status/generate.go, v1.37: an unready container makes ContainersReady and Ready
// False with reason ContainersNotReady and `containers with unready status: %s`).
func podStatus(phase corev1.PodPhase, containers ...corev1.ContainerStatus) corev1.PodStatus {
	ready := corev1.ConditionTrue
	var unready []string
	for _, c := range containers {
		if !c.Ready {
			ready = corev1.ConditionFalse
			unready = append(unready, c.Name)
		}
	}
	reason, message := "", ""
	if len(unready) > 0 {
		reason, message = "ContainersNotReady", fmt.Sprintf("containers with unready status: %s", unready)
	}
	now := metav1.NewTime(time.Now().Add(-2 * time.Minute).Truncate(time.Second))
	return corev1.PodStatus{
		Phase:     phase,
		StartTime: &now,
		HostIP:    "10.1.0.1",
		PodIP:     "10.244.0.10",
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: ready, LastTransitionTime: now, Reason: reason, Message: message},
			{Type: corev1.PodReady, Status: ready, LastTransitionTime: now, Reason: reason, Message: message},
		},
		ContainerStatuses: containers,
	}
}
