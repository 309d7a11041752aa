package e2e

import (
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestClusterDrivesLikeAKubelet checks the harness itself: status written through the status
// subresource is what the API server serves, its own Table printer renders it, and RBAC is on
// (a user without bindings is forbidden). Every other test rests on these three facts.
func TestClusterDrivesLikeAKubelet(t *testing.T) {
	e := newEnv(t)
	node := e.nodeName("n1")
	e.node(node, true)
	p := e.pod(podSpec{name: "web", node: node, status: podStatus(corev1.PodRunning,
		waiting("app", "CrashLoopBackOff", backOff("5m0s", "app", "web", e.ns), 7, term("Error", 1, "", 48*time.Hour)))})
	if got := p.Status.ContainerStatuses[0].State.Waiting; got == nil || got.Reason != "CrashLoopBackOff" {
		t.Fatalf("status after UpdateStatus = %+v, want waiting CrashLoopBackOff", p.Status.ContainerStatuses)
	}

	cells := tableRow(t, e, "web")
	if cells["Status"] != "CrashLoopBackOff" || cells["Ready"] != "0/1" || cells["Restarts"] != "7 (2d ago)" {
		t.Errorf("server Table row = %v, want Status CrashLoopBackOff, Ready 0/1, Restarts \"7 (2d ago)\"", cells)
	}

	nobody, err := e.c.NewUser("harness-nobody")
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(nobody.Config)
	if err != nil {
		t.Fatal(err)
	}
	_, err = cs.CoreV1().Pods(e.ns).List(e.ctx, metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("listing pods as a user without bindings: err = %v, want Forbidden", err)
	}
}

// tableRow GETs one pod as the API server's Table (the printer `kubectl get pods` shows) and
// returns its cells by column name.
func tableRow(t *testing.T, e *env, name string) map[string]string {
	t.Helper()
	raw, err := e.client.CoreV1().RESTClient().Get().Namespace(e.ns).Resource("pods").Name(name).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(e.ctx)
	if err != nil {
		t.Fatalf("GET pod %s as Table: %v", name, err)
	}
	var table metav1.Table
	if err := json.Unmarshal(raw, &table); err != nil {
		t.Fatalf("decoding Table: %v\n%s", err, raw)
	}
	if len(table.Rows) != 1 {
		t.Fatalf("Table has %d rows, want 1:\n%s", len(table.Rows), raw)
	}
	cells := map[string]string{}
	for i, col := range table.ColumnDefinitions {
		if i < len(table.Rows[0].Cells) {
			switch v := table.Rows[0].Cells[i].(type) {
			case string:
				cells[col.Name] = v
			default:
				b, _ := json.Marshal(v)
				cells[col.Name] = string(b)
			}
		}
	}
	return cells
}
