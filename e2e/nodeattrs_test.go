package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// nodeWith creates a Ready node with the well-known labels and reports its nodeInfo as its kubelet
// would (status.nodeInfo is written through the status subresource).
func (e *env) nodeWith(name, runtime, zone string) {
	e.t.Helper()
	n := e.node(name, true)
	n.Labels = map[string]string{"topology.kubernetes.io/zone": zone, "topology.kubernetes.io/region": "eu-west-1",
		"node.kubernetes.io/instance-type": "m6i.2xlarge", "eks.amazonaws.com/nodegroup": "general"}
	n, err := e.client.CoreV1().Nodes().Update(e.ctx, n, metav1.UpdateOptions{})
	if err != nil {
		e.t.Fatalf("labelling node %s: %v", name, err)
	}
	n.Status.NodeInfo = corev1.NodeSystemInfo{KubeletVersion: "v1.37.2", ContainerRuntimeVersion: runtime,
		KernelVersion: "6.8.0-1021-aws", OSImage: "Ubuntu 24.04.2 LTS", OperatingSystem: "linux", Architecture: "amd64"}
	if _, err := e.client.CoreV1().Nodes().UpdateStatus(e.ctx, n, metav1.UpdateOptions{}); err != nil {
		e.t.Fatalf("updating node %s status: %v", name, err)
	}
}

// TestNodeAttributesReachTheJSON: a node's nodeInfo and its topology, instance-type and node-group
// labels, written as a kubelet and a cloud provider would, reach `--once -o json`; and when the one
// suspect node runs a container runtime the others do not, the snapshot says so.
func TestNodeAttributesReachTheJSON(t *testing.T) {
	e := newEnv(t)
	flaky, calmA, calmB := e.nodeName("flaky"), e.nodeName("calm-a"), e.nodeName("calm-b")
	e.nodeWith(flaky, "containerd://2.2.0", "eu-west-1a")
	e.nodeWith(calmA, "containerd://2.1.4", "eu-west-1a")
	e.nodeWith(calmB, "containerd://2.1.4", "eu-west-1b")
	_, owner := e.deployment("web", 4, 1)
	for i := range 3 {
		fail := term("StartError", 128, runtimeHiccup, time.Duration(20+5*i)*time.Second)
		e.pod(podSpec{name: fmt.Sprintf("web-%d", i), node: flaky, owner: &owner,
			status: podStatus(corev1.PodPending, terminatedStatus("app", 0, fail, nil))})
	}
	e.pod(podSpec{name: "web-ok", node: calmA, owner: &owner, status: podStatus(corev1.PodRunning, running("app", true, 0, nil))})

	r := runDoomwatch(t, time.Minute, nil, "--once", "-o", "json", "--request-timeout=20s", "--kubeconfig", adminKubeconfig(t), "-n", e.ns)
	if r.code != 0 {
		t.Fatalf("--once: %s", r)
	}
	checkSchema(t, r.stdout)
	var snap struct {
		Nodes []struct {
			Name     string `json:"name"`
			Suspect  bool   `json:"suspect"`
			NodeInfo struct {
				Kubelet string `json:"kubeletVersion"`
				Runtime string `json:"containerRuntimeVersion"`
				Kernel  string `json:"kernelVersion"`
				OSImage string `json:"osImage"`
			} `json:"nodeInfo"`
			Zone         string                             `json:"zone"`
			Region       string                             `json:"region"`
			InstanceType string                             `json:"instanceType"`
			Pool         string                             `json:"pool"`
			Conditions   map[string]struct{ Status string } `json:"conditions"`
		} `json:"nodes"`
		SuspectsShare []string `json:"suspectsShare"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &snap); err != nil {
		t.Fatalf("decoding --once -o json: %v", err)
	}
	found := 0
	for _, n := range snap.Nodes {
		if n.Name != flaky && n.Name != calmA && n.Name != calmB {
			continue
		}
		found++
		if n.NodeInfo.Kubelet != "v1.37.2" || n.NodeInfo.Kernel != "6.8.0-1021-aws" || n.NodeInfo.OSImage != "Ubuntu 24.04.2 LTS" ||
			n.Region != "eu-west-1" || n.InstanceType != "m6i.2xlarge" || n.Pool != "general" || n.Conditions["Ready"].Status != "True" {
			t.Errorf("node %s: %+v", n.Name, n)
		}
		if (n.Name == flaky) != n.Suspect || n.Name == flaky && (n.NodeInfo.Runtime != "containerd://2.2.0" || n.Zone != "eu-west-1a") {
			t.Errorf("node %s: suspect %v, runtime %q, zone %q", n.Name, n.Suspect, n.NodeInfo.Runtime, n.Zone)
		}
	}
	if found != 3 {
		t.Fatalf("%d of the 3 nodes in the snapshot", found)
	}
	if want := flaky + " runs containerd://2.2.0 (0 of 2 others do)"; !slices.Contains(snap.SuspectsShare, want) {
		t.Errorf("suspectsShare %q, want %q among them", snap.SuspectsShare, want)
	}
}
