package model_test

import (
	"runtime"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"doomwatch/contract"
	"doomwatch/model"
	"doomwatch/model/scaletest"
	"doomwatch/podrec"
)

// scalePods is the largest cluster doomwatch is sized for (BENCHMARKS.md).
const scalePods = 150_000

// refresh asks the model for what the dashboard reads after every batch and tick (tui/root.go
// refreshAll): health, counts, rollouts, nodes, and the pod view for the current query, of which
// a 200x50 frame shows 50 rows.
func refresh(m *model.Model, q model.Query, now time.Time) int {
	_ = m.Health()
	c := m.Counts()
	rs := m.Rollouts()
	ns := m.Nodes(now)
	v := m.PodView(q)
	window = v.Append(window[:0], 0, 50)
	return c.Pods + len(rs) + len(ns) + v.Len() + len(window)
}

var window []*model.Pod

var sorts = []struct {
	name string
	sort model.Sort
}{{"severity", model.BySeverity}, {"name", model.ByName}, {"node", model.ByNode}, {"age", model.ByAge}}

// BenchmarkBatch applies one 50-update batch of status churn (every update changes its pod's
// verdict) to a 150,000-pod model and refreshes the views the dashboard reads, for each sort: the
// work the UI goroutine's model does per batch. Batches arrive 200 ms apart on the model's clock,
// so the per-second work (the nodes' histogram) is in the figure too. Target: a few ms.
func BenchmarkBatch(b *testing.B) {
	m := model.New(model.DefaultConfig())
	scaletest.Load(m, scalePods)
	batches := scaletest.Churn(400, 50) // two passes over the churned namespace
	now, k := scaletest.T0, 0           // k runs on across the sorts, so every update changes a verdict
	for _, s := range sorts {
		b.Run("sort="+s.name, func(b *testing.B) {
			q := model.Query{Sort: s.sort}
			refresh(m, q, now)
			runtime.GC()
			cpu0, k0 := scaletest.CPUTime(), k
			for b.Loop() {
				now = now.Add(200 * time.Millisecond)
				m.Apply(&batches[k%len(batches)], now)
				refresh(m, q, now)
				k++
			}
			b.ReportMetric(float64((scaletest.CPUTime()-cpu0).Nanoseconds())/float64(k-k0)/1e6, "cpu-ms/op")
		})
	}
	if m.Counts().Pods != scalePods {
		b.Fatalf("pods = %d", m.Counts().Pods)
	}
}

// BenchmarkQueryChange changes the pod view's query on a 150,000-pod model and reads the new view:
// what a sort or filter key costs the model (tui's BenchmarkSortKey adds the frame). "sort" cycles
// the four sorts; "filter" asks each time for a filtered view the model does not keep yet (the
// problems on one node, cycling over the nodes), which is built in one pass over the pods. Target:
// the key to the frame within 50 ms.
func BenchmarkQueryChange(b *testing.B) {
	m := model.New(model.DefaultConfig())
	scaletest.Load(m, scalePods)
	b.Run("sort", func(b *testing.B) {
		k := 0
		for b.Loop() {
			refresh(m, model.Query{Sort: sorts[k%len(sorts)].sort}, scaletest.T0)
			k++
		}
	})
	b.Run("filter", func(b *testing.B) {
		k := 0
		for b.Loop() {
			refresh(m, model.Query{Filter: model.Problems, Node: scaletest.NodeName(k % scaletest.Nodes)}, scaletest.T0)
			k++
		}
	})
}

// BenchmarkTextFilter runs a text filter over a snapshot of 150,000 pods, as the dashboard does off
// the UI goroutine (StartFilter on the UI goroutine, Run off it, AdoptFilter back on it).
func BenchmarkTextFilter(b *testing.B) {
	m := model.New(model.DefaultConfig())
	scaletest.Load(m, scalePods)
	queries := []string{"svc-01", "crash", "team-03 ip-10-0-0-7", "zzz"}
	k := 0
	for b.Loop() {
		job := m.StartFilter(model.Query{Text: queries[k%len(queries)]})
		if !m.AdoptFilter(job.Run()) {
			b.Fatal("result refused")
		}
		k++
	}
}

// BenchmarkLoad loads a 150,000-pod cluster in batches of 10,000 pods, refreshing the views after
// each as the dashboard does while the informers sync: the model's share of "start → synced".
func BenchmarkLoad(b *testing.B) {
	pods := make([]*podrec.Record, scalePods)
	for i := range pods {
		pods[i] = scaletest.Record(i, 0)
	}
	for b.Loop() {
		m := model.New(model.DefaultConfig())
		m.Apply(&contract.Batch{Nodes: scaletest.NodeObjects(), Workloads: append(contract.WorkloadsOf(scaletest.ReplicaSets(scalePods)), contract.WorkloadsOf(scaletest.Deployments(scalePods))...)}, scaletest.T0)
		for start := 0; start < scalePods; start += 10_000 {
			m.Apply(&contract.Batch{Pods: pods[start : start+10_000]}, scaletest.T0)
			refresh(m, model.Query{}, scaletest.T0)
		}
	}
}

// BenchmarkMemory measures the live heap per pod of a 150,000-pod cluster: the informer's copy (the
// objects as kube/'s transform trims them, in a store keyed "namespace/name" as client-go's
// thread-safe store holds them) and the model on top, with its views built. Measured with
// runtime.MemStats after a full GC, so it is live memory, not RSS: the GC's headroom comes on top
// (GOGC=100 lets the heap grow to about twice this between collections).
func BenchmarkMemory(b *testing.B) {
	var informer, modelBytes float64
	for b.Loop() {
		h0 := heapAlloc()
		store := make(map[string]any, scalePods)
		for i := range scalePods {
			p := scaletest.Record(i, 0)
			store[p.GetNamespace()+"/"+p.GetName()] = p
		}
		h1 := heapAlloc()
		m := model.New(model.DefaultConfig())
		m.Apply(&contract.Batch{Nodes: scaletest.NodeObjects(), Workloads: append(contract.WorkloadsOf(scaletest.ReplicaSets(scalePods)), contract.WorkloadsOf(scaletest.Deployments(scalePods))...)}, scaletest.T0)
		batch := contract.Batch{Pods: make([]*podrec.Record, 0, 10_000)}
		for i := range scalePods {
			ns, name := scaletest.PodName(i)
			batch.Pods = append(batch.Pods, store[ns+"/"+name].(*podrec.Record))
			if len(batch.Pods) == cap(batch.Pods) {
				m.Apply(&batch, scaletest.T0)
				batch.Pods = batch.Pods[:0]
			}
		}
		refresh(m, model.Query{}, scaletest.T0)
		h2 := heapAlloc()
		informer, modelBytes = float64(h1-h0)/scalePods, float64(h2-h1)/scalePods
		runtime.KeepAlive(store)
		runtime.KeepAlive(m)
	}
	b.ReportMetric(informer, "informer-B/pod")
	b.ReportMetric(modelBytes, "model-B/pod")
	b.ReportMetric(informer+modelBytes, "total-B/pod")
}

func heapAlloc() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// BenchmarkGate is what `doomwatch wait` pays per batch on a 150,000-pod cluster, waiting for three
// Deployments of the churned namespace: one 50-update batch of status churn and the gate's look at
// its targets (model.Gate: the targets' pods, indexed). wait does not read the dashboard's views.
func BenchmarkGate(b *testing.B) {
	m := model.New(model.DefaultConfig())
	scaletest.Load(m, scalePods)
	batches := scaletest.Churn(400, 50)
	var targets []model.Target
	for i := 0; i < 3*scaletest.PodsPerDeployment; i += scaletest.PodsPerDeployment {
		ns, name := scaletest.DeploymentOf(i)
		targets = append(targets, model.Target{Kind: contract.KindDeployment, Namespace: ns, Name: name})
	}
	now, k := scaletest.T0, 0
	if st := m.Gate(targets, now); !st[0].Found || st[0].Pods.Pods != scaletest.PodsPerDeployment {
		b.Fatalf("gate %+v", st[0])
	}
	cpu := scaletest.StartCPU()
	for b.Loop() {
		now = now.Add(200 * time.Millisecond)
		m.Apply(&batches[k%len(batches)], now)
		if st := m.Gate(targets, now); len(st) != len(targets) {
			b.Fatal("lost a target")
		}
		k++
	}
	cpu.Report(b, k)
}

// BenchmarkOwnedBy is a look of `wait -f` at a custom resource that controls one Deployment of a
// namespace of scaletest.PodsPerNamespace pods, in a cluster of scalePods ("namespace"), and at a
// cluster-scoped one, whose pods may be anywhere ("cluster"): each look walks every pod of the
// namespace (or the cluster) up to its controllers, once per controller, after the batch that
// caused it, which the op includes.
func BenchmarkOwnedBy(b *testing.B) {
	m := model.New(model.DefaultConfig())
	scaletest.Load(m, scalePods)
	ns, name := scaletest.DeploymentOf(0)
	for _, d := range scaletest.Deployments(scalePods) {
		if d.Namespace == ns && d.Name == name {
			yes := true
			d.OwnerReferences = []metav1.OwnerReference{{APIVersion: "example.com/v1", Kind: "Widget", Name: "w", UID: "widget-uid", Controller: &yes}}
			m.Apply(&contract.Batch{Workloads: contract.WorkloadsOf([]*appsv1.Deployment{d})}, scaletest.T0)
		}
	}
	batches := scaletest.Churn(400, 50)
	for _, c := range []struct{ name, ns string }{{"namespace", ns}, {"cluster", ""}} {
		b.Run(c.name, func(b *testing.B) {
			now, k := scaletest.T0, 0
			if o := m.OwnedBy(c.ns, "widget-uid", nil, time.Time{}, now); o.Pods.Pods != scaletest.PodsPerDeployment || len(o.Unknown) != 0 {
				b.Fatalf("owned %d pods, unknown %v; want %d", o.Pods.Pods, o.Unknown, scaletest.PodsPerDeployment)
			}
			for b.Loop() {
				now = now.Add(200 * time.Millisecond)
				m.Apply(&batches[k%len(batches)], now)
				m.OwnedBy(c.ns, "widget-uid", nil, time.Time{}, now)
				k++
			}
		})
	}
}
