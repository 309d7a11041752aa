package kube

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"

	"doomwatch/contract"
	"doomwatch/podrec"
	"doomwatch/sanitize"
)

// DefaultInterval is the coalescing interval when Options.Interval is zero.
const DefaultInterval = 100 * time.Millisecond

// start wires typed informers, one per kind, to a coalescer and a health tracker.
func start(ctx context.Context, client kubernetes.Interface, opts Options) (*Source, error) {
	if client == nil {
		return nil, fmt.Errorf("starting informers: no client")
	}
	if _, err := labels.Parse(opts.Selector); err != nil {
		return nil, fmt.Errorf("parsing selector %q: %w", opts.Selector, err)
	}
	interval := opts.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	ns := opts.Namespace
	if opts.AllNamespaces {
		ns = metav1.NamespaceAll
	}

	var tweak func(*metav1.ListOptions)
	if opts.Selector != "" {
		selector := opts.Selector
		tweak = func(lo *metav1.ListOptions) { lo.LabelSelector = selector }
	}

	health := &healthTracker{now: now}
	trim := opts.trim
	if trim == nil {
		trim = newTrimmer()
	}
	co := newCoalescer()
	co.onEvent = health.event
	health.changed = co.signal
	pods := newPodSync(co, health)
	// No resync: every change arrives as an event, and a resync would only re-send unchanged objects.
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0)
	core := client.CoreV1()
	// Pods of a real cluster are decoded straight into records (podcodec.go); the demo's fake
	// clientset hands over corev1.Pods, which the transform makes records.
	var podObj runtime.Object = &corev1.Pod{}
	podPage := func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		return core.Pods(ns).List(ctx, o)
	}
	podWatch := core.Pods(ns).Watch
	if opts.restConfig != nil {
		rc, err := recordClient(opts.restConfig, trim)
		if err != nil {
			return nil, err
		}
		rp := recordPods{rc: rc, ns: ns}
		podObj, podPage, podWatch = &podrec.Record{}, rp.list, rp.watch
	}

	// Pods are scoped by namespace and selector; workloads by namespace only (a pod selector says
	// nothing about their owners' labels); nodes are cluster-scoped. Events are scoped by namespace
	// and asked for by type: Warning events only, which the API server filters (type is one of the
	// event fields it selects on). The kubelet posts a node's events in the default namespace.
	warnings := func(lo *metav1.ListOptions) { lo.FieldSelector = "type=" + corev1.EventTypeWarning }
	type wired struct {
		kind  contract.Kind
		obj   runtime.Object
		tweak func(*metav1.ListOptions)
		list  listFunc
		watch watchFunc
	}
	wire := []wired{
		{contract.KindPod, podObj, tweak, podPage, podWatch},
		{contract.KindNode, &corev1.Node{}, nil,
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return core.Nodes().List(ctx, o)
			},
			core.Nodes().Watch},
	}
	// The workload kinds, one row each (kinds.go).
	for i := range workloadRows {
		r := &workloadRows[i]
		list, watch := r.client(client, ns)
		wire = append(wire, wired{kind: r.kind, obj: r.newObject(), list: list, watch: watch})
	}
	wire = append(wire, wired{contract.KindEvent, &corev1.Event{}, warnings,
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return core.Events(ns).List(ctx, o)
		},
		core.Events(ns).Watch})
	for _, w := range wire {
		ks := health.add(w.kind)
		var inf cache.SharedIndexInformer
		transform := func(obj any) (any, error) {
			out, err := trim.transform(obj)
			if err != nil {
				return nil, err
			}
			return keepStored(inf.GetStore(), out), nil
		}
		list := w.list
		if w.kind == contract.KindPod {
			transform = pods.transform(transform)
			list = func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return pods.list(ctx, o, podPage, transform)
			}
		}
		lw := &cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				if w.tweak != nil {
					w.tweak(&o)
				}
				obj, err := list(ctx, o)
				if err != nil {
					health.fail(ks, err)
					return nil, err
				}
				health.ok(ks)
				return obj, nil
			},
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				if w.tweak != nil {
					w.tweak(&o)
				}
				wi, err := w.watch(ctx, o)
				if err != nil {
					health.fail(ks, err)
					return nil, err
				}
				health.ok(ks)
				return wi, nil
			},
		}
		// The factory's own informers build the same ListWatch; ours also tells health when a list
		// or watch call succeeds, the only sure sign that a broken watch has recovered (events queued
		// before the failure can still arrive after it), and when one fails, which the reflector does
		// not always pass to its error handler.
		inf = factory.InformerFor(w.obj, func(_ kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
			return cache.NewSharedIndexInformerWithOptions(cache.ToListWatcherWithWatchListSemantics(lw, client), w.obj,
				cache.SharedIndexInformerOptions{ResyncPeriod: resync, Indexers: cache.Indexers{}})
		})
		if err := inf.SetTransform(transform); err != nil {
			return nil, fmt.Errorf("setting %s transform: %w", w.kind.Resource(), err)
		}
		if err := inf.SetWatchErrorHandlerWithContext(health.watchErrorHandler(ks)); err != nil {
			return nil, fmt.Errorf("setting %s watch error handler: %w", w.kind.Resource(), err)
		}
		if w.kind == contract.KindPod {
			pods.informer = inf
		}
		var delivered func(any) bool
		var gone func(any)
		if w.kind == contract.KindPod {
			delivered, gone = pods.delivered, pods.gone
		}
		reg, err := inf.AddEventHandler(co.podHandler(w.kind, delivered, gone))
		if err != nil {
			return nil, fmt.Errorf("adding %s handler: %w", w.kind.Resource(), err)
		}
		// Synced once the handler, not only the informer, has had the whole list: the batch that
		// says synced then carries all of it.
		ks.hasSynced = reg.HasSynced
		if w.kind == contract.KindPod {
			pods.reg = reg
			ks.hasSynced = pods.hasSynced
		}
	}
	if opts.probe && opts.restConfig != nil {
		go probe(ctx, opts.restConfig, health)
	}
	if streamsLists(client) {
		go pods.probe(ctx, podPage, opts.Selector)
	}

	src := &Source{
		ctx:       ctx,
		out:       make(chan contract.Batch),
		now:       now,
		context:   opts.Context,
		scope:     scope(ns, opts.Selector),
		namespace: ns,
		client:    client,
		logs:      opts.Logs,
		interval:  interval,
		synced:    make(chan struct{}),
	}
	factory.Start(ctx.Done())
	go func() {
		defer close(src.out)
		synced := false
		co.run(ctx.Done(), src.out, interval, func() (contract.Health, bool) {
			pods.finish()
			h, changed := health.poll()
			if h.Synced && !synced {
				synced = true
				close(src.synced)
			}
			return h, changed
		})
		// Wait for the informers to stop, so a closed Batches() means nothing runs any more.
		factory.Shutdown()
	}()
	return src, nil
}

// streamsLists reports whether the pod informer will ask for a streamed list (WatchList), which
// carries no count of what is to come, rather than call list.
func streamsLists(client kubernetes.Interface) bool {
	return clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient) &&
		!watchlist.DoesClientNotSupportWatchListSemantics(client)
}

// scope is the header's description of what is watched.
func scope(ns, selector string) string {
	s := "all namespaces"
	if ns != metav1.NamespaceAll {
		s = "ns " + ns
	}
	if selector != "" {
		s += " · " + selector
	}
	// The namespace may come from the kubeconfig: the header shows it as it is.
	return sanitize.Text(s)
}
