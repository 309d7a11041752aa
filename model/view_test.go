package model

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"doomwatch/contract"
)

func keys(ps []*Pod) string {
	ks := make([]string, len(ps))
	for i, p := range ps {
		ks[i] = p.Key
	}
	return strings.Join(ks, " ")
}

func viewModel() *Model {
	m := New(DefaultConfig())
	apply(m, t0,
		pod("shop", "web-1", onNode("node-2"), created(t0.Add(-3*time.Hour))),
		pod("shop", "pay-1", onNode("node-1"), imageNotFound(), created(t0.Add(-time.Minute))),
		pod("shop", "pay-2", onNode("node-3"), imageBackOff(), created(t0.Add(-2*time.Minute))),
		pod("infra", "dns-1", onNode("node-3"), created(t0.Add(-5*time.Hour))),
		pod("shop", "search-1", onNode("node-2"), crashLoop(), created(t0.Add(-time.Hour))))
	return m
}

func TestViewSortAndFilter(t *testing.T) {
	m := viewModel()
	tests := []struct {
		q    Query
		want string
	}{
		{Query{Sort: BySeverity}, "shop/pay-1 shop/search-1 shop/pay-2 infra/dns-1 shop/web-1"},
		{Query{Sort: ByName}, "infra/dns-1 shop/pay-1 shop/pay-2 shop/search-1 shop/web-1"},
		{Query{Sort: ByNode}, "shop/pay-1 shop/search-1 shop/web-1 shop/pay-2 infra/dns-1"},
		{Query{Sort: ByAge}, "shop/pay-1 shop/pay-2 shop/search-1 shop/web-1 infra/dns-1"},
		{Query{Filter: Problems}, "shop/pay-1 shop/search-1 shop/pay-2"},
		{Query{Filter: OnlyDoomed}, "shop/pay-1 shop/search-1"},
		{Query{Filter: OnlyTransient}, "shop/pay-2"},
		{Query{Node: "node-3"}, "shop/pay-2 infra/dns-1"},
		// Fuzzy: subsequence over namespace/name, node and reason, every word must match.
		{Query{Text: "shpay"}, "shop/pay-1 shop/pay-2"},
		{Query{Text: "pay node-3"}, "shop/pay-2"},
		{Query{Text: "IMAGE NOT FOUND"}, "shop/pay-1"},
		{Query{Text: "oom"}, "shop/search-1"},
		{Query{Text: "zzz"}, ""},
		{Query{Filter: Problems, Node: "node-2", Text: "crash"}, "shop/search-1"},
	}
	for _, tc := range tests {
		if got := keys(m.View(tc.q)); got != tc.want {
			t.Errorf("View(%+v) = %q, want %q", tc.q, got, tc.want)
		}
	}
}

func TestViewIsCachedUntilModelOrQueryChanges(t *testing.T) {
	m := viewModel()
	q := Query{Sort: BySeverity, Text: "shop"}
	m.PodView(q)
	if m.ViewCost(q) != 0 {
		t.Errorf("the view asked for is not kept")
	}
	if allocs := testing.AllocsPerRun(100, func() { m.PodView(q) }); allocs != 0 {
		t.Errorf("a kept PodView allocates %v per call", allocs)
	}
	// A batch that turns web-1 doomed reorders the view.
	apply(m, t0, pod("shop", "web-1", onNode("node-2"), crashLoop()))
	if got := keys(m.View(q)); !strings.HasPrefix(got, "shop/pay-1 shop/search-1 shop/web-1") {
		t.Errorf("view after update = %q", got)
	}
	m.Apply(&contract.Batch{Deletes: []contract.Ref{{Kind: contract.KindPod, Namespace: "shop", Name: "pay-1"}}}, t0)
	if got := keys(m.View(q)); strings.Contains(got, "pay-1") {
		t.Errorf("deleted pod still in view: %q", got)
	}
}

func TestIngestSanitisesEveryField(t *testing.T) {
	m := New(DefaultConfig())
	// A hostile termination message (the container's own text from terminationMessagePath).
	evil := "\x1b]0;pwned\x07\x1b[2J\x1b[H\x1b[10Aboom\n"
	p := pod("shop", "web-1", onNode("node-1"), app(func(cs *corev1.ContainerStatus) {
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}
		cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", Message: evil}
	}))
	apply(m, t0, p)
	got := m.Pod("shop/web-1")
	for _, s := range []string{got.Verdict.Reason, got.Verdict.Message, got.Containers[0].Reason, got.Containers[0].Message} {
		if strings.ContainsAny(s, "\x1b\x07\n") || strings.Contains(s, "pwned") {
			t.Errorf("unsanitised text reached the model: %q", s)
		}
		if !strings.Contains(s, "boom") {
			t.Errorf("message text lost: %q", s)
		}
	}
}

// TestViewOwnerIsExact: the owner filter keeps exactly one workload's pods, where a text filter on
// its name would also catch its namesakes: another kind, another namespace, a longer name.
func TestViewOwnerIsExact(t *testing.T) {
	m := New(DefaultConfig())
	m.Apply(&contract.Batch{Workloads: contract.Workloads(replicaSet("shop", "checkout-7d9f", "checkout", "1"),
		replicaSet("shop", "checkout-db-5c6b", "checkout-db", "1"),
		replicaSet("staging", "checkout-4a1e", "checkout", "1"))}, t0)
	apply(m, t0,
		pod("shop", "checkout-7d9f-a", ownedBy("ReplicaSet", "checkout-7d9f")),
		pod("shop", "checkout-7d9f-b", ownedBy("ReplicaSet", "checkout-7d9f"), crashLoop()),
		pod("shop", "checkout-db-5c6b-a", ownedBy("ReplicaSet", "checkout-db-5c6b")),
		pod("shop", "checkout-0", ownedBy("StatefulSet", "checkout")),
		pod("shop", "checkout-debug"),
		pod("staging", "checkout-4a1e-a", ownedBy("ReplicaSet", "checkout-4a1e")))
	if got := len(m.View(Query{Text: "checkout"})); got != 6 {
		t.Fatalf("the text filter matches %d pods, want all 6 namesakes (the test proves nothing otherwise)", got)
	}
	tests := []struct {
		q    Query
		want string
	}{
		{Query{Sort: ByName, Owner: "shop/Deployment/checkout"}, "shop/checkout-7d9f-a shop/checkout-7d9f-b"},
		{Query{Sort: ByName, Owner: "shop/Deployment/checkout-db"}, "shop/checkout-db-5c6b-a"},
		{Query{Sort: ByName, Owner: "shop/StatefulSet/checkout"}, "shop/checkout-0"},
		{Query{Sort: ByName, Owner: "staging/Deployment/checkout"}, "staging/checkout-4a1e-a"},
		{Query{Sort: ByName, Owner: "shop/Deployment/check"}, ""},
		{Query{Sort: ByName, Owner: "shop/"}, ""}, // an unmanaged pod has no workload
		{Query{Sort: ByName, Owner: "shop/Deployment/checkout", Filter: Problems}, "shop/checkout-7d9f-b"},
	}
	// One after the other on the same model: the cache must not answer a new owner with the
	// previous owner's pods.
	for _, tc := range tests {
		if got := keys(m.View(tc.q)); got != tc.want {
			t.Errorf("View(%+v) = %q, want %q", tc.q, got, tc.want)
		}
	}
	m.Apply(&contract.Batch{Workloads: contract.Workloads(deployment("shop", "checkout", 2, "1"))}, t0)
	rs := m.Rollouts()
	if len(rs) != 1 || rs[0].Workload() != "shop/Deployment/checkout" {
		t.Fatalf("rollouts %+v: want one whose Workload is shop/Deployment/checkout", rs)
	}
	if got := keys(m.View(Query{Sort: ByName, Owner: rs[0].Workload()})); got != "shop/checkout-7d9f-a shop/checkout-7d9f-b" {
		t.Errorf("the rollout's own pods: %q", got)
	}
}

// A pod that arrives before its ReplicaSet is owned by the ReplicaSet until the ReplicaSet shows
// up; from then on the owner filter finds it under the Deployment, and no longer under the
// ReplicaSet (the cached view must not answer from before the re-resolution).
func TestViewOwnerAfterLateReplicaSet(t *testing.T) {
	m := New(DefaultConfig())
	apply(m, t0, pod("shop", "checkout-7d9f-a", ownedBy("ReplicaSet", "checkout-7d9f")))
	if got := keys(m.View(Query{Sort: ByName, Owner: "shop/ReplicaSet/checkout-7d9f"})); got != "shop/checkout-7d9f-a" {
		t.Fatalf("before the ReplicaSet: %q", got)
	}
	m.Apply(&contract.Batch{Workloads: contract.Workloads(replicaSet("shop", "checkout-7d9f", "checkout", "1"))}, t0)
	if got := keys(m.View(Query{Sort: ByName, Owner: "shop/ReplicaSet/checkout-7d9f"})); got != "" {
		t.Errorf("after the ReplicaSet, still under it: %q", got)
	}
	if got := keys(m.View(Query{Sort: ByName, Owner: "shop/Deployment/checkout"})); got != "shop/checkout-7d9f-a" {
		t.Errorf("after the ReplicaSet, under the Deployment: %q", got)
	}
}
