package demo

import (
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// timestamp is the API timestamp of simulated time at. The API server stores seconds, so the demo
// does too.
func timestamp(at time.Duration) metav1.Time {
	return metav1.NewTime(Epoch.Add(at).Truncate(time.Second))
}

func timestampPtr(at time.Duration) *metav1.Time { t := timestamp(at); return &t }

// ids draws every name suffix, UID and container ID from one seeded source, in the fixed
// order the scenario is built, so a seed always yields the same cluster.
type ids struct{ rng *rand.Rand }

func newIDs(seed int64) *ids {
	return &ids{rng: rand.New(rand.NewPCG(uint64(seed), 0x646f6f6d77617463))}
}

// safeAlphabet is the alphabet of generated names and pod-template hashes
// (k8s.io/apimachinery/pkg/util/rand.SafeEncodeString: no vowels, no look-alikes).
const safeAlphabet = "bcdfghjklmnpqrstvwxz2456789"

func (g *ids) suffix(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = safeAlphabet[g.rng.IntN(len(safeAlphabet))]
	}
	return string(b)
}

func (g *ids) hex(n int) string {
	b := make([]byte, n/2)
	for i := range b {
		b[i] = byte(g.rng.UintN(256))
	}
	return hex.EncodeToString(b)
}

// uid is a version-4 style UUID.
func (g *ids) uid() types.UID {
	h := g.hex(32)
	return types.UID(h[0:8] + "-" + h[8:12] + "-4" + h[13:16] + "-a" + h[17:20] + "-" + h[20:32])
}

func (g *ids) containerID() string { return "containerd://" + g.hex(64) }

// jitter is a deterministic delay of whole seconds in [0, max]. Whole seconds keep every event
// on the API's one-second timestamp grid.
func (g *ids) jitter(max time.Duration) time.Duration {
	return time.Duration(g.rng.IntN(int(max/time.Second)+1)) * time.Second
}

func ownerRef(kind string, obj metav1.Object) metav1.OwnerReference {
	apiVersion := "apps/v1"
	if kind == "Job" {
		apiVersion = "batch/v1"
	}
	t := true
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: obj.GetName(), UID: obj.GetUID(), Controller: &t, BlockOwnerDeletion: &t}
}

// newNode is a Ready worker node of an EKS managed node group as a kubelet on containerd reports
// it. The condition reasons and messages are the kubelet's (kubernetes/kubernetes
// pkg/kubelet/nodestatus/setters.go: MemoryPressureCondition, DiskPressureCondition,
// PIDPressureCondition, ReadyCondition). Two nodes per zone, the fifth alone in eu-west-1c, so
// the flaky node-3 shares its zone with node-4. node-3 is the one node the runtime upgrade reached
// so far: containerd 2.2.0, where the others run 2.1.4 (both released versions), and that is
// what the suspect node-3 has that no other node has.
//
// In a fleet (Variant), each cluster's nodes are in its own region, and node-3 runs containerd
// 2.2.0 only where the upgrade has reached (Variant.calm is false).
func newNode(g *ids, i int, created time.Duration, v Variant) *corev1.Node {
	name := fmt.Sprintf("node-%d", i)
	ip := fmt.Sprintf("10.0.1.%d", 10+i)
	region := v.region()
	zone := fmt.Sprintf("%s%c", region, 'a'+rune((i-1)/2))
	runtime := "containerd://2.1.4"
	if i == 3 && !v.calm() {
		runtime = "containerd://2.2.0"
	}
	cond := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: s, Reason: reason, Message: msg,
			LastHeartbeatTime: timestamp(0), LastTransitionTime: timestamp(created + time.Minute)}
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, UID: g.uid(), CreationTimestamp: timestamp(created),
			Labels: map[string]string{
				"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
				"node.kubernetes.io/instance-type": "m6i.2xlarge", "beta.kubernetes.io/instance-type": "m6i.2xlarge",
				"topology.kubernetes.io/zone": zone, "topology.kubernetes.io/region": region,
				"failure-domain.beta.kubernetes.io/zone": zone, "failure-domain.beta.kubernetes.io/region": region,
				"eks.amazonaws.com/nodegroup": "general", "eks.amazonaws.com/capacityType": "ON_DEMAND",
			},
			Annotations: map[string]string{"node.alpha.kubernetes.io/ttl": "0"},
		},
		Spec: corev1.NodeSpec{PodCIDR: fmt.Sprintf("10.244.%d.0/24", i), PodCIDRs: []string{fmt.Sprintf("10.244.%d.0/24", i)},
			ProviderID: fmt.Sprintf("aws:///%s/i-0%s", zone, g.hex(16))},
		Status: corev1.NodeStatus{
			Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi"), corev1.ResourcePods: resource.MustParse("110")},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("7910m"), corev1.ResourceMemory: resource.MustParse("31160Mi"), corev1.ResourcePods: resource.MustParse("110")},
			Conditions: []corev1.NodeCondition{
				cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
				cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
				cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
				cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"),
			},
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}, {Type: corev1.NodeHostName, Address: name}},
			NodeInfo: corev1.NodeSystemInfo{
				MachineID: g.hex(32), SystemUUID: string(g.uid()), BootID: string(g.uid()),
				KernelVersion: "6.8.0-1031-aws", OSImage: "Ubuntu 24.04.3 LTS", OperatingSystem: "linux", Architecture: "amd64",
				ContainerRuntimeVersion: runtime, KubeletVersion: "v1.37.2",
			},
		},
	}
}

// appSpec describes one container workload: enough to build its pod template.
type appSpec struct {
	namespace, name string
	image           string
	port            int32
	memory          string // request and limit
	probe           bool   // readiness probe on /healthz
}

func (a appSpec) container() corev1.Container {
	c := corev1.Container{
		Name: a.name, Image: a.image, ImagePullPolicy: corev1.PullIfNotPresent,
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse(a.memory)},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(a.memory)},
		},
		TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
	}
	if a.port != 0 {
		c.Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: a.port, Protocol: corev1.ProtocolTCP}}
	}
	if a.probe {
		c.ReadinessProbe = &corev1.Probe{
			ProbeHandler:        corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http"), Scheme: corev1.URISchemeHTTP}},
			InitialDelaySeconds: 5, PeriodSeconds: 5, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3,
		}
	}
	return c
}

func (a appSpec) template(labels map[string]string) corev1.PodTemplateSpec {
	grace := int64(30)
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{a.container()}, RestartPolicy: corev1.RestartPolicyAlways,
			TerminationGracePeriodSeconds: &grace, DNSPolicy: corev1.DNSClusterFirst, SchedulerName: "default-scheduler",
			ServiceAccountName: "default",
		},
	}
}

func copyLabels(m map[string]string, extra ...string) map[string]string {
	out := make(map[string]string, len(m)+len(extra)/2)
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(extra); i += 2 {
		out[extra[i]] = extra[i+1]
	}
	return out
}

func int32p(v int32) *int32 { return &v }

// newDeployment is a Deployment with a RollingUpdate strategy, settled at revision 1.
func newDeployment(g *ids, a appSpec, replicas int32, created time.Duration) *appsv1.Deployment {
	labels := map[string]string{"app.kubernetes.io/name": a.name}
	surge, unavail := intstr.FromString("25%"), intstr.FromString("25%")
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: a.namespace, Name: a.name, UID: g.uid(), Generation: 1, CreationTimestamp: timestamp(created),
			Labels: copyLabels(labels), Annotations: map[string]string{"deployment.kubernetes.io/revision": "1"},
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: int32p(replicas), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: a.template(copyLabels(labels)),
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &surge, MaxUnavailable: &unavail}},
			RevisionHistoryLimit: int32p(10), ProgressDeadlineSeconds: int32p(600),
		},
	}
}

// newReplicaSet is the ReplicaSet a Deployment controller makes for its current template.
func newReplicaSet(g *ids, d *appsv1.Deployment, revision int, replicas int32, created time.Duration) *appsv1.ReplicaSet {
	hash := g.suffix(10)
	labels := copyLabels(d.Spec.Template.Labels, appsv1.DefaultDeploymentUniqueLabelKey, hash)
	tmpl := *d.Spec.Template.DeepCopy()
	tmpl.Labels = copyLabels(labels)
	maxSurge := *d.Spec.Replicas + (*d.Spec.Replicas+3)/4
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: d.Namespace, Name: d.Name + "-" + hash, UID: g.uid(), Generation: 1, CreationTimestamp: timestamp(created),
			Labels: labels, OwnerReferences: []metav1.OwnerReference{ownerRef("Deployment", d)},
			Annotations: map[string]string{
				"deployment.kubernetes.io/revision":         fmt.Sprint(revision),
				"deployment.kubernetes.io/desired-replicas": fmt.Sprint(*d.Spec.Replicas),
				"deployment.kubernetes.io/max-replicas":     fmt.Sprint(maxSurge),
			},
		},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: int32p(replicas), Template: tmpl,
			Selector: &metav1.LabelSelector{MatchLabels: copyLabels(labels)},
		},
	}
}

// newPod is a new, not yet scheduled pod made from a template and owned by owner.
func newPod(g *ids, namespace, name string, tmpl corev1.PodTemplateSpec, owner metav1.OwnerReference, created time.Duration) *corev1.Pod {
	spec := *tmpl.Spec.DeepCopy()
	spec.EnableServiceLinks = boolp(true)
	spec.PreemptionPolicy = ptrTo(corev1.PreemptLowerPriority)
	spec.Priority = int32p(0)
	sec := int64(300)
	spec.Tolerations = []corev1.Toleration{
		{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &sec},
		{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &sec},
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace, Name: name, UID: g.uid(), CreationTimestamp: timestamp(created),
			Labels: copyLabels(tmpl.Labels), OwnerReferences: []metav1.OwnerReference{owner},
		},
		Spec: spec,
		Status: corev1.PodStatus{
			Phase: corev1.PodPending, QOSClass: corev1.PodQOSBurstable,
		},
	}
}

func boolp(b bool) *bool  { return &b }
func ptrTo[T any](v T) *T { return &v }
func (g *ids) podIP(node string) string {
	return fmt.Sprintf("10.244.%s.%d", strings.TrimPrefix(node, "node-"), 2+g.rng.IntN(250))
}

// setPodCondition sets a pod condition, keeping its transition time when the status holds.
func setPodCondition(p *corev1.Pod, t corev1.PodConditionType, s corev1.ConditionStatus, reason, msg string, at time.Duration) {
	for i := range p.Status.Conditions {
		c := &p.Status.Conditions[i]
		if c.Type != t {
			continue
		}
		if c.Status != s {
			c.LastTransitionTime = timestamp(at)
		}
		c.Status, c.Reason, c.Message = s, reason, msg
		return
	}
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: t, Status: s, Reason: reason, Message: msg, LastTransitionTime: timestamp(at)})
}

// containerStatus returns the status of the pod's first container, creating it on first use.
func containerStatus(p *corev1.Pod) *corev1.ContainerStatus {
	if len(p.Status.ContainerStatuses) == 0 {
		c := p.Spec.Containers[0]
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: c.Name, Image: c.Image}}
	}
	return &p.Status.ContainerStatuses[0]
}

// imageDigest is the resolved image reference kubelet reports as imageID once pulled.
func imageDigest(g *ids, image string) string {
	repo := image
	if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		repo = image[:i]
	}
	return repo + "@sha256:" + g.hex(64)
}

func newJob(g *ids, namespace, name string, app appSpec, created time.Duration) *batchv1.Job {
	uid := g.uid()
	labels := map[string]string{"batch.kubernetes.io/controller-uid": string(uid), "batch.kubernetes.io/job-name": name,
		"controller-uid": string(uid), "job-name": name}
	tmpl := app.template(copyLabels(labels))
	tmpl.Spec.RestartPolicy = corev1.RestartPolicyNever
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: uid, Generation: 1, CreationTimestamp: timestamp(created),
			Labels: copyLabels(labels)},
		Spec: batchv1.JobSpec{
			Parallelism: int32p(1), Completions: int32p(1), BackoffLimit: int32p(6),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"batch.kubernetes.io/controller-uid": string(uid)}},
			Template: tmpl, CompletionMode: ptrTo(batchv1.NonIndexedCompletion), Suspend: boolp(false),
			PodReplacementPolicy: ptrTo(batchv1.TerminatingOrFailed),
		},
	}
}

func newDaemonSet(g *ids, a appSpec, created time.Duration) *appsv1.DaemonSet {
	labels := map[string]string{"app.kubernetes.io/name": a.name}
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: a.namespace, Name: a.name, UID: g.uid(), Generation: 1, CreationTimestamp: timestamp(created),
			Labels: copyLabels(labels), Annotations: map[string]string{"deprecated.daemonset.template.generation": "1"}},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: a.template(copyLabels(labels)),
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType}, RevisionHistoryLimit: int32p(10),
		},
	}
}

func newStatefulSet(g *ids, a appSpec, replicas int32, created time.Duration) *appsv1.StatefulSet {
	labels := map[string]string{"app.kubernetes.io/name": a.name}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: a.namespace, Name: a.name, UID: g.uid(), Generation: 1, CreationTimestamp: timestamp(created),
			Labels: copyLabels(labels)},
		Spec: appsv1.StatefulSetSpec{
			Replicas: int32p(replicas), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: a.template(copyLabels(labels)),
			ServiceName: a.name, PodManagementPolicy: appsv1.OrderedReadyPodManagement,
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType}, RevisionHistoryLimit: int32p(10),
		},
	}
}
