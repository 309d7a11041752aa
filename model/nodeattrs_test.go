package model

import (
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"doomwatch/contract"
	"doomwatch/podrec"
)

// attrNode is a known node with the attributes set.
func attrNode(name string, set ...func(*Node)) Node {
	n := Node{Name: name, Known: true, Conditions: unknownConditions()}
	for _, s := range set {
		s(&n)
	}
	return n
}

func setRuntime(v string) func(*Node) { return func(n *Node) { n.Info.Runtime = v } }
func setKubelet(v string) func(*Node) { return func(n *Node) { n.Info.Kubelet = v } }
func setZone(v string) func(*Node)    { return func(n *Node) { n.Zone = v } }
func setRegion(v string) func(*Node)  { return func(n *Node) { n.Region = v } }
func setPool(v string) func(*Node)    { return func(n *Node) { n.Pool = v } }

// attrNodes is count nodes named prefix-1 … prefix-count with the attributes set.
func attrNodes(prefix string, count int, set ...func(*Node)) []Node {
	out := make([]Node, count)
	for i := range out {
		out[i] = attrNode(fmt.Sprintf("%s-%d", prefix, i+1), set...)
	}
	return out
}

// fleet is a typical node: containerd 2.0.0, kubelet v1.31.4, in eu-west-1a of eu-west-1.
var fleet = []func(*Node){setRuntime("containerd://2.0.0"), setKubelet("v1.31.4"), setZone("eu-west-1a"), setRegion("eu-west-1")}

func with(base []func(*Node), more ...func(*Node)) []func(*Node) {
	return append(slices.Clone(base), more...)
}

func TestShared(t *testing.T) {
	tests := []struct {
		name            string
		suspect, others []Node
		want            []string
	}{
		{
			name:    "single suspect on a runtime no other node runs",
			suspect: []Node{attrNode("node-3", with(fleet, setRuntime("containerd://2.0.1"))...)},
			others:  attrNodes("node", 4, fleet...),
			want:    []string{"node-3 runs containerd://2.0.1 (0 of 4 others do)"},
		},
		{
			name:    "several suspects sharing a runtime",
			suspect: attrNodes("bad", 3, with(fleet, setRuntime("containerd://2.0.1"))...),
			others:  attrNodes("node", 37, fleet...),
			want:    []string{"the 3 suspect nodes all run containerd://2.0.1 (0 of 37 others do)"},
		},
		{
			name:    "two suspects: both",
			suspect: attrNodes("bad", 2, with(fleet, setKubelet("v1.32.0"))...),
			others:  append(attrNodes("node", 9, fleet...), attrNode("canary", with(fleet, setKubelet("v1.32.0"))...)),
			want:    []string{"the 2 suspect nodes both run kubelet v1.32.0 (1 of 10 others does)"},
		},
		{
			name: "suspects sharing nothing",
			suspect: []Node{
				attrNode("bad-1", with(fleet, setRuntime("containerd://2.0.1"), setZone("eu-west-1b"))...),
				attrNode("bad-2", with(fleet, setRuntime("containerd://1.7.24"), setZone("eu-west-1c"))...),
			},
			others: attrNodes("node", 8, fleet...),
		},
		{
			name:    "every node the same: nothing distinguishes the suspects",
			suspect: attrNodes("bad", 2, fleet...),
			others:  attrNodes("node", 8, fleet...),
		},
		{
			name:    "a suspect whose value is not known shares nothing",
			suspect: []Node{attrNode("bad-1", setRuntime("containerd://2.0.1")), attrNode("bad-2")},
			others:  attrNodes("node", 8, setRuntime("containerd://2.0.0")),
		},
		{
			name:    "others without the label are not counted",
			suspect: attrNodes("gpu", 3, setPool("gpu")),
			others:  append(append(attrNodes("plain", 10), attrNodes("general", 8, setPool("general"))...), attrNodes("gpu-ok", 2, setPool("gpu"))...),
			want:    []string{"the 3 suspect nodes are all in node pool gpu (2 of 10 others are)"},
		},
		{
			name:    "no other node has the label: nothing to compare with",
			suspect: []Node{attrNode("node-3", setPool("spot"))},
			others:  attrNodes("node", 4),
		},
		{
			name:    "suspects in one zone",
			suspect: attrNodes("bad", 3, with(fleet, setZone("eu-west-1b"))...),
			others:  append(attrNodes("node", 35, fleet...), attrNodes("b", 2, with(fleet, setZone("eu-west-1b"))...)...),
			want:    []string{"the 3 suspect nodes are all in zone eu-west-1b (2 of 37 others are)"},
		},
		{
			name:    "a zone, and not its region too",
			suspect: attrNodes("bad", 2, with(fleet, setZone("us-east-1a"), setRegion("us-east-1"))...),
			others:  attrNodes("node", 8, fleet...),
			want:    []string{"the 2 suspect nodes are both in zone us-east-1a (0 of 8 others are)"},
		},
		{
			name:    "a region that distinguishes when the zone does not",
			suspect: []Node{attrNode("bad-1", setRegion("us-east-1"), setZone("us-east-1a")), attrNode("bad-2", setRegion("us-east-1"), setZone("us-east-1b"))},
			others:  attrNodes("node", 6, setRegion("eu-west-1"), setZone("eu-west-1a")),
			want:    []string{"the 2 suspect nodes are both in region us-east-1 (0 of 6 others are)"},
		},
		{
			name:    "most distinguishing first, ties in attribute order",
			suspect: attrNodes("bad", 3, setRuntime("containerd://2.0.1"), setKubelet("v1.32.0"), setZone("eu-west-1b"), setPool("new")),
			others: append(append(attrNodes("node", 7, fleet...),
				attrNode("b-1", with(fleet, setZone("eu-west-1b"))...)),
				attrNodes("up", 2, with(fleet, setRuntime("containerd://2.0.1"), setPool("new"))...)...),
			want: []string{
				"the 3 suspect nodes all run kubelet v1.32.0 (0 of 10 others do)",
				"the 3 suspect nodes are all in zone eu-west-1b (1 of 10 others is)",
				"the 3 suspect nodes all run containerd://2.0.1 (2 of 10 others do)",
			},
		},
		{
			name:    "half of the others have it: not fewer than half",
			suspect: attrNodes("bad", 3, setRuntime("containerd://2.0.1")),
			others:  append(attrNodes("node", 2, setRuntime("containerd://2.0.0")), attrNodes("up", 2, setRuntime("containerd://2.0.1"))...),
		},
		{
			name:    "a lone suspect shares its zone with one other node: not news",
			suspect: []Node{attrNode("node-3", with(fleet, setZone("eu-west-1b"))...)},
			others:  append(attrNodes("node", 3, fleet...), attrNode("node-4", with(fleet, setZone("eu-west-1b"))...)),
		},
		{
			name:    "a lone suspect in a zone with a third of forty nodes",
			suspect: []Node{attrNode("node-3", setZone("eu-west-1b"))},
			others: append(append(attrNodes("a", 13, setZone("eu-west-1a")), attrNodes("b", 13, setZone("eu-west-1b"))...),
				attrNodes("c", 13, setZone("eu-west-1c"))...),
		},
		{
			name:    "one other node",
			suspect: []Node{attrNode("node-1", setRuntime("containerd://2.0.1"), setZone("eu-west-1b"))},
			others:  []Node{attrNode("node-2", setRuntime("containerd://2.0.0"), setZone("eu-west-1a"))},
			want: []string{
				"node-1 runs containerd://2.0.1 (the other node does not)",
				"node-1 is in zone eu-west-1b (the other node is not)",
			},
		},
		{
			name:    "a node not known counts nowhere",
			suspect: []Node{attrNode("node-3", setRuntime("containerd://2.0.1"))},
			others:  append(attrNodes("node", 2, setRuntime("containerd://2.0.0")), Node{Name: "forbidden", Conditions: unknownConditions()}),
			want:    []string{"node-3 runs containerd://2.0.1 (0 of 2 others do)"},
		},
		{
			name:    "a single-node cluster: nothing to compare with",
			suspect: []Node{attrNode("node-1", fleet...)},
		},
		{
			name:   "no suspect",
			others: attrNodes("node", 4, fleet...),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Shared(tc.suspect, tc.others); !slices.Equal(got, tc.want) {
				t.Errorf("Shared =\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

// attrObject is a Node object as a kubelet on containerd reports it, with labels.
func attrObject(name, uid, runtime string, labels map[string]string) *corev1.Node {
	n := withUID(node(name, true, false), uid)
	n.Labels = labels
	n.Status.Conditions = append(n.Status.Conditions,
		corev1.NodeCondition{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory"},
		corev1.NodeCondition{Type: corev1.NodeDiskPressure, Status: corev1.ConditionTrue, Reason: "KubeletHasDiskPressure"},
		corev1.NodeCondition{Type: corev1.NodePIDPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientPID"})
	n.Status.Conditions[0].Reason = "KubeletReady"
	n.Status.NodeInfo = corev1.NodeSystemInfo{KubeletVersion: "v1.37.2", ContainerRuntimeVersion: runtime,
		KernelVersion: "6.8.0-1031-aws", OSImage: "Ubuntu 24.04.3 LTS", MachineID: "ignored"}
	return n
}

// The model keeps each node's conditions, nodeInfo and place, sanitised, reading the well-known
// labels before their beta forms; what it does not know it says is Unknown or "".
func TestNodeAttributes(t *testing.T) {
	m := New(DefaultConfig())
	ga := attrObject("node-1", "u1", "containerd://2.1.4", map[string]string{
		corev1.LabelTopologyZone: "eu-west-1a", corev1.LabelFailureDomainBetaZone: "old-zone",
		corev1.LabelTopologyRegion: "eu-west-1", corev1.LabelInstanceTypeStable: "m6i.2xlarge",
		"karpenter.sh/nodepool": "default", "team": "payments",
	})
	beta := attrObject("node-2", "u2", "containerd://2.1.4\x1b]0;pwned\x07", map[string]string{
		corev1.LabelFailureDomainBetaZone: "us-east-1b", corev1.LabelFailureDomainBetaRegion: "us-east-1",
		corev1.LabelInstanceType: "m5.large", "cloud.google.com/gke-nodepool": "pool-1\u202e",
	})
	beta.Status.Conditions[1].Reason = "Kubelet\x1b[2JHasSufficientMemory"
	m.Apply(&contract.Batch{Nodes: []*corev1.Node{ga, beta}}, t0)
	apply(m, t0, pod("shop", "a", onNode("node-9")))

	nodes := m.Nodes(t0)
	n1, n2, n9 := findNode(t, nodes, "node-1"), findNode(t, nodes, "node-2"), findNode(t, nodes, "node-9")
	wantConds := []NodeCondition{
		{Type: "Ready", Status: "True", Reason: "KubeletReady"},
		{Type: "MemoryPressure", Status: "False", Reason: "KubeletHasSufficientMemory"},
		{Type: "DiskPressure", Status: "True", Reason: "KubeletHasDiskPressure"},
		{Type: "PIDPressure", Status: "False", Reason: "KubeletHasSufficientPID"},
		{Type: "NetworkUnavailable", Status: "Unknown"},
	}
	if !slices.Equal(n1.Conditions[:], wantConds) {
		t.Errorf("node-1 conditions = %+v, want %+v", n1.Conditions, wantConds)
	}
	if got := n1.condition(corev1.NodeDiskPressure); got.Status != "True" {
		t.Errorf("node-1 DiskPressure = %+v", got)
	}
	if want := (NodeInfo{Kubelet: "v1.37.2", Runtime: "containerd://2.1.4", Kernel: "6.8.0-1031-aws", OSImage: "Ubuntu 24.04.3 LTS"}); n1.Info != want {
		t.Errorf("node-1 info = %+v, want %+v", n1.Info, want)
	}
	if n1.Zone != "eu-west-1a" || n1.Region != "eu-west-1" || n1.InstanceType != "m6i.2xlarge" || n1.Pool != "default" {
		t.Errorf("node-1 zone/region/type/pool = %q/%q/%q/%q", n1.Zone, n1.Region, n1.InstanceType, n1.Pool)
	}
	if n2.Zone != "us-east-1b" || n2.Region != "us-east-1" || n2.InstanceType != "m5.large" || n2.Pool != "pool-1" {
		t.Errorf("node-2 (beta labels) zone/region/type/pool = %q/%q/%q/%q, want the beta labels' values, sanitised", n2.Zone, n2.Region, n2.InstanceType, n2.Pool)
	}
	if n2.Info.Runtime != "containerd://2.1.4" || n2.Conditions[1].Reason != "KubeletHasSufficientMemory" {
		t.Errorf("node-2 not sanitised: runtime %q, MemoryPressure reason %q", n2.Info.Runtime, n2.Conditions[1].Reason)
	}
	if n9.Known || n9.Info != (NodeInfo{}) || n9.Zone != "" || n9.condition(corev1.NodeReady).Status != "Unknown" {
		t.Errorf("node-9, known from its pod only = %+v, want Unknown conditions and no attributes", n9)
	}

	// A runtime upgrade is a change the nodes view shows at once.
	up := attrObject("node-1", "u1", "containerd://2.2.0", ga.Labels)
	m.Apply(&contract.Batch{Nodes: []*corev1.Node{up}}, t0)
	if got := findNode(t, m.Nodes(t0), "node-1").Info.Runtime; got != "containerd://2.2.0" {
		t.Errorf("after the upgrade node-1 runs %q", got)
	}

	// A node deleted while its pods remain: known no more, so nothing of it is claimed.
	m.Apply(&contract.Batch{Deletes: []contract.Ref{{Kind: contract.KindNode, Name: "node-1"}}}, t0)
	apply(m, t0, pod("shop", "b", onNode("node-1")))
	if n := findNode(t, m.Nodes(t0), "node-1"); n.Known || n.Info.Runtime != "" || n.condition(corev1.NodeReady).Status != "Unknown" {
		t.Errorf("deleted node-1 = %+v, want Unknown conditions and no attributes", n)
	}
}

func TestNodeLabels(t *testing.T) {
	got := contract.NodeLabels(map[string]string{
		corev1.LabelTopologyZone: "eu-west-1a", corev1.LabelFailureDomainBetaZone: "eu-west-1a",
		corev1.LabelFailureDomainBetaRegion: "eu-west-1", corev1.LabelInstanceTypeStable: "",
		corev1.LabelInstanceType: "m5.large", "eks.amazonaws.com/nodegroup": "general",
		corev1.LabelHostname: "node-1", "team": "payments",
	}, podrec.NewInterner())
	want := map[string]string{
		corev1.LabelTopologyZone: "eu-west-1a", corev1.LabelFailureDomainBetaRegion: "eu-west-1",
		corev1.LabelInstanceType: "m5.large", "eks.amazonaws.com/nodegroup": "general",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("NodeLabels = %v, want %v (one label per attribute, the well-known one first)", got, want)
	}
	if got := contract.NodeLabels(map[string]string{"team": "payments"}, nil); got != nil {
		t.Errorf("NodeLabels of a node with none of them = %v, want nil", got)
	}
}

// Through the model: a suspect node's shared attributes come and go with its suspicion, and --once
// -o json carries them and every node's attributes.
func TestSuspectsShare(t *testing.T) {
	m := New(DefaultConfig())
	var nodes []*corev1.Node
	for i := 1; i <= 5; i++ {
		rt := "containerd://2.1.4"
		if i == 3 {
			rt = "containerd://2.2.0"
		}
		nodes = append(nodes, attrObject(fmt.Sprintf("node-%d", i), fmt.Sprintf("u%d", i), rt,
			map[string]string{corev1.LabelTopologyZone: fmt.Sprintf("eu-west-1%c", 'a'+rune((i-1)/2)), "eks.amazonaws.com/nodegroup": "general"}))
	}
	m.Apply(&contract.Batch{Nodes: nodes}, t0)
	if got := m.SuspectsShare(t0); got != nil {
		t.Errorf("no suspect node: SuspectsShare = %q, want nil", got)
	}
	apply(m, t0,
		failingPod("a", "node-3", t0.Add(-time.Minute)),
		failingPod("b", "node-3", t0.Add(-time.Minute)),
		failingPod("c", "node-3", t0.Add(-time.Minute)))
	want := []string{"node-3 runs containerd://2.2.0 (0 of 4 others do)"}
	if got := m.SuspectsShare(t0); !slices.Equal(got, want) {
		t.Errorf("SuspectsShare = %q, want %q", got, want)
	}
	// A pod moving on another node changes no attribute: the same answer.
	apply(m, t0, pod("shop", "web", onNode("node-1")))
	if got := m.SuspectsShare(t0); !slices.Equal(got, want) {
		t.Errorf("after a pod change SuspectsShare = %q, want %q", got, want)
	}

	// The failures leave the window: nothing is suspect, nothing is said.
	later := t0.Add(15 * time.Minute)
	if got := m.SuspectsShare(later); got != nil {
		t.Errorf("after the window SuspectsShare = %q, want nil", got)
	}
}
