package model

import (
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	"doomwatch/contract"
	"doomwatch/sanitize"
)

// A node's attributes: its conditions, what its kubelet reports of itself (status.nodeInfo) and
// where it runs (the well-known topology, instance-type and node-pool labels). The model keeps
// them per node so that, when nodes are suspect, it can say what they share that the healthy
// nodes do not: "the runtime upgrade is flaky", not "node-3 is flaky".

// NodeConditionTypes are the node conditions the model keeps, in the order Node.Conditions holds
// them: the kubelet's (kubernetes/kubernetes pkg/kubelet/nodestatus/setters.go ReadyCondition,
// MemoryPressureCondition, DiskPressureCondition, PIDPressureCondition) and NetworkUnavailable,
// which the cloud provider's route controller or the network plugin sets, when anything does.
var NodeConditionTypes = [...]corev1.NodeConditionType{
	corev1.NodeReady, corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure,
	corev1.NodeNetworkUnavailable,
}

// NodeCondition is one of a node's conditions.
type NodeCondition struct {
	Type string // "Ready", "MemoryPressure", … (NodeConditionTypes)
	// Status is "True", "False" or "Unknown": "Unknown" also when the node does not report the
	// condition or its Node object is not known.
	Status string
	Reason string // "KubeletReady", "KubeletHasSufficientMemory", …; "" when none
}

// NodeInfo is what a node's kubelet reports of itself (status.nodeInfo); "" when not known.
type NodeInfo struct {
	Kubelet string // kubeletVersion, "v1.37.2"
	Runtime string // containerRuntimeVersion, "containerd://2.1.4"
	Kernel  string // kernelVersion, "6.8.0-1031-aws"
	OSImage string // osImage, "Ubuntu 24.04.3 LTS"
}

// condState is a kept condition: its status and reason.
type condState struct{ status, reason string }

// nodeAttrs are a Node object's attributes as the model keeps them, sanitised.
type nodeAttrs struct {
	conds                            [len(NodeConditionTypes)]condState
	info                             NodeInfo
	zone, region, instanceType, pool string
}

func attrsOf(obj *corev1.Node) nodeAttrs {
	var a nodeAttrs
	for i := range a.conds {
		a.conds[i].status = string(corev1.ConditionUnknown)
	}
	for i := range obj.Status.Conditions {
		c := &obj.Status.Conditions[i]
		for j, t := range NodeConditionTypes {
			if c.Type == t {
				a.conds[j] = condState{status: sanitize.Text(string(c.Status)), reason: sanitize.Text(c.Reason)}
				if a.conds[j].status == "" {
					a.conds[j].status = string(corev1.ConditionUnknown)
				}
			}
		}
	}
	ni := &obj.Status.NodeInfo
	a.info = NodeInfo{Kubelet: sanitize.Text(ni.KubeletVersion), Runtime: sanitize.Text(ni.ContainerRuntimeVersion),
		Kernel: sanitize.Text(ni.KernelVersion), OSImage: sanitize.Text(ni.OSImage)}
	label := func(keys []string) string { _, v := contract.FirstLabel(obj.Labels, keys); return sanitize.Text(v) }
	a.zone, a.region = label(contract.ZoneLabels), label(contract.RegionLabels)
	a.instanceType, a.pool = label(contract.InstanceTypeLabels), label(contract.PoolLabels)
	return a
}

// unknownConditions are the conditions of a node whose Node object is not known.
func unknownConditions() [len(NodeConditionTypes)]NodeCondition {
	var cs [len(NodeConditionTypes)]NodeCondition
	for i, t := range NodeConditionTypes {
		cs[i] = NodeCondition{Type: string(t), Status: string(corev1.ConditionUnknown)}
	}
	return cs
}

// fill sets n's attributes from a.
func (a *nodeAttrs) fill(n *Node) {
	for i, c := range a.conds {
		n.Conditions[i].Status, n.Conditions[i].Reason = c.status, c.reason
	}
	n.Info = a.info
	n.Zone, n.Region, n.InstanceType, n.Pool = a.zone, a.region, a.instanceType, a.pool
}

// condition returns n's condition of type t, Status "Unknown" for a type the model does not keep.
func (n *Node) condition(t corev1.NodeConditionType) NodeCondition {
	for _, c := range n.Conditions {
		if c.Type == string(t) {
			return c
		}
	}
	return NodeCondition{Type: string(t), Status: string(corev1.ConditionUnknown)}
}

// attribute is one attribute Shared compares, and how a sentence says a node has it: "runs
// containerd://2.0.1", "is in zone eu-west-1b".
type attribute struct {
	of     func(*Node) string
	be     bool   // the verb is "is"/"are" ("are all in zone …"), else "runs"/"run" ("all run …")
	prefix string // before the value: "kubelet ", "in zone "
}

// sharedAttributes are compared in this order, which breaks ties between equally distinguishing
// ones: what the node runs first (a runtime or kubelet upgrade is the usual cause of start
// failures on some nodes only, then the kernel and OS image), then where it runs.
var sharedAttributes = []attribute{
	{of: func(n *Node) string { return n.Info.Runtime }},
	{of: func(n *Node) string { return n.Info.Kubelet }, prefix: "kubelet "},
	{of: func(n *Node) string { return n.Info.Kernel }, prefix: "kernel "},
	{of: func(n *Node) string { return n.Info.OSImage }},
	{of: func(n *Node) string { return n.InstanceType }, be: true, prefix: "of instance type "},
	{of: func(n *Node) string { return n.Pool }, be: true, prefix: "in node pool "},
	{of: func(n *Node) string { return n.Zone }, be: true, prefix: "in zone "},
	{of: func(n *Node) string { return n.Region }, be: true, prefix: "in region "},
}

const zoneAttr, regionAttr = 6, 7 // indexes in sharedAttributes

// Shared says what every suspect node has in common that the other nodes mostly do not: "the 3
// suspect nodes all run containerd://2.0.1 (0 of 37 others do)", "node-3 is in zone eu-west-1c
// (0 of 4 others are)". others are the nodes to compare them with, the nodes that are not suspect;
// a node whose Node object is not known has no attributes and so counts nowhere.
//
// An attribute's value v is said when
//   - every suspect node has v (a suspect node whose value is not known shares nothing);
//   - fewer than half of the others have v, counting only the others whose value is known (a
//     cluster may set a label on some nodes only; an unlabelled node neither has v nor lacks it);
//   - and fewer others than suspects have v: most of the nodes that have it are in trouble. Without
//     this, a lone suspect among 40 nodes in three zones would "share" its zone with 13 healthy
//     nodes, and every value it has with one other node would be news.
//
// Nothing is said when there are no suspects or nothing to compare them with. The most
// distinguishing values come first, those the smallest share of the others has; ties in the order
// of sharedAttributes. The region is not said with the zone: the zone lies in it.
func Shared(suspect, others []Node) []string { return sharedAs(suspect, [][]Node{others}, "") }

// sharedAs is Shared with the suspects named by subject ("the 2 suspect nodes of 2 clusters"),
// or as Shared names them when subject is "", and the others in parts (a fleet's, cluster by
// cluster).
func sharedAs(suspect []Node, others [][]Node, subject string) []string {
	if len(suspect) == 0 {
		return nil
	}
	type found struct {
		attr, have, of int // have of the of others with a known value have it
		value          string
	}
	var out []found
	zoneSaid := false
	for i := range sharedAttributes {
		a := &sharedAttributes[i]
		v := a.of(&suspect[0])
		if v == "" {
			continue
		}
		all := true
		for j := 1; j < len(suspect) && all; j++ {
			all = a.of(&suspect[j]) == v
		}
		if !all {
			continue
		}
		have, of := 0, 0
		for _, part := range others {
			for j := range part {
				switch a.of(&part[j]) {
				case "":
				case v:
					have++
					of++
				default:
					of++
				}
			}
		}
		if of > 0 && 2*have < of && have < len(suspect) && !(i == regionAttr && zoneSaid) {
			out = append(out, found{attr: i, have: have, of: of, value: v})
			zoneSaid = zoneSaid || i == zoneAttr
		}
	}
	if len(out) == 0 {
		return nil
	}
	// Insertion sort, stable: a handful of values at most.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].have*out[j-1].of < out[j-1].have*out[j].of; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	s := make([]string, len(out))
	for i, f := range out {
		s[i] = sharedSentence(&sharedAttributes[f.attr], suspect, f.value, f.have, f.of, subject)
	}
	return s
}

func sharedSentence(a *attribute, suspect []Node, v string, have, of int, subject string) string {
	verb, did, didOne := "run", "do", "does"
	if a.be {
		verb, did, didOne = "are", "are", "is"
	}
	var s string
	switch len(suspect) {
	case 1:
		verb = "runs"
		if a.be {
			verb = "is"
		}
		s = suspect[0].Name + " " + verb + " "
	default:
		all := "all"
		if len(suspect) == 2 {
			all = "both"
		}
		s = "the " + strconv.Itoa(len(suspect)) + " suspect nodes "
		if subject != "" {
			s = subject + " "
		}
		if a.be {
			s += verb + " " + all + " "
		} else {
			s += all + " " + verb + " "
		}
	}
	s += a.prefix + v
	if of == 1 {
		// have is 0: fewer than half of one.
		if a.be {
			return s + " (the other node is not)"
		}
		return s + " (the other node does not)"
	}
	if have == 1 {
		did = didOne
	}
	return s + " (" + strconv.Itoa(have) + " of " + strconv.Itoa(of) + " others " + did + ")"
}

// SuspectsShare is Shared over the suspect nodes at now and the known nodes that are not suspect:
// what the suspect nodes have in common that the healthy ones do not. It is nil when no node is
// suspect or they share nothing that stands out. It is computed with the nodes view and cached
// with it; callers must not modify it.
func (m *Model) SuspectsShare(now time.Time) []string {
	m.Nodes(now)
	return m.nodeView.share
}

// sharedOf is Shared over nodes sorted as Nodes sorts them, suspect nodes first.
func sharedOf(nodes []Node) []string {
	k := 0
	for k < len(nodes) && nodes[k].Suspect {
		k++
	}
	return Shared(nodes[:k], nodes[k:])
}
