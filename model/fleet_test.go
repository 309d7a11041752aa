package model

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"doomwatch/classify"
	"doomwatch/contract"
)

// fleetOf3 is three clusters whose pods share names across clusters (node names and workloads
// repeat across real clusters too) and differ in verdict, node and age, so every sort interleaves
// the clusters.
func fleetOf3() *Fleet {
	f := NewFleet(DefaultConfig(), []string{"eu", "us", "ap"})
	per := [][]*corev1.Pod{
		{
			pod("shop", "web-1", onNode("node-2"), created(t0.Add(-3*time.Hour))),
			pod("shop", "pay-1", onNode("node-1"), imageNotFound(), created(t0.Add(-time.Minute))),
			pod("infra", "dns-1", onNode("node-3"), created(t0.Add(-5*time.Hour))),
		},
		{
			pod("shop", "web-1", onNode("node-1"), created(t0.Add(-2*time.Hour))),
			pod("shop", "pay-1", onNode("node-3"), imageBackOff(), created(t0.Add(-2*time.Minute))),
			pod("shop", "search-1", onNode("node-2"), crashLoop(), created(t0.Add(-time.Hour))),
			pod("infra", "dns-1", onNode("node-1"), created(t0.Add(-4*time.Hour))),
		},
		{
			pod("shop", "pay-1", onNode("node-2"), imageNotFound(), created(t0.Add(-30*time.Second))),
			pod("infra", "dns-1", onNode("node-2"), created(t0.Add(-6*time.Hour))),
		},
	}
	for i, pods := range per {
		f.Apply(&contract.Batch{Cluster: i, Pods: records(pods...)}, t0)
	}
	return f
}

// TestFleetViewMerges: the fleet's view is every cluster's pods in the query's order, ties
// broken by the fleet's order of clusters; Index finds each pod at its place without merging;
// a context in the query keeps one cluster.
func TestFleetViewMerges(t *testing.T) {
	f := fleetOf3()
	type entry struct {
		p *Pod
		c int
	}
	for _, s := range []Sort{BySeverity, ByName, ByNode, ByAge} {
		q := Query{Sort: s}
		var want []entry
		for i, c := range f.Clusters() {
			for _, p := range c.View(q) {
				want = append(want, entry{p, i})
			}
		}
		cmp := orderFunc(s)
		slices.SortStableFunc(want, func(a, b entry) int {
			if c := cmp(a.p.row, b.p.row); c != 0 {
				return c
			}
			return a.c - b.c
		})
		v := f.PodView(q)
		if v.Len() != len(want) {
			t.Fatalf("sort %v: %d rows, want %d", s, v.Len(), len(want))
		}
		// Read the tail first: the merge fills up to what is read, from any start.
		tail := v.Append(nil, 5, v.Len())
		for i, e := range want {
			if got := v.At(i); got != e.p {
				t.Errorf("sort %v row %d: %s in %q, want %s in %q", s, i, got.Key, got.Context, e.p.Key, e.p.Context)
			}
			if got := v.Index(e.p.ID()); got != i {
				t.Errorf("sort %v: Index(%s in %s) = %d, want %d", s, e.p.Key, e.p.Context, got, i)
			}
			if i >= 5 && tail[i-5] != e.p {
				t.Errorf("sort %v: Append(5, n)[%d] = %s, want %s", s, i-5, tail[i-5].Key, e.p.Key)
			}
		}
	}
	v := f.PodView(Query{Sort: ByName})
	for _, key := range []string{"shop/web-1", "eu\x00shop/none", "mars\x00shop/web-1", "ap\x00shop/web-1"} {
		if got := v.Index(key); got != -1 {
			t.Errorf("Index(%q) = %d, want -1", key, got)
		}
	}
	us := f.View(Query{Sort: ByName, Context: "us"})
	if got := strings.Join(podKeys(us), " "); got != "infra/dns-1 shop/pay-1 shop/search-1 shop/web-1" {
		t.Errorf("context us: %s", got)
	}
	for _, p := range us {
		if p.Context != "us" {
			t.Errorf("%s: context %q, want us", p.Key, p.Context)
		}
	}
	if got := f.PodView(Query{Context: "mars"}).Len(); got != 0 {
		t.Errorf("unknown context: %d rows, want 0", got)
	}
	if got := f.View(Query{Text: "@ap"}); len(got) != 2 {
		t.Errorf("text @ap: %d pods, want the 2 of ap", len(got))
	}
}

func podKeys(ps []*Pod) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Key
	}
	return out
}

// TestFleetKeys: a fleet's pod key names the cluster, so the same namespace/name in two clusters
// are two pods; a fleet of one keys pods as a model does.
func TestFleetKeys(t *testing.T) {
	f := fleetOf3()
	eu, ap := f.Pod("eu\x00shop/pay-1"), f.Pod("ap\x00shop/pay-1")
	if eu == nil || ap == nil || eu == ap {
		t.Fatalf("pay-1 of eu and ap: %v, %v", eu, ap)
	}
	if eu.Context != "eu" || ap.ID() != "ap\x00shop/pay-1" {
		t.Errorf("keys: eu's context %q, ap's key %q", eu.Context, ap.ID())
	}
	for _, key := range []string{"shop/pay-1", "mars\x00shop/pay-1", "ap\x00shop/web-1"} {
		if p := f.Pod(key); p != nil {
			t.Errorf("Pod(%q) = %s, want nil", key, p.Key)
		}
	}
	if got := f.Counts().Pods; got != 9 {
		t.Errorf("fleet counts %d pods, want 9", got)
	}

	m := New(DefaultConfig())
	apply(m, t0, pod("shop", "web-1"))
	one := FleetOf("kind-kind", m)
	p := one.Pod("shop/web-1")
	if p == nil || p.Context != "" || p.ID() != "shop/web-1" || one.Multi() {
		t.Errorf("fleet of one: pod %v, key %q", p, p.ID())
	}
}

// TestSpreadString says a workload's verdicts across clusters worst first, each verdict once.
func TestSpreadString(t *testing.T) {
	s := Spread{Workload: "shop/Deployment/web", Verdicts: []ClusterVerdict{
		{"us", classify.RolloutComplete}, {"eu", classify.RolloutDoomed}, {"ap", classify.RolloutComplete}, {"sa", classify.RolloutProgressing},
	}}
	if got, want := s.String(), "shop/Deployment/web: doomed in eu; progressing in sa; complete in us, ap"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// TestFleetViewsFollowTheClusters applies random batches to some clusters of a fleet at a time,
// as the fan-in hands them over, and checks the fleet's nodes and rollouts after each against
// the concatenation of every cluster's, each stamped with its context, that the fleet used to
// rebuild after every batch: they are kept by copying only what changed (nodes come and go, so
// the clusters' parts move too). Each is a new slice when a cluster's changed and the same one
// when none did, and the slice handed out last is not written by the next change: the dashboard
// holds it and tells a change by its identity.
func TestFleetViewsFollowTheClusters(t *testing.T) {
	var moved, kept int
	for seed := range uint64(4) {
		rng := rand.New(rand.NewPCG(seed, 11))
		f := NewFleet(Config{EscalateNodes: 2}, []string{"eu", "us", "ap"})
		at := t0
		var nodes fleetViewCheck[Node]
		var rollouts fleetViewCheck[Rollout]
		for step := range 200 {
			at = at.Add(time.Duration(rng.IntN(3)) * time.Second)
			var bs []contract.Batch
			for c := range f.Len() {
				if rng.IntN(3) == 0 {
					b := churnBatch(rng, at)
					b.Cluster = c
					bs = append(bs, *b)
				}
			}
			f.ApplyAll(bs, at)
			nodePart := func(c *Cluster) []Node { return c.Nodes(at) }
			nodes.check(t, fmt.Sprintf("seed %d step %d: nodes", seed, step), f, f.Nodes(at), nodePart,
				func(n *Node, ctx string) { n.Context = ctx })
			rolloutPart := func(c *Cluster) []Rollout { return c.Rollouts() }
			rollouts.check(t, fmt.Sprintf("seed %d step %d: rollouts", seed, step), f, f.Rollouts(), rolloutPart,
				func(r *Rollout, ctx string) { r.Context = ctx })
		}
		moved += nodes.moved
		kept += nodes.kept
	}
	// Both ways through the cache were taken: parts that moved (a cluster's nodes grew or shrank),
	// and steps where no cluster's nodes changed.
	if moved == 0 || kept == 0 {
		t.Fatalf("the batches moved parts %d times and kept the nodes %d times: make them vary more", moved, kept)
	}
}

// fleetViewCheck follows one of a fleet's concatenated views from step to step.
type fleetViewCheck[T any] struct {
	prev, prevCopy []T
	parts          [][]T
	moved, kept    int
}

func (v *fleetViewCheck[T]) check(t *testing.T, what string, f *Fleet, got []T, part func(*Cluster) []T, stamp func(*T, string)) {
	t.Helper()
	var want []T
	parts := make([][]T, f.Len())
	changed, lens := v.parts == nil, false
	for i, c := range f.Clusters() {
		parts[i] = part(c)
		if v.parts != nil {
			changed = changed || !sameSlice(parts[i], v.parts[i])
			lens = lens || len(parts[i]) != len(v.parts[i])
		}
		for _, x := range parts[i] {
			stamp(&x, c.Context)
			want = append(want, x)
		}
	}
	if len(got) != len(want) || (len(want) > 0 && !reflect.DeepEqual(got, want)) {
		t.Fatalf("%s: differ from every cluster's concatenated\n got  %+v\n want %+v", what, got, want)
	}
	if v.prev != nil && !reflect.DeepEqual(v.prev, v.prevCopy) {
		t.Fatalf("%s: the slice handed out before was written", what)
	}
	if len(got) > 0 && v.prev != nil && sameSlice(got, v.prev) == changed {
		t.Fatalf("%s: a cluster's changed: %t, yet the same slice: %t", what, changed, !changed)
	}
	if lens {
		v.moved++
	}
	if !changed {
		v.kept++
	}
	v.prev, v.prevCopy, v.parts = got, slices.Clone(got), parts
}
