package kube

import (
	"fmt"
	"runtime"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"doomwatch/contract"
	"doomwatch/model"
	"doomwatch/model/scaletest"
	"doomwatch/podrec"
)

// The fleet the fleet benchmarks are sized for (BENCHMARKS.md): 20 clusters of 7,500 pods, 150,000
// in all, as many as the largest single cluster.
const (
	fleetClusters = 20
	fleetPodsEach = 7_500
)

// fleetContext names cluster c of the fleet.
func fleetContext(c int) string { return fmt.Sprintf("cluster-%02d", c) }

// fleetNode names node k of cluster c: every cluster has nodes of its own.
func fleetNode(c, k int) string { return fmt.Sprintf("ip-10-%d-%d-%d.ec2.internal", c, k/250, k%250) }

// fleetRSUID is the UID cluster c gave the ReplicaSet of pod i.
func fleetRSUID(c, i int) types.UID {
	return types.UID(fmt.Sprintf("5e1f2a3b-%04x-4d5e-%04x-%012x", i/scalePodsPerDeployment, c, i/scalePodsPerDeployment))
}

// fleetPod is pod i of cluster c: rawPod(i), the same workloads in every cluster (namespaces,
// Deployments, images and templates: one release rolled out to each, which is what a fleet's
// interner shares), with what each cluster gives a pod of its own: the name's random suffix and
// the service-account volume named after it, the UIDs of the pod and of its ReplicaSet, and its
// node.
func fleetPod(c, i int) *corev1.Pod {
	p := rawPod(i)
	n := c*fleetPodsEach + i
	p.Name = fmt.Sprintf("%s-%05x", p.OwnerReferences[0].Name, n)
	p.UID = podUID(n)
	p.OwnerReferences[0].UID = fleetRSUID(c, i)
	p.Spec.NodeName = fleetNode(c, i%scaleNodes)
	volume := "kube-api-access-" + p.Name[len(p.Name)-5:]
	p.Spec.Volumes[0].Name = volume
	for k := range p.Spec.Containers {
		mounts := slices.Clone(p.Spec.Containers[k].VolumeMounts)
		mounts[0].Name = volume
		p.Spec.Containers[k].VolumeMounts = mounts
	}
	return p
}

// fleetInformers are one cluster's informer stores, as its Source's informers hold them: each
// kind's objects through the transform, keyed as client-go's shared informers key them.
type fleetInformers struct {
	pods, nodes, replicaSets, deployments cache.Indexer
}

func newStore() cache.Indexer {
	// What cache.NewSharedIndexInformerWithOptions makes for Indexers{} (source.go).
	return cache.NewIndexer(cache.DeletionHandlingMetaNamespaceKeyFunc, cache.Indexers{})
}

// listFleetCluster fills cluster c's informer stores as its initial lists do, through the trimmer
// all the fleet's sources share (ConnectFleet's Options.trim): every pod encoded in protobuf as the
// API server sends it and decoded into a record by the pod informer's decoder (podcodec.go), the
// nodes, ReplicaSets and Deployments trimmed by the transform.
func listFleetCluster(b *testing.B, tr *trimmer, c int) fleetInformers {
	inf := fleetInformers{pods: newStore(), nodes: newStore(), replicaSets: newStore(), deployments: newStore()}
	add := func(store cache.Indexer, obj any) {
		out, err := tr.transform(obj)
		if err != nil {
			b.Fatal(err)
		}
		if err := store.Add(keepStored(store, out)); err != nil {
			b.Fatal(err)
		}
	}
	for i := range fleetPodsEach {
		data, err := fleetPod(c, i).Marshal()
		if err != nil {
			b.Fatal(err)
		}
		tr.mu.Lock()
		r, err := tr.in.PodFromProto(data)
		tr.mu.Unlock()
		if err != nil {
			b.Fatal(err)
		}
		add(inf.pods, r)
	}
	for k, n := range scaletest.NodeObjects() {
		n.Name, n.UID = fleetNode(c, k), types.UID(fmt.Sprintf("node-uid-%02d-%03d", c, k))
		add(inf.nodes, n)
	}
	for k, rs := range scaletest.ReplicaSets(fleetPodsEach) {
		rs.UID = fleetRSUID(c, k*scalePodsPerDeployment)
		rs.OwnerReferences[0].UID = types.UID(fmt.Sprintf("d-%02d-%s", c, rs.OwnerReferences[0].Name))
		add(inf.replicaSets, rs)
	}
	for _, d := range scaletest.Deployments(fleetPodsEach) {
		d.UID = types.UID(fmt.Sprintf("d-%02d-%s", c, d.Name))
		add(inf.deployments, d)
	}
	return inf
}

// applyFleetCluster hands cluster c's informer stores to its model as the source's batches do:
// owners and nodes first, then the pods a list page at a time, the last batch saying synced.
func applyFleetCluster(f *model.Fleet, c int, inf fleetInformers) {
	b := contract.Batch{Cluster: c}
	for _, o := range inf.nodes.List() {
		b.Nodes = append(b.Nodes, o.(*corev1.Node))
	}
	for _, o := range inf.replicaSets.List() {
		b.Workloads = append(b.Workloads, contract.Workload(o.(*appsv1.ReplicaSet)))
	}
	for _, o := range inf.deployments.List() {
		b.Workloads = append(b.Workloads, contract.Workload(o.(*appsv1.Deployment)))
	}
	f.Apply(&b, scaleT0)
	pods := inf.pods.List()
	for start := 0; start < len(pods); start += listPageSize {
		end := min(start+listPageSize, len(pods))
		b := contract.Batch{Cluster: c, Pods: make([]*podrec.Record, 0, end-start),
			Health: &contract.Health{PodsSeen: end, PodsTotal: len(pods), Synced: end == len(pods)}}
		for _, o := range pods[start:end] {
			b.Pods = append(b.Pods, o.(*podrec.Record))
		}
		f.Apply(&b, scaleT0)
	}
}

// fleetRefresh reads what the dashboard reads after a batch of a fleet (tui refreshAll): health,
// counts, the concatenated rollouts and nodes, what suspects share, the workloads in several
// clusters, each cluster's health and counts for its header line, and the 50 rows of a 200x50
// frame of the merged pod view.
func fleetRefresh(f *model.Fleet) int {
	n := len(f.Health().Forbidden) + f.Counts().Pods + len(f.Rollouts()) + len(f.Nodes(scaleT0)) +
		len(f.SuspectsShare(scaleT0)) + len(f.Spreads())
	for _, c := range f.Clusters() {
		n += c.Health().PodsSeen + c.Counts().Pods
	}
	v := f.PodView(model.Query{})
	fleetWindow = v.Append(fleetWindow[:0], 0, 50)
	return n + v.Len()
}

var fleetWindow []*model.Pod

// BenchmarkFleetMemory measures what a fleet of 20 clusters of 7,500 pods (150,000 in all) holds
// once synced, live heap after a full GC: the informers' copies (20 clusters' stores of pods,
// nodes, ReplicaSets and Deployments, their strings and shared parts interned by one trimmer for
// the whole fleet, as ConnectFleet shares it) and the fleet's models on top, with the views the
// dashboard reads built. The target (BENCHMARKS.md) is 450 MiB for the process; limit-MiB is what
// the heap may grow to under cmd/memory.go's soft limit once synced (the live heap and half as
// much again, at least 24 MiB more), which is where a synced process's resident memory settles:
// 387 MiB resident against a 393 MiB limit for one 150,000-pod cluster in BENCHMARKS.md.
// The clients' own memory (connections, watch decoders, 8 informers' reflectors per cluster) is
// not in it; make bench-scale's fleet mode measures a real process.
func BenchmarkFleetMemory(b *testing.B) {
	const pods = fleetClusters * fleetPodsEach
	contexts := make([]string, fleetClusters)
	for c := range contexts {
		contexts[c] = fleetContext(c)
	}
	var informerBytes, modelBytes float64
	for b.Loop() {
		h0 := liveHeap()
		tr := newTrimmer()
		infs := make([]fleetInformers, fleetClusters)
		for c := range infs {
			infs[c] = listFleetCluster(b, tr, c)
		}
		h1 := liveHeap()
		f := model.NewFleet(model.DefaultConfig(), contexts)
		for c, inf := range infs {
			applyFleetCluster(f, c, inf)
		}
		if n := fleetRefresh(f); n == 0 || f.Counts().Pods != pods || !f.Health().Synced {
			b.Fatalf("fleet has %d pods, synced %v", f.Counts().Pods, f.Health().Synced)
		}
		h2 := liveHeap()
		informerBytes, modelBytes = float64(h1-h0), float64(h2-h1)
		runtime.KeepAlive(tr)
		runtime.KeepAlive(infs)
		runtime.KeepAlive(f)
	}
	live := informerBytes + modelBytes
	b.ReportMetric(informerBytes/pods, "informer-B/pod")
	b.ReportMetric(modelBytes/pods, "model-B/pod")
	b.ReportMetric(live/pods, "total-B/pod")
	b.ReportMetric(live/(1<<20), "live-MiB")
	b.ReportMetric((live+max(live/2, 24<<20))/(1<<20), "limit-MiB")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkFleetDecode is the pod informers' decoding during a fleet's start, a pod an operation:
// every pod distinct, of 20 clusters taking turns, through the one trimmer the fleet's sources
// share. Like a real pod, each has a volume of its own mounted in every container (the API
// server's ServiceAccount admission adds kube-api-access-<suffix> to every pod), so no two pods'
// containers encode alike, while the parts a record keeps of them (name, image, probes) are the
// template's. kube's BenchmarkDecodePod decodes one pod again and again.
func BenchmarkFleetDecode(b *testing.B) {
	const n = 20_000 // more than the interner's tables hold, so every pod is new to them
	encoded := make([][]byte, n)
	for k := range encoded {
		data, err := fleetPod(k%fleetClusters, k/fleetClusters).Marshal()
		if err != nil {
			b.Fatal(err)
		}
		encoded[k] = data
	}
	tr := newTrimmer()
	b.ReportAllocs()
	k := 0
	for b.Loop() {
		tr.mu.Lock()
		_, err := tr.in.PodFromProto(encoded[k%n])
		tr.mu.Unlock()
		if err != nil {
			b.Fatal(err)
		}
		k++
	}
}
