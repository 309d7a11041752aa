package model

import (
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	extensionsv1beta1 "k8s.io/api/extensions/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"doomwatch/contract"
	"doomwatch/model/podtest"
	"doomwatch/podrec"
)

// The shared builders (model/podtest), under the names these tests use.
var (
	t0                = podtest.T0
	pod               = podtest.Pod
	onNode            = podtest.OnNode
	ownedBy           = podtest.OwnedBy
	app               = podtest.App
	terminated128     = podtest.Terminated128
	startFailed128    = podtest.StartFailed128
	recoveredAfter128 = podtest.RecoveredAfter128
	waiting           = podtest.Waiting
	node              = podtest.Node
	replicaSet        = podtest.ReplicaSet
	deployment        = podtest.Deployment
	withUID           = podtest.WithUID
	createError       = podtest.CreateError
)

const (
	runtimeMsg     = podtest.RuntimeMsg
	crioRuntimeMsg = podtest.CrioRuntimeMsg
)

type podOpt = podtest.PodOpt

// The labels a record keeps the pod's revision from (podrec.Record.Revision): the StatefulSet and
// DaemonSet controllers' revision hash and the DaemonSet controller's template generation.
const (
	revisionHashLabel       = appsv1.ControllerRevisionHashLabelKey
	templateGenerationLabel = extensionsv1beta1.DaemonSetTemplateGenerationKey
)

func uid(u string) podOpt { return func(p *corev1.Pod) { p.UID = types.UID(u) } }

func created(t time.Time) podOpt {
	return func(p *corev1.Pod) { p.CreationTimestamp = metav1.NewTime(t) }
}

func image(img string) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Image = img
		p.Status.ContainerStatuses[0].Image = img
	}
}

// startFailing128Now: the failure is still the current state (before the kubelet restarts it).
func startFailing128Now(at time.Time, restarts int32) podOpt {
	return app(func(cs *corev1.ContainerStatus) {
		cs.RestartCount = restarts
		cs.State.Terminated = terminated128(at, runtimeMsg)
	})
}

// imageNotFound: containerd 1.7's tag-not-found, its placeholders filled with the test image
// (containerd/containerd pkg/cri/server/image_pull.go, release/1.7: `failed to pull and unpack image
// %q: %w`, `failed to resolve reference %q: %w`, `%v: not found`; the same text for another image in
// substratusai/runbooks#42), carried by gRPC as NotFound and put in the waiting message by the
// kubelet (kubernetes/kubernetes pkg/kubelet/images/image_manager.go).
func imageNotFound() podOpt {
	return waiting("ErrImagePull", `rpc error: code = NotFound desc = failed to pull and unpack image "registry.example/app:v9": `+
		`failed to resolve reference "registry.example/app:v9": registry.example/app:v9: not found`)
}

// imageBackOff: the kubelet's back-off message without the previous pull error, as every kubelet
// before v1.30 writes it and v1.30+ does when it holds no previous error (kubernetes/kubernetes
// pkg/kubelet/images/image_manager.go EnsureImageExists: `Back-off pulling image %q`).
func imageBackOff() podOpt {
	return waiting("ImagePullBackOff", `Back-off pulling image "registry.example/app:v9"`)
}

// crashLoop: OOMKilled (containerd's oomExitReason, internal/cri/server/helpers.go), restarted at
// the kubelet's maximum back-off (kubernetes/kubernetes pkg/kubelet/kuberuntime/kuberuntime_manager.go
// doBackOff: `back-off %s restarting failed container=%s pod=%s`, the pod as name_namespace(uid),
// 5m0s the cap).
func crashLoop() podOpt {
	return func(p *corev1.Pod) {
		msg := fmt.Sprintf("back-off 5m0s restarting failed container=%s pod=%s_%s(%s)",
			p.Status.ContainerStatuses[0].Name, p.Name, p.Namespace, p.UID)
		app(func(cs *corev1.ContainerStatus) {
			cs.RestartCount = 5
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: msg}
			cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137}
		})(p)
	}
}

func apply(m *Model, now time.Time, pods ...*corev1.Pod) {
	m.Apply(&contract.Batch{Pods: records(pods...)}, now)
}

// records makes the pods' records, as kube's transform does.
func records(pods ...*corev1.Pod) []*podrec.Record {
	out := make([]*podrec.Record, len(pods))
	for i, p := range pods {
		out[i] = podrec.RecordOf(p)
	}
	return out
}

// crioExecMsg is how CRI-O reports a missing executable, create-error (doomed), verbatim from
// classify/testdata/rt-crio-runc-exec-not-found.yaml (opencontainers/runc#4713); podtest's
// CrioRuntimeMsg is node trouble.
const crioExecMsg = `container create failed: runc create failed: unable to start container process: exec: "/cluster/kube-apiserver-operator": executable file not found in $PATH`
