package model

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
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

	// Failures spread elsewhere: node-3 no longer holds half of them.
	apply(m, t0,
		fail("d-0", "d", "node-1", t0.Add(-time.Minute)),
		fail("e-0", "e", "node-1", t0.Add(-time.Minute)),
		fail("f-0", "f", "node-2", t0.Add(-time.Minute)),
		fail("g-0", "g", "node-2", t0.Add(-time.Minute)))
	if n3 = findNode(t, m.Nodes(t0), "node-3"); n3.Suspect {
		t.Errorf("3 of 7 failures: not suspect; got %+v", n3)
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

func TestNormalizeMessage(t *testing.T) {
	a := normalizeMessage(`failed to create shim task: container 0123456789abcdef0123 pod 1b4e28ba-2fa1-11d2-883f-0016d3cca427 pid 48213: unknown`)
	b := normalizeMessage(`failed to create shim task: container fedcba9876543210fedc pod 6fa459ea-ee8a-3ca4-894e-db77e160355e pid 51002: unknown`)
	if a != b {
		t.Errorf("equal causes differ after normalisation:\n%s\n%s", a, b)
	}
	if want := "failed to create shim task: container <id> pod <uid> pid <n>: unknown"; a != want {
		t.Errorf("normalised = %q, want %q", a, want)
	}
	if got := normalizeMessage("container_linux.go:380: exit 128"); got != "container_linux.go:380: exit 128" {
		t.Errorf("short numbers must stay: %q", got)
	}
}
