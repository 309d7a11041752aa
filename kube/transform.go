package kube

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"doomwatch/model"
)

// transform is the informer transform: it keeps only what model/, classify/ and the views read, so
// the informer caches hold a fraction of each object (managedFields alone are often half a pod).
//
// It builds a new object instead of trimming in place: the demo's fake clientset may share the
// object it hands the watch with its tracker, and mutating that would corrupt the fake cluster.
// When unsure whether a field is read, it is kept.
func transform(obj any) (any, error) {
	switch o := obj.(type) {
	case *corev1.Pod:
		return trimPod(o), nil
	case *corev1.Node:
		return trimNode(o), nil
	case *appsv1.ReplicaSet:
		return trimReplicaSet(o), nil
	case *appsv1.Deployment:
		return trimDeployment(o), nil
	case *appsv1.StatefulSet:
		return trimStatefulSet(o), nil
	case *appsv1.DaemonSet:
		return trimDaemonSet(o), nil
	case *batchv1.Job:
		return trimJob(o), nil
	default:
		// cache.DeletedFinalStateUnknown holds an object that already went through here.
		return obj, nil
	}
}

var _ cache.TransformFunc = transform

// trimMeta keeps identity, ownership, labels (shown and filtered on), timestamps and the revision
// annotation. It drops managedFields, finalizers and every other annotation (last-applied
// configuration alone can be kilobytes).
func trimMeta(m *metav1.ObjectMeta) metav1.ObjectMeta {
	out := metav1.ObjectMeta{
		Name:                       m.Name,
		Namespace:                  m.Namespace,
		UID:                        m.UID,
		ResourceVersion:            m.ResourceVersion,
		Generation:                 m.Generation,
		CreationTimestamp:          m.CreationTimestamp,
		DeletionTimestamp:          m.DeletionTimestamp,
		DeletionGracePeriodSeconds: m.DeletionGracePeriodSeconds,
		Labels:                     m.Labels,
		OwnerReferences:            m.OwnerReferences,
	}
	// The only annotation anything reads: the model tells a Deployment's new ReplicaSet by it.
	if rev, ok := m.Annotations[model.RevisionAnnotation]; ok {
		out.Annotations = map[string]string{model.RevisionAnnotation: rev}
	}
	return out
}

// trimContainers keeps what the kubectl STATUS/READY printer and classify read from the spec
// (kubernetes pkg/printers/internalversion/printers.go printPod: container count, and init
// containers' restartPolicy to recognise sidecars) plus the image the detail pane shows and the
// probes that decide readiness and startup.
func trimContainers(cs []corev1.Container) []corev1.Container {
	if cs == nil {
		return nil
	}
	out := make([]corev1.Container, len(cs))
	for i := range cs {
		c := &cs[i]
		out[i] = corev1.Container{
			Name:           c.Name,
			Image:          c.Image,
			RestartPolicy:  c.RestartPolicy,
			ReadinessProbe: c.ReadinessProbe,
			StartupProbe:   c.StartupProbe,
		}
	}
	return out
}

// trimContainerStatuses drops the status fields nothing reads (resources, volume mounts, user) and
// keeps state, lastState, readiness, started, restart count, image and IDs.
func trimContainerStatuses(cs []corev1.ContainerStatus) []corev1.ContainerStatus {
	if cs == nil {
		return nil
	}
	out := make([]corev1.ContainerStatus, len(cs))
	for i := range cs {
		out[i] = cs[i]
		out[i].AllocatedResources = nil
		out[i].AllocatedResourcesStatus = nil
		out[i].Resources = nil
		out[i].VolumeMounts = nil
		out[i].User = nil
	}
	return out
}

func trimPod(p *corev1.Pod) *corev1.Pod {
	out := &corev1.Pod{
		TypeMeta:   p.TypeMeta,
		ObjectMeta: trimMeta(&p.ObjectMeta),
		Spec: corev1.PodSpec{
			NodeName:          p.Spec.NodeName,
			InitContainers:    trimContainers(p.Spec.InitContainers),
			Containers:        trimContainers(p.Spec.Containers),
			RestartPolicy:     p.Spec.RestartPolicy,
			ReadinessGates:    p.Spec.ReadinessGates,
			SchedulingGates:   p.Spec.SchedulingGates,
			PriorityClassName: p.Spec.PriorityClassName,
		},
		Status: p.Status,
	}
	out.Status.InitContainerStatuses = trimContainerStatuses(p.Status.InitContainerStatuses)
	out.Status.ContainerStatuses = trimContainerStatuses(p.Status.ContainerStatuses)
	out.Status.EphemeralContainerStatuses = nil
	out.Status.ResourceClaimStatuses = nil
	out.Status.Resize = ""
	return out
}

// trimNode keeps what the node panel shows: Ready and the other conditions, cordoning
// (spec.unschedulable and taints) and addresses. It drops the image list, which on a busy node is
// the largest part of the object.
func trimNode(n *corev1.Node) *corev1.Node {
	return &corev1.Node{
		TypeMeta:   n.TypeMeta,
		ObjectMeta: trimMeta(&n.ObjectMeta),
		Spec: corev1.NodeSpec{
			Unschedulable: n.Spec.Unschedulable,
			Taints:        n.Spec.Taints,
		},
		Status: corev1.NodeStatus{
			Conditions: n.Status.Conditions,
			Addresses:  n.Status.Addresses,
			Phase:      n.Status.Phase,
		},
	}
}

// trimTemplate keeps the template's labels and its containers' names and images ("v1 → v2").
func trimTemplate(t *corev1.PodTemplateSpec) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: t.Labels},
		Spec: corev1.PodSpec{
			InitContainers: trimContainers(t.Spec.InitContainers),
			Containers:     trimContainers(t.Spec.Containers),
		},
	}
}

func trimReplicaSet(rs *appsv1.ReplicaSet) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{
		TypeMeta:   rs.TypeMeta,
		ObjectMeta: trimMeta(&rs.ObjectMeta),
		Spec: appsv1.ReplicaSetSpec{
			Replicas:        rs.Spec.Replicas,
			MinReadySeconds: rs.Spec.MinReadySeconds,
			Selector:        rs.Spec.Selector,
			Template:        trimTemplate(&rs.Spec.Template),
		},
		Status: rs.Status,
	}
}

// trimDeployment keeps everything `kubectl rollout status` reads (kubectl
// pkg/polymorphichelpers/rollout_status.go: generation, replicas, progress deadline, conditions and
// the status counters).
func trimDeployment(d *appsv1.Deployment) *appsv1.Deployment {
	return &appsv1.Deployment{
		TypeMeta:   d.TypeMeta,
		ObjectMeta: trimMeta(&d.ObjectMeta),
		Spec: appsv1.DeploymentSpec{
			Replicas:                d.Spec.Replicas,
			Selector:                d.Spec.Selector,
			Template:                trimTemplate(&d.Spec.Template),
			Strategy:                d.Spec.Strategy,
			MinReadySeconds:         d.Spec.MinReadySeconds,
			Paused:                  d.Spec.Paused,
			ProgressDeadlineSeconds: d.Spec.ProgressDeadlineSeconds,
		},
		Status: d.Status,
	}
}

func trimStatefulSet(s *appsv1.StatefulSet) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		TypeMeta:   s.TypeMeta,
		ObjectMeta: trimMeta(&s.ObjectMeta),
		Spec: appsv1.StatefulSetSpec{
			Replicas:       s.Spec.Replicas,
			Selector:       s.Spec.Selector,
			Template:       trimTemplate(&s.Spec.Template),
			UpdateStrategy: s.Spec.UpdateStrategy,
		},
		Status: s.Status,
	}
}

func trimDaemonSet(d *appsv1.DaemonSet) *appsv1.DaemonSet {
	return &appsv1.DaemonSet{
		TypeMeta:   d.TypeMeta,
		ObjectMeta: trimMeta(&d.ObjectMeta),
		Spec: appsv1.DaemonSetSpec{
			Selector:       d.Spec.Selector,
			Template:       trimTemplate(&d.Spec.Template),
			UpdateStrategy: d.Spec.UpdateStrategy,
		},
		Status: d.Status,
	}
}

func trimJob(j *batchv1.Job) *batchv1.Job {
	return &batchv1.Job{
		TypeMeta:   j.TypeMeta,
		ObjectMeta: trimMeta(&j.ObjectMeta),
		Spec: batchv1.JobSpec{
			Parallelism:  j.Spec.Parallelism,
			Completions:  j.Spec.Completions,
			BackoffLimit: j.Spec.BackoffLimit,
			Selector:     j.Spec.Selector,
			Template:     trimTemplate(&j.Spec.Template),
			Suspend:      j.Spec.Suspend,
		},
		Status: j.Status,
	}
}
