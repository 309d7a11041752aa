package kube

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/cache"
)

// The shape of the clusters the scale tests build, as in BENCHMARKS.md's setup: Deployments of
// scalePodsPerDeployment pods, scalePodsPerNamespace pods to a namespace, round-robin over
// scaleNodes nodes.
const (
	scalePodsPerDeployment = 100
	scalePodsPerNamespace  = 10_000
	scaleNodes             = 100
)

var scaleT0 = time.Date(2026, time.January, 15, 10, 10, 0, 0, time.UTC)

// rawPod is pod i of a large cluster as the API server returns it: two containers (an app and an
// Envoy sidecar) with ports, env, resources, probes and mounts, the admission-added service
// account volume and tolerations, managedFields from three managers, five conditions and running
// container statuses. Every eighth pod crash-loops, the rest run.
func rawPod(i int) *corev1.Pod {
	ns := fmt.Sprintf("team-%02d", i/scalePodsPerNamespace)
	deploy := fmt.Sprintf("svc-%04d", i/scalePodsPerDeployment)
	rs := deploy + "-7d9f8c6b5"
	name := fmt.Sprintf("%s-%05x", rs, i)
	node := fmt.Sprintf("ip-10-0-%d-%d.ec2.internal", i%scaleNodes/250, i%scaleNodes%250)
	created := metav1.NewTime(scaleT0.Add(-time.Duration(i%86400) * time.Second))
	started := metav1.NewTime(created.Add(4 * time.Second))
	yes, no := true, false
	grace := int64(30)
	prio := int32(0)
	appImage := fmt.Sprintf("registry.example.com/team/%s:v1.%d.0", deploy, i/scalePodsPerDeployment%7)
	envoyImage := "registry.example.com/platform/envoy:v1.31.2"
	probe := func(port int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(port), Scheme: corev1.URISchemeHTTP}},
			PeriodSeconds: 10, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3,
		}
	}
	mounts := []corev1.VolumeMount{{Name: "kube-api-access-" + name[len(name)-5:], ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}}
	resources := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
	}
	container := func(cname, image string, port int32) corev1.Container {
		return corev1.Container{
			Name: cname, Image: image, ImagePullPolicy: corev1.PullIfNotPresent,
			Args:  []string{"--port=" + fmt.Sprint(port), "--log-level=info"},
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: port, Protocol: corev1.ProtocolTCP}},
			Env: []corev1.EnvVar{
				{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}},
				{Name: "SERVICE", Value: deploy},
			},
			Resources: resources, VolumeMounts: mounts,
			ReadinessProbe: probe(port), LivenessProbe: probe(port),
			TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			SecurityContext: &corev1.SecurityContext{RunAsNonRoot: &yes, AllowPrivilegeEscalation: &no},
		}
	}
	cond := func(t corev1.PodConditionType, ok bool, reason, msg string) corev1.PodCondition {
		s := corev1.ConditionTrue
		if !ok {
			s = corev1.ConditionFalse
		}
		return corev1.PodCondition{Type: t, Status: s, ObservedGeneration: 1, LastTransitionTime: started, Reason: reason, Message: msg}
	}
	crash := i%8 == 0
	cstatus := func(cname, image string, crashing bool) corev1.ContainerStatus {
		cs := corev1.ContainerStatus{
			Name: cname, Image: image, ImageID: fmt.Sprintf("%s@sha256:%064x", image, i/scalePodsPerDeployment),
			ContainerID: fmt.Sprintf("containerd://%032x%032x", i, len(cname)),
			Ready:       true, Started: &yes, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}},
			VolumeMounts:       []corev1.VolumeMountStatus{{Name: mounts[0].Name, MountPath: mounts[0].MountPath, ReadOnly: true, RecursiveReadOnly: ptrTo(corev1.RecursiveReadOnlyDisabled)}},
			AllocatedResources: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
			Resources:          &resources,
			User:               &corev1.ContainerUser{Linux: &corev1.LinuxContainerUser{UID: 1000, GID: 1000, SupplementalGroups: []int64{1000}}},
		}
		if crashing {
			cs.Ready, cs.Started, cs.RestartCount = false, &no, 4
			cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
				Message: fmt.Sprintf("back-off 1m20s restarting failed container=%s pod=%s_%s(%s)", cname, name, ns, podUID(i))}}
			cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error",
				StartedAt: started, FinishedAt: metav1.NewTime(scaleT0.Add(-time.Minute)), ContainerID: cs.ContainerID}
		}
		return cs
	}
	ready, readyReason, readyMsg := true, "", ""
	if crash {
		ready, readyReason, readyMsg = false, "ContainersNotReady", "containers with unready status: [app]"
	}
	fields := func(manager, body string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
			Time: &created, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(body)}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, GenerateName: rs + "-", Namespace: ns, UID: podUID(i),
			ResourceVersion: fmt.Sprint(1_000_000 + i*7), Generation: 1, CreationTimestamp: created,
			Labels: map[string]string{"app.kubernetes.io/name": deploy, "app.kubernetes.io/part-of": "shop", "pod-template-hash": "7d9f8c6b5"},
			Annotations: map[string]string{
				"kubectl.kubernetes.io/restartedAt": "2026-01-14T09:00:00Z",
				"prometheus.io/scrape":              "true", "prometheus.io/port": "9090",
			},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs,
				UID:        types.UID(fmt.Sprintf("5e1f2a3b-%04x-4d5e-8f90-%012x", i/scalePodsPerDeployment, i/scalePodsPerDeployment)),
				Controller: &yes, BlockOwnerDeletion: &yes}},
			ManagedFields: []metav1.ManagedFieldsEntry{
				fields("kube-controller-manager", `{"f:metadata":{"f:generateName":{},"f:labels":{".":{},"f:app.kubernetes.io/name":{},"f:pod-template-hash":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"5e1f2a3b\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:args":{},"f:env":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:ports":{},"f:readinessProbe":{},"f:resources":{}},"k:{\"name\":\"envoy\"}":{".":{},"f:image":{},"f:name":{}}},"f:dnsPolicy":{},"f:enableServiceLinks":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{}}}`),
				fields("kubelet", `{"f:status":{"f:conditions":{"k:{\"type\":\"ContainersReady\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Initialized\"}":{},"k:{\"type\":\"PodReadyToStartContainers\"}":{},"k:{\"type\":\"Ready\"}":{}},"f:containerStatuses":{},"f:hostIP":{},"f:hostIPs":{},"f:phase":{},"f:podIP":{},"f:podIPs":{".":{},"k:{\"ip\":\"10.64.0.1\"}":{}},"f:startTime":{}}}`),
				fields("kube-scheduler", `{"f:status":{"f:conditions":{".":{},"k:{\"type\":\"PodScheduled\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}}}}`),
			},
		},
		Spec: corev1.PodSpec{
			Volumes: []corev1.Volume{{Name: mounts[0].Name, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: ptrTo(int64(3607)), Path: "token"}},
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
						Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
				}}}}},
			Containers:                    []corev1.Container{container("app", appImage, 8080), container("envoy", envoyImage, 9901)},
			RestartPolicy:                 corev1.RestartPolicyAlways,
			TerminationGracePeriodSeconds: &grace,
			DNSPolicy:                     corev1.DNSClusterFirst,
			ServiceAccountName:            "default",
			NodeName:                      node,
			SecurityContext:               &corev1.PodSecurityContext{FSGroup: ptrTo(int64(1000))},
			SchedulerName:                 "default-scheduler",
			Tolerations: []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptrTo(int64(300))},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptrTo(int64(300))},
			},
			Priority: &prio, EnableServiceLinks: &yes, PreemptionPolicy: ptrTo(corev1.PreemptLowerPriority),
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{
				cond(corev1.PodReadyToStartContainers, true, "", ""), cond(corev1.PodInitialized, true, "", ""),
				cond(corev1.PodReady, ready, readyReason, readyMsg), cond(corev1.ContainersReady, ready, readyReason, readyMsg),
				cond(corev1.PodScheduled, true, "", ""),
			},
			HostIP:    fmt.Sprintf("10.0.%d.%d", i%scaleNodes/250, i%scaleNodes%250),
			PodIP:     fmt.Sprintf("10.%d.%d.%d", 64+i>>16&63, i>>8&255, i&255),
			StartTime: &started, QOSClass: corev1.PodQOSBurstable,
			ContainerStatuses: []corev1.ContainerStatus{cstatus("app", appImage, crash), cstatus("envoy", envoyImage, false)},
		},
	}
}

func podUID(i int) types.UID {
	return types.UID(fmt.Sprintf("0b9a6c8e-%04x-4c1d-9e2f-%012x", i&0xffff, i))
}

// ptrTo is the address of a copy of v, for the optional fields of test objects.
func ptrTo[T any](v T) *T { return &v }

// decoded returns p as an informer receives it: encoded to protobuf by the API server and decoded
// by client-go, so that every string is its own allocation.
func decoded(tb testing.TB, p *corev1.Pod) *corev1.Pod {
	data, err := p.Marshal()
	if err != nil {
		tb.Fatal(err)
	}
	out := &corev1.Pod{}
	if err := out.Unmarshal(data); err != nil {
		tb.Fatal(err)
	}
	return out
}

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkPodMemory reports what one pod costs once the informer holds it: a realistic
// two-container pod (rawPod), encoded to protobuf as the API server sends it, read into a record as
// the pod informer's decoder reads it (podcodec.go: Interner.PodFromProto) and kept in an informer
// store, measured as live heap after GC (B/pod). The model's own record of the pod (model.Pod) comes
// on top; model's BenchmarkMemory measures both.
func BenchmarkPodMemory(b *testing.B) {
	const n = 20_000
	encoded := make([][]byte, n)
	for i := range encoded {
		data, err := rawPod(i).Marshal()
		if err != nil {
			b.Fatal(err)
		}
		encoded[i] = data
	}
	var perPod float64
	for b.Loop() {
		b.StopTimer()
		before := liveHeap()
		b.StartTimer()
		store := cache.NewStore(cache.MetaNamespaceKeyFunc)
		tr := newTrimmer()
		for i := range n {
			tr.mu.Lock()
			r, err := tr.in.PodFromProto(encoded[i])
			tr.mu.Unlock()
			if err != nil {
				b.Fatal(err)
			}
			obj, err := tr.transform(r)
			if err != nil {
				b.Fatal(err)
			}
			if err := store.Add(obj); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		perPod = float64(liveHeap()-before) / n
		runtime.KeepAlive(store)
		b.StartTimer()
	}
	runtime.KeepAlive(encoded)
	b.ReportMetric(perPod, "B/pod")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkDecodePod is the pod informer's decoding of one watch event's pod: the protobuf
// envelope taken off and the record read (recordDecoder), against what client-go's decoder and the
// transform did before (decode into a corev1.Pod, then trim it into a record).
func BenchmarkDecodePod(b *testing.B) {
	data, err := rawPod(7).Marshal()
	if err != nil {
		b.Fatal(err)
	}
	tr := newTrimmer()
	b.Run("record", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			tr.mu.Lock()
			_, err := tr.in.PodFromProto(data)
			tr.mu.Unlock()
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("pod-then-trim", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p := &corev1.Pod{}
			if err := p.Unmarshal(data); err != nil {
				b.Fatal(err)
			}
			if _, err := tr.transform(p); err != nil {
				b.Fatal(err)
			}
		}
	})
}
