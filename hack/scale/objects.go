package scale

import (
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// The pods' two containers: the application and a metrics sidecar-style second container.
const (
	appContainer     = "app"
	metricsContainer = "metrics"
)

func (p podAt) appRepo() string {
	return fmt.Sprintf("registry.example.com/%s/%s", p.namespace, appNames[p.deploy%len(appNames)])
}

func (p podAt) appImage() string { return fmt.Sprintf("%s:v%d", p.appRepo(), 40+p.deploy%7) }

const metricsImage = "registry.example.com/platform/metrics-exporter:v3.2.1"

func (p podAt) labels() map[string]string {
	return map[string]string{"app": DeploymentName(p.deploy), "pod-template-hash": templateHash(p.ns, p.deploy),
		"team": appNames[p.deploy%len(appNames)]}
}

// newPod is the pod the ReplicaSet controller would create and the scheduler bind.
func (f *Fleet) newPod(p podAt, rsUID types.UID) *corev1.Pod {
	rs := ReplicaSetName(p.ns, p.deploy)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: p.name, Namespace: p.namespace, GenerateName: rs + "-", Labels: p.labels(),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs, UID: rsUID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
		},
		Spec: podSpec(p.appImage(), p.labels()["app"], NodeName(p.node)),
	}
}

func podSpec(image, app, node string) corev1.PodSpec {
	return corev1.PodSpec{
		Containers: []corev1.Container{{
			Name: appContainer, Image: image,
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
			Env: []corev1.EnvVar{{Name: "APP_NAME", Value: app}, {Name: "LOG_LEVEL", Value: "info"},
				{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
			},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
				Path: "/healthz", Port: intstr.FromInt32(8080), Scheme: corev1.URISchemeHTTP}},
				PeriodSeconds: 10, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3},
			TerminationMessagePath: corev1.TerminationMessagePathDefault, TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			ImagePullPolicy: corev1.PullIfNotPresent,
		}, {
			Name: metricsContainer, Image: metricsImage,
			Ports: []corev1.ContainerPort{{Name: "metrics", ContainerPort: 9090, Protocol: corev1.ProtocolTCP}},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
			},
			TerminationMessagePath: corev1.TerminationMessagePathDefault, TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			ImagePullPolicy: corev1.PullIfNotPresent,
		}},
		NodeName:                      node,
		RestartPolicy:                 corev1.RestartPolicyAlways,
		TerminationGracePeriodSeconds: ptr.To[int64](30),
		DNSPolicy:                     corev1.DNSClusterFirst,
		SchedulerName:                 corev1.DefaultSchedulerName,
	}
}

// hex64 is a deterministic 64-hex-digit id (container IDs, image digests).
func hex64(s string) string {
	h := hash64(s)
	return fmt.Sprintf("%016x%016x%016x%016x", h, h^0x9e3779b97f4a7c15, h*31, h^0xdeadbeefcafebabe)
}

func (p podAt) hostIP() string { return fmt.Sprintf("10.0.%d.%d", p.node/250, p.node%250+1) }
func (p podAt) podIP() string {
	return fmt.Sprintf("10.%d.%d.%d", 64+p.node/256, p.node%256, p.index%250+2)
}

// The kubelet's pod-level conditions (kubernetes/kubernetes pkg/kubelet/status/generate.go,
// v1.37): an unready container makes ContainersReady and Ready False with reason
// ContainersNotReady and `containers with unready status: %s`.
func conditions(ready bool, unready []string, at metav1.Time) []corev1.PodCondition {
	st, reason, msg := corev1.ConditionTrue, "", ""
	if !ready {
		st, reason, msg = corev1.ConditionFalse, "ContainersNotReady", fmt.Sprintf("containers with unready status: %s", unready)
	}
	return []corev1.PodCondition{
		{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue, LastTransitionTime: at},
		{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: at},
		{Type: corev1.PodReady, Status: st, Reason: reason, Message: msg, LastTransitionTime: at},
		{Type: corev1.ContainersReady, Status: st, Reason: reason, Message: msg, LastTransitionTime: at},
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at},
	}
}

// backOffDelay is the kubelet's crash back-off after restarts restarts: 10s doubled per restart,
// at most 5m (pkg/kubelet/kuberuntime/kuberuntime_manager.go doBackOff and the kubelet's
// MaxContainerBackOff, v1.37).
func backOffDelay(restarts int32) time.Duration {
	d := 10 * time.Second
	for i := int32(1); i < restarts && d < 5*time.Minute; i++ {
		d *= 2
	}
	return min(d, 5*time.Minute)
}

// backOffMessage is the CrashLoopBackOff message (doBackOff, v1.37:
// `back-off %s restarting failed container=%s pod=%s`, the pod as format.Pod prints it,
// name_namespace(uid)).
func backOffMessage(restarts int32, container, pod, ns string, uid types.UID) string {
	return fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)", backOffDelay(restarts), container, pod, ns, uid)
}

// containerStatuses are the kubelet's statuses of the pod's two containers. started is when the
// pod started; now dates the latest termination.
func (f *Fleet) containerStatuses(p podAt, uid types.UID, restarts int32, appReady bool, started, now time.Time) []corev1.ContainerStatus {
	id := func(c string, n int32) string { return "containerd://" + hex64(fmt.Sprint(p.name, c, n)) }
	app := corev1.ContainerStatus{
		Name: appContainer, Image: p.appImage(), ImageID: p.appRepo() + "@sha256:" + hex64(p.appImage()),
		RestartCount: restarts,
	}
	m := f.cfg.Messages
	switch p.state {
	case Healthy:
		app.Ready, app.Started, app.ContainerID = appReady, ptr.To(true), id(appContainer, restarts)
		app.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(started)}
		if restarts > 0 {
			// A container the churn restarted: its last run ended with exit 1 (containerd
			// errorExitReason "Error", as in crashloop-exit-1).
			app.State.Running.StartedAt = metav1.NewTime(now)
			app.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{
				ExitCode: 1, Reason: m.Crashes[0].Reason, StartedAt: metav1.NewTime(started), FinishedAt: metav1.NewTime(now),
				ContainerID: id(appContainer, restarts-1)}
		}
	case CrashLoop, OOMLoop:
		t := m.Crashes[p.cond]
		app.Started = ptr.To(false)
		app.State.Waiting = &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
			Message: backOffMessage(restarts, appContainer, p.name, p.namespace, uid)}
		fin := now.Add(-backOffDelay(restarts) / 2)
		app.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{
			ExitCode: t.ExitCode, Reason: t.Reason, Message: t.Message,
			StartedAt: metav1.NewTime(fin.Add(-3 * time.Second)), FinishedAt: metav1.NewTime(fin), ContainerID: id(appContainer, restarts-1)}
	case StartError:
		t := m.StartErrors[p.cond]
		app.Started = ptr.To(false)
		// runc never started the process: containerd reports a zero start time (1970, as the
		// fixtures show) and the kubelet's finishedAt.
		app.State.Terminated = &corev1.ContainerStateTerminated{
			ExitCode: t.ExitCode, Reason: t.Reason, Message: t.Message,
			StartedAt: metav1.NewTime(time.Unix(0, 0).UTC()), FinishedAt: metav1.NewTime(now.Add(-30 * time.Second)),
			ContainerID: id(appContainer, restarts)}
	}
	metrics := corev1.ContainerStatus{
		Name: metricsContainer, Image: metricsImage, ImageID: "registry.example.com/platform/metrics-exporter@sha256:" + hex64(metricsImage),
		Ready: true, Started: ptr.To(true), ContainerID: id(metricsContainer, 0),
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(started)}},
	}
	return []corev1.ContainerStatus{app, metrics}
}

// status is the pod's whole status as its kubelet reports it.
func (f *Fleet) status(p podAt, uid types.UID, qos corev1.PodQOSClass, restarts int32, appReady bool, now time.Time) corev1.PodStatus {
	started := f.created
	at := metav1.NewTime(started)
	ready := p.state == Healthy && appReady
	phase := corev1.PodRunning
	if p.state == StartError {
		// No container of the pod has run yet on this node (as the StartError fixtures have it).
		phase = corev1.PodPending
	}
	return corev1.PodStatus{
		Phase:      phase,
		Conditions: conditions(ready, []string{appContainer}, at),
		HostIP:     p.hostIP(), HostIPs: []corev1.HostIP{{IP: p.hostIP()}},
		PodIP: p.podIP(), PodIPs: []corev1.PodIP{{IP: p.podIP()}},
		StartTime:         &at,
		QOSClass:          qos,
		ContainerStatuses: f.containerStatuses(p, uid, restarts, appReady, started, now),
	}
}

// newNode is a node its kubelet has registered and reports Ready.
func newNode(n int) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: NodeName(n), Labels: map[string]string{
		"kubernetes.io/hostname": NodeName(n), "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
		"topology.kubernetes.io/zone": fmt.Sprintf("zone-%c", 'a'+n%3)}}}
}

// nodeStatus is what a healthy kubelet posts (pkg/kubelet/nodestatus/setters.go, v1.37: the
// KubeletReady / KubeletHasSufficient* reasons and messages).
func nodeStatus(n int, now metav1.Time) corev1.NodeStatus {
	cap := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("128Gi"),
		corev1.ResourcePods: resource.MustParse("2000")}
	cond := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: s, Reason: reason, Message: msg, LastHeartbeatTime: now, LastTransitionTime: now}
	}
	return corev1.NodeStatus{
		Capacity: cap, Allocatable: cap,
		Conditions: []corev1.NodeCondition{
			cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
			cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
			cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
			cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"),
		},
		Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.0.%d.%d", n/250, n%250+1)},
			{Type: corev1.NodeHostName, Address: NodeName(n)}},
		NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.37.2", ContainerRuntimeVersion: "containerd://2.1.4",
			OperatingSystem: "linux", Architecture: "amd64", OSImage: "Ubuntu 24.04.2 LTS", KernelVersion: "6.8.0-60-generic"},
	}
}

// deployment and replicaSet are what the Deployment controller leaves after a finished rollout
// (revision 1), with ready counting the pods that are ready.
func (f *Fleet) deployment(k, d int) *appsv1.Deployment {
	name := DeploymentName(d)
	labels := map[string]string{"app": name}
	p := podAt{ns: k, deploy: d, namespace: NamespaceName(k)}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: NamespaceName(k), Labels: labels,
			Annotations: map[string]string{"deployment.kubernetes.io/revision": "1"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(f.replicasOf(k, d))),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: podSpec(p.appImage(), name, "")},
		},
	}
}

func (f *Fleet) replicaSet(k, d int, dep *appsv1.Deployment) *appsv1.ReplicaSet {
	labels := map[string]string{"app": dep.Name, "pod-template-hash": templateHash(k, d)}
	tmpl := dep.Spec.Template.DeepCopy()
	tmpl.Labels = labels
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: ReplicaSetName(k, d), Namespace: dep.Namespace, Labels: labels,
			Annotations: map[string]string{"deployment.kubernetes.io/revision": "1",
				"deployment.kubernetes.io/desired-replicas": fmt.Sprint(*dep.Spec.Replicas)},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: dep.Name, UID: dep.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
		Spec: appsv1.ReplicaSetSpec{Replicas: dep.Spec.Replicas, Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: *tmpl},
	}
}

// readyIn counts the ready pods of Deployment d in namespace k.
func (f *Fleet) readyIn(k, d int) int32 {
	var n int32
	base := k*f.cfg.PodsPerNamespace + d*f.cfg.Replicas
	for r := range f.replicasOf(k, d) {
		if f.pod(base+r).state == Healthy {
			n++
		}
	}
	return n
}

// rolloutStatus is the Deployment controller's status for replicas pods of which ready are ready
// (pkg/controller/deployment/util/deployment_util.go, v1.37: MinimumReplicasUnavailable while pods
// are unavailable; Progressing with NewReplicaSetAvailable once the new ReplicaSet is complete,
// ReplicaSetUpdated while it is not).
func rolloutStatus(gen int64, replicas, ready int32, rs string, now metav1.Time) appsv1.DeploymentStatus {
	avail := corev1.ConditionTrue
	availReason, availMsg := "MinimumReplicasAvailable", "Deployment has minimum availability."
	progReason, progMsg := "NewReplicaSetAvailable", fmt.Sprintf("ReplicaSet %q has successfully progressed.", rs)
	if ready < replicas {
		avail, availReason, availMsg = corev1.ConditionFalse, "MinimumReplicasUnavailable", "Deployment does not have minimum availability."
		progReason, progMsg = "ReplicaSetUpdated", fmt.Sprintf("ReplicaSet %q is progressing.", rs)
	}
	return appsv1.DeploymentStatus{
		ObservedGeneration: gen, Replicas: replicas, UpdatedReplicas: replicas, ReadyReplicas: ready,
		AvailableReplicas: ready, UnavailableReplicas: replicas - ready,
		Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: avail, Reason: availReason, Message: availMsg, LastUpdateTime: now, LastTransitionTime: now},
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: progReason, Message: progMsg,
				LastUpdateTime: now, LastTransitionTime: now},
		},
	}
}
