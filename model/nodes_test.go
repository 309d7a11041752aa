package model

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"doomwatch/classify"
	"doomwatch/contract"
)

func findNode(t *testing.T, ns []Node, name string) Node {
	t.Helper()
	for _, n := range ns {
		if n.Name == name {
			return n
		}
	}
	t.Fatalf("node %q not in %+v", name, ns)
	return Node{}
}

func TestSuspectNodeRisesAndClears(t *testing.T) {
	m := New(DefaultConfig())
	m.Apply(&contract.Batch{Nodes: []*corev1.Node{node("node-1", true, false), node("node-3", true, true)}}, t0)
	fail := func(name, owner, nodeName string, at time.Time) *corev1.Pod {
		return pod("shop", name, onNode(nodeName), ownedBy("StatefulSet", owner), startFailed128(at, 1))
	}
	apply(m, t0,
		fail("a-0", "a", "node-3", t0.Add(-14*time.Minute)),
		fail("b-0", "b", "node-3", t0.Add(-5*time.Minute)),
		pod("shop", "c-0", onNode("node-1")))
	n3 := findNode(t, m.Nodes(t0), "node-3")
	if n3.Suspect || n3.Failures != 2 || n3.FailedPods != 2 {
		t.Fatalf("2 pods: not suspect yet; got %+v", n3)
	}

	// A third pod, of a third workload, fails here: suspect.
	apply(m, t0, fail("c-1", "c", "node-3", t0.Add(-time.Minute)))
	nodes := m.Nodes(t0)
	n3 = findNode(t, nodes, "node-3")
	if !n3.Suspect {
		t.Fatalf("3 pods on one node: want suspect, got %+v", n3)
	}
	if want := "3 of 3 pods that started here in the last 15m failed with exit 128; none started elsewhere (thin evidence: too few to compare)"; n3.Why != want {
		t.Errorf("why = %q, want %q", n3.Why, want)
	}
	if nodes[0].Name != "node-3" {
		t.Errorf("suspect node not first: %s", nodes[0].Name)
	}
	if !n3.Known || !n3.Ready || !n3.Cordoned || n3.Pods != 3 || n3.FailingPods != 3 || n3.Workloads != 3 {
		t.Errorf("node-3 = %+v", n3)
	}
	if !n3.First.Equal(t0.Add(-14*time.Minute)) || !n3.Last.Equal(t0.Add(-time.Minute)) {
		t.Errorf("first/last = %v/%v", n3.First, n3.Last)
	}
	if n3.DominantMessage == "" || len(n3.Histogram) != HistogramBuckets {
		t.Errorf("dominant %q, histogram %v", n3.DominantMessage, n3.Histogram)
	}
	// One-minute buckets over [now-15m, now): 14m, 5m and 1m ago land in buckets 1, 10 and 14.
	if n3.Histogram[1] != 1 || n3.Histogram[10] != 1 || n3.Histogram[14] != 1 {
		t.Errorf("histogram = %v, want one failure in buckets 1, 10 and 14", n3.Histogram)
	}

	// Failures spread elsewhere: node-1 and node-2 have 3 failing pods each and nothing else
	// started anywhere, so every node with starts fails them all: no node stands out, the trouble
	// is the cluster's.
	apply(m, t0,
		fail("d-0", "d", "node-1", t0.Add(-time.Minute)),
		fail("e-0", "e", "node-1", t0.Add(-time.Minute)),
		fail("h-0", "h", "node-1", t0.Add(-time.Minute)),
		fail("f-0", "f", "node-2", t0.Add(-time.Minute)),
		fail("g-0", "g", "node-2", t0.Add(-time.Minute)),
		fail("i-0", "i", "node-2", t0.Add(-time.Minute)))
	if got := suspects(m.Nodes(t0)); got != nil {
		t.Errorf("3 pods on each of three nodes, every start failing: want no suspect, got %v", got)
	}

	// Back alone, then time passes: the oldest failure leaves the window and node-3 clears.
	m2 := New(DefaultConfig())
	apply(m2, t0,
		fail("a-0", "a", "node-3", t0.Add(-14*time.Minute)),
		fail("b-0", "b", "node-3", t0.Add(-5*time.Minute)),
		fail("c-1", "c", "node-3", t0.Add(-time.Minute)))
	if !findNode(t, m2.Nodes(t0), "node-3").Suspect {
		t.Fatal("want suspect")
	}
	later := t0.Add(2 * time.Minute)
	if n3 = findNode(t, m2.Nodes(later), "node-3"); n3.Suspect || n3.Failures != 2 {
		t.Errorf("after the window: want not suspect with 2 failures; got %+v", n3)
	}
}

func TestNodeWithoutNodeObjectAndWhyWording(t *testing.T) {
	cfg := DefaultConfig()
	cfg.SuspectPods = 1
	cfg.Window = time.Hour
	m := New(cfg)
	apply(m, t0, pod("shop", "a-0", onNode("node-9"), ownedBy("StatefulSet", "a"), startFailed128(t0, 1)))
	n := findNode(t, m.Nodes(t0), "node-9")
	if n.Known || n.Pods != 1 {
		t.Errorf("node known only from pods: %+v", n)
	}
	if want := "1 of 1 pod that started here in the last 1h failed with exit 128; none started elsewhere (thin evidence: too few to compare)"; n.Why != want {
		t.Errorf("why = %q, want %q", n.Why, want)
	}
	// The pod goes; the node has nothing left but evidence, which still counts for the window.
	m.Apply(&contract.Batch{Deletes: []contract.Ref{{Kind: contract.KindPod, Namespace: "shop", Name: "a-0"}}}, t0)
	n = findNode(t, m.Nodes(t0), "node-9")
	if n.Pods != 0 || n.Failures != 1 {
		t.Errorf("after delete: %+v", n)
	}
	if c := m.Counts(); c.Pods != 0 {
		t.Errorf("counts after delete: %+v", c)
	}
}

func TestNodeReadyAndDelete(t *testing.T) {
	m := New(DefaultConfig())
	m.Apply(&contract.Batch{Nodes: []*corev1.Node{node("node-1", false, false)}}, t0)
	n := findNode(t, m.Nodes(t0), "node-1")
	if !n.Known || n.Ready || n.Cordoned {
		t.Errorf("node-1 = %+v", n)
	}
	m.Apply(&contract.Batch{Deletes: []contract.Ref{{Kind: contract.KindNode, Name: "node-1"}}}, t0)
	if ns := m.Nodes(t0); len(ns) != 0 {
		t.Errorf("deleted node without pods still listed: %+v", ns)
	}
}

// TestNormalizeMessage: the same cause on two pods normalises to one string, different causes stay
// apart, and what names the cause stays. Every message is verbatim from the source named beside it.
func TestNormalizeMessage(t *testing.T) {
	const (
		// runc cannot set the swap limit (no swap accounting on the node): kubernetes/kubernetes#119403
		// (the model fixtures' runtimeMsg) and, another pod in the same CI incident,
		// containerd/containerd#8855 (containerd's log, error="..."). systemd cgroup driver: the pod
		// UID with underscores in the slice, the container ID joined by "-" in the scope.
		memswA = runtimeMsg
		memswB = `failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: ` +
			`unable to start container process: error during container init: error setting cgroup config for procHooks process: ` +
			`open /sys/fs/cgroup/memory/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod396e1a1a_f897_420f_ad59_f9de8b9d52a1.slice/` +
			`cri-containerd-eed3e4d317cb342f1a515f21f79999cc22356be63f872937fbbbe55b946dc268.scope/memory.memsw.limit_in_bytes: ` +
			`no such file or directory: unknown`
		memsw = `failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: ` +
			`unable to start container process: error during container init: error setting cgroup config for procHooks process: ` +
			`open /sys/fs/cgroup/memory/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid>.slice/` +
			`cri-containerd-<id>.scope/memory.memsw.limit_in_bytes: no such file or directory: unknown`
		// runc could not freeze the cgroup: kubernetes/kubernetes#131087.
		freeze = `failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: ` +
			`unable to start container process: error during container init: error setting cgroup config for procHooks process: ` +
			`unable to freeze: unknown`
		// The memory limit cannot be written (device or resource busy): containerd/containerd#5226. A
		// systemd slice name under a cgroupfs path, the container named instead of its ID.
		busy = `failed to create containerd task: OCI runtime create failed: container_linux.go:370: starting container process caused: ` +
			`process_linux.go:459: container init caused: process_linux.go:422: setting cgroup config for procHooks process caused: ` +
			`failed to write "1" to "/sys/fs/cgroup/memory/system.slice/containerd.service/kubepods-burstable-pod7a875b5c_4d3c_4345_ac0f_5c847d8d7129.slice:cri-containerd:webapp/memory.limit_in_bytes": ` +
			`write /sys/fs/cgroup/memory/system.slice/containerd.service/kubepods-burstable-pod7a875b5c_4d3c_4345_ac0f_5c847d8d7129.slice:cri-containerd:webapp/memory.limit_in_bytes: ` +
			`device or resource busy: unknown`
		// cgroupfs driver, the pod UID hyphenated after "pod": kubernetes/kubernetes#96357.
		cpuset = `failed to create containerd task: Could not run process: container_linux.go:345: starting container process caused ` +
			`"process_linux.go:275: applying cgroup configuration for process caused \"failed to write 0-1 to cpuset.cpus: ` +
			`write /sys/fs/cgroup/cpuset/kubepods/pod429c26f5-223f-11eb-ae82-0a58701d95bf/container01/cpuset.cpus: permission denied\"": unknown`
		// A static pod's UID (32 hex digits) in its slice, under CRI-O: cri-o/cri-o#9082.
		sdBus = `container create failed: sd-bus call: Unit kubepods-burstable-pod1864dd0546310be9937c37cf88024cb8.slice not found.: I/O error`
		// The pod UID inside the kubelet's container name, bounded by "_": k3s-io/k3s#7690 (the
		// event's "Error: " prefix dropped).
		reserved = `failed to reserve container name "homeassistant_homeassistant-58488865d6-sqfg9_default_bc1cc92e-0fce-43bf-91e9-91682563c3bf_0": ` +
			`name "homeassistant_homeassistant-58488865d6-sqfg9_default_bc1cc92e-0fce-43bf-91e9-91682563c3bf_0" is reserved for ` +
			`"6a37ff9b916561e21557c3f39e5b7b2c4f1a21c91c93cb8d86884ed9751f2f5b"`
		// Nothing to normalise: line numbers and errno text name the cause. kubernetes/kubernetes#87735.
		pipeEOF = `OCI runtime create failed: container_linux.go:345: starting container process caused ` +
			`"process_linux.go:303: getting the final child's pid from pipe caused \"EOF\"": unknown`
	)
	tests := []struct{ name, in, want string }{
		{"systemd slice and scope", memswA, memsw},
		{"the same on another pod", memswB, memsw},
		{"no ID", freeze, freeze},
		{"slice name with a container name", busy, strings.ReplaceAll(busy, "pod7a875b5c_4d3c_4345_ac0f_5c847d8d7129", "pod<uid>")},
		{"cgroupfs pod directory", cpuset, strings.ReplaceAll(cpuset, "pod429c26f5-223f-11eb-ae82-0a58701d95bf", "pod<uid>")},
		{"static pod slice", sdBus, `container create failed: sd-bus call: Unit kubepods-burstable-pod<uid>.slice not found.: I/O error`},
		{"UID between underscores", reserved, `failed to reserve container name "homeassistant_homeassistant-<n>d6-sqfg9_default_<uid>_0": ` +
			`name "homeassistant_homeassistant-<n>d6-sqfg9_default_<uid>_0" is reserved for "<id>"`},
		{"short numbers stay", pipeEOF, pipeEOF},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := normalizeMessage(tc.in); got != tc.want {
				t.Errorf("normalizeMessage(%q)\n = %q\nwant %q", tc.in, got, tc.want)
			}
		})
	}
	// Different causes stay apart.
	seen := map[string]string{}
	for _, in := range []string{memswA, freeze, busy, cpuset, sdBus, pipeEOF} {
		n := normalizeMessage(in)
		if other, ok := seen[n]; ok {
			t.Errorf("different causes normalise alike:\n%s\n%s", other, in)
		}
		seen[n] = in
	}
}

// failingPod is a pod of its own StatefulSet (so no workload spans nodes and escalates) that
// failed to start with exit 128 on nodeName at at.
func failingPod(name, nodeName string, at time.Time) *corev1.Pod {
	return pod("shop", name, onNode(nodeName), ownedBy("StatefulSet", name), startFailed128(at, 1))
}

// cluster returns n Ready nodes node-1 … node-n, each with its UID.
func cluster(n int) []*corev1.Node {
	out := make([]*corev1.Node, n)
	for i := range out {
		name := fmt.Sprintf("node-%d", i+1)
		out[i] = withUID(node(name, true, false), name+"-uid")
	}
	return out
}

func suspects(ns []Node) []string {
	var out []string
	for _, n := range ns {
		if n.Suspect {
			out = append(out, n.Name)
		}
	}
	sort.Strings(out)
	return out
}

// Where no pod started without failing, there is no rate to compare with and the failure
// percentage decides: a node is suspect when at least half of the pods that started there failed,
// unless more than half of the other nodes fail alike. Distinct pods count, so several bad nodes
// are suspect together.
func TestSuspectNodesStandOut(t *testing.T) {
	tests := []struct {
		name  string
		nodes int
		// failing gives the number of distinct failing pods per node (node-1 first).
		failing []int
		want    []string
	}{
		{"one bad node of five", 5, []int{4}, []string{"node-1"}},
		{"two bad nodes of five", 5, []int{4, 3}, []string{"node-1", "node-2"}},
		{"three bad nodes of five", 5, []int{3, 5, 4}, []string{"node-1", "node-2", "node-3"}},
		{"three bad nodes of forty, noise elsewhere", 40, []int{5, 4, 3, 1, 1, 1, 1, 0, 1}, []string{"node-1", "node-2", "node-3"}},
		{"two bad nodes of ten", 10, []int{6, 3, 0, 1}, []string{"node-1", "node-2"}},
		{"below --suspect-pods", 5, []int{2}, nil},
		{"cluster-wide: every node fails alike", 5, []int{3, 3, 4, 3, 3}, nil},
		{"four of five nodes: no longer stands out", 5, []int{4, 4, 4, 4}, nil},
		{"nodes below --suspect-pods do not fail alike", 6, []int{5, 2, 2, 2, 3, 2}, []string{"node-1", "node-5"}},
		{"a single node has nothing to compare with", 1, []int{3}, []string{"node-1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := New(DefaultConfig())
			m.Apply(&contract.Batch{Nodes: cluster(tc.nodes)}, t0)
			var pods []*corev1.Pod
			for i, n := range tc.failing {
				for j := 0; j < n; j++ {
					pods = append(pods, failingPod(fmt.Sprintf("p%d-%d", i+1, j), fmt.Sprintf("node-%d", i+1), t0.Add(-time.Minute)))
				}
			}
			apply(m, t0, pods...)
			if got := suspects(m.Nodes(t0)); !slices.Equal(got, tc.want) {
				t.Errorf("suspect = %v, want %v", got, tc.want)
			}
		})
	}
}

// One pod restarting five times with exit 128 on another node is one pod: it must not clear a node
// where four different pods failed. (A rule on failures gave node-2 5 of the 9.)
func TestSuspectCountsPodsNotFailures(t *testing.T) {
	m := New(DefaultConfig())
	m.Apply(&contract.Batch{Nodes: cluster(5)}, t0)
	for i := 0; i < 4; i++ {
		apply(m, t0, failingPod(fmt.Sprintf("a-%d", i), "node-1", t0.Add(-10*time.Minute)))
	}
	loop := func(restarts int32, at time.Time) *corev1.Pod {
		return pod("shop", "loop-0", onNode("node-2"), ownedBy("StatefulSet", "loop"), startFailed128(at, restarts))
	}
	for i := int32(1); i <= 5; i++ {
		now := t0.Add(time.Duration(i-5) * time.Minute)
		apply(m, now, loop(i, now.Add(-time.Second)))
	}
	nodes := m.Nodes(t0)
	n1, n2 := findNode(t, nodes, "node-1"), findNode(t, nodes, "node-2")
	if n2.Failures != 5 || n2.FailedPods != 1 || n2.Suspect {
		t.Fatalf("node-2: want 5 failures of 1 pod, not suspect; got %+v", n2)
	}
	if !n1.Suspect || n1.Failures != 4 || n1.FailedPods != 4 {
		t.Fatalf("node-1: 4 distinct pods against 1 elsewhere, want suspect; got %+v", n1)
	}
	if want := "4 of 4 pods that started here in the last 15m failed with exit 128; 1 of 1 elsewhere (thin evidence: too few to compare)"; n1.Why != want {
		t.Errorf("why = %q, want %q", n1.Why, want)
	}
}

// A workload escalated as not node-local fails wherever it runs: its pods count on neither side.
func TestSuspectLeavesOutNotNodeLocalWorkloads(t *testing.T) {
	m := New(DefaultConfig())
	m.Apply(&contract.Batch{Nodes: cluster(5)}, t0)
	web := func(name, nodeName string) *corev1.Pod {
		return pod("shop", name, onNode(nodeName), ownedBy("StatefulSet", "web"), startFailed128(t0.Add(-time.Minute), 1))
	}
	apply(m, t0,
		// web fails on node-1 (4 pods), node-2 and node-4: escalated, 3 nodes.
		web("web-0", "node-1"), web("web-1", "node-1"), web("web-2", "node-1"), web("web-3", "node-1"),
		web("web-4", "node-2"), web("web-5", "node-4"),
		failingPod("a-0", "node-4", t0.Add(-time.Minute)),
		failingPod("b-0", "node-4", t0.Add(-time.Minute)),
		failingPod("c-0", "node-4", t0.Add(-time.Minute)))
	if v := m.Pod("shop/web-0").Verdict; v.Rule != classify.RuleEscalated {
		t.Fatalf("web not escalated: %v %q", v.Rule, v.Reason)
	}
	nodes := m.Nodes(t0)
	if got := suspects(nodes); !slices.Equal(got, []string{"node-4"}) {
		t.Fatalf("suspect = %v, want [node-4]: node-1's failures are all web's", got)
	}
	n4 := findNode(t, nodes, "node-4")
	if n4.FailedPods != 4 || n4.Workloads != 4 {
		t.Errorf("node-4 counts every failure it saw: %+v", n4)
	}
	if want := "3 of 3 pods that started here in the last 15m failed with exit 128; none started elsewhere (thin evidence: too few to compare); 1 pod of not-node-local workloads left out"; n4.Why != want {
		t.Errorf("why = %q, want %q", n4.Why, want)
	}
}

// Nodes are keyed by UID: a node deleted and registered again under the same name does not
// inherit the old node's failures.
func TestNodeRegisteredAgainStartsClean(t *testing.T) {
	for _, deleteSeen := range []bool{true, false} {
		t.Run(fmt.Sprintf("delete seen %v", deleteSeen), func(t *testing.T) {
			m := New(DefaultConfig())
			m.Apply(&contract.Batch{Nodes: cluster(5)}, t0)
			apply(m, t0,
				failingPod("a-0", "node-3", t0.Add(-3*time.Minute)),
				failingPod("b-0", "node-3", t0.Add(-2*time.Minute)),
				failingPod("c-0", "node-3", t0.Add(-time.Minute)))
			if n := findNode(t, m.Nodes(t0), "node-3"); !n.Suspect || n.UID != "node-3-uid" {
				t.Fatalf("node-3 before: %+v", n)
			}

			// The node is deleted with its pods and registers again under the same name.
			later := t0.Add(time.Minute)
			var dels []contract.Ref
			for _, p := range []string{"a-0", "b-0", "c-0"} {
				dels = append(dels, contract.Ref{Kind: contract.KindPod, Namespace: "shop", Name: p})
			}
			if deleteSeen {
				dels = append(dels, contract.Ref{Kind: contract.KindNode, Name: "node-3"})
			}
			m.Apply(&contract.Batch{Deletes: dels}, later)
			m.Apply(&contract.Batch{Nodes: []*corev1.Node{withUID(node("node-3", true, false), "node-3-uid-2")}}, later)
			apply(m, later, pod("shop", "d-0", onNode("node-3"), ownedBy("StatefulSet", "d")))

			var now, old *Node
			nodes := m.Nodes(later)
			for i := range nodes {
				if nodes[i].Name == "node-3" {
					switch nodes[i].UID {
					case "node-3-uid-2":
						now = &nodes[i]
					case "node-3-uid":
						old = &nodes[i]
					}
				}
			}
			if now == nil || old == nil {
				t.Fatalf("want the new node-3 and the old one apart, got %+v", nodes)
			}
			if now.Failures != 0 || now.Suspect || !now.Known || now.Pods != 1 {
				t.Errorf("new node-3 inherited evidence: %+v", *now)
			}
			if old.Failures != 3 || old.Known || old.Pods != 0 || old.Suspect {
				t.Errorf("old node-3 keeps its failures, gone, and is no longer suspect: %+v", *old)
			}

			// A new failure on the new node is its own.
			apply(m, later, pod("shop", "d-0", onNode("node-3"), ownedBy("StatefulSet", "d"), startFailed128(later, 1)))
			fs := m.Failures(later)
			if f := fs[len(fs)-1]; f.Pod != "shop/d-0" || f.NodeUID != "node-3-uid-2" {
				t.Errorf("new failure = %+v, want it under the new UID", f)
			}
		})
	}
}

// Failures recorded before the Node object arrived belong to the node of that name once its UID is
// known: one row, not two.
func TestNodeUIDLearnedAfterFailures(t *testing.T) {
	m := New(DefaultConfig())
	apply(m, t0, failingPod("a-0", "node-3", t0.Add(-time.Minute)))
	m.Apply(&contract.Batch{Nodes: []*corev1.Node{withUID(node("node-3", true, false), "u3")}}, t0)
	nodes := m.Nodes(t0)
	if len(nodes) != 1 || nodes[0].UID != "u3" || nodes[0].Failures != 1 || !nodes[0].Known {
		t.Fatalf("want one node-3 with its failure and UID, got %+v", nodes)
	}
	if f := m.Failures(t0)[0]; f.NodeUID != "u3" {
		t.Errorf("failure NodeUID = %q, want u3", f.NodeUID)
	}
}

// When RBAC forbids nodes there are no UIDs: nodes are keyed by name, and the suspect rule still
// works on the nodes the pods name.
func TestNodesForbiddenKeyByName(t *testing.T) {
	m := New(DefaultConfig())
	m.Apply(&contract.Batch{Health: &contract.Health{Synced: true, Forbidden: []contract.Kind{contract.KindNode}}}, t0)
	apply(m, t0,
		failingPod("a-0", "node-3", t0.Add(-3*time.Minute)),
		failingPod("b-0", "node-3", t0.Add(-2*time.Minute)),
		failingPod("c-0", "node-3", t0.Add(-time.Minute)),
		pod("shop", "ok-1", onNode("node-1")), pod("shop", "ok-2", onNode("node-2")))
	// The pods go and come back: still one node-3, by name.
	m.Apply(&contract.Batch{Deletes: []contract.Ref{{Kind: contract.KindPod, Namespace: "shop", Name: "a-0"}}}, t0)
	apply(m, t0, pod("shop", "e-0", onNode("node-3"), ownedBy("StatefulSet", "e")))
	nodes := m.Nodes(t0)
	if len(nodes) != 3 {
		t.Fatalf("nodes = %+v, want node-1, node-2, node-3", nodes)
	}
	n3 := nodes[0]
	if n3.Name != "node-3" || n3.UID != "" || n3.Known || !n3.Suspect || n3.Failures != 3 || n3.Pods != 3 {
		t.Errorf("node-3 by name = %+v", n3)
	}
	for _, f := range m.Failures(t0) {
		if f.NodeUID != "" || f.Node != "node-3" {
			t.Errorf("failure %+v: want no NodeUID", f)
		}
	}
}

// CRI-O's create errors are node evidence too, and the why sentence does not claim exit 128 for
// them.
func TestCreateErrorsMakeANodeSuspect(t *testing.T) {
	m := New(DefaultConfig())
	m.Apply(&contract.Batch{Nodes: cluster(5)}, t0)
	crio := func(name string) *corev1.Pod {
		return pod("shop", name, onNode("node-2"), ownedBy("StatefulSet", name), createError(crioRuntimeMsg))
	}
	apply(m, t0.Add(-3*time.Minute), crio("a-0"))
	apply(m, t0.Add(-2*time.Minute), crio("b-0"))
	apply(m, t0.Add(-time.Minute), crio("c-0"))
	n2 := findNode(t, m.Nodes(t0), "node-2")
	if !n2.Suspect || n2.Failures != 3 || n2.Failures128 != 0 || n2.FailedPods != 3 {
		t.Fatalf("node-2 = %+v, want suspect with 3 start failures, none exit 128", n2)
	}
	if want := "3 of 3 pods that started here in the last 15m failed to start; none started elsewhere (thin evidence: too few to compare)"; n2.Why != want {
		t.Errorf("why = %q, want %q", n2.Why, want)
	}
	if !n2.First.Equal(t0.Add(-3*time.Minute)) || !n2.Last.Equal(t0.Add(-time.Minute)) {
		t.Errorf("first/last = %v/%v, want when each was first seen", n2.First, n2.Last)
	}
	if !strings.Contains(n2.DominantMessage, "running lstat on namespace path") {
		t.Errorf("dominant message = %q", n2.DominantMessage)
	}
}

// startedAt: container "app" runs, started at at.
func startedAt(at time.Time) podOpt {
	return func(p *corev1.Pod) {
		p.Status.ContainerStatuses[0].State.Running.StartedAt = metav1.NewTime(at)
	}
}

// startedPod is a pod of its own StatefulSet that started on nodeName at at and runs.
func startedPod(name, nodeName string, at time.Time) *corev1.Pod {
	return pod("shop", name, onNode(nodeName), ownedBy("StatefulSet", name), startedAt(at))
}

// shares builds a cluster from (failed, started) pods per node, node-1 first: failed pods that
// failed to start with exit 128 and started-failed pods that started and run, all within the
// window, each of its own workload.
func shares(t *testing.T, perNode [][2]int) *Model {
	t.Helper()
	m := New(DefaultConfig())
	m.Apply(&contract.Batch{Nodes: cluster(len(perNode))}, t0)
	var pods []*corev1.Pod
	for i, n := range perNode {
		node := fmt.Sprintf("node-%d", i+1)
		for j := 0; j < n[1]; j++ {
			name := fmt.Sprintf("p%d-%d", i+1, j)
			if j < n[0] {
				pods = append(pods, failingPod(name, node, t0.Add(-time.Minute)))
			} else {
				pods = append(pods, startedPod(name, node, t0.Add(-2*time.Minute)))
			}
		}
	}
	apply(m, t0, pods...)
	return m
}

// A node is judged by the share of the pods that started on it that failed to start, against the
// share on the nodes that are not suspect (classify/suspect.go), so one node's spurious evidence hides no
// other, a node where 3 of 3 pods failed weighs more than one where 3 of 49 did, and several bad
// nodes among few are suspect together.
func TestSuspectByShareOfStarts(t *testing.T) {
	tests := []struct {
		name    string
		perNode [][2]int // (failed, started) pods per node
		want    []string
	}{
		// The median of failing-pod counts (5, 4, 4, 3, 2, 1, 0) named no node here: 5 < 3 × 2.
		{"7 nodes: 3 bad, one with 3 spurious failures", [][2]int{{5, 8}, {4, 6}, {4, 7}, {3, 40}, {2, 40}, {1, 40}, {0, 40}},
			[]string{"node-1", "node-2", "node-3"}},
		{"3 of 49 against 3 of 3", [][2]int{{3, 49}, {3, 3}, {1, 50}, {1, 50}, {1, 50}, {1, 50}}, []string{"node-2"}},
		{"single node: 3 of 3", [][2]int{{3, 3}}, []string{"node-1"}},
		{"single node: 3 of 300", [][2]int{{3, 300}}, nil},
		{"2 bad of 3", [][2]int{{4, 6}, {5, 6}, {0, 10}}, []string{"node-1", "node-2"}},
		{"3 of 3 nodes failing alike", [][2]int{{4, 6}, {5, 6}, {3, 5}}, nil},
		// Background noise: 1 to 4 of every 100 starts fail on every node, 2% in all.
		{"noise on every node", [][2]int{{2, 100}, {4, 100}, {1, 100}, {3, 100}, {2, 100}, {0, 100}, {3, 100}, {1, 100},
			{4, 100}, {2, 100}}, nil},
		{"a busy bad node among noise", [][2]int{{20, 100}, {4, 100}, {1, 100}, {3, 100}, {2, 100}, {0, 100}, {3, 100},
			{1, 100}, {4, 100}, {2, 100}}, []string{"node-1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := suspects(shares(t, tc.perNode).Nodes(t0)); !slices.Equal(got, tc.want) {
				t.Errorf("suspect = %v, want %v", got, tc.want)
			}
		})
	}
}

// The why sentence gives the shares it compared: here, and on the nodes it compared with.
func TestSuspectWhyGivesTheShares(t *testing.T) {
	// node-1: 4 of 6; ten more nodes: 2 of 310 in all.
	perNode := [][2]int{{4, 6}, {1, 31}, {1, 31}}
	for range 8 {
		perNode = append(perNode, [2]int{0, 31})
	}
	n1 := findNode(t, shares(t, perNode).Nodes(t0), "node-1")
	if want := "4 of 6 pods that started here in the last 15m failed with exit 128; 2 of 310 elsewhere"; !n1.Suspect || n1.Why != want {
		t.Errorf("node-1: suspect %v, why %q; want %q", n1.Suspect, n1.Why, want)
	}
	// Two suspects: each is compared with the nodes that are not suspect, and counts the other's
	// failures elsewhere.
	perNode[1] = [2]int{5, 5}
	nodes := shares(t, perNode).Nodes(t0)
	if got := suspects(nodes); !slices.Equal(got, []string{"node-1", "node-2"}) {
		t.Fatalf("suspect = %v, want node-1 and node-2", got)
	}
	if want := "5 of 5 pods that started here in the last 15m failed with exit 128; 1 of 279 on nodes not suspect"; findNode(t, nodes, "node-2").Why != want {
		t.Errorf("node-2 why %q, want %q", findNode(t, nodes, "node-2").Why, want)
	}
}

// Noise that one workload spreads over every node, while most of its pods run: the runtime fails
// a few starts on every node, and the pods that failed will start on their next try. No node
// stands out, and the workload is not escalated either (classify.NotNodeLocal): its revision is
// healthy on most of its pods, so waiting helps, and a doom would fail a deploy gate that the
// rollout will pass.
func TestNoiseOfOneWorkloadIsClusterWide(t *testing.T) {
	m := New(DefaultConfig())
	m.Apply(&contract.Batch{Nodes: cluster(10)}, t0)
	var pods []*corev1.Pod
	for i := range 10 {
		node := fmt.Sprintf("node-%d", i+1)
		for j := range 20 {
			name := fmt.Sprintf("web-%d-%d", i, j)
			if j < 1+i%3 { // 1 to 3 failures on every node
				pods = append(pods, pod("shop", name, onNode(node), ownedBy("ReplicaSet", "web-7d9f"), startFailed128(t0.Add(-time.Minute), 1)))
			} else {
				pods = append(pods, pod("shop", name, onNode(node), ownedBy("ReplicaSet", "web-7d9f"), startedAt(t0.Add(-2*time.Minute))))
			}
		}
	}
	apply(m, t0, pods...)
	if got := suspects(m.Nodes(t0)); got != nil {
		t.Errorf("suspect = %v, want none", got)
	}
	if v := m.Pod("shop/web-2-2").Verdict; v.Class != classify.Transient || v.Rule != classify.RuleStartFailure128 {
		t.Errorf("verdict = %s %v %q, want transient start-failure-128", v.Class, v.Rule, v.Reason)
	}
}

// A revision that starts nowhere and fails on every node it lands on is the workload's trouble,
// however few nodes: its failures would make suspects of the nodes they are on (each fails all of
// its starts there while the other nodes start their pods), so escalation counts every node, and
// the nodes view leaves the workload out.
func TestRevisionThatStartsNowhereIsEscalated(t *testing.T) {
	m := New(DefaultConfig())
	m.Apply(&contract.Batch{Nodes: cluster(6)}, t0)
	var pods []*corev1.Pod
	for i := range 6 {
		node := fmt.Sprintf("node-%d", i+1)
		for j := range 8 {
			pods = append(pods, pod("shop", fmt.Sprintf("calm-%d-%d", i, j), onNode(node), ownedBy("ReplicaSet", fmt.Sprintf("calm%d-5c4b", j)),
				startedAt(t0.Add(-2*time.Minute))))
		}
		if i < 3 {
			for j := range 6 {
				pods = append(pods, pod("shop", fmt.Sprintf("web-%d-%d", i, j), onNode(node), ownedBy("ReplicaSet", "web-7d9f"),
					startFailed128(t0.Add(-time.Minute), 1)))
			}
		}
	}
	apply(m, t0, pods...)
	if got := suspects(m.Nodes(t0)); got != nil {
		t.Errorf("suspect = %v, want none", got)
	}
	if v := m.Pod("shop/web-1-1").Verdict; v.Rule != classify.RuleEscalated || !strings.Contains(v.Reason, "on 3 nodes: not node-local") {
		t.Errorf("verdict = %s %v %q, want escalated on 3 nodes", v.Class, v.Rule, v.Reason)
	}
}

// startedOn is how many pods the model counts as started on node id within the window at now.
func startedOn(m *Model, id nodeID, now time.Time) int {
	x := &m.nodeView.starts
	from, to := x.bucketsIn(now, m.cfg.Window)
	if r := x.rings[id]; r != nil {
		return r.count(from, to)
	}
	return 0
}

// Starts are counted per pod, once, at its latest start within the window, dated as failures are.
func TestStartsCountedPerPodInTheWindow(t *testing.T) {
	m := New(DefaultConfig())
	m.Apply(&contract.Batch{Nodes: cluster(2)}, t0)
	n1 := nodeID{uid: "node-1-uid"}
	apply(m, t0,
		startedPod("old-0", "node-1", t0.Add(-time.Hour)),                          // before the window: not counted
		startedPod("new-0", "node-1", t0.Add(-5*time.Minute)),                      // counted
		startedPod("new-1", "node-1", t0.Add(-10*time.Minute)),                     // counted
		pod("shop", "pending-0", ownedBy("StatefulSet", "pending"), startedAt(t0))) // no node
	if got := startedOn(m, n1, t0); got != 2 {
		t.Fatalf("started on node-1 = %d, want 2", got)
	}
	// new-0 restarts twice: still one pod. old-0 restarts: it now counts, dated when seen.
	t1 := t0.Add(time.Minute)
	apply(m, t1, startedPod("new-0", "node-1", t1.Add(-10*time.Second)), startedPod("old-0", "node-1", t1))
	t2 := t1.Add(time.Minute)
	apply(m, t2, startedPod("new-0", "node-1", t2))
	if got := startedOn(m, n1, t2); got != 3 {
		t.Fatalf("after restarts: started on node-1 = %d, want 3", got)
	}
	// A deleted pod's start stays for the window, as its failures would.
	m.Apply(&contract.Batch{Deletes: []contract.Ref{{Kind: contract.KindPod, Namespace: "shop", Name: "new-1"}}}, t2)
	if got := startedOn(m, n1, t2); got != 3 {
		t.Errorf("after a delete: started on node-1 = %d, want 3", got)
	}
	// new-1 started 10m before t0: out of the window 6m after t0 (within one bucket), the others
	// later.
	if got := startedOn(m, n1, t0.Add(6*time.Minute)); got != 2 {
		t.Errorf("6m later: started on node-1 = %d, want 2", got)
	}
	if got := startedOn(m, n1, t2.Add(16*time.Minute)); got != 0 {
		t.Errorf("after the window: started on node-1 = %d, want 0", got)
	}
	// A start seen before the node's UID is known is the node's once it is.
	m2 := New(DefaultConfig())
	apply(m2, t0, startedPod("a-0", "node-9", t0.Add(-time.Minute)))
	m2.Apply(&contract.Batch{Nodes: []*corev1.Node{withUID(node("node-9", true, false), "u9")}}, t0)
	if got := startedOn(m2, nodeID{uid: "u9"}, t0); got != 1 {
		t.Errorf("node-9 after its UID: %d starts, want 1", got)
	}
}

// A failing pod whose start is not among the node's starts (a sandbox failure: no container
// started) tried to start there all the same: it counts with the pods that started.
func TestFailuresWithoutAStartCountAsStarts(t *testing.T) {
	m := New(DefaultConfig())
	m.Apply(&contract.Batch{Nodes: cluster(1), Health: &contract.Health{Synced: true}}, t0)
	apply(m, t0, startedPod("a-0", "node-1", t0.Add(-time.Minute)), startedPod("b-0", "node-1", t0.Add(-time.Minute)),
		startedPod("c-0", "node-1", t0.Add(-time.Minute)))
	var evs []*corev1.Event
	for i := range 3 {
		p := pod("shop", fmt.Sprintf("s-%d", i), onNode("node-1"), ownedBy("StatefulSet", fmt.Sprintf("s%d", i)), waitingSandbox())
		apply(m, t0, p)
		evs = append(evs, podEvent(p, "sandbox", "FailedCreatePodSandBox", sandboxMsg, 1, t0))
	}
	m.Apply(&contract.Batch{Events: evs}, t0.Add(time.Second))
	n := findNode(t, m.Nodes(t0.Add(time.Second)), "node-1")
	if want := "3 of 6 pods that started here in the last 15m failed to start; none started elsewhere (thin evidence: too few to compare)"; !n.Suspect || n.Why != want {
		t.Errorf("node-1: suspect %v, why %q; want %q", n.Suspect, n.Why, want)
	}
}

// NodesUntil says how long the nodes read the same with nothing but the clock moving: walking the
// clock in uneven steps across the window, the nodes at any moment before it equal the nodes
// built when it was given, and it does come (the starts turn over, the failures move back in the
// histogram). The dashboard's tick redraws only once it has passed.
func TestNodesUntil(t *testing.T) {
	m := shares(t, [][2]int{{3, 3}, {1, 20}, {0, 20}})
	if m.NodesUntil() != (time.Time{}) {
		t.Errorf("NodesUntil before any Nodes = %v, want zero", m.NodesUntil())
	}
	now := t0
	built, until := slices.Clone(m.Nodes(now)), m.NodesUntil()
	changes := 0
	for step := 0; now.Before(t0.Add(m.cfg.Window)); step++ {
		now = now.Add(time.Duration(1+step%7) * 900 * time.Millisecond)
		nodes := m.Nodes(now)
		if now.Before(until) {
			if !reflect.DeepEqual(nodes, built) {
				t.Fatalf("at %v, before NodesUntil %v, the nodes changed:\n%+v\nwant\n%+v", now.Sub(t0), until.Sub(t0), nodes, built)
			}
			continue
		}
		if !reflect.DeepEqual(nodes, built) {
			changes++
		}
		built, until = slices.Clone(nodes), m.NodesUntil()
		if !until.After(now) && !until.IsZero() {
			t.Fatalf("NodesUntil %v is not after the moment the nodes were built (%v)", until.Sub(t0), now.Sub(t0))
		}
	}
	if changes == 0 {
		t.Errorf("the nodes never changed across the window: the walk proves nothing")
	}

	empty := New(DefaultConfig())
	empty.Apply(&contract.Batch{Nodes: cluster(2)}, t0)
	empty.Nodes(t0)
	if got := empty.NodesUntil(); !got.IsZero() {
		t.Errorf("NodesUntil without failures = %v, want zero (never)", got)
	}
}
