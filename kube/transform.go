package kube

import (
	"maps"
	"reflect"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"doomwatch/contract"
	"doomwatch/podrec"
)

// trimmer is the informers' transform. It keeps only what model/, classify/ and tui/ read, so
// the informer caches (which the model shares: a model.Pod points at the informer's record) hold a
// fraction of each object, and it shares what objects repeat through one podrec.Interner: strings
// (namespaces, nodes, images, reasons, condition messages) and read-only parts such as the
// containers of a ReplicaSet's pods and their owner references. Pods become records
// (podrec.Record), the compact form of a pod the model keeps; the other kinds stay API objects,
// trimmed. The objects it returns are never modified, by anyone: that is what makes sharing safe.
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
	mu sync.Mutex
	in *podrec.Interner
}

func newTrimmer() *trimmer { return &trimmer{in: podrec.NewInterner()} }

// transform is a cache.TransformFunc.
func (t *trimmer) transform(obj any) (any, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch o := obj.(type) {
	case *corev1.Pod:
		return t.in.Pod(o), nil
	case *corev1.Node:
		return t.node(o), nil
	case *corev1.Event:
		return t.event(o), nil
	default:
		// The workload kinds, each by its row (kinds.go).
		if r := rowsByType[reflect.TypeOf(obj)]; r != nil {
			return r.trim(t, obj), nil
		}
		if u, ok := obj.(*unstructured.Unstructured); ok {
			if r := rowOf(contract.Kind(u.GetKind())); r != nil {
				return r.trim(t, obj), nil
			}
		}
		// A *podrec.Record, or a cache.DeletedFinalStateUnknown holding an object that already
		// went through here.
		return obj, nil
	}
}

func (t *trimmer) str(s string) string { return t.in.String(s) }

// stub is an object's identity.
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
	out.OwnerReferences = t.in.Owners(m.OwnerReferences)
	if rev, ok := m.Annotations[contract.RevisionAnnotation]; ok {
		out.Annotations = t.in.Annotation(contract.RevisionAnnotation, rev)
	}
	return out
}

// workloadMeta is meta with the labels, which `doomwatch wait -l` selects Deployments by
// (model.Resolve), and Krane's timeout-override annotation, which wait honours. Workloads are
// few; their labels cost little.
func (t *trimmer) workloadMeta(m *metav1.ObjectMeta) metav1.ObjectMeta {
	out := t.meta(m)
	out.Labels = m.Labels
	t.keepKrane(&out, m.Annotations)
	return out
}

// keepKrane keeps the Krane annotations doomwatch reads (contract.KraneAnnotations: a timeout
// override, a Deployment's required rollout) of a workload.
func (t *trimmer) keepKrane(out *metav1.ObjectMeta, annotations map[string]string) {
	cloned := false
	for _, key := range contract.KraneAnnotations {
		v, ok := annotations[key]
		if !ok {
			continue
		}
		switch {
		case out.Annotations == nil:
			out.Annotations = map[string]string{}
		case !cloned:
			out.Annotations = maps.Clone(out.Annotations) // t.in.Annotation's maps are shared
		}
		cloned = true
		out.Annotations[key] = v
	}
}

// node keeps what the model reads: cordoning (spec.unschedulable), the conditions, Ready above
// all, and the attributes the nodes view shows and compares suspect nodes by (model/nodeattrs.go):
// four strings of status.nodeInfo (kubelet, runtime and kernel versions, OS image) and the labels
// that give the zone, region, instance type and node pool, at most one each (contract.NodeLabels).
// Each condition's heartbeat time goes: it is the only thing a kubelet's periodic status report
// changes, so without it such a report is no change at all (coalesce.go drops it). The image list
// (the largest part of a busy node), addresses, taints, capacity, the rest of nodeInfo (machine,
// system and boot IDs, unique per node) and every other label go too. A trimmed node costs about
// 1.5 KB, whatever it runs: 1.1 KB without the attributes, whose strings are shared between nodes,
// so what they add is mostly the small label map.
func (t *trimmer) node(n *corev1.Node) *corev1.Node {
	out := &corev1.Node{
		ObjectMeta: t.meta(&n.ObjectMeta),
		Spec:       corev1.NodeSpec{Unschedulable: n.Spec.Unschedulable},
	}
	out.Labels = contract.NodeLabels(n.Labels, t.in)
	ni := &n.Status.NodeInfo
	out.Status.NodeInfo = corev1.NodeSystemInfo{
		KubeletVersion:          t.str(ni.KubeletVersion),
		ContainerRuntimeVersion: t.str(ni.ContainerRuntimeVersion),
		KernelVersion:           t.str(ni.KernelVersion),
		OSImage:                 t.str(ni.OSImage),
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
			InitContainers: t.in.Containers(p.Spec.InitContainers),
			Containers:     t.in.Containers(p.Spec.Containers),
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
		ObjectMeta: t.workloadMeta(&d.ObjectMeta),
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

// job keeps the backoff limits (Job-wide and per index), the counts and the status, which
// classify.JobAttempt reads; the template goes (the Job's pods carry their own spec).
func (t *trimmer) job(j *batchv1.Job) *batchv1.Job {
	meta := t.meta(&j.ObjectMeta)
	t.keepKrane(&meta, j.Annotations)
	return &batchv1.Job{
		ObjectMeta: meta,
		Spec: batchv1.JobSpec{
			Parallelism:          j.Spec.Parallelism,
			Completions:          j.Spec.Completions,
			BackoffLimit:         j.Spec.BackoffLimit,
			BackoffLimitPerIndex: j.Spec.BackoffLimitPerIndex,
			MaxFailedIndexes:     j.Spec.MaxFailedIndexes,
			CompletionMode:       j.Spec.CompletionMode,
			Suspend:              j.Spec.Suspend,
		},
		Status: j.Status,
	}
}

// statefulSet keeps what `kubectl rollout status` reads (classify.StatefulSetStatus: generation,
// replicas, the update strategy and the status) and the status's update revision, by which the
// model tells the pods of the rollout.
func (t *trimmer) statefulSet(s *appsv1.StatefulSet) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		ObjectMeta: t.workloadMeta(&s.ObjectMeta),
		Spec: appsv1.StatefulSetSpec{
			Replicas:       s.Spec.Replicas,
			UpdateStrategy: s.Spec.UpdateStrategy,
		},
		Status: s.Status,
	}
}

// daemonSet keeps what `kubectl rollout status` reads (classify.DaemonSetStatus: generation, the
// update strategy and the status) and the template generation annotation, by which the model tells
// the pods of the rollout.
func (t *trimmer) daemonSet(d *appsv1.DaemonSet) *appsv1.DaemonSet {
	out := &appsv1.DaemonSet{
		ObjectMeta: t.workloadMeta(&d.ObjectMeta),
		Spec:       appsv1.DaemonSetSpec{UpdateStrategy: d.Spec.UpdateStrategy},
		Status:     d.Status,
	}
	if gen, ok := d.Annotations[appsv1.DeprecatedTemplateGeneration]; ok {
		// meta's maps may be the interner's, shared between objects: never written to.
		a := maps.Clone(out.Annotations)
		if a == nil {
			a = map[string]string{}
		}
		a[appsv1.DeprecatedTemplateGeneration] = t.str(gen)
		out.Annotations = a
	}
	return out
}

// event keeps what the model reads of a Warning event (model/events.go): what it is about (the
// involved object's kind, namespace, name and UID), its type, reason and message, its count and
// times in both APIs' fields (classify.EventOf reads them as kubectl does) and its source. An event
// about anything but a pod or a node (a ReplicaSet's FailedCreate, a PVC's ProvisioningFailed), or
// one that is not a Warning (the field selector asks for Warning events; the demo's fake clientset
// ignores field selectors), is kept as a stub naming its kind and type: the model does not read it,
// and the informer still needs an object for its key. The events' managedFields, annotations,
// action and related object go.
func (t *trimmer) event(e *corev1.Event) *corev1.Event {
	io := &e.InvolvedObject
	out := &corev1.Event{
		ObjectMeta:     t.stub(&e.ObjectMeta),
		InvolvedObject: corev1.ObjectReference{Kind: t.str(io.Kind)},
		Type:           t.str(e.Type),
	}
	if io.Kind != "Pod" && io.Kind != "Node" || e.Type != corev1.EventTypeWarning {
		return out
	}
	out.InvolvedObject = corev1.ObjectReference{Kind: t.str(io.Kind), Namespace: t.str(io.Namespace), Name: io.Name, UID: io.UID}
	out.Reason, out.Message = t.str(e.Reason), e.Message
	out.Count, out.FirstTimestamp, out.LastTimestamp, out.EventTime = e.Count, e.FirstTimestamp, e.LastTimestamp, e.EventTime
	if e.Series != nil {
		out.Series = &corev1.EventSeries{Count: e.Series.Count, LastObservedTime: e.Series.LastObservedTime}
	}
	out.Source = corev1.EventSource{Component: t.str(e.Source.Component), Host: t.str(e.Source.Host)}
	out.ReportingController, out.ReportingInstance = t.str(e.ReportingController), t.str(e.ReportingInstance)
	return out
}

// cronJob keeps identity, labels and Krane's timeout (workloadMeta), the schedule and whether it
// is suspended, for the gate's reason while it has made no Job, and its status's times; the Job
// template goes (its Jobs carry their own).
func (t *trimmer) cronJob(c *batchv1.CronJob) *batchv1.CronJob {
	return &batchv1.CronJob{
		ObjectMeta: t.workloadMeta(&c.ObjectMeta),
		Spec:       batchv1.CronJobSpec{Schedule: t.str(c.Spec.Schedule), Suspend: c.Spec.Suspend},
		Status:     batchv1.CronJobStatus{LastScheduleTime: c.Status.LastScheduleTime, LastSuccessfulTime: c.Status.LastSuccessfulTime},
	}
}

// argoRollout keeps what the model reads of an Argo Rollout (model/argorollout.go): identity,
// generation, labels (wait -l), owners; spec.replicas, spec.paused and which strategy it has; the
// whole status, which the controller keeps small (phase, message, counts, pause conditions,
// conditions, the current pod hash and the stable ReplicaSet). The pod template, the largest part,
// goes: the ReplicaSets carry their own.
func (t *trimmer) argoRollout(u *unstructured.Unstructured) *unstructured.Unstructured {
	out := &unstructured.Unstructured{Object: map[string]any{}}
	out.SetAPIVersion(u.GetAPIVersion())
	out.SetKind(u.GetKind())
	out.SetNamespace(t.str(u.GetNamespace()))
	out.SetName(u.GetName())
	out.SetUID(u.GetUID())
	out.SetResourceVersion(u.GetResourceVersion())
	out.SetGeneration(u.GetGeneration())
	out.SetCreationTimestamp(u.GetCreationTimestamp())
	if ts := u.GetDeletionTimestamp(); ts != nil {
		out.SetDeletionTimestamp(ts)
	}
	if l := u.GetLabels(); len(l) > 0 {
		out.SetLabels(l)
	}
	if v, ok := u.GetAnnotations()[contract.TimeoutAnnotation]; ok {
		out.SetAnnotations(map[string]string{contract.TimeoutAnnotation: v})
	}
	if o := u.GetOwnerReferences(); len(o) > 0 {
		out.SetOwnerReferences(o)
	}
	in, _ := u.Object["spec"].(map[string]any) // an object from the API is untrusted: any shape
	spec := map[string]any{}
	for _, f := range []string{"replicas", "paused", "progressDeadlineSeconds", "progressDeadlineAbort"} {
		if v, ok := in[f]; ok {
			spec[f] = v
		}
	}
	if st, ok := in["strategy"].(map[string]any); ok {
		strategy := map[string]any{}
		for name := range st {
			strategy[name] = map[string]any{} // canary or blueGreen: which, not its steps
		}
		spec["strategy"] = strategy
	}
	out.Object["spec"] = spec
	if st, ok := u.Object["status"]; ok {
		out.Object["status"] = st
	}
	return out
}
