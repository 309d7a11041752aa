package e2e

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"doomwatch/classify"
)

// TestStatusParity loads every fixture under classify/testdata into the real API server (spec by
// create, status through the status subresource, Terminating pods by a DELETE their finalizer
// holds back) and compares classify's READY, STATUS and RESTARTS, and --once's, with the server's
// own Table: the printer `kubectl get pods` shows.
//
// RESTARTS holds a relative time ("4 (2m ago)") that the server renders against its clock at the
// moment of the GET. The fixtures' times lie days or more in the past, where the rendering is
// coarse, but the test does not rely on that: it accepts classify's rendering at a time taken just
// before the request or just after it, which bracket the server's clock on this one machine.
func TestStatusParity(t *testing.T) {
	e := newEnv(t)
	files, err := filepath.Glob("../classify/testdata/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no fixtures under classify/testdata")
	}
	sort.Strings(files)

	type row struct{ ready, status, restarts string }
	server := map[string]row{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var fixture corev1.Pod
		if err := yaml.UnmarshalStrict(raw, &fixture); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		name := fixture.Name
		t.Run(name, func(t *testing.T) {
			loadFixture(t, e, &fixture)
			before := time.Now()
			cells := tableRow(t, e, name)
			after := time.Now()
			p, err := e.client.CoreV1().Pods(e.ns).Get(e.ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got := row{ready: cells["Ready"], status: cells["Status"], restarts: cells["Restarts"]}
			server[name] = got

			if r := classify.Ready(p); r != got.ready {
				t.Errorf("READY: classify %q, server %q", r, got.ready)
			}
			if s := classify.Status(p, after); s != got.status && classify.Status(p, before) != got.status {
				t.Errorf("STATUS: classify %q, server %q", s, got.status)
			}
			if r := classify.Restarts(p, after); r != got.restarts && classify.Restarts(p, before) != got.restarts {
				t.Errorf("RESTARTS: classify %q, server %q", r, got.restarts)
			}
			// The fixture's own claims about kubectl must hold against the real printer too.
			ann := fixture.Annotations
			if want := ann["test.doomwatch.io/status"]; want != got.status {
				t.Errorf("fixture says STATUS %q, server prints %q", want, got.status)
			}
			if want := ann["test.doomwatch.io/ready"]; want != got.ready {
				t.Errorf("fixture says READY %q, server prints %q", want, got.ready)
			}
			if want := ann["test.doomwatch.io/restarts"]; restartCount(want) != restartCount(got.restarts) {
				t.Errorf("fixture says RESTARTS %q, server prints %q", want, got.restarts)
			}
		})
	}

	// The binary prints the same three columns in --once -o json. Its clock is read after the
	// last GET, so a RESTARTS age may only have grown coarser; compare the count for those.
	snap := onceJSON(t, "--kubeconfig", adminKubeconfig(t), "-n", e.ns)
	for name, want := range server {
		p, ok := snap.pod(name)
		if !ok {
			t.Errorf("--once: pod %s missing", name)
			continue
		}
		if p.Ready != want.ready || p.Status != want.status || restartCount(p.Restarts) != restartCount(want.restarts) {
			t.Errorf("--once: pod %s ready/status/restarts = %q/%q/%q, server %q/%q/%q",
				name, p.Ready, p.Status, p.Restarts, want.ready, want.status, want.restarts)
		}
	}
}

// loadFixture writes a fixture pod the way the control plane would have produced it: create the
// spec, update the status subresource, and DELETE it when the fixture is Terminating.
func loadFixture(t *testing.T, e *env, fixture *corev1.Pod) *corev1.Pod {
	t.Helper()
	p := fixture.DeepCopy()
	p.Namespace = e.ns
	p.ResourceVersion, p.UID = "", ""
	p.CreationTimestamp = metav1.Time{}
	terminating := p.DeletionTimestamp != nil
	p.DeletionTimestamp, p.DeletionGracePeriodSeconds = nil, nil
	status := p.Status
	p.Status = corev1.PodStatus{}
	// The RuntimeClass admission plugin refuses a pod whose RuntimeClass does not exist (the real
	// node's recordings name the "flaky" one).
	if rc := p.Spec.RuntimeClassName; rc != nil {
		_, err := e.client.NodeV1().RuntimeClasses().Create(e.ctx, &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: *rc}, Handler: *rc}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("creating RuntimeClass %s: %v", *rc, err)
		}
	}
	created, err := e.client.CoreV1().Pods(e.ns).Create(e.ctx, p, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating fixture pod: %v", err)
	}
	created.Status = status
	updated, err := e.client.CoreV1().Pods(e.ns).UpdateStatus(e.ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("writing fixture status: %v", err)
	}
	if terminating {
		if len(updated.Finalizers) == 0 {
			t.Fatalf("fixture is Terminating but has no finalizer to hold it")
		}
		if err := e.client.CoreV1().Pods(e.ns).Delete(e.ctx, p.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatalf("deleting fixture pod: %v", err)
		}
	}
	return updated
}

// restartCount is the count before RESTARTS' "(… ago)".
func restartCount(s string) string {
	if i := strings.IndexByte(s, ' '); i >= 0 {
		return s[:i]
	}
	return s
}
