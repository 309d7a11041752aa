package model

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"doomwatch/classify"
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
	m.Apply(&Batch{Nodes: []*corev1.Node{node("node-1", true, false), node("node-3", true, true)}}, t0)
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
	if want := "3 pods of 3 workloads failed to start with exit 128 here in the last 15m; 0 elsewhere"; n3.Why != want {
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

	// Failures spread elsewhere: node-1 and node-2 have 2 failing pods each, so node-3's 3 no
	// longer stand out (3 < 3 × the median 2 of the other nodes).
	apply(m, t0,
		fail("d-0", "d", "node-1", t0.Add(-time.Minute)),
		fail("e-0", "e", "node-1", t0.Add(-time.Minute)),
		fail("f-0", "f", "node-2", t0.Add(-time.Minute)),
		fail("g-0", "g", "node-2", t0.Add(-time.Minute)))
	if n3 = findNode(t, m.Nodes(t0), "node-3"); n3.Suspect {
		t.Errorf("3 pods against 2 on each other node: not suspect; got %+v", n3)
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
	if want := "1 pod of 1 workload failed to start with exit 128 here in the last 1h; 0 elsewhere"; n.Why != want {
		t.Errorf("why = %q, want %q", n.Why, want)
	}
	// The pod goes; the node has nothing left but evidence, which still counts for the window.
	m.Apply(&Batch{Deletes: []Ref{{Kind: KindPod, Namespace: "shop", Name: "a-0"}}}, t0)
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
	m.Apply(&Batch{Nodes: []*corev1.Node{node("node-1", false, false)}}, t0)
	n := findNode(t, m.Nodes(t0), "node-1")
	if !n.Known || n.Ready || n.Cordoned {
		t.Errorf("node-1 = %+v", n)
	}
	m.Apply(&Batch{Deletes: []Ref{{Kind: KindNode, Name: "node-1"}}}, t0)
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

// The suspect rule counts distinct pods, and a node is compared with the rest of the cluster
// rather than with a share of it, so several bad nodes are suspect together (issue 8, item 9).
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
		{"busy noisy cluster: 5 against a median of 2", 6, []int{5, 2, 2, 2, 3, 2}, nil},
		{"busy noisy cluster: 6 against a median of 2", 6, []int{6, 2, 2, 2, 3, 2}, []string{"node-1"}},
		{"a single node has nothing to compare with", 1, []int{3}, []string{"node-1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := New(DefaultConfig())
			m.Apply(&Batch{Nodes: cluster(tc.nodes)}, t0)
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
	m.Apply(&Batch{Nodes: cluster(5)}, t0)
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
	if want := "4 pods of 4 workloads failed to start with exit 128 here in the last 15m; 1 elsewhere (median 0 per other node)"; n1.Why != want {
		t.Errorf("why = %q, want %q", n1.Why, want)
	}
}

// A workload escalated as not node-local fails wherever it runs: its pods count on neither side.
func TestSuspectLeavesOutNotNodeLocalWorkloads(t *testing.T) {
	m := New(DefaultConfig())
	m.Apply(&Batch{Nodes: cluster(5)}, t0)
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
	if want := "3 pods of 3 workloads failed to start with exit 128 here in the last 15m; 0 elsewhere; 1 pod of not-node-local workloads left out"; n4.Why != want {
		t.Errorf("why = %q, want %q", n4.Why, want)
	}
}

// Nodes are keyed by UID: a node deleted and registered again under the same name does not
// inherit the old node's failures (issue 8, item 10).
func TestNodeRegisteredAgainStartsClean(t *testing.T) {
	for _, deleteSeen := range []bool{true, false} {
		t.Run(fmt.Sprintf("delete seen %v", deleteSeen), func(t *testing.T) {
			m := New(DefaultConfig())
			m.Apply(&Batch{Nodes: cluster(5)}, t0)
			apply(m, t0,
				failingPod("a-0", "node-3", t0.Add(-3*time.Minute)),
				failingPod("b-0", "node-3", t0.Add(-2*time.Minute)),
				failingPod("c-0", "node-3", t0.Add(-time.Minute)))
			if n := findNode(t, m.Nodes(t0), "node-3"); !n.Suspect || n.UID != "node-3-uid" {
				t.Fatalf("node-3 before: %+v", n)
			}

			// The node is deleted with its pods and registers again under the same name.
			later := t0.Add(time.Minute)
			var dels []Ref
			for _, p := range []string{"a-0", "b-0", "c-0"} {
				dels = append(dels, Ref{Kind: KindPod, Namespace: "shop", Name: p})
			}
			if deleteSeen {
				dels = append(dels, Ref{Kind: KindNode, Name: "node-3"})
			}
			m.Apply(&Batch{Deletes: dels}, later)
			m.Apply(&Batch{Nodes: []*corev1.Node{withUID(node("node-3", true, false), "node-3-uid-2")}}, later)
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
	m.Apply(&Batch{Nodes: []*corev1.Node{withUID(node("node-3", true, false), "u3")}}, t0)
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
	m.Apply(&Batch{Health: &Health{Synced: true, Forbidden: []Kind{KindNode}}}, t0)
	apply(m, t0,
		failingPod("a-0", "node-3", t0.Add(-3*time.Minute)),
		failingPod("b-0", "node-3", t0.Add(-2*time.Minute)),
		failingPod("c-0", "node-3", t0.Add(-time.Minute)),
		pod("shop", "ok-1", onNode("node-1")), pod("shop", "ok-2", onNode("node-2")))
	// The pods go and come back: still one node-3, by name.
	m.Apply(&Batch{Deletes: []Ref{{Kind: KindPod, Namespace: "shop", Name: "a-0"}}}, t0)
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
	s := m.Snapshot("rbac", t0)
	if s.Nodes[2].Name != "node-3" || s.Nodes[2].UID != "" || !s.Nodes[2].Suspect {
		t.Errorf("snapshot node-3 = %+v", s.Nodes[2])
	}
}

// CRI-O's create errors are node evidence too, and the why sentence does not claim exit 128 for
// them (issue 8, item 13).
func TestCreateErrorsMakeANodeSuspect(t *testing.T) {
	m := New(DefaultConfig())
	m.Apply(&Batch{Nodes: cluster(5)}, t0)
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
	if want := "3 pods of 3 workloads failed to start here in the last 15m; 0 elsewhere"; n2.Why != want {
		t.Errorf("why = %q, want %q", n2.Why, want)
	}
	if !n2.First.Equal(t0.Add(-3*time.Minute)) || !n2.Last.Equal(t0.Add(-time.Minute)) {
		t.Errorf("first/last = %v/%v, want when each was first seen", n2.First, n2.Last)
	}
	if !strings.Contains(n2.DominantMessage, "running lstat on namespace path") {
		t.Errorf("dominant message = %q", n2.DominantMessage)
	}
}
