package scale

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// churnState is what the churn has done to each healthy pod: its app container alternates between
// failing its readiness probe and being restarted (exit 1) and ready again, the two changes a
// kubelet reports most often.
type churnState struct {
	mu       sync.Mutex
	restarts map[int]int32 // by pod index
	notReady map[int]bool
	reserved map[string]bool // namespace/name: the probe's pods, which the churn leaves alone
	next     int             // round-robin position in the namespace
}

// ChurnConfig bounds a churn run: it stops after Count updates or Duration, whichever comes
// first, or when its context ends.
type ChurnConfig struct {
	Namespace int     // namespace index (NamespaceName)
	Rate      float64 // updates per second
	Count     int
	Duration  time.Duration
	Workers   int // concurrent requests; the rate falls short when they are all busy
}

// ChurnResult is what a churn run did.
type ChurnResult struct {
	Sent, Failed int
	Took         time.Duration
	Rate         float64 // achieved, updates per second
	FirstErr     error
}

// Reserve keeps the churn off the pod namespace/name (the probe is about to change it).
func (f *Fleet) Reserve(key string) {
	f.churn.mu.Lock()
	defer f.churn.mu.Unlock()
	if f.churn.reserved == nil {
		f.churn.reserved = map[string]bool{}
	}
	f.churn.reserved[key] = true
}

// Release lets the churn change the pod again.
func (f *Fleet) Release(key string) {
	f.churn.mu.Lock()
	defer f.churn.mu.Unlock()
	delete(f.churn.reserved, key)
}

// statusPatch is the body of a kubelet's status patch: a strategic merge patch of the status
// subresource (kubernetes/kubernetes pkg/util/pod/pod.go PatchPodStatus, which the kubelet's status
// manager calls). containerStatuses has no merge key, so the list is sent whole; conditions merge
// by type.
type statusPatch struct {
	Status struct {
		Conditions        []corev1.PodCondition    `json:"conditions,omitempty"`
		ContainerStatuses []corev1.ContainerStatus `json:"containerStatuses"`
	} `json:"status"`
}

// nextUpdate picks the next healthy, unreserved pod of namespace k and advances its churn state,
// returning its name and patch body.
func (f *Fleet) nextUpdate(k int, now time.Time) (string, []byte, error) {
	f.churn.mu.Lock()
	defer f.churn.mu.Unlock()
	if f.churn.restarts == nil {
		f.churn.restarts, f.churn.notReady = map[int]int32{}, map[int]bool{}
	}
	n := f.podsIn(k)
	for range n {
		i := k*f.cfg.PodsPerNamespace + f.churn.next
		f.churn.next = (f.churn.next + 1) % n
		p := f.pod(i)
		if p.state != Healthy || f.churn.reserved[p.namespace+"/"+p.name] {
			continue
		}
		// Ready → readiness probe failing → restarted and ready again.
		ready := f.churn.notReady[i]
		if ready {
			f.churn.restarts[i]++
		}
		f.churn.notReady[i] = !ready
		var body statusPatch
		at := metav1.NewTime(now.Truncate(time.Second))
		body.Status.Conditions = conditions(ready, []string{appContainer}, at)
		// Only Ready and ContainersReady change; the others keep their transition time.
		body.Status.Conditions = body.Status.Conditions[2:4]
		body.Status.ContainerStatuses = f.containerStatuses(p, f.uids[i], f.churn.restarts[i], ready, f.created, now.Truncate(time.Second))
		b, err := json.Marshal(body)
		return p.name, b, err
	}
	return "", nil, fmt.Errorf("namespace %s has no healthy pod left to churn", NamespaceName(k))
}

// Churn writes status updates to the healthy pods of one namespace at cfg.Rate, as their kubelets
// would, until cfg.Count updates, cfg.Duration or ctx ends it. Failed updates are counted, not
// fatal.
func (f *Fleet) Churn(ctx context.Context, c kubernetes.Interface, cfg ChurnConfig) ChurnResult {
	if f.created.IsZero() {
		f.created = time.Now().Add(-10 * time.Minute).Truncate(time.Second)
	}
	workers := max(cfg.Workers, 1)
	ctx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	type job struct {
		name string
		body []byte
	}
	jobs := make(chan job, workers)
	var failed atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	ns := NamespaceName(cfg.Namespace)
	for range workers {
		wg.Go(func() {
			for j := range jobs {
				_, err := c.CoreV1().Pods(ns).Patch(ctx, j.name, types.StrategicMergePatchType, j.body,
					metav1.PatchOptions{FieldManager: kubeletManager}, "status")
				if err != nil && ctx.Err() == nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err)
				}
			}
		})
	}

	start := time.Now()
	sent := 0
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
pace:
	for sent < cfg.Count {
		select {
		case <-ctx.Done():
			break pace
		case now := <-tick.C:
			due := min(int(cfg.Rate*now.Sub(start).Seconds()), cfg.Count)
			for ; sent < due; sent++ {
				name, body, err := f.nextUpdate(cfg.Namespace, now)
				if err != nil {
					firstErr.CompareAndSwap(nil, err)
					break pace
				}
				select {
				case jobs <- job{name, body}:
				case <-ctx.Done():
					break pace
				}
			}
		}
	}
	close(jobs)
	wg.Wait()
	took := time.Since(start)
	res := ChurnResult{Sent: sent, Failed: int(failed.Load()), Took: took, Rate: float64(sent) / took.Seconds()}
	if e, ok := firstErr.Load().(error); ok {
		res.FirstErr = e
	}
	return res
}

// Probe is one probe update: when it was sent, when the API server acknowledged it, and when a
// plain watch of the pod, opened before the update, received it (the floor any watching tool is
// bound by: the server's own delivery delay under load).
type Probe struct {
	Sent, Acked time.Time
	// Seen is closed once the watch has received the update (or failed: SeenOK is false then).
	Seen   chan struct{}
	SeenAt time.Time
	SeenOK bool
}

// SetRestarts sets the restart count of pod ns/name's app container to n, with a kubelet-style
// status patch, leaving every other field as it is. Only RESTARTS changes on screen, so the pod
// keeps its verdict and its place in any sort. A watch of the pod from its current resource
// version times the server's delivery of the update (Probe.Seen); it ends with ctx.
func SetRestarts(ctx context.Context, c kubernetes.Interface, ns, name string, n int32) (*Probe, error) {
	pods := c.CoreV1().Pods(ns)
	pod, err := pods.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("getting pod %s/%s: %w", ns, name, err)
	}
	// From the watch cache's newest state (no resource version), not from the Get's: under load the
	// cache lags behind etcd, and a watch from a version it has not reached yet waits for it, then
	// fails ("Too large resource version"). The watch opens with the pod as it is, then the update.
	w, err := pods.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		return nil, fmt.Errorf("watching pod %s/%s: %w", ns, name, err)
	}
	pr := &Probe{Seen: make(chan struct{})}
	go func() {
		defer close(pr.Seen)
		defer w.Stop()
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			for _, cs := range p.Status.ContainerStatuses {
				if cs.Name == appContainer && cs.RestartCount == n {
					pr.SeenAt, pr.SeenOK = time.Now(), true
					return
				}
			}
		}
	}()
	var body statusPatch
	body.Status.ContainerStatuses = pod.Status.ContainerStatuses
	for i := range body.Status.ContainerStatuses {
		if body.Status.ContainerStatuses[i].Name == appContainer {
			body.Status.ContainerStatuses[i].RestartCount = n
		}
	}
	b, err := json.Marshal(body)
	if err != nil {
		w.Stop()
		return nil, err
	}
	pr.Sent = time.Now()
	_, err = pods.Patch(ctx, name, types.StrategicMergePatchType, b, metav1.PatchOptions{FieldManager: kubeletManager}, "status")
	pr.Acked = time.Now()
	if err != nil {
		w.Stop()
		return nil, fmt.Errorf("patching pod %s/%s status: %w", ns, name, err)
	}
	return pr, nil
}
