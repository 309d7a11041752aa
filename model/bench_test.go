package model

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

const (
	benchPods  = 100_000
	benchBatch = 10_000
)

// benchPod builds pod i of a large cluster: 1,000 Deployments of 100 pods over 200 nodes. Most
// are running; every 50th failed to start with exit 128 a minute ago, every 100th crash-loops and
// every 200th waits on an image pull. variant shifts the mix so an update changes verdicts.
func benchPod(i, variant int) *corev1.Pod {
	ns := fmt.Sprintf("team-%d", (i/100)%20)
	rs := fmt.Sprintf("svc-%d-7d9f8c6b5", i/100)
	opts := []podOpt{onNode(fmt.Sprintf("node-%d", i%200)), ownedBy("ReplicaSet", rs),
		uid(fmt.Sprintf("0b9a6c8e-%04x-4c1d-9e2f-%012x", i%0xffff, i))}
	switch j := i + variant; {
	case j%50 == 0:
		opts = append(opts, startFailed128(t0.Add(-time.Minute), 1))
	case j%100 == 1:
		opts = append(opts, crashLoop())
	case j%200 == 2:
		opts = append(opts, imageBackOff())
	}
	return pod(ns, fmt.Sprintf("svc-%d-7d9f8c6b5-%05d", i/100, i), opts...)
}

func benchReplicaSets() []*appsv1.ReplicaSet {
	out := make([]*appsv1.ReplicaSet, 0, benchPods/100)
	for d := 0; d < benchPods/100; d++ {
		out = append(out, replicaSet(fmt.Sprintf("team-%d", d%20), fmt.Sprintf("svc-%d-7d9f8c6b5", d), fmt.Sprintf("svc-%d", d), "1"))
	}
	return out
}

func benchModel(b *testing.B) *Model {
	b.Helper()
	m := New(DefaultConfig())
	m.Apply(&Batch{ReplicaSets: benchReplicaSets()}, t0)
	for start := 0; start < benchPods; start += benchBatch {
		batch := &Batch{Pods: make([]*corev1.Pod, 0, benchBatch)}
		for i := start; i < start+benchBatch; i++ {
			batch.Pods = append(batch.Pods, benchPod(i, 0))
		}
		m.Apply(batch, t0)
	}
	return m
}

// BenchmarkApplyBatch applies batches of 10,000 pod updates (verdicts changing) to a model holding
// 100,000 pods. Target: ≤ 5 µs per update, classification included.
func BenchmarkApplyBatch(b *testing.B) {
	m := benchModel(b)
	batches := make([]*Batch, 2)
	for v := range batches {
		batches[v] = &Batch{Pods: make([]*corev1.Pod, 0, benchBatch)}
		for k := 0; k < benchBatch; k++ {
			batches[v].Pods = append(batches[v].Pods, benchPod(k*(benchPods/benchBatch)+v, v+1))
		}
	}
	b.ReportAllocs()
	runtime.GC()
	cpu0 := cpuTime()
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		m.Apply(batches[n%2], t0.Add(time.Duration(n)*time.Millisecond))
	}
	b.StopTimer()
	updates := float64(b.N * benchBatch)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/updates, "ns/update")
	// CPU time includes the garbage collector's work on other threads.
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/updates, "cpu-ns/update")
	if m.Counts().Pods != benchPods {
		b.Fatalf("pods = %d", m.Counts().Pods)
	}
}

// BenchmarkModelMemory measures the heap the model holds per pod beyond the informer cache: the pod
// objects are built first (they stand for the informer's cache), then the model is built from them.
// Target: ≤ 1 KiB per pod.
func BenchmarkModelMemory(b *testing.B) {
	var perPod float64
	for n := 0; n < b.N; n++ {
		rss := benchReplicaSets()
		pods := make([]*corev1.Pod, benchPods)
		for i := range pods {
			pods[i] = benchPod(i, 0)
		}
		before := heapInUse()
		m := New(DefaultConfig())
		m.Apply(&Batch{ReplicaSets: rss}, t0)
		for start := 0; start < benchPods; start += benchBatch {
			m.Apply(&Batch{Pods: pods[start : start+benchBatch]}, t0)
		}
		m.View(Query{})
		m.Nodes(t0)
		m.Rollouts()
		after := heapInUse()
		perPod = float64(after-before) / benchPods
		runtime.KeepAlive(m)
		runtime.KeepAlive(pods)
	}
	b.ReportMetric(perPod, "bytes/pod")
}

func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// BenchmarkView re-sorts and filters a view of 100,000 pods (what a batch costs the next frame).
func BenchmarkView(b *testing.B) {
	m := benchModel(b)
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		m.view.valid = false
		m.View(Query{Sort: BySeverity})
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}
