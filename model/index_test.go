package model

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"doomwatch/classify"
	"doomwatch/contract"
	"doomwatch/podrec"
)

// TestOrderAgainstASortedSlice drives an order through random inserts, removals and bulk merges
// and checks every position, rank and range against a plain sorted slice.
func TestOrderAgainstASortedSlice(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	o := newOrder(byName)
	var want []*row
	id := uint64(0)
	mk := func() *row {
		id++
		return &row{ns: fmt.Sprintf("ns-%d", rng.IntN(5)), name: fmt.Sprintf("p-%d", rng.IntN(300)), id: id}
	}
	for step := 0; step < 3000; step++ {
		switch op := rng.IntN(40); {
		case op < 20:
			r := mk()
			o.insert(r)
			i, _ := slices.BinarySearchFunc(want, r, byName)
			want = slices.Insert(want, i, r)
		case op < 38 && len(want) > 0:
			i := rng.IntN(len(want))
			if !o.remove(want[i]) {
				t.Fatalf("step %d: remove did not find a row it holds", step)
			}
			want = slices.Delete(want, i, i+1)
		case op == 38:
			batch := make([]*row, rng.IntN(2*bulkMin))
			for i := range batch {
				batch[i] = mk()
			}
			want = append(want, batch...)
			slices.SortFunc(want, byName)
			o.insertMany(batch)
		default:
			if o.remove(&row{ns: "ns-0", name: "p-0", id: 1 << 60}) {
				t.Fatalf("step %d: removed a row it does not hold", step)
			}
		}
		if o.Len() != len(want) {
			t.Fatalf("step %d: Len %d, want %d", step, o.Len(), len(want))
		}
		if step%97 != 0 {
			continue
		}
		if got := o.all(); !slices.Equal(got, want) {
			t.Fatalf("step %d: rows out of order", step)
		}
		for i, r := range want {
			if o.at(i) != r || o.index(r) != i {
				t.Fatalf("step %d: at(%d) or index disagrees", step, i)
			}
		}
		if len(want) > 10 {
			from := rng.IntN(len(want) - 5)
			if got := o.appendRange(nil, from, from+5); !slices.Equal(got, want[from:from+5]) {
				t.Fatalf("step %d: appendRange(%d)", step, from)
			}
		}
		for _, b := range o.blocks {
			if len(b) == 0 || len(b) > maxBlock {
				t.Fatalf("step %d: a block of %d rows", step, len(b))
			}
		}
	}
}

// referenceView is the pod view computed from scratch, as View did before the index: every pod
// filtered, then stably sorted from name order.
func referenceView(m *Model, q Query) []string {
	tokens := strings.Fields(strings.ToLower(q.Text))
	var ps []*Pod
	for _, p := range m.pods {
		keep := true
		switch q.Filter {
		case Problems:
			keep = failing(p.Verdict.Class)
		case OnlyDoomed:
			keep = p.Verdict.Class == classify.Doomed
		case OnlyTransient:
			keep = p.Verdict.Class == classify.Transient
		}
		keep = keep && (q.Node == "" || p.Node == q.Node) && (q.Owner == "" || p.Owner != "" && p.workload == q.Owner)
		for _, tok := range tokens {
			keep = keep && (subsequence2(tok, p.Namespace, "/", p.Name) || subsequence2(tok, p.Node, "", "") ||
				classify.ContainsFold(p.Verdict.Reason, tok))
		}
		if keep {
			ps = append(ps, p)
		}
	}
	slices.SortFunc(ps, func(a, b *Pod) int {
		return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})
	sev := func(p *Pod) int { return p.Verdict.Class.Severity() }
	switch q.Sort {
	case BySeverity:
		slices.SortStableFunc(ps, func(a, b *Pod) int { return cmp.Compare(sev(b), sev(a)) })
	case ByNode:
		slices.SortStableFunc(ps, func(a, b *Pod) int {
			return cmp.Or(strings.Compare(a.Node, b.Node), cmp.Compare(sev(b), sev(a)))
		})
	case ByAge:
		slices.SortStableFunc(ps, func(a, b *Pod) int { return b.Created.Compare(a.Created) })
	}
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Key
	}
	return out
}

func viewKeys(v PodView) []string {
	out := make([]string, 0, v.Len())
	for _, p := range v.Append(nil, 0, v.Len()) {
		out = append(out, p.Key)
	}
	return out
}

// churnBatch is a random batch over a small cluster: pods created, changing state, node and
// owner, deleted; ReplicaSets re-parented; nodes flapping.
func churnBatch(rng *rand.Rand, at time.Time) *contract.Batch {
	var b contract.Batch
	for range rng.IntN(12) {
		i := rng.IntN(60)
		ns, name := []string{"shop", "infra", "batch"}[i%3], fmt.Sprintf("pay-%02d", i)
		if rng.IntN(8) == 0 {
			b.Deletes = append(b.Deletes, contract.Ref{Kind: contract.KindPod, Namespace: ns, Name: name})
			continue
		}
		opts := []podOpt{onNode(fmt.Sprintf("node-%d", rng.IntN(4))), ownedBy("ReplicaSet", fmt.Sprintf("rs-%d", rng.IntN(4))),
			created(t0.Add(-time.Duration(rng.IntN(5)) * time.Minute)), uid(fmt.Sprintf("%s-%s-%d", ns, name, rng.IntN(2)))}
		switch rng.IntN(6) {
		case 0:
			opts = append(opts, crashLoop())
		case 1:
			opts = append(opts, imageNotFound())
		case 2:
			opts = append(opts, imageBackOff())
		case 3:
			opts = append(opts, startFailed128(at.Add(-time.Duration(rng.IntN(60))*time.Second), 1))
		}
		b.Pods = append(b.Pods, podrec.RecordOf(pod(ns, name, opts...)))
	}
	if rng.IntN(4) == 0 {
		k := rng.IntN(4)
		for _, ns := range []string{"shop", "infra", "batch"} {
			b.Workloads = append(b.Workloads, contract.Workload(replicaSet(ns, fmt.Sprintf("rs-%d", k), fmt.Sprintf("deploy-%d", rng.IntN(3)), "1")))
		}
	}
	if rng.IntN(5) == 0 {
		b.Nodes = append(b.Nodes, node(fmt.Sprintf("node-%d", rng.IntN(4)), rng.IntN(2) == 0, rng.IntN(2) == 0))
	}
	return &b
}

// TestViewsStayEqualToAFreshComputation applies random batches and checks, after each, every
// order and the filtered views the model keeps against the view computed from scratch: the index
// is updated per changed pod and must never drift.
func TestViewsStayEqualToAFreshComputation(t *testing.T) {
	for seed := range uint64(6) {
		rng := rand.New(rand.NewPCG(seed, 7))
		m := New(Config{EscalateNodes: 2})
		// At most maxViews filtered queries, so every one is kept and updated, never rebuilt.
		queries := []Query{
			{Sort: BySeverity}, {Sort: ByName}, {Sort: ByNode}, {Sort: ByAge},
			{Sort: ByNode, Filter: Problems},
			{Sort: BySeverity, Node: "node-2"},
			{Sort: ByAge, Owner: "shop/Deployment/deploy-1"},
			{Sort: BySeverity, Text: "pay 1", Filter: OnlyDoomed},
		}
		at := t0
		for step := range 150 {
			at = at.Add(time.Duration(rng.IntN(20)) * time.Second)
			m.Apply(churnBatch(rng, at), at)
			if step%10 == 0 {
				m.Expire(at)
			}
			for _, q := range queries {
				got, want := viewKeys(m.PodView(q)), referenceView(m, q)
				if !slices.Equal(got, want) {
					t.Fatalf("seed %d step %d: %+v\n got  %v\n want %v", seed, step, q, got, want)
				}
				if !slices.Equal(keysOf(m.View(q)), want) {
					t.Fatalf("seed %d step %d: View(%+v) differs from PodView", seed, step, q)
				}
			}
			if len(m.idx.views) != 4 {
				t.Fatalf("seed %d: %d filtered views kept, want 4", seed, len(m.idx.views))
			}
		}
	}
}

func keysOf(ps []*Pod) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Key
	}
	return out
}

// TestPodViewIndexFollowsAPod: Index finds a pod's row by key in any view, and says -1 for a pod
// the view does not hold.
func TestPodViewIndexFollowsAPod(t *testing.T) {
	m := viewModel()
	for _, q := range []Query{{Sort: BySeverity}, {Sort: ByAge}, {Filter: Problems}} {
		v := m.PodView(q)
		for i := range v.Len() {
			if got := v.Index(v.At(i).Key); got != i {
				t.Errorf("%+v: Index(%s) = %d, want %d", q, v.At(i).Key, got, i)
			}
		}
	}
	if i := m.PodView(Query{Filter: Problems}).Index("shop/web-1"); i != -1 {
		t.Errorf("a healthy pod found at %d in the problems view", i)
	}
	if i := m.PodView(Query{}).Index("shop/nope"); i != -1 {
		t.Errorf("an unknown pod found at %d", i)
	}
}

// TestFilterJobReplaysTheBatchesAppliedMeanwhile: a text filter matched off the UI goroutine while
// batches arrive is adopted as it would be if it had been built at once.
func TestFilterJobReplaysTheBatchesAppliedMeanwhile(t *testing.T) {
	m := viewModel()
	q := Query{Sort: BySeverity, Text: "pay"}
	job := m.StartFilter(q)
	// Meanwhile: pay-1 recovers and moves down, pay-2 is deleted, pay-3 appears, web-1 is renamed
	// into the filter's reach by a new pod.
	apply(m, t0, pod("shop", "pay-1", onNode("node-1")), pod("shop", "pay-3", onNode("node-2"), crashLoop()),
		pod("shop", "payroll-1", onNode("node-4")))
	m.Apply(&contract.Batch{Deletes: []contract.Ref{{Kind: contract.KindPod, Namespace: "shop", Name: "pay-2"}}}, t0)
	if m.ViewCost(q) == 0 {
		t.Fatal("the view is kept before its job is adopted")
	}
	res := job.Run()
	if res.Query() != q {
		t.Fatalf("result for %+v", res.Query())
	}
	if !m.AdoptFilter(res) {
		t.Fatal("the result was refused")
	}
	if m.ViewCost(q) != 0 {
		t.Error("the adopted view is not kept")
	}
	want := strings.Join(referenceView(m, q), " ")
	if got := strings.Join(viewKeys(m.PodView(q)), " "); got != want || want != "shop/pay-3 shop/pay-1 shop/payroll-1" {
		t.Errorf("adopted view %q, want %q", got, want)
	}
	// Kept from then on: the next batch updates it.
	apply(m, t0, pod("shop", "pay-4", onNode("node-1"), crashLoop()))
	if got, want := viewKeys(m.PodView(q)), referenceView(m, q); !slices.Equal(got, want) {
		t.Errorf("after adoption: %v, want %v", got, want)
	}
}

// TestFilterJobRefusals: only the last job's result is adopted, and one whose journal overflowed
// is refused, so the dashboard runs it again.
func TestFilterJobRefusals(t *testing.T) {
	m := viewModel()
	old := m.StartFilter(Query{Text: "pay"})
	last := m.StartFilter(Query{Text: "pa"})
	if m.AdoptFilter(old.Run()) {
		t.Error("an abandoned job's result was adopted")
	}
	if !m.AdoptFilter(last.Run()) {
		t.Error("the last job's result was refused")
	}
	job := m.StartFilter(Query{Text: "web"})
	var pods []*corev1.Pod
	for i := range 5000 {
		pods = append(pods, pod("load", fmt.Sprintf("web-%d", i)))
	}
	apply(m, t0, pods...)
	if m.AdoptFilter(job.Run()) {
		t.Error("a result whose journal overflowed was adopted")
	}
}

// TestQuietKindsLeaveTheViewsAlone: a Node heartbeat and a StatefulSet status change nothing the
// dashboard shows, so the nodes and rollouts it holds are the very same slices afterwards.
func TestQuietKindsLeaveTheViewsAlone(t *testing.T) {
	m := viewModel()
	n := node("node-1", true, false)
	m.Apply(&contract.Batch{Nodes: []*corev1.Node{n}, Workloads: contract.Workloads(deployment("shop", "web", 1, "1"))}, t0)
	nodes, rollouts := m.Nodes(t0), m.Rollouts()
	beat := n.DeepCopy()
	beat.Status.Conditions[0].LastHeartbeatTime.Time = t0.Add(10 * time.Second)
	m.Apply(&contract.Batch{Nodes: []*corev1.Node{beat}, Workloads: contract.Workloads(&appsv1.StatefulSet{})}, t0.Add(10*time.Second))
	if got := m.Nodes(t0.Add(10 * time.Second)); &got[0] != &nodes[0] {
		t.Error("a heartbeat rebuilt the nodes")
	}
	if got := m.Rollouts(); &got[0] != &rollouts[0] {
		t.Error("a heartbeat rebuilt the rollouts")
	}
	// A pod moving changes its node's count and nothing else about the nodes: patched, in order.
	apply(m, t0, pod("shop", "web-1", onNode("node-1")))
	got := m.Nodes(t0.Add(10 * time.Second))
	fresh := New(DefaultConfig())
	fresh.Apply(&contract.Batch{Nodes: []*corev1.Node{beat}}, t0)
	for _, p := range m.pods {
		fresh.Apply(&contract.Batch{Pods: []*podrec.Record{p.rec}}, t0)
	}
	want := fresh.Nodes(t0.Add(10 * time.Second))
	if len(got) != len(want) {
		t.Fatalf("nodes %v, want %v", got, want)
	}
	for i := range got {
		if got[i].Name != want[i].Name || got[i].Pods != want[i].Pods || got[i].FailingPods != want[i].FailingPods {
			t.Errorf("node %d: %s %d/%d, want %s %d/%d", i, got[i].Name, got[i].Pods, got[i].FailingPods,
				want[i].Name, want[i].Pods, want[i].FailingPods)
		}
	}
	// An update that leaves the pod's verdict and node as they were changes no count: the same slice.
	apply(m, t0, pod("shop", "web-1", onNode("node-1"), image("registry.example.com/web:v2")))
	if again := m.Nodes(t0.Add(10 * time.Second)); &again[0] != &got[0] {
		t.Error("an update that changed no node's counts copied the nodes")
	}
}

// TestTypedFilterNarrowsTheViewBefore: a filter typed key by key is built from the rows the
// previous key left (ViewCost says so), and is still exactly the view computed from scratch, with
// random batches between the keys; a filter that no kept view narrows (after a deleted character)
// goes back to the whole order.
func TestTypedFilterNarrowsTheViewBefore(t *testing.T) {
	for seed := range uint64(6) {
		rng := rand.New(rand.NewPCG(seed, 11))
		m := New(Config{EscalateNodes: 2})
		at := t0
		for range 20 {
			at = at.Add(time.Second)
			m.Apply(churnBatch(rng, at), at)
		}
		typed := ""
		for i, key := range "shop/pay 1" {
			prev := Query{Sort: BySeverity, Text: typed}
			typed += string(key)
			q := Query{Sort: BySeverity, Text: typed}
			if i > 0 && strings.TrimSpace(prev.Text) != "" {
				if cost, base := m.ViewCost(q), m.PodView(prev).Len(); cost != base {
					t.Fatalf("seed %d: %q after %q would scan %d rows, want the %d the previous key left", seed, typed, prev.Text, cost, base)
				}
			}
			at = at.Add(time.Second)
			m.Apply(churnBatch(rng, at), at)
			if got, want := viewKeys(m.PodView(q)), referenceView(m, q); !slices.Equal(got, want) {
				t.Fatalf("seed %d: %q\n got  %v\n want %v", seed, typed, got, want)
			}
		}
		// Backspace twice and another key: no kept view's text is a prefix of "shop/x".
		other := Query{Sort: BySeverity, Text: "shop/x"}
		if cost, all := m.ViewCost(other), m.Counts().Pods; cost != all {
			t.Errorf("seed %d: a filter no kept view narrows would scan %d rows, want all %d", seed, cost, all)
		}
	}
}
