package kube

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// pagedPods serves a list of n pods in pages of the size asked for, with continue tokens and
// remainingItemCount as the API server does. Before serving page stall (0-based) it waits on
// hold; listFails(attempt, page) can fail a page.
type pagedPods struct {
	pods      []*corev1.Pod
	stall     int
	hold      chan struct{}
	listFails func(attempt, page int) bool
	attempts  atomic.Int32
	limits    []int64
}

func (s *pagedPods) react(a k8stesting.Action) (bool, runtime.Object, error) {
	o := a.(k8stesting.ListActionImpl).ListOptions
	if o.Limit == 1 {
		return false, nil, nil // not ours
	}
	start := 0
	if o.Continue != "" {
		start, _ = strconv.Atoi(o.Continue)
	}
	page := start / int(o.Limit)
	if page == 0 {
		s.attempts.Add(1)
	}
	s.limits = append(s.limits, o.Limit)
	if page == s.stall && s.hold != nil {
		<-s.hold
	}
	if s.listFails != nil && s.listFails(int(s.attempts.Load()), page) {
		return true, nil, errors.New("connection reset by peer")
	}
	end := min(start+int(o.Limit), len(s.pods))
	out := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "100"}}
	for _, p := range s.pods[start:end] {
		out.Items = append(out.Items, *p.DeepCopy())
	}
	if end < len(s.pods) {
		out.Continue = strconv.Itoa(end)
		rest := int64(len(s.pods) - end)
		out.RemainingItemCount = &rest
	}
	return true, out, nil
}

func manyPods(n int) []*corev1.Pod {
	out := make([]*corev1.Pod, n)
	for i := range out {
		out[i] = pod("default", fmt.Sprintf("web-%04d", i), "node-1")
	}
	return out
}

// TestPagedListShowsRowsWhileListing: when the list is paged (a server or client without
// streaming lists, the demo), the first page's pods reach the model with a count and the total
// before the list ends, and the informer's own adds at the end are not sent again.
func TestPagedListShowsRowsWhileListing(t *testing.T) {
	all := manyPods(1200)
	srv := &pagedPods{pods: all, stall: 1, hold: make(chan struct{})}
	// The list is the reactor's; the update below needs its pod in the tracker.
	client := fake.NewClientset(all[3].DeepCopy())
	client.PrependReactor("list", "pods", srv.react)
	src := startFake(t, client, Options{Namespace: "default", Interval: 10 * time.Millisecond})
	m := newMirror()

	// A batch's health is read before its changes are taken (coalescer.run), so the count of the
	// first page may come one batch after its pods; the second page is held, so it comes.
	waitFor(t, src, m, "the first page and its count while listing", func(m *mirror) bool {
		return len(m.pods) == listPageSize && m.health.PodsSeen == listPageSize
	})
	if m.health.Synced || m.health.PodsTotal != len(all) {
		t.Errorf("health while listing = %+v, want not synced, %d of %d pods", m.health, listPageSize, len(all))
	}
	close(srv.hold)
	waitFor(t, src, m, "synced", synced)
	if len(m.pods) != len(all) || m.health.PodsSeen != len(all) {
		t.Errorf("synced with %d pods, PodsSeen %d; want %d", len(m.pods), m.health.PodsSeen, len(all))
	}
	if m.changes != len(all) {
		t.Errorf("%d changes delivered for %d pods: the informer's adds were sent again", m.changes, len(all))
	}
	for _, l := range srv.limits {
		if l != listPageSize {
			t.Errorf("a page of %d asked for, want %d", l, listPageSize)
		}
	}
	if p := m.pods["default/web-0000"]; p == nil || p.Labels != nil {
		t.Errorf("pod delivered while listing = %+v, want it trimmed", p)
	}

	// After the sync the informer's events flow as before.
	updated := all[3].DeepCopy()
	updated.Status.Phase = corev1.PodRunning
	if _, err := client.CoreV1().Pods("default").UpdateStatus(context.Background(), updated, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, src, m, "the update", func(m *mirror) bool { return m.pods["default/web-0003"].Status.Phase == corev1.PodRunning })
}

// TestRetriedListDeletesWhatIsGone: a list that fails half-way and is retried after a pod was
// deleted leaves no trace of that pod, and the count is right.
func TestRetriedListDeletesWhatIsGone(t *testing.T) {
	all := manyPods(700)
	srv := &pagedPods{pods: all, stall: -1}
	srv.listFails = func(attempt, page int) bool {
		if attempt == 1 && page == 1 {
			srv.pods = append(all[:1:1], all[2:]...) // web-0001 is deleted before the retry
			return true
		}
		return false
	}
	client := fake.NewClientset()
	client.PrependReactor("list", "pods", srv.react)
	src := startFake(t, client, Options{Namespace: "default", Interval: 10 * time.Millisecond})
	m := newMirror()
	waitFor(t, src, m, "synced", synced)
	if _, ok := m.pods["default/web-0001"]; ok || len(m.pods) != len(all)-1 || m.health.PodsSeen != len(all)-1 {
		t.Errorf("after the retry: %d pods (web-0001 present: %v), PodsSeen %d; want %d without web-0001",
			len(m.pods), ok, m.health.PodsSeen, len(all)-1)
	}
}

// streamingClient is the fake clientset claiming to support streamed lists, so the informer asks
// for one; streamPods answers it.
type streamingClient struct{ *fake.Clientset }

func (streamingClient) IsWatchListSemanticsUnSupported() bool { return false }

// TestStreamedListShowsRowsWhileStreaming: with a streamed list (WatchList, what a real API
// server gives), pods reach the model as they are decoded, counted against the total a one-item
// list estimated, long before the stream's end; the informer's adds at the end are not sent
// again, and the watch goes on after it.
func TestStreamedListShowsRowsWhileStreaming(t *testing.T) {
	all := manyPods(300)
	client := fake.NewClientset()
	stream := watch.NewFakeWithChanSize(len(all)+10, false)
	var streams atomic.Int32
	client.PrependWatchReactor("*", func(a k8stesting.Action) (bool, watch.Interface, error) {
		o := a.(k8stesting.WatchActionImpl).ListOptions
		if o.SendInitialEvents == nil || !*o.SendInitialEvents {
			return false, nil, nil
		}
		if a.GetResource().Resource != "pods" {
			// Every other kind streams nothing: only the end-of-list bookmark, as its type.
			return true, emptyStream(a.GetResource().Resource), nil
		}
		if streams.Add(1) > 1 {
			return false, nil, nil
		}
		return true, stream, nil
	})
	client.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.(k8stesting.ListActionImpl).ListOptions.Limit != 1 {
			return true, nil, errors.New("the informer should stream, not list")
		}
		rest := int64(len(all) + 99)
		return true, &corev1.PodList{Items: []corev1.Pod{*all[0]}, ListMeta: metav1.ListMeta{Continue: "x", RemainingItemCount: &rest}}, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	src, err := Start(ctx, streamingClient{client}, Options{Namespace: "default", Interval: 10 * time.Millisecond})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		for range src.Batches() {
		}
	})
	m := newMirror()
	for _, p := range all[:200] {
		stream.Add(p.DeepCopy())
	}
	// The pods and the health that counts them come in batches of their own: wait for both (under
	// load, CI saw the 200 rows with the count still at 75).
	waitFor(t, src, m, "rows while streaming", func(m *mirror) bool {
		return len(m.pods) == 200 && m.health.PodsSeen == 200 && m.health.PodsTotal > 0
	})
	if m.health.Synced || m.health.PodsSeen != 200 || m.health.PodsTotal != len(all)+100 {
		t.Errorf("health while streaming = %+v, want not synced, 200 of ~%d", m.health, len(all)+100)
	}
	for _, p := range all[200:] {
		stream.Add(p.DeepCopy())
	}
	stream.Action(watch.Bookmark, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "100",
		Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}})
	waitFor(t, src, m, "synced", synced)
	if len(m.pods) != len(all) || m.health.PodsSeen != len(all) || m.changes != len(all) {
		t.Errorf("synced with %d pods, PodsSeen %d, %d changes; want %d of each", len(m.pods), m.health.PodsSeen, m.changes, len(all))
	}

	gone := all[7].DeepCopy()
	gone.ResourceVersion = "101"
	stream.Delete(gone)
	waitFor(t, src, m, "a delete after the stream", func(m *mirror) bool { _, ok := m.pods["default/web-0007"]; return !ok })
}

// emptyStream is a streamed list of nothing: the bookmark that ends it.
func emptyStream(resource string) watch.Interface {
	objs := map[string]runtime.Object{
		"nodes": &corev1.Node{}, "replicasets": &appsv1.ReplicaSet{}, "deployments": &appsv1.Deployment{},
		"statefulsets": &appsv1.StatefulSet{}, "daemonsets": &appsv1.DaemonSet{}, "jobs": &batchv1.Job{}, "cronjobs": &batchv1.CronJob{},
		"events": &corev1.Event{},
	}
	w := watch.NewFakeWithChanSize(1, false)
	obj := objs[resource]
	m, _ := meta.Accessor(obj)
	m.SetResourceVersion("100")
	m.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	w.Action(watch.Bookmark, obj)
	return w
}

// TestUnchangedUpdatesMakeNoBatch: an update that changes only what the transform drops (a pod's
// IP, a node's heartbeat) makes no batch; one that changes what is kept does.
func TestUnchangedUpdatesMakeNoBatch(t *testing.T) {
	n := node("node-1")
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.NewTime(time.Unix(100, 0))}}
	client := fake.NewClientset(pod("default", "web-1", "node-1"), pod("default", "web-2", "node-1"), n)
	src := startFake(t, client, Options{Namespace: "default", Interval: 10 * time.Millisecond})
	m := newMirror()
	waitFor(t, src, m, "synced", func(m *mirror) bool { return synced(m) && len(m.pods) == 2 && len(m.nodes) == 1 })
	ctx := context.Background()

	p := m.pods["default/web-1"].DeepCopy()
	p.Status.PodIP = "10.0.0.7"
	if _, err := client.CoreV1().Pods("default").UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	n = n.DeepCopy()
	n.Status.Conditions[0].LastHeartbeatTime = metav1.NewTime(time.Unix(200, 0))
	if _, err := client.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Then changes that show, after the two above in each informer's order, so that once they
	// are in, so are the two above.
	p = m.pods["default/web-2"].DeepCopy()
	p.Status.Phase = corev1.PodRunning
	if _, err := client.CoreV1().Pods("default").UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Nodes().Create(ctx, node("node-2"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	changes := m.changes
	waitFor(t, src, m, "the changes that show", func(m *mirror) bool {
		return m.pods["default/web-2"].Status.Phase == corev1.PodRunning && m.nodes["node-2"] != nil
	})
	if got := m.changes - changes; got != 2 {
		t.Errorf("%d changes delivered, want 2: an IP or heartbeat update was passed on", got)
	}
}
