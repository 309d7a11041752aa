package tui

import (
	"fmt"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	corev1 "k8s.io/api/core/v1"

	"doomwatch/model"
)

// benchModel is a model of n pods on 50 nodes, a fifth of them failing.
func benchModel(n int) *model.Model {
	m := model.New(model.DefaultConfig())
	b := fixtureBatch()
	for i := range n {
		node := fmt.Sprintf("node-%d", i%50)
		var cs corev1.ContainerStatus
		if i%5 == 0 {
			cs = waiting("app", "registry.example.com/app:v1", "CrashLoopBackOff",
				backOff("40s", "app", fmt.Sprintf("ns-%d", i%40), fmt.Sprintf("app-%07d", i)), 3, terminated("Error", "", 1, 0))
		} else {
			cs = running("app", "registry.example.com/app:v1", 0, nil)
		}
		b.Pods = append(b.Pods, mkPod(podSpec{ns: fmt.Sprintf("ns-%d", i%40), name: fmt.Sprintf("app-%07d", i),
			node: node, rs: "app-rs", status: []corev1.ContainerStatus{cs}}))
	}
	m.Apply(&b, t0)
	return m
}

// BenchmarkFrame renders one 200x50 frame of the live dashboard (the work done per redraw: View
// over the model's cached view). Allocations must not grow with the pod count.
func BenchmarkFrame(b *testing.B) {
	for _, n := range []int{1000, 100000} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			d := newDashboard(Options{Model: benchModel(n), Now: func() time.Time { return t0 }}, false)
			d.Update(tea.WindowSizeMsg{Width: 200, Height: 50})
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				_ = d.View()
			}
		})
	}
}
