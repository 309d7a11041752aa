package e2e

// The runtime errors a scenario's node behaviours write, by the name a scenario gives in its
// behaviour's message field. Each is verbatim from the upstream source named beside it; the
// classify fixtures carry the same texts.
var nodeMessages = map[string]string{
	// containerd's shim not answering in time: StartError, exit 128, the shim's io pipe timing
	// out (containerd/containerd#11033; classify/testdata/start-failure-backoff-first.yaml). A
	// loaded node's runtime, not the container: the next try starts it.
	"shim-io-timeout": `failed to create containerd task: failed to create shim task: failed to start io pipe copy: unable to copy pipes: containerd-shim: opening w/o fifo "/run/containerd/io.containerd.grpc.v1.cri/containers/base/io/1363662740/base-stdout" failed: context deadline exceeded`,
	// The shim not starting in time, verbatim from GKE's CrashLoopBackOff troubleshooting page
	// (https://docs.cloud.google.com/kubernetes-engine/docs/troubleshooting/crashloopbackoff-events;
	// kube/demo/scenario.go shimTimeout).
	"shim-timeout": "failed to create containerd task: failed to create shim task: context deadline exceeded: unknown",
	// runc unable to join the sandbox's IPC namespace, the pause process gone: node trouble
	// (opencontainers/runc#3601, verbatim; classify/testdata/rt-containerd-run-error-ns-lstat-enoent.yaml).
	"ns-lstat-enoent": "failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to create new parent process: namespace path: lstat /proc/4173144/ns/ipc: no such file or directory: unknown",
	// Calico's CNI plugin failing to authenticate to the API server: the kubelet's
	// FailedCreatePodSandBox (`Failed to create pod sandbox: %v`, pkg/kubelet/kuberuntime/
	// kuberuntime_manager.go) verbatim from kubernetes-sigs/nfs-subdir-external-provisioner#257
	// (classify/testdata/ev-sandbox-calico-unauthorized.yaml).
	"sandbox-calico-unauthorized": `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "cb8a846be7902a752bae7f4cdee280111ba8f005e90b6b68c7062bd1cb68a7b4": plugin type="calico" failed (add): connection is unauthorized: Unauthorized`,
	// The AWS VPC CNI out of addresses on the node, verbatim from kubernetes/kubernetes#131071
	// (classify/testdata/ev-sandbox-aws-cni-no-ip.yaml).
	"sandbox-aws-cni-no-ip": `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "40d7bc158517c6954d0e8f1ba2bbc04e376e3123ab38227d6a601b7b1bb48ccf": plugin type="aws-cni" name="aws-cni" failed (add): add cmd: failed to assign an IP address to container`,
}
