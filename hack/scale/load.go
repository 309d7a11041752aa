package scale

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// Field managers of the writers the load stands in for, so that managedFields look as on a real
// cluster.
const (
	controllerManager = "kube-controller-manager"
	kubeletManager    = "kubelet"
)

// LoadResult says what the load wrote and how long it took.
type LoadResult struct {
	Pods, Nodes, Deployments, Namespaces int
	Took                                 time.Duration
	PodsPerSecond                        float64
	// Attached is set when the fleet was loaded by an earlier run (Attach), not by this one.
	Attached bool
}

// Load writes the fleet: namespaces, Ready nodes, Deployments with their ReplicaSets, then the
// pods, each created and then given its status through the status subresource. Requests run on
// cfg.Workers goroutines. logf, when set, is told the progress every few seconds.
func (f *Fleet) Load(ctx context.Context, c kubernetes.Interface, logf func(format string, args ...any)) (LoadResult, error) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	start := time.Now()
	// Pods have been running for ten minutes; second precision, as the API stores times.
	f.created = start.Add(-10 * time.Minute).Truncate(time.Second)
	res := LoadResult{Pods: f.cfg.Pods, Nodes: f.cfg.Nodes, Namespaces: f.Namespaces()}

	for k := range f.Namespaces() {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: NamespaceName(k)}}
		if _, err := c.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			return res, fmt.Errorf("creating namespace %s: %w", ns.Name, err)
		}
	}

	heartbeat := metav1.NewTime(start.Truncate(time.Second))
	err := f.pool(ctx, "nodes", f.cfg.Nodes, logf, func(ctx context.Context, n int) error {
		node, err := c.CoreV1().Nodes().Create(ctx, newNode(n), metav1.CreateOptions{FieldManager: kubeletManager})
		if err != nil {
			return fmt.Errorf("creating node %s: %w", NodeName(n), err)
		}
		node.Status = nodeStatus(n, heartbeat)
		if _, err := c.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{FieldManager: kubeletManager}); err != nil {
			return fmt.Errorf("updating node %s status: %w", node.Name, err)
		}
		return nil
	})
	if err != nil {
		return res, err
	}

	// Deployments and their ReplicaSets, one job per Deployment; rsUID is indexed like the pods'
	// Deployments, namespace by namespace.
	type deployRef struct{ k, d int }
	var refs []deployRef
	for k := range f.Namespaces() {
		for d := range f.DeploymentsIn(k) {
			refs = append(refs, deployRef{k, d})
		}
	}
	res.Deployments = len(refs)
	rsUID := make([][]types.UID, f.Namespaces())
	for k := range rsUID {
		rsUID[k] = make([]types.UID, f.DeploymentsIn(k))
	}
	err = f.pool(ctx, "deployments", len(refs), logf, func(ctx context.Context, i int) error {
		k, d := refs[i].k, refs[i].d
		uid, err := f.writeDeployment(ctx, c, k, d, heartbeat)
		rsUID[k][d] = uid
		return err
	})
	if err != nil {
		return res, err
	}

	podStart := time.Now()
	err = f.pool(ctx, "pods", f.cfg.Pods, logf, func(ctx context.Context, i int) error {
		p := f.pod(i)
		return f.writePod(ctx, c, p, rsUID[p.ns][p.deploy])
	})
	res.Took = time.Since(start)
	res.PodsPerSecond = float64(f.cfg.Pods) / time.Since(podStart).Seconds()
	return res, err
}

func (f *Fleet) writeDeployment(ctx context.Context, c kubernetes.Interface, k, d int, now metav1.Time) (types.UID, error) {
	apps := c.AppsV1()
	dep, err := apps.Deployments(NamespaceName(k)).Create(ctx, f.deployment(k, d), metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("creating deployment %s/%s: %w", NamespaceName(k), DeploymentName(d), err)
	}
	rs, err := apps.ReplicaSets(dep.Namespace).Create(ctx, f.replicaSet(k, d, dep), metav1.CreateOptions{FieldManager: controllerManager})
	if err != nil {
		return "", fmt.Errorf("creating replicaset %s/%s: %w", dep.Namespace, ReplicaSetName(k, d), err)
	}
	replicas, ready := int32(f.replicasOf(k, d)), f.readyIn(k, d)
	rs.Status.Replicas, rs.Status.FullyLabeledReplicas = replicas, replicas
	rs.Status.ReadyReplicas, rs.Status.AvailableReplicas, rs.Status.ObservedGeneration = ready, ready, rs.Generation
	if _, err := apps.ReplicaSets(rs.Namespace).UpdateStatus(ctx, rs, metav1.UpdateOptions{FieldManager: controllerManager}); err != nil {
		return "", fmt.Errorf("updating replicaset %s/%s status: %w", rs.Namespace, rs.Name, err)
	}
	dep.Status = rolloutStatus(dep.Generation, replicas, ready, rs.Name, now)
	if _, err := apps.Deployments(dep.Namespace).UpdateStatus(ctx, dep, metav1.UpdateOptions{FieldManager: controllerManager}); err != nil {
		return "", fmt.Errorf("updating deployment %s/%s status: %w", dep.Namespace, dep.Name, err)
	}
	return rs.UID, nil
}

// writePod creates the pod and writes its status. A create that timed out may have happened: the
// retry then finds the pod and goes on with it.
func (f *Fleet) writePod(ctx context.Context, c kubernetes.Interface, p podAt, rsUID types.UID) error {
	pods := c.CoreV1().Pods(p.namespace)
	var created *corev1.Pod
	err := retry.OnError(retry.DefaultBackoff, retriable, func() error {
		var err error
		created, err = pods.Create(ctx, f.newPod(p, rsUID), metav1.CreateOptions{FieldManager: controllerManager})
		if apierrors.IsAlreadyExists(err) {
			created, err = pods.Get(ctx, p.name, metav1.GetOptions{})
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("creating pod %s/%s: %w", p.namespace, p.name, err)
	}
	f.uids[p.index] = created.UID
	created.Status = f.status(p, created.UID, created.Status.QOSClass, p.restarts, true, time.Now().Truncate(time.Second))
	err = retry.OnError(retry.DefaultBackoff, retriable, func() error {
		_, err := pods.UpdateStatus(ctx, created, metav1.UpdateOptions{FieldManager: kubeletManager})
		if apierrors.IsConflict(err) {
			// An earlier attempt went through after all: write again on top of it.
			if cur, gerr := pods.Get(ctx, p.name, metav1.GetOptions{}); gerr == nil {
				created.ResourceVersion = cur.ResourceVersion
			}
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("updating pod %s/%s status: %w", p.namespace, p.name, err)
	}
	return nil
}

// retriable are the errors a loaded API server returns that a later attempt can get past.
func retriable(err error) bool {
	return apierrors.IsTooManyRequests(err) || apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) ||
		apierrors.IsConflict(err) || apierrors.IsInternalError(err) || apierrors.IsServiceUnavailable(err)
}

// pool runs do(0..n-1) on the fleet's workers, stopping at the first error, and logs progress every
// five seconds.
func (f *Fleet) pool(ctx context.Context, what string, n int, logf func(string, ...any), do func(context.Context, int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next, done atomic.Int64
	var wg sync.WaitGroup
	for range min(f.cfg.Workers, n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := do(ctx, i); err != nil {
					cancel(err)
					return
				}
				done.Add(1)
			}
		})
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	start := time.Now()
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-finished:
			if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
				return err
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			logf("%s: %d in %s", what, n, time.Since(start).Round(time.Millisecond))
			return nil
		case <-tick.C:
			d := done.Load()
			logf("%s: %d/%d (%.0f/s)", what, d, n, float64(d)/time.Since(start).Seconds())
		}
	}
}

// Attach takes up a fleet an earlier run loaded into the server c talks to (the same Config): it
// lists the pods to learn their UIDs, which the churn's statuses carry, and checks that every pod
// of the fleet is there.
func (f *Fleet) Attach(ctx context.Context, c kubernetes.Interface) error {
	index := make(map[string]int, f.cfg.Pods)
	for i := range f.cfg.Pods {
		p := f.pod(i)
		index[p.namespace+"/"+p.name] = i
	}
	found := 0
	opts := metav1.ListOptions{Limit: 500}
	for {
		pods, err := c.CoreV1().Pods(metav1.NamespaceAll).List(ctx, opts)
		if err != nil {
			return fmt.Errorf("listing pods: %w", err)
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			if j, ok := index[p.Namespace+"/"+p.Name]; ok {
				f.uids[j] = p.UID
				if f.created.IsZero() || p.CreationTimestamp.Time.Before(f.created) {
					f.created = p.CreationTimestamp.Time
				}
				found++
			}
		}
		if pods.Continue == "" {
			break
		}
		opts.Continue = pods.Continue
	}
	if found != f.cfg.Pods {
		return fmt.Errorf("the server holds %d of the fleet's %d pods: load it with the same --pods and --nodes", found, f.cfg.Pods)
	}
	return nil
}
