package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"doomwatch/model"
)

// pagesModel is the fixture's incident, whose pods have long reasons and restarts, and 80 healthy
// pods after them in two more namespaces, with neither: pages whose cells differ.
func pagesModel() *model.Model {
	m := model.New(model.DefaultConfig())
	b := fixtureBatch()
	for i := range 80 {
		ns := []string{"kube-system", "monitoring"}[i%2]
		b.Pods = appendPods(b.Pods, mkPod(podSpec{ns: ns, name: fmt.Sprintf("agent-%02d", i),
			node: []string{"node-1", "node-2", "node-4", "node-5"}[i%4], created: 40 * 24 * time.Hour,
			status: []corev1.ContainerStatus{running("agent", "registry.example.com/agent:v1", 0, nil)}}))
	}
	m.Apply(&b, t0)
	return m
}

// columnHeader is the pod table's column header on screen.
func columnHeader(t *testing.T, s string) string {
	t.Helper()
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "PODS ") && i+1 < len(lines) {
			return lines[i+1]
		}
	}
	t.Fatalf("no pod table on screen:\n%s", s)
	return ""
}

// TestPodColumnsStayAsThePageChanges: the pod table's columns do not come and go with the rows
// on screen. At 120×40 over all namespaces the first page (long reasons, restarts) and the last
// (healthy pods, nothing to say) have the same columns, the namespace among them, and so does
// the name order, whose first key is the namespace.
func TestPodColumnsStayAsThePageChanges(t *testing.T) {
	d := newDashboard(Options{Model: model.FleetOf("", pagesModel()), Now: func() time.Time { return t0 }}, true)
	d.setSize(120, 40)
	first := columnHeader(t, screen(d))
	for _, col := range []string{"NAMESPACE", "NAME", "RESTARTS", "NODE", "VERDICT", "REASON"} {
		if !strings.Contains(first, col) {
			t.Errorf("at 120 columns the pod table lacks %s: %q", col, first)
		}
	}
	press(d, "G")
	s := screen(d)
	if !strings.Contains(s, "agent-") || strings.Contains(s, "Image not found") {
		t.Fatalf("G should show the healthy pods, not the doomed ones, or the test proves nothing:\n%s", s)
	}
	if got := columnHeader(t, s); got != first {
		t.Errorf("the columns changed with the page:\nfirst page %q\nlast page  %q", first, got)
	}
	for !strings.Contains(d.queryBar.status(0, 0), "sort: name") {
		press(d, "s")
	}
	s = screen(d)
	if got := columnHeader(t, s); got != first {
		t.Errorf("the columns changed with the sort:\nby severity %q\nby name     %q\n%s", first, got, s)
	}
}
