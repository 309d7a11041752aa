package kube

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"doomwatch/classify"
	"doomwatch/classify/corpus"
	"doomwatch/contract"
	"doomwatch/model"
	"doomwatch/podrec"
	"doomwatch/report"
)

// TestTransformKeepsWhatClassifyReads runs every classify fixture through the informer transform:
// classify's verdicts and kubectl columns, the model's snapshot (what --once prints) and what the
// dashboard's detail pane shows must be the same for the trimmed pod as for the original. The
// fixtures go through one trimmer, as a cluster's pods do, so shared strings and containers are
// exercised too, and each goes through twice, as client-go may transform an object twice.
func TestTransformKeepsWhatClassifyReads(t *testing.T) {
	tr := newTrimmer()
	all, err := corpus.Load(filepath.Join("..", "classify", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	for _, fx := range all {
		t.Run(fx.File, func(t *testing.T) {
			orig, now := fx.Pod, fx.Now
			before := orig.DeepCopy()
			out, err := tr.transform(orig)
			if err != nil {
				t.Fatal(err)
			}
			// What classify, the model and the views read is the record, rebuilt as a pod.
			trimmed := out.(*podrec.Record).Pod()
			if !reflect.DeepEqual(orig, before) {
				t.Errorf("transform modified its input")
			}
			if again, _ := tr.transform(out); again != out {
				t.Errorf("transform is not idempotent: a record came back as %T %p, not %p", again, again, out)
			}
			if got, want := classify.Pod(trimmed, now), classify.Pod(orig, now); !reflect.DeepEqual(got, want) {
				t.Errorf("classify.Pod after transform = %+v, want %+v", got, want)
			}
			if got, want := classify.Containers(trimmed, now, nil), classify.Containers(orig, now, nil); !reflect.DeepEqual(got, want) {
				t.Errorf("classify.Containers after transform = %+v, want %+v", got, want)
			}
			for name, fn := range map[string]func(*corev1.Pod) string{
				"STATUS":   func(p *corev1.Pod) string { return classify.Status(p, now) },
				"READY":    classify.Ready,
				"RESTARTS": func(p *corev1.Pod) string { return classify.Restarts(p, now) },
			} {
				if got, want := fn(trimmed), fn(orig); got != want {
					t.Errorf("%s after transform = %q, want %q", name, got, want)
				}
			}
			if got, want := snapshotOf(trimmed, now), snapshotOf(orig, now); got != want {
				t.Errorf("model snapshot after transform:\n%s\nwant:\n%s", got, want)
			}
			if got, want := detailOf(trimmed), detailOf(orig); !reflect.DeepEqual(got, want) {
				t.Errorf("what the detail pane reads after transform = %+v, want %+v", got, want)
			}
		})
	}
}

func TestTransformDropsWhatNobodyReads(t *testing.T) {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-1", Namespace: "default", UID: "u1", Labels: map[string]string{"app": "web"},
			Annotations: map[string]string{
				"kubectl.kubernetes.io/last-applied-configuration": `{"big":"json"}`,
				contract.RevisionAnnotation:                        "3",
			},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate}},
			Finalizers:    []string{"example.com/keep"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-abc", UID: "rs1",
			}},
		},
		Spec: corev1.PodSpec{
			NodeName: "node-1",
			Volumes:  []corev1.Volume{{Name: "data"}},
			Containers: []corev1.Container{{
				Name: "app", Image: "web:v2", Command: []string{"/bin/web"},
				Env:            []corev1.EnvVar{{Name: "SECRET_HINT", Value: "x"}},
				ReadinessProbe: &corev1.Probe{PeriodSeconds: 5},
			}},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning,
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "app", Ready: true, RestartCount: 2, Image: "web:v2",
				State:        corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
				VolumeMounts: []corev1.VolumeMountStatus{{Name: "data", MountPath: "/data"}},
				AllocatedResources: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("100m"),
				},
			}},
		},
	}
	tr := newTrimmer()
	out, _ := tr.transform(p)
	got := out.(*podrec.Record).Pod()
	if got.ManagedFields != nil || got.Finalizers != nil || got.Labels != nil || got.Annotations != nil {
		t.Errorf("managedFields/finalizers/labels/annotations kept: %v %v %v %v", got.ManagedFields, got.Finalizers, got.Labels, got.Annotations)
	}
	c := got.Spec.Containers[0]
	if c.Command != nil || c.Env != nil || got.Spec.Volumes != nil {
		t.Errorf("container command/env or volumes kept")
	}
	if c.Name != "app" || c.Image != "web:v2" || c.ReadinessProbe == nil {
		t.Errorf("container identity, image or readiness probe lost: %+v", c)
	}
	cs := got.Status.ContainerStatuses[0]
	if cs.VolumeMounts != nil || cs.AllocatedResources != nil || cs.ContainerID != "" {
		t.Errorf("container status volume mounts/resources/ID kept")
	}
	if !cs.Ready || cs.RestartCount != 2 || cs.State.Running == nil {
		t.Errorf("container status lost what classify reads: %+v", cs)
	}
	if got.Spec.NodeName != "node-1" || got.UID != "u1" || len(got.OwnerReferences) != 1 {
		t.Errorf("identity, node or owner lost: %+v", got.ObjectMeta)
	}

	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-1"},
		Spec:       corev1.NodeSpec{Unschedulable: true},
		Status: corev1.NodeStatus{
			Images:     []corev1.ContainerImage{{Names: []string{"registry/huge:1"}, SizeBytes: 1 << 30}},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		},
	}
	outN, _ := tr.transform(n)
	gn := outN.(*corev1.Node)
	if gn.Status.Images != nil || !gn.Spec.Unschedulable || len(gn.Status.Conditions) != 1 {
		t.Errorf("node trimmed wrongly: %+v", gn)
	}
	if gn.Labels != nil || gn.Status.NodeInfo != (corev1.NodeSystemInfo{}) {
		t.Errorf("node without attributes gained some: labels %v, nodeInfo %+v", gn.Labels, gn.Status.NodeInfo)
	}

	replicas := int32(4)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 7, Annotations: map[string]string{contract.RevisionAnnotation: "3", "note": "x"}},
		Spec:       appsv1.DeploymentSpec{Replicas: &replicas},
		Status:     appsv1.DeploymentStatus{ObservedGeneration: 7, UpdatedReplicas: 2},
	}
	outD, _ := tr.transform(d)
	gd := outD.(*appsv1.Deployment)
	if gd.Generation != 7 || *gd.Spec.Replicas != 4 || gd.Status.UpdatedReplicas != 2 || len(gd.Annotations) != 1 {
		t.Errorf("deployment lost what rollout status reads: %+v", gd)
	}
}

// snapshotOf is the model's --once JSON for a cluster of one pod.
func snapshotOf(p *corev1.Pod, now time.Time) string {
	m := model.New(model.DefaultConfig())
	m.Apply(&contract.Batch{Pods: []*podrec.Record{podrec.RecordOf(p)}}, now)
	var b strings.Builder
	snap := report.NewSnapshot(m, "test", now)
	if err := report.SnapshotPrinters.Print(&b, "json", &snap); err != nil {
		return err.Error()
	}
	return b.String()
}

// viewedPod is what tui/detail.go and tui/columns.go read from a pod object besides classify's
// answers: conditions, the controller chain, container names and images, and the states as shown.
type viewedPod struct {
	Conditions []corev1.PodCondition
	Owners     []string
	Containers []string
	Statuses   []corev1.ContainerStatus
}

func detailOf(p *corev1.Pod) viewedPod {
	var v viewedPod
	for _, c := range p.Status.Conditions {
		v.Conditions = append(v.Conditions, corev1.PodCondition{Type: c.Type, Status: c.Status, Reason: c.Reason,
			Message: c.Message, LastTransitionTime: c.LastTransitionTime})
	}
	for _, r := range p.OwnerReferences {
		if r.Controller != nil && *r.Controller {
			v.Owners = append(v.Owners, r.Kind+"/"+r.Name)
		}
	}
	for _, c := range p.Spec.InitContainers {
		v.Containers = append(v.Containers, fmt.Sprintf("init %s %s sidecar=%v", c.Name, c.Image, classify.IsSidecar(p, c.Name)))
	}
	for _, c := range p.Spec.Containers {
		v.Containers = append(v.Containers, c.Name+" "+c.Image)
	}
	for _, list := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
		for _, cs := range list {
			shown := corev1.ContainerStatus{Name: cs.Name, Ready: cs.Ready, RestartCount: cs.RestartCount,
				State: *cs.State.DeepCopy(), LastTerminationState: *cs.LastTerminationState.DeepCopy()}
			for _, s := range []*corev1.ContainerState{&shown.State, &shown.LastTerminationState} {
				if s.Terminated != nil {
					s.Terminated.ContainerID = "" // not shown
				}
			}
			v.Statuses = append(v.Statuses, shown)
		}
	}
	return v
}

// TestTransformSharesWhatPodsRepeat: two pods of one ReplicaSet, decoded separately as a watch
// decodes them, share their containers, owner references and repeated strings after the
// transform.
func TestTransformSharesWhatPodsRepeat(t *testing.T) {
	tr := newTrimmer()
	trim := func(i int) *corev1.Pod {
		out, err := tr.transform(decoded(t, rawPod(i)))
		if err != nil {
			t.Fatal(err)
		}
		return out.(*podrec.Record).Pod()
	}
	a, b := trim(1), trim(2)
	same := func(what string, x, y string) {
		t.Helper()
		if x != y || unsafe.StringData(x) != unsafe.StringData(y) {
			t.Errorf("%s not shared: %q and %q", what, x, y)
		}
	}
	if &a.Spec.Containers[0] != &b.Spec.Containers[0] {
		t.Errorf("containers of one ReplicaSet's pods are not shared")
	}
	if &a.OwnerReferences[0] != &b.OwnerReferences[0] {
		t.Errorf("owner references of one ReplicaSet's pods are not shared")
	}
	same("namespace", a.Namespace, b.Namespace)
	same("image", a.Status.ContainerStatuses[1].Image, b.Status.ContainerStatuses[1].Image)
	same("condition type", string(a.Status.Conditions[2].Type), string(b.Status.Conditions[2].Type))
	if a.Status.ContainerStatuses[0].Started != b.Status.ContainerStatuses[1].Started {
		t.Errorf("started flags are not shared")
	}
	if a.Name == b.Name || a.UID == b.UID {
		t.Errorf("pods mixed up: %s/%s and %s/%s", a.Name, a.UID, b.Name, b.UID)
	}

}

// TestTransformKeepsWhatRolloutStatusReads: a StatefulSet and a DaemonSet keep what `kubectl
// rollout status` and the model read (replicas, strategy, status, the template generation, the labels
// `wait -l` selects by) and lose their template and other annotations.
func TestTransformKeepsWhatRolloutStatusReads(t *testing.T) {
	tr := newTrimmer()
	strategy := appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
		RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptrTo(int32(0))}}
	status := appsv1.StatefulSetStatus{ObservedGeneration: 2, Replicas: 3, ReadyReplicas: 2, UpdateRevision: "redis-7c9f", CurrentRevision: "redis-5d4b"}
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "redis", UID: "s1", ResourceVersion: "7",
		Generation: 2, Labels: map[string]string{"app": "redis"}},
		Spec: appsv1.StatefulSetSpec{Replicas: ptrTo(int32(3)), UpdateStrategy: strategy, ServiceName: "redis",
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "redis", Image: "redis:7"}}}}},
		Status: status}
	out, _ := tr.transform(sts)
	want := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "redis", UID: "s1", ResourceVersion: "7", Generation: 2,
		Labels: map[string]string{"app": "redis"}},
		Spec: appsv1.StatefulSetSpec{Replicas: ptrTo(int32(3)), UpdateStrategy: strategy}, Status: status}
	if !reflect.DeepEqual(out, want) {
		t.Errorf("StatefulSet = %+v, want %+v", out, want)
	}

	dsStrategy := appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType}
	dsStatus := appsv1.DaemonSetStatus{ObservedGeneration: 4, DesiredNumberScheduled: 5, UpdatedNumberScheduled: 3, NumberAvailable: 3}
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "agent", UID: "d1", ResourceVersion: "9",
		Generation: 4, Labels: map[string]string{"app": "agent"},
		Annotations: map[string]string{appsv1.DeprecatedTemplateGeneration: "3", "kubectl.kubernetes.io/last-applied-configuration": "{}"}},
		Spec: appsv1.DaemonSetSpec{UpdateStrategy: dsStrategy,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Image: "agent:2"}}}}},
		Status: dsStatus}
	out, _ = tr.transform(ds)
	wantDS := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "agent", UID: "d1", ResourceVersion: "9",
		Generation: 4, Labels: map[string]string{"app": "agent"}, Annotations: map[string]string{appsv1.DeprecatedTemplateGeneration: "3"}},
		Spec: appsv1.DaemonSetSpec{UpdateStrategy: dsStrategy}, Status: dsStatus}
	if !reflect.DeepEqual(out, wantDS) {
		t.Errorf("DaemonSet = %+v, want %+v", out, wantDS)
	}
}

// awsNode is a node of an EKS managed node group as the API server serves it, with the labels
// a kubelet and the AWS cloud provider set (the GA and the beta forms of each) and a full nodeInfo.
func awsNode(name, zone, runtime string, heartbeat time.Time) *corev1.Node {
	hb := metav1.NewTime(heartbeat)
	since := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: "uid-" + types.UID(name), ResourceVersion: "7",
			Labels: map[string]string{
				"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
				"node.kubernetes.io/instance-type": "m6i.2xlarge", "beta.kubernetes.io/instance-type": "m6i.2xlarge",
				"topology.kubernetes.io/zone": zone, "failure-domain.beta.kubernetes.io/zone": zone,
				"topology.kubernetes.io/region": "eu-west-1", "failure-domain.beta.kubernetes.io/region": "eu-west-1",
				"eks.amazonaws.com/nodegroup": "general", "eks.amazonaws.com/capacityType": "ON_DEMAND",
			},
			Annotations: map[string]string{"node.alpha.kubernetes.io/ttl": "0"},
		},
		Spec: corev1.NodeSpec{PodCIDR: "10.244.3.0/24", ProviderID: "aws:///" + zone + "/i-0abc"},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{
				{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory",
					Message: "kubelet has sufficient memory available", LastHeartbeatTime: hb, LastTransitionTime: since},
				{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
					Message: "kubelet is posting ready status", LastHeartbeatTime: hb, LastTransitionTime: since},
			},
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.1.13"}},
			NodeInfo: corev1.NodeSystemInfo{MachineID: "ec2" + name, SystemUUID: "ec2-" + name, BootID: "boot-" + name,
				KernelVersion: "6.8.0-1031-aws", OSImage: "Ubuntu 24.04.3 LTS", OperatingSystem: "linux", Architecture: "amd64",
				ContainerRuntimeVersion: runtime, KubeletVersion: "v1.37.2"},
			Images: []corev1.ContainerImage{{Names: []string{"registry.k8s.io/kube-proxy:v1.37.2"}, SizeBytes: 30 << 20}},
		},
	}
}

// TestTransformKeepsNodeAttributes: a node keeps its four nodeInfo versions and one label per
// attribute the model reads (the GA label over its beta form), shared between nodes, and nothing
// else of its labels and nodeInfo; a heartbeat is still no change.
func TestTransformKeepsNodeAttributes(t *testing.T) {
	tr := newTrimmer()
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	trim := func(n *corev1.Node) *corev1.Node {
		t.Helper()
		out, err := tr.transform(n)
		if err != nil {
			t.Fatal(err)
		}
		return out.(*corev1.Node)
	}
	a := trim(awsNode("node-3", "eu-west-1b", "containerd://2.2.0", at))
	want := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-3", UID: "uid-node-3", ResourceVersion: "7",
			Labels: map[string]string{
				"node.kubernetes.io/instance-type": "m6i.2xlarge", "topology.kubernetes.io/zone": "eu-west-1b",
				"topology.kubernetes.io/region": "eu-west-1", "eks.amazonaws.com/nodegroup": "general",
			}},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{
				{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory",
					Message: "kubelet has sufficient memory available", LastTransitionTime: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))},
				{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
					Message: "kubelet is posting ready status", LastTransitionTime: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))},
			},
			NodeInfo: corev1.NodeSystemInfo{KernelVersion: "6.8.0-1031-aws", OSImage: "Ubuntu 24.04.3 LTS",
				ContainerRuntimeVersion: "containerd://2.2.0", KubeletVersion: "v1.37.2"},
		},
	}
	if !reflect.DeepEqual(a, want) {
		t.Errorf("trimmed node =\n%+v\nwant\n%+v", a, want)
	}
	if again := trim(a); !reflect.DeepEqual(again, a) {
		t.Errorf("transform is not idempotent for a node: %+v, then %+v", a, again)
	}

	// The beta labels stand in where a node has only those.
	old := awsNode("node-9", "eu-west-1c", "containerd://1.7.27", at)
	for _, k := range []string{"topology.kubernetes.io/zone", "topology.kubernetes.io/region", "node.kubernetes.io/instance-type", "eks.amazonaws.com/nodegroup"} {
		delete(old.Labels, k)
	}
	if got := trim(old).Labels; !reflect.DeepEqual(got, map[string]string{"failure-domain.beta.kubernetes.io/zone": "eu-west-1c",
		"failure-domain.beta.kubernetes.io/region": "eu-west-1", "beta.kubernetes.io/instance-type": "m6i.2xlarge"}) {
		t.Errorf("labels of a node with the beta labels only = %v", got)
	}

	b := trim(awsNode("node-4", "eu-west-1b", "containerd://2.2.0", at))
	for what, pair := range map[string][2]string{
		"runtime version": {a.Status.NodeInfo.ContainerRuntimeVersion, b.Status.NodeInfo.ContainerRuntimeVersion},
		"kernel version":  {a.Status.NodeInfo.KernelVersion, b.Status.NodeInfo.KernelVersion},
		"zone":            {a.Labels["topology.kubernetes.io/zone"], b.Labels["topology.kubernetes.io/zone"]},
	} {
		if unsafe.StringData(pair[0]) != unsafe.StringData(pair[1]) {
			t.Errorf("%s of two nodes is not shared", what)
		}
	}

	// A kubelet's status report a minute later changes only heartbeats: trimmed, it is the same node.
	next := trim(awsNode("node-3", "eu-west-1b", "containerd://2.2.0", at.Add(time.Minute)))
	if !reflect.DeepEqual(next, a) {
		t.Errorf("a heartbeat changed the trimmed node: %+v, was %+v", next, a)
	}
}

// TestTransformKeepsTheTimeoutOverride: Krane's per-resource timeout, which wait honours, stays on
// every kind wait waits for (with a DaemonSet's template generation beside it), and a Deployment's
// required rollout beside it; nothing else of their annotations does.
func TestTransformKeepsTheTimeoutOverride(t *testing.T) {
	tr := newTrimmer()
	ann := func(extra ...string) map[string]string {
		a := map[string]string{contract.TimeoutAnnotation: "PT5M", "kubectl.kubernetes.io/last-applied-configuration": "{}"}
		for i := 0; i+1 < len(extra); i += 2 {
			a[extra[i]] = extra[i+1]
		}
		return a
	}
	meta := func(extra ...string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: "shop", Name: "web", Annotations: ann(extra...)}
	}
	for _, obj := range []metav1.Object{
		&appsv1.Deployment{ObjectMeta: meta(contract.RevisionAnnotation, "3", contract.RequiredRolloutAnnotation, "90%")},
		&appsv1.StatefulSet{ObjectMeta: meta()},
		&appsv1.DaemonSet{ObjectMeta: meta(appsv1.DeprecatedTemplateGeneration, "2")},
		&batchv1.Job{ObjectMeta: meta()},
		&unstructured.Unstructured{Object: map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
			"metadata": map[string]any{"namespace": "shop", "name": "web",
				"annotations": map[string]any{contract.TimeoutAnnotation: "PT5M", "notes": "x"}}}},
	} {
		out, err := tr.transform(obj)
		if err != nil {
			t.Fatal(err)
		}
		got := out.(metav1.Object).GetAnnotations()
		if got[contract.TimeoutAnnotation] != "PT5M" || got["kubectl.kubernetes.io/last-applied-configuration"] != "" || got["notes"] != "" {
			t.Errorf("%T keeps annotations %v", obj, got)
		}
		if _, ok := obj.(*appsv1.DaemonSet); ok && got[appsv1.DeprecatedTemplateGeneration] != "2" {
			t.Errorf("DaemonSet lost its template generation: %v", got)
		}
		if _, ok := obj.(*appsv1.Deployment); ok && (got[contract.RevisionAnnotation] != "3" || got[contract.RequiredRolloutAnnotation] != "90%") {
			t.Errorf("Deployment lost its revision or its required rollout: %v", got)
		}
	}
	// The interned revision map is shared between objects: keeping the timeout must not write to it.
	a, _ := tr.transform(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "a",
		Annotations: map[string]string{contract.RevisionAnnotation: "3"}}})
	if got := a.(metav1.Object).GetAnnotations(); len(got) != 1 {
		t.Errorf("a Deployment without the timeout keeps %v", got)
	}
}
