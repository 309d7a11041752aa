package kube

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"doomwatch/classify"
	"doomwatch/model"
)

// TestTransformKeepsWhatClassifyReads runs every classify fixture through the informer transform:
// the verdicts and kubectl columns of the trimmed pod must equal those of the original.
func TestTransformKeepsWhatClassifyReads(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "classify", "testdata", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no classify fixtures found")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			orig := &corev1.Pod{}
			if err := yaml.Unmarshal(data, orig); err != nil {
				t.Fatal(err)
			}
			now, err := time.Parse(time.RFC3339, orig.Annotations["test.doomwatch.io/now"])
			if err != nil {
				now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
			}
			before := orig.DeepCopy()
			out, err := transform(orig)
			if err != nil {
				t.Fatal(err)
			}
			trimmed := out.(*corev1.Pod)
			if !reflect.DeepEqual(orig, before) {
				t.Errorf("transform modified its input")
			}
			if got, want := classify.Pod(trimmed), classify.Pod(orig); !reflect.DeepEqual(got, want) {
				t.Errorf("classify.Pod after transform = %+v, want %+v", got, want)
			}
			if got, want := classify.Containers(trimmed, nil), classify.Containers(orig, nil); !reflect.DeepEqual(got, want) {
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
		})
	}
}

func TestTransformDropsWhatNobodyReads(t *testing.T) {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-1", Namespace: "default", UID: "u1", Labels: map[string]string{"app": "web"},
			Annotations: map[string]string{
				"kubectl.kubernetes.io/last-applied-configuration": `{"big":"json"}`,
				model.RevisionAnnotation:                           "3",
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
	out, _ := transform(p)
	got := out.(*corev1.Pod)
	if got.ManagedFields != nil || got.Finalizers != nil {
		t.Errorf("managedFields/finalizers kept: %v %v", got.ManagedFields, got.Finalizers)
	}
	if want := map[string]string{model.RevisionAnnotation: "3"}; !reflect.DeepEqual(got.Annotations, want) {
		t.Errorf("annotations = %v, want only the revision", got.Annotations)
	}
	c := got.Spec.Containers[0]
	if c.Command != nil || c.Env != nil || got.Spec.Volumes != nil {
		t.Errorf("container command/env or volumes kept")
	}
	if c.Name != "app" || c.Image != "web:v2" || c.ReadinessProbe == nil {
		t.Errorf("container identity, image or readiness probe lost: %+v", c)
	}
	cs := got.Status.ContainerStatuses[0]
	if cs.VolumeMounts != nil || cs.AllocatedResources != nil {
		t.Errorf("container status volume mounts/resources kept")
	}
	if !cs.Ready || cs.RestartCount != 2 || cs.State.Running == nil {
		t.Errorf("container status lost what classify reads: %+v", cs)
	}
	if got.Spec.NodeName != "node-1" || got.UID != "u1" || got.Labels["app"] != "web" || len(got.OwnerReferences) != 1 {
		t.Errorf("identity, node, labels or owner lost: %+v", got.ObjectMeta)
	}

	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-1"},
		Spec:       corev1.NodeSpec{Unschedulable: true},
		Status: corev1.NodeStatus{
			Images:     []corev1.ContainerImage{{Names: []string{"registry/huge:1"}, SizeBytes: 1 << 30}},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		},
	}
	outN, _ := transform(n)
	gn := outN.(*corev1.Node)
	if gn.Status.Images != nil || !gn.Spec.Unschedulable || len(gn.Status.Conditions) != 1 {
		t.Errorf("node trimmed wrongly: %+v", gn)
	}

	replicas := int32(4)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 7, Annotations: map[string]string{model.RevisionAnnotation: "3", "note": "x"}},
		Spec:       appsv1.DeploymentSpec{Replicas: &replicas},
		Status:     appsv1.DeploymentStatus{ObservedGeneration: 7, UpdatedReplicas: 2},
	}
	outD, _ := transform(d)
	gd := outD.(*appsv1.Deployment)
	if gd.Generation != 7 || *gd.Spec.Replicas != 4 || gd.Status.UpdatedReplicas != 2 || len(gd.Annotations) != 1 {
		t.Errorf("deployment lost what rollout status reads: %+v", gd)
	}
}
