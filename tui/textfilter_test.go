package tui

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"doomwatch/contract"
	"doomwatch/model"
)

// TestTextFilterRunsOffTheUIGoroutine: on a model past asyncPods, typing a filter does not filter
// in Update. The previous rows stay, marked "filtering…", until the job matched off the goroutine
// comes back; a batch applied meanwhile is in the rows it brings.
func TestTextFilterRunsOffTheUIGoroutine(t *testing.T) {
	d := newTestDashboard(t, 120, 30)
	d.asyncPods = 0 // every model is large
	all := d.pods.rows.Len()
	cmd := press(d, "/", "p", "a", "y")
	if cmd == nil {
		t.Fatal("typing scheduled no filter")
	}
	if d.pods.rows.Len() != all || !strings.Contains(screen(d), "filtering…") {
		t.Fatalf("Update filtered at once (%d of %d rows) or does not say so:\n%s", d.pods.rows.Len(), all, screen(d))
	}
	if d.text.due(d, d.text.seq-1) != nil {
		t.Error("a pause in typing that a later key superseded started a job")
	}
	job := d.text.due(d, d.text.seq)
	if job == nil {
		t.Fatal("the pause in typing started no job")
	}
	done, ok := job().(filterDoneMsg)
	if !ok {
		t.Fatalf("the job answered %T", job())
	}
	// A batch lands before the result: a new payments pod must be among the rows.
	b := contract.Batch{Pods: appendPods(nil, mkPod(podSpec{ns: "shop", name: "payments-new-x1", node: "node-1",
		status: []corev1.ContainerStatus{running("payments", "registry.example.com/payments:v2", 0, nil)}}))}
	d.Update(batchMsg{batches: []contract.Batch{b}})
	if d.pods.rows.Len() != all+1 {
		t.Fatalf("while the job runs the table shows %d rows, want the unfiltered %d", d.pods.rows.Len(), all+1)
	}
	d.Update(done)
	got, want := rowKeys(d), keysOfPods(d.m.View(d.query))
	if !slices.Equal(got, want) || !slices.Contains(got, "shop/payments-new-x1") || len(got) >= all {
		t.Errorf("rows after the job: %v, want %v", got, want)
	}
	if strings.Contains(screen(d), "filtering…") {
		t.Errorf("still filtering:\n%s", screen(d))
	}
	// The view is kept now: another batch needs no job, and esc goes back at once.
	if cmd := d.refreshPods(); cmd != nil {
		t.Error("a kept view started a job")
	}
	press(d, "esc")
	if d.pods.rows.Len() != all+1 || d.query != d.shown {
		t.Errorf("esc: %d rows, want %d", d.pods.rows.Len(), all+1)
	}
}

// TestSmallModelsFilterAtOnce: below asyncPods the filter is applied in Update, as it is typed.
func TestSmallModelsFilterAtOnce(t *testing.T) {
	d := newTestDashboard(t, 120, 30)
	press(d, "/", "p", "a", "y")
	if d.query != d.shown || strings.Contains(screen(d), "filtering…") {
		t.Fatalf("a 19-pod model filtered off the goroutine:\n%s", screen(d))
	}
}

func keysOfPods(ps []*model.Pod) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Key
	}
	return out
}
