package kube

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"doomwatch/contract"
	"doomwatch/podrec"
)

// mirror applies batches the way the model would, keeping the latest object per key, so tests can
// wait for a condition on what a consumer has seen.
type mirror struct {
	pods    map[string]*corev1.Pod
	nodes   map[string]*corev1.Node
	deploys map[string]*appsv1.Deployment
	events  map[string]*corev1.Event
	// rollouts are the Argo Rollouts, as the dynamic client's objects.
	rollouts map[string]*unstructured.Unstructured
	health   contract.Health
	batches  int
	changes  int
}

func newMirror() *mirror {
	return &mirror{pods: map[string]*corev1.Pod{}, nodes: map[string]*corev1.Node{}, deploys: map[string]*appsv1.Deployment{},
		events: map[string]*corev1.Event{}, rollouts: map[string]*unstructured.Unstructured{}}
}

func (m *mirror) apply(b contract.Batch) {
	m.batches++
	m.changes += b.Len()
	for _, r := range b.Pods {
		p := r.Pod()
		m.pods[p.Namespace+"/"+p.Name] = p
	}
	for _, n := range b.Nodes {
		m.nodes[n.Name] = n
	}
	for _, o := range b.Workloads {
		switch x := o.Obj.(type) {
		case *appsv1.Deployment:
			m.deploys[x.Namespace+"/"+x.Name] = x
		case *unstructured.Unstructured:
			if o.Kind == contract.KindRollout {
				m.rollouts[x.GetNamespace()+"/"+x.GetName()] = x
			}
		}
	}
	for _, e := range b.Events {
		m.events[e.Namespace+"/"+e.Name] = e
	}
	for _, r := range b.Deletes {
		switch r.Kind {
		case contract.KindPod:
			delete(m.pods, r.Namespace+"/"+r.Name)
		case contract.KindNode:
			delete(m.nodes, r.Name)
		case contract.KindDeployment:
			delete(m.deploys, r.Namespace+"/"+r.Name)
		case contract.KindEvent:
			delete(m.events, r.Namespace+"/"+r.Name)
		}
	}
	if b.Health != nil {
		m.health = *b.Health
	}
}

// waitFor applies batches from src until cond holds. It fails the test if the source closes or
// nothing satisfies cond within a generous deadline (a hang guard, not a timing assertion).
func waitFor(t *testing.T, src *Source, m *mirror, what string, cond func(*mirror) bool) {
	t.Helper()
	if cond(m) {
		return
	}
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for {
		select {
		case b, ok := <-src.Batches():
			if !ok {
				t.Fatalf("waiting for %s: batches closed", what)
			}
			m.apply(b)
			if cond(m) {
				return
			}
		case <-deadline.C:
			t.Fatalf("waiting for %s: gave up; health %+v, %d pods", what, m.health, len(m.pods))
		}
	}
}

func pod(ns, name, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name), Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "web:v1"}}},
		Status:     corev1.PodStatus{Phase: corev1.PodPending},
	}
}

func node(name string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

func startFake(t *testing.T, client *fake.Clientset, opts Options) *Source {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	src, err := Start(ctx, client, opts)
	if err != nil {
		cancel()
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		for range src.Batches() { // drain until the informers have stopped
		}
	})
	return src
}

func synced(m *mirror) bool { return m.health.Synced }

func TestStartDeliversInitialStateAndScope(t *testing.T) {
	client := fake.NewClientset(
		pod("default", "web-1", "node-1"), pod("default", "web-2", "node-2"),
		pod("other", "db-1", "node-1"), node("node-1"), node("node-2"),
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}},
	)
	src := startFake(t, client, Options{Namespace: "default", Context: "kind-dev"})
	m := newMirror()
	waitFor(t, src, m, "initial sync", func(m *mirror) bool { return synced(m) && len(m.pods) == 2 && len(m.nodes) == 2 })
	select {
	case <-src.Synced():
	default:
		t.Errorf("a batch said synced, but Synced is not closed")
	}

	if _, ok := m.pods["other/db-1"]; ok {
		t.Errorf("pod from namespace other was delivered for a source scoped to default")
	}
	if len(m.deploys) != 1 {
		t.Errorf("deployments = %d, want 1", len(m.deploys))
	}
	if m.health.PodsSeen != 2 {
		t.Errorf("PodsSeen = %d, want 2", m.health.PodsSeen)
	}
	if m.health.LastEvent.IsZero() {
		t.Errorf("LastEvent not set after events")
	}
	if got := src.Scope(); got != "ns default" {
		t.Errorf("Scope() = %q", got)
	}
	if got := src.Context(); got != "kind-dev" {
		t.Errorf("Context() = %q", got)
	}
}

func TestSelectorAndAllNamespaces(t *testing.T) {
	other := pod("other", "db-1", "node-1")
	other.Labels = map[string]string{"app": "db"}
	client := fake.NewClientset(pod("default", "web-1", "node-1"), pod("other", "web-2", "node-1"), other)
	src := startFake(t, client, Options{AllNamespaces: true, Namespace: "ignored", Selector: "app=web"})
	m := newMirror()
	waitFor(t, src, m, "sync", func(m *mirror) bool { return synced(m) && len(m.pods) == 2 })
	if _, ok := m.pods["other/db-1"]; ok {
		t.Errorf("pod not matching -l app=web was delivered")
	}
	if got := src.Scope(); got != "all namespaces · app=web" {
		t.Errorf("Scope() = %q", got)
	}
}

func TestStartRejectsBadSelector(t *testing.T) {
	_, err := Start(context.Background(), fake.NewClientset(), Options{Selector: "app in (web"})
	if err == nil || !strings.Contains(err.Error(), "selector") {
		t.Fatalf("Start with a malformed selector: err = %v, want a selector error", err)
	}
}

func TestUpdatesAndDeletesFlow(t *testing.T) {
	client := fake.NewClientset(pod("default", "web-1", "node-1"), pod("default", "web-2", "node-1"))
	src := startFake(t, client, Options{Namespace: "default"})
	m := newMirror()
	waitFor(t, src, m, "sync", func(m *mirror) bool { return synced(m) && len(m.pods) == 2 })

	ctx := context.Background()
	p := pod("default", "web-1", "node-1")
	p.Status.Phase = corev1.PodRunning
	if _, err := client.CoreV1().Pods("default").UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := client.CoreV1().Pods("default").Delete(ctx, "web-2", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, src, m, "update and delete", func(m *mirror) bool {
		p := m.pods["default/web-1"]
		_, gone := m.pods["default/web-2"]
		return p != nil && p.Status.Phase == corev1.PodRunning && !gone
	})
}

// TestBurstCoalesces pushes 10,000 updates of one pod through a real informer as fast as the watch
// takes them: the consumer must see a handful of batches, and the last one must hold the last state.
func TestBurstCoalesces(t *testing.T) {
	const updates = 10000
	client := fake.NewClientset(pod("default", "web-1", "node-1"))
	// The fake tracker's watchers hold 100 events and panic when full; a big buffered watcher lets
	// the test push a true burst through the informer without pacing it.
	fw := watch.NewFakeWithChanSize(updates+10, false)
	client.PrependWatchReactor("pods", func(k8stesting.Action) (bool, watch.Interface, error) {
		return true, fw, nil
	})
	src := startFake(t, client, Options{Namespace: "default"})
	m := newMirror()
	waitFor(t, src, m, "sync", func(m *mirror) bool { return synced(m) && len(m.pods) == 1 })
	before := m.batches

	for i := 1; i <= updates; i++ {
		p := pod("default", "web-1", "node-1")
		p.ResourceVersion = fmt.Sprint(1000 + i)
		p.Status.Message = fmt.Sprintf("update %d", i)
		fw.Modify(p)
	}
	want := fmt.Sprintf("update %d", updates)
	waitFor(t, src, m, "last update", func(m *mirror) bool {
		p := m.pods["default/web-1"]
		return p != nil && p.Status.Message == want
	})
	t.Logf("%d updates arrived in %d batches", updates, m.batches-before)
	if got := m.batches - before; got >= 50 {
		t.Errorf("10,000 updates arrived in %d batches, want far fewer (< 50)", got)
	}
	if m.changes-1 >= updates {
		t.Errorf("consumer saw %d changes for %d updates: nothing was coalesced", m.changes-1, updates)
	}
}

// TestSlowConsumerLosesNothing holds the consumer back while many pods change, then checks every
// pod's final state arrives.
func TestSlowConsumerLosesNothing(t *testing.T) {
	const pods = 300
	client := fake.NewClientset()
	fw := watch.NewFakeWithChanSize(4*pods, false)
	client.PrependWatchReactor("pods", func(k8stesting.Action) (bool, watch.Interface, error) {
		return true, fw, nil
	})
	src := startFake(t, client, Options{Namespace: "default", Interval: 5 * time.Millisecond})
	m := newMirror()
	waitFor(t, src, m, "sync", synced)
	// Nobody reads Batches while these happen.
	for i := range pods {
		p := pod("default", fmt.Sprintf("p-%d", i), "node-1")
		p.ResourceVersion = fmt.Sprint(10 + i)
		fw.Add(p)
		p2 := p.DeepCopy()
		p2.ResourceVersion = fmt.Sprint(10000 + i)
		p2.Status.Phase = corev1.PodRunning
		fw.Modify(p2)
		if i%3 == 0 {
			fw.Delete(p2)
		}
	}
	waitFor(t, src, m, "all pods", func(m *mirror) bool { return len(m.pods) == pods-(pods+2)/3 && m.health.PodsSeen == len(m.pods) })
	for k, p := range m.pods {
		if p.Status.Phase != corev1.PodRunning {
			t.Errorf("%s: phase %s, want the latest (Running)", k, p.Status.Phase)
		}
	}
}

func TestHandlerCoalescesAndHandlesDeletedFinalStateUnknown(t *testing.T) {
	c := newCoalescer()
	h := c.handler(contract.KindPod)
	// The handlers get what the informer stores: records.
	p1 := pod("default", "a", "n")
	p1.Status.Message = "first"
	p2 := p1.DeepCopy()
	p2.Status.Message = "second"
	rec := func(ns, name string) *podrec.Record { return podrec.RecordOf(pod(ns, name, "n")) }
	h.OnAdd(podrec.RecordOf(p1), false)
	h.OnUpdate(podrec.RecordOf(p1), podrec.RecordOf(p2))
	h.OnAdd(rec("default", "b"), false)
	h.OnDelete(cache.DeletedFinalStateUnknown{Key: "default/b", Obj: rec("default", "b")})
	h.OnAdd(rec("default", "c"), false)
	h.OnDelete(rec("default", "c"))
	h.OnUpdate(nil, rec("default", "c")) // an update after a delete re-adds

	b := toBatch(c.take())
	if len(b.Pods) != 2 || b.Pods[0].GetName() != "a" || b.Pods[0].Pod().Status.Message != "second" || b.Pods[1].GetName() != "c" {
		t.Errorf("pods = %v, want latest a then re-added c", names(b.Pods))
	}
	wantDel := []contract.Ref{{Kind: contract.KindPod, Namespace: "default", Name: "b"}}
	if !slices.Equal(b.Deletes, wantDel) {
		t.Errorf("deletes = %v, want %v", b.Deletes, wantDel)
	}
	if rest := c.take(); rest != nil {
		t.Errorf("take after take = %v, want nothing", rest)
	}

	// A node (cluster-scoped) delete seen only as a tombstone.
	c.handler(contract.KindNode).OnDelete(cache.DeletedFinalStateUnknown{Key: "node-3"})
	b = toBatch(c.take())
	if want := (contract.Ref{Kind: contract.KindNode, Name: "node-3"}); len(b.Deletes) != 1 || b.Deletes[0] != want {
		t.Errorf("node tombstone: deletes = %v, want %v", b.Deletes, want)
	}
}

func names(ps []*podrec.Record) []string {
	var out []string
	for _, r := range ps {
		p := r.Pod()
		out = append(out, p.Name+":"+p.Status.Message)
	}
	return out
}

func TestForbiddenNodesLeaveTheRestWorking(t *testing.T) {
	client := fake.NewClientset(pod("default", "web-1", "node-1"), node("node-1"))
	client.PrependReactor("list", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		// As the API server refuses it: k8s.io/apiserver responsewriters/errors.go forbiddenMessage
		// (`User %q cannot %s resource %q in API group %q at the cluster scope`).
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "nodes"}, "",
			errors.New(`User "dev" cannot list resource "nodes" in API group "" at the cluster scope`))
	})
	src := startFake(t, client, Options{Namespace: "default"})
	m := newMirror()
	waitFor(t, src, m, "nodes forbidden and pods synced", func(m *mirror) bool {
		return synced(m) && slices.Contains(m.health.Forbidden, contract.KindNode) && len(m.pods) == 1
	})
	if len(m.nodes) != 0 {
		t.Errorf("nodes delivered although forbidden")
	}
	if m.health.WatchError != "" {
		t.Errorf("WatchError = %q; forbidden is reported as Forbidden, not as a broken watch", m.health.WatchError)
	}
	if slices.Contains(m.health.Forbidden, contract.KindPod) {
		t.Errorf("pods marked forbidden: %v", m.health.Forbidden)
	}
}

// TestWarningEvents: the events informer asks the API server for Warning events only, hands them
// over trimmed, and their deletes (the API's one-hour TTL) as Refs of KindEvent. The fake clientset
// ignores field selectors, so a Normal event still arrives, as a stub.
func TestWarningEvents(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 3, 1, 11, 58, 19, 0, time.UTC))
	warning := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-1.1898b5c4e5b0f180",
			Annotations: map[string]string{"x": "y"}, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "web-1", UID: "uid-web-1", APIVersion: "v1", ResourceVersion: "7"},
		Reason:         "FailedCreatePodSandBox", Type: corev1.EventTypeWarning, Count: 2, FirstTimestamp: at, LastTimestamp: at,
		// Verbatim from kubernetes-sigs/nfs-subdir-external-provisioner#257.
		Message: `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "cb8a846be7902a752bae7f4cdee280111ba8f005e90b6b68c7062bd1cb68a7b4": plugin type="calico" failed (add): connection is unauthorized: Unauthorized`,
		Source:  corev1.EventSource{Component: "kubelet", Host: "node-1"}, ReportingController: "kubelet", ReportingInstance: "node-1",
	}
	normal := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-1.1898b5c4e5b0f181"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "web-1"},
		Reason:         "Scheduled", Type: corev1.EventTypeNormal, Message: "Successfully assigned default/web-1 to node-1"}
	client := fake.NewClientset(pod("default", "web-1", "node-1"), warning, normal)
	var selectors []string
	client.PrependReactor("list", "events", func(a k8stesting.Action) (bool, runtime.Object, error) {
		selectors = append(selectors, a.(k8stesting.ListActionImpl).ListOptions.FieldSelector)
		return false, nil, nil
	})
	src := startFake(t, client, Options{Namespace: "default", Interval: 10 * time.Millisecond})
	m := newMirror()
	waitFor(t, src, m, "events synced", func(m *mirror) bool { return synced(m) && len(m.events) == 2 })
	if len(selectors) == 0 || selectors[0] != "type=Warning" {
		t.Errorf("events listed with field selectors %q, want type=Warning", selectors)
	}
	got := m.events["default/"+warning.Name]
	want := warning.DeepCopy()
	want.Annotations, want.ManagedFields = nil, nil
	want.InvolvedObject.APIVersion, want.InvolvedObject.ResourceVersion = "", ""
	got.ResourceVersion = ""
	if !apiequality.Semantic.DeepEqual(got, want) {
		t.Errorf("trimmed Warning event = %+v\nwant %+v", got, want)
	}
	if n := m.events["default/"+normal.Name]; n.Message != "" || n.Reason != "" || n.Type != corev1.EventTypeNormal {
		t.Errorf("a Normal event is kept whole: %+v", n)
	}
	if err := client.CoreV1().Events("default").Delete(context.Background(), warning.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, src, m, "the event's delete", func(m *mirror) bool { _, ok := m.events["default/"+warning.Name]; return !ok })
}

// TestForbiddenEventsLeaveTheRestWorking: without RBAC for events doomwatch runs, and says events
// are forbidden.
func TestForbiddenEventsLeaveTheRestWorking(t *testing.T) {
	client := fake.NewClientset(pod("default", "web-1", "node-1"), node("node-1"))
	client.PrependReactor("list", "events", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "events"}, "",
			errors.New(`User "dev" cannot list resource "events" in API group "" in the namespace "default"`))
	})
	src := startFake(t, client, Options{Namespace: "default"})
	m := newMirror()
	waitFor(t, src, m, "events forbidden, the rest synced", func(m *mirror) bool {
		return synced(m) && slices.Contains(m.health.Forbidden, contract.KindEvent) && len(m.pods) == 1 && len(m.nodes) == 1
	})
	if m.health.WatchError != "" || len(m.health.Forbidden) != 1 {
		t.Errorf("health = %+v, want only events forbidden and no broken watch", m.health)
	}
}

// TestWatchErrorShownThenCleared breaks the pod watch once: health must say so, and clear once the
// informer has recovered and events flow again.
func TestWatchErrorShownThenCleared(t *testing.T) {
	client := fake.NewClientset(pod("default", "web-1", "node-1"))
	var failed atomic.Bool
	client.PrependWatchReactor("pods", func(k8stesting.Action) (bool, watch.Interface, error) {
		if failed.CompareAndSwap(false, true) {
			// Spread over two lines with a clear-screen sequence, as an untrusted message can be.
			return true, nil, errors.New("dial tcp 127.0.0.1:6443:\n\x1b[2Jconnect: connection reset by peer")
		}
		return false, nil, nil
	})
	src := startFake(t, client, Options{Namespace: "default", Interval: 10 * time.Millisecond})
	m := newMirror()
	waitFor(t, src, m, "watch error", func(m *mirror) bool { return m.health.WatchError != "" })
	if !strings.HasPrefix(m.health.WatchError, "pods: ") || !strings.Contains(m.health.WatchError, "connection reset") {
		t.Errorf("WatchError = %q, want the pods watch failure", m.health.WatchError)
	}
	if strings.ContainsAny(m.health.WatchError, "\n\x1b") {
		t.Errorf("WatchError = %q, want one line with no escape sequences: it reaches the header", m.health.WatchError)
	}
	// The reflector relists after its backoff; the relist re-delivers the pod and clears the error.
	waitFor(t, src, m, "recovery", func(m *mirror) bool { return m.health.WatchError == "" && synced(m) })
}

func TestBatchesCloseWhenContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	src, err := Start(ctx, fake.NewClientset(pod("default", "a", "n")), Options{Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	m := newMirror()
	waitFor(t, src, m, "sync", synced)
	cancel()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for {
		select {
		case _, ok := <-src.Batches():
			if !ok {
				return
			}
		case <-deadline.C:
			t.Fatal("Batches() not closed after the context ended")
		}
	}
}

func TestNowUsesOptionsClock(t *testing.T) {
	sim := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	src := startFake(t, fake.NewClientset(pod("default", "a", "n")), Options{Namespace: "default", Now: func() time.Time { return sim }})
	if !src.Now().Equal(sim) {
		t.Errorf("Now() = %v, want the options clock %v", src.Now(), sim)
	}
	m := newMirror()
	waitFor(t, src, m, "sync", func(m *mirror) bool { return synced(m) && len(m.pods) == 1 })
	if !m.health.LastEvent.Equal(sim) {
		t.Errorf("LastEvent = %v, want the source clock %v", m.health.LastEvent, sim)
	}
}

func TestSettleReturnsSyncedState(t *testing.T) {
	client := fake.NewClientset(pod("default", "a", "n"), pod("default", "b", "n"), node("n"))
	src := startFake(t, client, Options{Namespace: "default"})
	m := newMirror()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := src.Settle(ctx, m.apply); err != nil {
		t.Fatalf("Settle: %v", err)
	}
	if !m.health.Synced || len(m.pods) != 2 || len(m.nodes) != 1 {
		t.Errorf("after Settle: synced=%v pods=%d nodes=%d, want the full initial state", m.health.Synced, len(m.pods), len(m.nodes))
	}
}

func TestSettleFailsWhenNeverSynced(t *testing.T) {
	client := fake.NewClientset(pod("default", "a", "n"))
	client.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		// etcd's timeout, which the API server passes on (go.etcd.io/etcd/api/v3
		// v3rpc/rpctypes/error.go ErrGRPCTimeout).
		return true, nil, errors.New("etcdserver: request timed out")
	})
	src := startFake(t, client, Options{Namespace: "default", Interval: 10 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := newMirror()
	// Cancel once the failure is visible, as --request-timeout would.
	err := src.Settle(ctx, func(b contract.Batch) {
		m.apply(b)
		if m.health.WatchError != "" {
			cancel()
		}
	})
	if !errors.Is(err, ErrNotSynced) || !strings.Contains(err.Error(), "etcdserver: request timed out") {
		t.Fatalf("Settle = %v, want ErrNotSynced naming the list failure", err)
	}
}

// TestRefusedWatchShownWhileServerIsDown: while the server refuses connections the reflector retries
// the watch call inside its own loop without calling the watch error handler; health must still say
// "reconnecting", and clear once a watch is established again.
func TestRefusedWatchShownWhileServerIsDown(t *testing.T) {
	client := fake.NewClientset(pod("default", "web-1", "node-1"))
	var up atomic.Bool
	client.PrependWatchReactor("pods", func(k8stesting.Action) (bool, watch.Interface, error) {
		if !up.Load() {
			return true, nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
		}
		return false, nil, nil
	})
	src := startFake(t, client, Options{Namespace: "default", Interval: 10 * time.Millisecond})
	m := newMirror()
	waitFor(t, src, m, "refused watch", func(m *mirror) bool { return strings.Contains(m.health.WatchError, "connection refused") })
	up.Store(true)
	waitFor(t, src, m, "re-established watch", func(m *mirror) bool { return m.health.WatchError == "" })
}

// TestArgoRolloutsWhereServed: a custom resource kind is watched through the dynamic client where
// discovery serves it, its objects trimmed and handed over with their kind; where it is not served
// the source syncs without it. The fake clientset stands in for the API server's discovery and
// the dynamic fake for its list and watch: e2e proves the same against a real kube-apiserver.
func TestArgoRolloutsWhereServed(t *testing.T) {
	ro := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
		"metadata": map[string]any{"namespace": "default", "name": "web", "uid": "ro-1", "generation": int64(2),
			"managedFields": []any{map[string]any{"manager": "kubectl"}}},
		"spec":   map[string]any{"replicas": int64(3), "template": map[string]any{"spec": map[string]any{"containers": []any{}}}},
		"status": map[string]any{"phase": "Healthy", "observedGeneration": "2"},
	}}
	gvr := schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "rollouts"}
	newDynamic := func() *dynamicfake.FakeDynamicClient {
		return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{gvr: "RolloutList"}, ro.DeepCopy())
	}

	t.Run("served", func(t *testing.T) {
		client := fake.NewClientset(pod("default", "web-1", "node-1"))
		client.Resources = []*metav1.APIResourceList{{GroupVersion: "argoproj.io/v1alpha1",
			APIResources: []metav1.APIResource{{Name: "rollouts", Namespaced: true, Kind: "Rollout"}}}}
		src := startFake(t, client, Options{Namespace: "default", dynamic: newDynamic()})
		m := newMirror()
		waitFor(t, src, m, "the Rollout", func(m *mirror) bool { return synced(m) && m.rollouts["default/web"] != nil })
		got := m.rollouts["default/web"]
		if _, ok := got.Object["spec"].(map[string]any)["template"]; ok || got.GetManagedFields() != nil {
			t.Errorf("the Rollout was not trimmed: %v", got.Object)
		}
		if phase, _, _ := unstructured.NestedString(got.Object, "status", "phase"); phase != "Healthy" {
			t.Errorf("status.phase = %q", phase)
		}
		if r, _, _ := unstructured.NestedInt64(got.Object, "spec", "replicas"); r != 3 {
			t.Errorf("spec.replicas = %d", r)
		}
	})
	t.Run("not served", func(t *testing.T) {
		client := fake.NewClientset(pod("default", "web-1", "node-1"))
		src := startFake(t, client, Options{Namespace: "default", dynamic: newDynamic()})
		m := newMirror()
		waitFor(t, src, m, "initial sync", func(m *mirror) bool { return synced(m) && len(m.pods) == 1 })
		if len(m.rollouts) != 0 || m.health.WatchError != "" {
			t.Errorf("rollouts %v, watch error %q: a cluster without the CRD is not watched for it", m.rollouts, m.health.WatchError)
		}
	})
}
