package podrec

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// FuzzPodFromProto holds the hand-written decoder to the generated one. Whatever bytes the
// generated (*corev1.Pod).Unmarshal accepts, PodFromProto accepts too and makes the record
// Interner.Pod makes of the decoded pod: the same content (SameContent), resource version and
// rebuilt pod, without an interner and with one. Bytes the generated code rejects PodFromProto may
// accept: it does not parse what a record does not keep (managedFields, volumes, env, the
// container statuses' resources), nor check the wire type of a field it reads, so a pod malformed
// only there is still a record. It must not panic on any bytes.
//
// The fuzzer gives two pods, and the second is decoded through the interner that decoded the
// first: a cache key that does not determine what it shares (a spec, owner references, a
// condition's text) shows as a record of the second pod holding the first's. The seeds are the
// classify fixtures and a pod with every field a record keeps and many it skips, marshaled by the
// generated code, and pairs of them concatenated: protobuf merges a message that arrives twice
// (the second pod's metadata, spec and status merged into the first's), which the generated code
// does field by field.
func FuzzPodFromProto(f *testing.F) {
	fixtures := classifyFixtures(f)
	names := make([]string, 0, len(fixtures))
	for name := range fixtures {
		names = append(names, name)
	}
	slices.Sort(names)
	pods := []*corev1.Pod{richPod()}
	for _, name := range names {
		pods = append(pods, fixtures[name])
	}
	encoded := make([][]byte, len(pods))
	for i, p := range pods {
		data, err := p.Marshal()
		if err != nil {
			f.Fatal(err)
		}
		encoded[i] = data
	}
	for i, a := range encoded {
		b := encoded[(i+1)%len(encoded)]
		f.Add(a, b)
		f.Add(slices.Concat(a, b), a)
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		in := NewInterner()
		for _, data := range [][]byte{a, b} {
			if sameAsGenerated(t, "without an interner", nil, data) {
				sameAsGenerated(t, "with an interner", in, data)
				sameAsGenerated(t, "with the interner again", in, data)
			} else {
				_, _ = in.PodFromProto(data) // b is decoded after whatever a left in the interner
			}
		}
	})
}

// richPod is a pod being deleted with every field a record keeps (a DaemonSet's pod: both revision
// labels, the Job index annotations, an init sidecar with probes, readiness gates, conditions,
// container statuses in every state) and many it skips (managedFields, volumes, env, resources,
// other labels and annotations, container IDs), so that the seeds reach the decoder's skipping.
func richPod() *corev1.Pod {
	at := func(sec int) metav1.Time { return metav1.NewTime(t0.Add(time.Duration(sec) * time.Second)) }
	yes, no := true, false
	always := corev1.ContainerRestartPolicyAlways
	deleted := at(600)
	grace := int64(30)
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz",
		Port: intstr.FromInt32(8080)}}, PeriodSeconds: 10}
	res := corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}
	owner := controllerRef("DaemonSet", "agent")
	owner.APIVersion, owner.BlockOwnerDeletion = "apps/v1", &yes
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "agent-x7k2p", GenerateName: "agent-", Namespace: "kube-system", UID: "0b6e4a1c-8d1f-4f2a-9c3e-5a7b9d1e2f30",
			ResourceVersion: "48213", Generation: 2, CreationTimestamp: at(0), DeletionTimestamp: &deleted,
			DeletionGracePeriodSeconds: &grace,
			Labels:                     map[string]string{"app": "agent", revisionHashLabel: "6c9f8d7b5", templateGenerationLabel: "4"},
			Annotations: map[string]string{"batch.kubernetes.io/job-completion-index": "3",
				"batch.kubernetes.io/job-index-failure-count": "1", "kubectl.kubernetes.io/restartedAt": "2025-03-01T11:00:00Z"},
			OwnerReferences: []metav1.OwnerReference{owner},
			Finalizers:      []string{"example.com/cleanup"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate,
				APIVersion: "v1", Time: &deleted, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:status":{}}`)}},
		},
		Spec: corev1.PodSpec{
			NodeName:      "node-3",
			RestartPolicy: corev1.RestartPolicyAlways,
			Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{
				ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "agent"}}}}},
			InitContainers: []corev1.Container{
				{Name: "setup", Image: "registry.example/setup:v1", Command: []string{"/setup"}},
				{Name: "proxy", Image: "registry.example/proxy:v2", RestartPolicy: &always, StartupProbe: probe},
			},
			Containers: []corev1.Container{{
				Name: "agent", Image: "registry.example/agent:v4", Resources: res, ReadinessProbe: probe, LivenessProbe: probe,
				Env:          []corev1.EnvVar{{Name: "NODE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}},
				VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc/agent"}},
			}},
			ReadinessGates: []corev1.PodReadinessGate{{ConditionType: "example.com/registered"}},
			Tolerations:    []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, Reason: "Terminating", Message: "the node is draining",
			HostIP: "10.0.0.3", PodIP: "10.1.3.7", StartTime: &deleted, QOSClass: corev1.PodQOSBurstable,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady",
					Message: "containers with unready status: [agent]", LastTransitionTime: at(120), LastProbeTime: at(130)},
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at(1)},
			},
			InitContainerStatuses: []corev1.ContainerStatus{
				{Name: "setup", Image: "registry.example/setup:v1", ImageID: "registry.example/setup@sha256:0a1b",
					ContainerID: "containerd://1f2e", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
						ExitCode: 0, Reason: "Completed", StartedAt: at(2), FinishedAt: at(4), ContainerID: "containerd://1f2e"}}},
				{Name: "proxy", Image: "registry.example/proxy:v2", Ready: true, Started: &yes, RestartCount: 1,
					State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at(5)}},
					LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 128, Signal: 9, Reason: "StartError", Message: "failed to create task", StartedAt: metav1.NewTime(time.Unix(0, 0)), FinishedAt: at(4)}}},
			},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "agent", Image: "registry.example/agent:v4", Started: &no, RestartCount: 7, Resources: &res,
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
					Message: "back-off 5m0s restarting failed container=agent pod=agent-x7k2p_kube-system"}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1,
					Reason: "Error", StartedAt: at(100), FinishedAt: at(110)}},
			}},
		},
	}
}
