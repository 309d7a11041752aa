package kube

import (
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"doomwatch/model"
)

// trimmer is the informers' transform. It keeps only what model/, classify/ and tui/ read, so
// the informer caches (which the model shares: a model.Pod points at the informer's object) hold a
// fraction of each object, and it shares what objects repeat: strings (namespaces, nodes, images,
// reasons, condition messages) and read-only parts such as the containers of a ReplicaSet's pods
// and their owner references. The objects it returns are never modified, by anyone: that is what
// makes sharing safe.
//
// It builds new objects instead of trimming in place: the demo's fake clientset may share the
// object it hands the watch with its tracker, and mutating that would corrupt the fake cluster.
// It is idempotent (client-go may pass an object through it twice: a streamed list goes through
// a temporary store and then the informer's queue, both transforming).
//
// What is read, and so kept, was found by reading every use in classify/, model/ and tui/; the
// transform tests check that classify's verdicts and columns and the model's snapshot are the
// same for every classify fixture before and after.
type trimmer struct {
	mu     sync.Mutex
	strs   table[string]
	conts  table[[]corev1.Container]
	owners table[[]metav1.OwnerReference]
	gates  table[[]corev1.PodReadinessGate]
	// revisions holds the one-entry annotation maps of ReplicaSets and Deployments by revision.
	revisions table[map[string]string]
	buf       []byte
}

func newTrimmer() *trimmer {
	return &trimmer{
		strs:      newTable[string](internMax),
		conts:     newTable[[]corev1.Container](internMax / 8),
		owners:    newTable[[]metav1.OwnerReference](internMax / 8),
		gates:     newTable[[]corev1.PodReadinessGate](internMax / 64),
		revisions: newTable[map[string]string](internMax / 64),
	}
}

// transform is a cache.TransformFunc.
func (t *trimmer) transform(obj any) (any, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch o := obj.(type) {
	case *corev1.Pod:
		return t.pod(o), nil
	case *corev1.Node:
		return t.node(o), nil
	case *appsv1.ReplicaSet:
		return t.replicaSet(o), nil
	case *appsv1.Deployment:
		return t.deployment(o), nil
	case *batchv1.Job:
		return t.job(o), nil
	case *appsv1.StatefulSet:
		return &appsv1.StatefulSet{ObjectMeta: t.stub(&o.ObjectMeta)}, nil
	case *appsv1.DaemonSet:
		return &appsv1.DaemonSet{ObjectMeta: t.stub(&o.ObjectMeta)}, nil
	default:
		// cache.DeletedFinalStateUnknown holds an object that already went through here.
		return obj, nil
	}
}

func (t *trimmer) str(s string) string { return str(&t.strs, s) }

// Shared pointers for the pointer-to-value fields that take few values.
var (
	sharedTrue, sharedFalse = true, false
	sharedAlways            = corev1.ContainerRestartPolicyAlways
)

func sharedBool(b *bool) *bool {
	switch {
	case b == nil:
		return nil
	case *b:
		return &sharedTrue
	}
	return &sharedFalse
}

// stub is an object's identity, all that is kept of the kinds nothing reads (see source.go).
func (t *trimmer) stub(m *metav1.ObjectMeta) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: m.Name, Namespace: t.str(m.Namespace), UID: m.UID, ResourceVersion: m.ResourceVersion}
}

// meta keeps identity, the resource version (the informer tells an update from a resync by it),
// generation (rollouts wait for observedGeneration), timestamps, ownership and the revision
// annotation, the only one anything reads: the model tells a Deployment's new ReplicaSet by it.
// It drops labels (pods are selected by the API server, and nothing shows them), managedFields,
// finalizers and every other annotation.
func (t *trimmer) meta(m *metav1.ObjectMeta) metav1.ObjectMeta {
	out := t.stub(m)
	out.Generation = m.Generation
	out.CreationTimestamp = m.CreationTimestamp
	out.DeletionTimestamp = m.DeletionTimestamp
	out.OwnerReferences = shareSlice(&t.owners, &t.buf, m.OwnerReferences)
	if rev, ok := m.Annotations[model.RevisionAnnotation]; ok {
		t.buf = append(t.buf[:0], rev...)
		a, ok := t.revisions.lookup(t.buf)
		if !ok {
			a = map[string]string{model.RevisionAnnotation: rev}
			t.revisions.put(rev, a)
		}
		out.Annotations = a
	}
	return out
}

// containers keeps what the kubectl STATUS/READY printer and classify read from the spec
// (kubernetes pkg/printers/internalversion/printers.go printPod: container count, and init
// containers' restartPolicy to recognise sidecars), the image the detail pane shows and the
// readiness and startup probes, of which classify reads whether they exist and their handler
// (classify probeText). The result is shared by every pod with the same containers.
func (t *trimmer) containers(cs []corev1.Container) []corev1.Container {
	if cs == nil {
		return nil
	}
	out := make([]corev1.Container, len(cs))
	for i := range cs {
		c := &cs[i]
		out[i] = corev1.Container{
			Name:           t.str(c.Name),
			Image:          t.str(c.Image),
			RestartPolicy:  t.restartPolicy(c.RestartPolicy),
			ReadinessProbe: t.probe(c.ReadinessProbe),
			StartupProbe:   t.probe(c.StartupProbe),
		}
	}
	return shareSlice(&t.conts, &t.buf, out)
}

func (t *trimmer) restartPolicy(p *corev1.ContainerRestartPolicy) *corev1.ContainerRestartPolicy {
	switch {
	case p == nil:
		return nil
	case *p == sharedAlways:
		return &sharedAlways
	}
	v := corev1.ContainerRestartPolicy(t.str(string(*p)))
	return &v
}

// probe keeps a probe's handler as classify's probeText describes it: HTTP path and port, exec
// command, TCP port, gRPC port.
func (t *trimmer) probe(p *corev1.Probe) *corev1.Probe {
	if p == nil {
		return nil
	}
	out := &corev1.Probe{}
	if h := p.HTTPGet; h != nil {
		out.HTTPGet = &corev1.HTTPGetAction{Path: t.str(h.Path), Port: h.Port}
	}
	if e := p.Exec; e != nil {
		out.Exec = &corev1.ExecAction{Command: e.Command}
	}
	if s := p.TCPSocket; s != nil {
		out.TCPSocket = &corev1.TCPSocketAction{Port: s.Port}
	}
	if g := p.GRPC; g != nil {
		out.GRPC = &corev1.GRPCAction{Port: g.Port}
	}
	return out
}

// containerStatuses keeps state, last state, readiness, started, restart count, image and
// whether the image was pulled (imageID, model/sticky.go). It drops container IDs, resources,
// volume mounts and the user, which nothing reads.
func (t *trimmer) containerStatuses(cs []corev1.ContainerStatus) []corev1.ContainerStatus {
	if cs == nil {
		return nil
	}
	out := make([]corev1.ContainerStatus, len(cs))
	for i := range cs {
		c := &cs[i]
		out[i] = corev1.ContainerStatus{
			Name:                 t.str(c.Name),
			State:                t.state(&c.State),
			LastTerminationState: t.state(&c.LastTerminationState),
			Ready:                c.Ready,
			RestartCount:         c.RestartCount,
			Image:                t.str(c.Image),
			ImageID:              t.str(c.ImageID),
			Started:              sharedBool(c.Started),
		}
	}
	return out
}

// state keeps a container state whole except the container ID. Reasons are shared; messages are
// not, as they mostly name their pod or container ("back-off 1m20s restarting failed
// container=app pod=…") and would only churn the table.
func (t *trimmer) state(s *corev1.ContainerState) corev1.ContainerState {
	var out corev1.ContainerState
	if w := s.Waiting; w != nil {
		out.Waiting = &corev1.ContainerStateWaiting{Reason: t.str(w.Reason), Message: w.Message}
	}
	if r := s.Running; r != nil {
		out.Running = &corev1.ContainerStateRunning{StartedAt: r.StartedAt}
	}
	if x := s.Terminated; x != nil {
		out.Terminated = &corev1.ContainerStateTerminated{
			ExitCode: x.ExitCode, Signal: x.Signal, Reason: t.str(x.Reason), Message: x.Message,
			StartedAt: x.StartedAt, FinishedAt: x.FinishedAt,
		}
	}
	return out
}

// podConditions keeps type, status, reason, message and transition time (classify reads all but
// the time; the detail pane shows the time). Their strings are shared: most are one of a few
// ("containers with unready status: [app]"). The probe time, always null from a kubelet, and
// observedGeneration go.
func (t *trimmer) podConditions(cs []corev1.PodCondition) []corev1.PodCondition {
	if cs == nil {
		return nil
	}
	out := make([]corev1.PodCondition, len(cs))
	for i := range cs {
		c := &cs[i]
		out[i] = corev1.PodCondition{
			Type:               corev1.PodConditionType(t.str(string(c.Type))),
			Status:             corev1.ConditionStatus(t.str(string(c.Status))),
			Reason:             t.str(c.Reason),
			Message:            t.str(c.Message),
			LastTransitionTime: c.LastTransitionTime,
		}
	}
	return out
}

// pod keeps, besides meta: the node, containers, the restart policy and readiness gates
// (classify); phase, reason, message, conditions and container statuses (classify, the model's
// evidence and the detail pane). IPs, start time, QoS class, the nominated node and the rest of
// the spec go.
func (t *trimmer) pod(p *corev1.Pod) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: t.meta(&p.ObjectMeta),
		Spec: corev1.PodSpec{
			NodeName:       t.str(p.Spec.NodeName),
			InitContainers: t.containers(p.Spec.InitContainers),
			Containers:     t.containers(p.Spec.Containers),
			RestartPolicy:  corev1.RestartPolicy(t.str(string(p.Spec.RestartPolicy))),
			ReadinessGates: shareSlice(&t.gates, &t.buf, p.Spec.ReadinessGates),
		},
		Status: corev1.PodStatus{
			Phase:                 corev1.PodPhase(t.str(string(p.Status.Phase))),
			Conditions:            t.podConditions(p.Status.Conditions),
			Message:               p.Status.Message,
			Reason:                t.str(p.Status.Reason),
			InitContainerStatuses: t.containerStatuses(p.Status.InitContainerStatuses),
			ContainerStatuses:     t.containerStatuses(p.Status.ContainerStatuses),
		},
	}
}

// node keeps what the model reads: cordoning (spec.unschedulable) and the conditions, Ready
// above all. Each condition's heartbeat time goes: it is the only thing a kubelet's periodic
// status report changes, so without it such a report is no change at all (coalesce.go drops it).
// The image list (the largest part of a busy node), addresses, taints and labels go too.
func (t *trimmer) node(n *corev1.Node) *corev1.Node {
	out := &corev1.Node{
		ObjectMeta: t.meta(&n.ObjectMeta),
		Spec:       corev1.NodeSpec{Unschedulable: n.Spec.Unschedulable},
	}
	if cs := n.Status.Conditions; cs != nil {
		out.Status.Conditions = make([]corev1.NodeCondition, len(cs))
		for i := range cs {
			c := &cs[i]
			out.Status.Conditions[i] = corev1.NodeCondition{
				Type:               corev1.NodeConditionType(t.str(string(c.Type))),
				Status:             corev1.ConditionStatus(t.str(string(c.Status))),
				Reason:             t.str(c.Reason),
				Message:            t.str(c.Message),
				LastTransitionTime: c.LastTransitionTime,
			}
		}
	}
	return out
}

// template keeps the template's labels (the model compares a ReplicaSet's template with its
// Deployment's, as kubectl's EqualIgnoreHash does) and its containers.
func (t *trimmer) template(p *corev1.PodTemplateSpec) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: p.Labels},
		Spec: corev1.PodSpec{
			InitContainers: t.containers(p.Spec.InitContainers),
			Containers:     t.containers(p.Spec.Containers),
		},
	}
}

func (t *trimmer) replicaSet(rs *appsv1.ReplicaSet) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{
		ObjectMeta: t.meta(&rs.ObjectMeta),
		Spec: appsv1.ReplicaSetSpec{
			Replicas:        rs.Spec.Replicas,
			MinReadySeconds: rs.Spec.MinReadySeconds,
			Template:        t.template(&rs.Spec.Template),
		},
		Status: rs.Status,
	}
}

// deployment keeps everything `kubectl rollout status` reads (kubectl
// pkg/polymorphichelpers/rollout_status.go: generation, replicas, progress deadline, conditions and
// the status counters) and the template.
func (t *trimmer) deployment(d *appsv1.Deployment) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: t.meta(&d.ObjectMeta),
		Spec: appsv1.DeploymentSpec{
			Replicas:                d.Spec.Replicas,
			Template:                t.template(&d.Spec.Template),
			Strategy:                d.Spec.Strategy,
			MinReadySeconds:         d.Spec.MinReadySeconds,
			Paused:                  d.Spec.Paused,
			ProgressDeadlineSeconds: d.Spec.ProgressDeadlineSeconds,
		},
		Status: d.Status,
	}
}

// job keeps the backoff limit, the counts and the status, which classify.JobAttempt reads; the
// template goes (the Job's pods carry their own spec).
func (t *trimmer) job(j *batchv1.Job) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: t.meta(&j.ObjectMeta),
		Spec: batchv1.JobSpec{
			Parallelism:  j.Spec.Parallelism,
			Completions:  j.Spec.Completions,
			BackoffLimit: j.Spec.BackoffLimit,
			Suspend:      j.Spec.Suspend,
		},
		Status: j.Status,
	}
}
