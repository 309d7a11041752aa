package tui

import (
	"fmt"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"k8s.io/apimachinery/pkg/types"

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
	// fleetPage is how many pods a batch of the initial list holds: a page of kube's paged list
	// (listPageSize), about what a streamed list hands over in one 100 ms coalescing interval.
	fleetPage = 500
)

// fleetInterner shares what every cluster's records repeat, as the one trimmer that ConnectFleet
// gives all its sources does. Benchmarks run on one goroutine.
var fleetInterner = podrec.NewInterner()

// fleetNode names node k of cluster c: every cluster has nodes of its own.
func fleetNode(c, k int) string { return fmt.Sprintf("ip-10-%d-%d-%d.ec2.internal", c, k/250, k%250) }

// fleetPodName is pod i of cluster c's name: the cluster's own random suffix on scaletest's
// ReplicaSet name. The workloads (namespaces, Deployments, templates, images) are the same in
// every cluster: one release rolled out to each.
func fleetPodName(c, i int) string {
	_, name := scaletest.PodName(i)
	return fmt.Sprintf("%s%05x", name[:len(name)-5], c*fleetPodsEach+i)
}

func fleetPodUID(c, i int) types.UID {
	return types.UID(fmt.Sprintf("0b9a6c8e-%04x-4c1d-9e2f-%012x", c, c*fleetPodsEach+i))
}

func fleetRSUID(c, i int) types.UID {
	return types.UID(fmt.Sprintf("5e1f2a3b-%04x-4d5e-%04x-%012x", i/scaletest.PodsPerDeployment, c, i/scaletest.PodsPerDeployment))
}

// fleetRecord is pod i of cluster c at update number version (scaletest.Pod), with the name, UIDs
// and node its cluster gave it, as the informer holds it.
func fleetRecord(c, i, version int) *podrec.Record {
	p := scaletest.Pod(i, version)
	p.Name, p.UID = fleetPodName(c, i), fleetPodUID(c, i)
	p.OwnerReferences[0].UID = fleetRSUID(c, i)
	p.Spec.NodeName = fleetNode(c, i%scaletest.Nodes)
	return fleetInterner.Pod(p)
}

// fleetEvents appends the Warning event pod i of cluster c has at version, if any (scaletest.Event).
func fleetEvents(b *contract.Batch, c, i, version int) {
	e, ok := scaletest.Event(i, version)
	if !ok {
		return
	}
	name := fleetPodName(c, i)
	e.Name = name + e.Name[len(e.InvolvedObject.Name):]
	e.InvolvedObject.Name, e.InvolvedObject.UID = name, fleetPodUID(c, i)
	e.Source.Host = fleetNode(c, i%scaletest.Nodes)
	b.Events = append(b.Events, e)
}

// fleetList is cluster c's initial list as its source hands it over, a batch per coalescing
// interval: nodes, ReplicaSets and Deployments (small lists, complete within the first interval)
// with the first page of pods, then a page a batch, each with the Warning events of its pods; the
// last says synced.
func fleetList(c, pods int) []contract.Batch {
	var out []contract.Batch
	for start := 0; start < pods; start += fleetPage {
		end := min(start+fleetPage, pods)
		b := contract.Batch{Cluster: c, Pods: make([]*podrec.Record, 0, end-start),
			Health: &contract.Health{PodsSeen: end, PodsTotal: pods, Synced: end == pods}}
		for i := start; i < end; i++ {
			b.Pods = append(b.Pods, fleetRecord(c, i, 0))
			fleetEvents(&b, c, i, 0)
		}
		out = append(out, b)
	}
	first := &out[0]
	for k, n := range scaletest.NodeObjects() {
		n.Name, n.UID = fleetNode(c, k), types.UID(fmt.Sprintf("node-uid-%02d-%03d", c, k))
		first.Nodes = append(first.Nodes, n)
	}
	for k, rs := range scaletest.ReplicaSets(pods) {
		rs.UID = fleetRSUID(c, k*scaletest.PodsPerDeployment)
		rs.OwnerReferences[0].UID = types.UID(fmt.Sprintf("d-%02d-%s", c, rs.OwnerReferences[0].Name))
		first.Workloads = append(first.Workloads, contract.Workload(rs))
	}
	for _, d := range scaletest.Deployments(pods) {
		d.UID = types.UID(fmt.Sprintf("d-%02d-%s", c, d.Name))
		first.Workloads = append(first.Workloads, contract.Workload(d))
	}
	return out
}

// fleetLists are the initial lists of a fleet of clusters of pods each.
func fleetLists(clusters, pods int) [][]contract.Batch {
	lists := make([][]contract.Batch, clusters)
	for c := range lists {
		lists[c] = fleetList(c, pods)
	}
	return lists
}

func fleetContexts(n int) []string {
	out := make([]string, n)
	for c := range out {
		out[c] = fmt.Sprintf("cluster-%02d", c)
	}
	return out
}

// fleetDashboard is a 200x50 dashboard over an empty fleet of n clusters whose clock the caller
// moves with *now.
func fleetDashboard(n int, now *time.Time) *dashboard {
	*now = scaletest.T0
	f := model.NewFleet(model.DefaultConfig(), fleetContexts(n))
	d := newDashboard(Options{Model: f, Now: func() time.Time { return *now }}, false)
	d.Update(tea.WindowSizeMsg{Width: 200, Height: 50})
	return d
}

// syncFleet hands the dashboard every cluster's initial list as the fleet's fan-in does: each
// cluster sends a batch an interval, and the fan-in hands a round of them over at once, applied
// together before one refresh and a frame. It returns when the first rows were drawn (every
// cluster's first batch applied and the first frame rendered) and when the synced frame was.
func syncFleet(d *dashboard, lists [][]contract.Batch) (firstRows, synced time.Duration) {
	start := time.Now()
	for round := 0; ; round++ {
		var delivery []contract.Batch
		for c := range lists {
			if round < len(lists[c]) {
				delivery = append(delivery, lists[c][round])
			}
		}
		if len(delivery) == 0 {
			return firstRows, synced
		}
		d.Update(batchMsg{batches: delivery})
		_ = d.View()
		if round == 0 {
			firstRows = time.Since(start)
		}
		synced = time.Since(start)
	}
}

// BenchmarkFleetStart is the dashboard's share of a start: every cluster's initial list arriving
// a batch per cluster per interval (fleetList) at an empty dashboard, each interval's batches
// applied together, every view refreshed and a frame. first-rows-ms is until the first frame with every
// cluster's first batch in it (the first rows on screen; target 2 s for 20 clusters of 7,500
// pods), synced-ms until the frame that has all 150,000 pods; cpu-ms/op is the process's CPU for
// the whole start (ns/op its wall time). One cluster of 150,000 pods is the same start without
// the fleet. Decoding the pods is kube's share (BenchmarkDecodePod), not in it; nor is the
// API servers' time to send them.
func BenchmarkFleetStart(b *testing.B) {
	for _, size := range []struct{ clusters, pods int }{{1, fleetClusters * fleetPodsEach}, {fleetClusters, fleetPodsEach}} {
		b.Run(fmt.Sprintf("clusters=%d", size.clusters), func(b *testing.B) {
			lists := fleetLists(size.clusters, size.pods)
			var first, synced time.Duration
			cpu, k := scaletest.StartCPU(), 0
			for b.Loop() {
				var now time.Time
				d := fleetDashboard(size.clusters, &now)
				f, s := syncFleet(d, lists)
				first, synced = first+f, synced+s
				k++
				if h := d.m.Health(); !h.Synced || d.m.Counts().Pods != size.clusters*size.pods || d.pods.rows.Len() == 0 {
					b.Fatalf("synced %v with %d pods, %d rows", h.Synced, d.m.Counts().Pods, d.pods.rows.Len())
				}
			}
			cpu.Report(b, k)
			b.ReportMetric(float64(first.Milliseconds())/float64(k), "first-rows-ms")
			b.ReportMetric(float64(synced.Milliseconds())/float64(k), "synced-ms")
		})
	}
}

// fleetChurn is status churn on cluster c: count batches of size updates, each changing its pod's
// verdict (scaletest.StateOf), over pods spread across all its Deployments, two passes over them
// so that the batches can be applied again from the first.
func fleetChurn(c, count, size int) []contract.Batch {
	pods := count * size / 2
	out := make([]contract.Batch, count)
	for k := range out {
		out[k] = contract.Batch{Cluster: c, Pods: make([]*podrec.Record, size)}
		for j := range size {
			seq := k*size + j
			i, version := seq*7919%pods*(fleetPodsEach/pods), 1+seq/pods
			out[k].Pods[j] = fleetRecord(c, i, version)
			fleetEvents(&out[k], c, i, version)
		}
	}
	return out
}

// churningFleet is the synced dashboard of the fleet benchmarks, on the clock now, and each
// cluster's 20 batches of 50 updates of status churn.
func churningFleet(now *time.Time) (*dashboard, [][]contract.Batch) {
	d := fleetDashboard(fleetClusters, now)
	syncFleet(d, fleetLists(fleetClusters, fleetPodsEach))
	churn := make([][]contract.Batch, fleetClusters)
	for c := range churn {
		churn[c] = fleetChurn(c, 20, 50)
	}
	return d, churn
}

// BenchmarkFleetBatch is tui's BenchmarkBatch on a fleet: one 50-update batch of status churn
// (every update changes its pod's verdict, about half carry a Warning event) arriving from one of
// the 20 clusters of 7,500 pods, the clusters taking turns, then the refresh of every view and a
// 200x50 frame, for each sort: an interval in which one cluster changed. A fleet's refresh reads
// every cluster (the merged pod view, the concatenated nodes and rollouts, each cluster's header
// line, the workloads in several clusters), so this is what the fleet adds per batch to the
// 150,000-pod cluster's figure, at the same pod count. Batches arrive 200 ms apart on the
// dashboard's clock.
func BenchmarkFleetBatch(b *testing.B) {
	var now time.Time
	d, churn := churningFleet(&now)
	k := 0 // runs on across the sorts, so every update changes a verdict
	for s := range sortNames {
		b.Run("sort="+sortNames[s], func(b *testing.B) {
			for d.query.Sort != model.Sort(s) {
				d.Update(sortKey)
			}
			_ = d.View()
			cpu, k0 := scaletest.StartCPU(), k
			for b.Loop() {
				now = now.Add(200 * time.Millisecond)
				c := k % fleetClusters
				d.Update(batchMsg{batches: []contract.Batch{churn[c][k/fleetClusters%len(churn[c])]}})
				_ = d.View()
				k++
			}
			cpu.Report(b, k-k0)
		})
	}
}

// BenchmarkFleetInterval is an interval in which every cluster of the fleet changed: each of the
// 20 clusters of 7,500 pods sends a 50-update batch of status churn (as BenchmarkFleetBatch's),
// then a 200x50 frame, intervals 100 ms apart on the dashboard's clock. fan-in=interval is kube's
// fan-in (Fleet.Batches): the 20 batches in one message, one refresh of every view;
// fan-in=batch is a message per batch, a refresh after each, as the fan-in handed them over
// before it coalesced (the renderer draws a frame an interval either way). cpu-ms/op is per
// interval.
func BenchmarkFleetInterval(b *testing.B) {
	var now time.Time
	d, churn := churningFleet(&now)
	k := 0 // runs on across the modes, so every update changes a verdict
	for _, mode := range []string{"batch", "interval"} {
		b.Run("fan-in="+mode, func(b *testing.B) {
			_ = d.View()
			cpu, k0 := scaletest.StartCPU(), k
			delivery := make([]contract.Batch, fleetClusters)
			for b.Loop() {
				now = now.Add(100 * time.Millisecond)
				for c := range delivery {
					delivery[c] = churn[c][k%len(churn[c])]
				}
				if mode == "interval" {
					d.Update(batchMsg{batches: delivery})
				} else {
					for c := range delivery {
						d.Update(batchMsg{batches: delivery[c : c+1]})
					}
				}
				_ = d.View()
				k++
			}
			cpu.Report(b, k-k0)
		})
	}
}
