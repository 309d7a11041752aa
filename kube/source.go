package kube

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
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
	// The workload kinds, one row each (kinds.go); a custom resource's only where it is served.
	cs := clients{typed: client, dynamic: opts.dynamic, discovery: client.Discovery()}
	if opts.restConfig != nil {
		if cs.dynamic == nil {
			dyn, err := dynamic.NewForConfig(opts.restConfig)
			if err != nil {
				return nil, fmt.Errorf("making the dynamic client: %w", err)
			}
			cs.dynamic = dyn
		}
		dcfg := rest.CopyConfig(opts.restConfig)
		dcfg.Timeout = opts.requestTimeout
		dc, err := discovery.NewDiscoveryClientForConfig(dcfg)
		if err != nil {
			return nil, fmt.Errorf("making the discovery client: %w", err)
		}
		cs.discovery = dc
	}
	var optional []*workloadRow
	for i := range workloadRows {
		r := &workloadRows[i]
		if contract.Info(r.kind).Optional {
			optional = append(optional, r)
			continue
		}
		list, watch := r.client(cs, ns)
		wire = append(wire, wired{kind: r.kind, obj: r.newObject(), list: list, watch: watch})
	}
	wire = append(wire, wired{contract.KindEvent, &corev1.Event{}, warnings,
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return core.Events(ns).List(ctx, o)
		},
		core.Events(ns).Watch})
	// wireOne makes w's informer, reporting to ks; synced receives what says it has synced.
	wireOne := func(w wired, ks *kindState, synced func(func() bool)) error {
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
					health.callFailed(ks, err)
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
					health.callFailed(ks, err)
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
			return fmt.Errorf("setting %s transform: %w", w.kind.Resource(), err)
		}
		if err := inf.SetWatchErrorHandlerWithContext(health.watchErrorHandler(ks)); err != nil {
			return fmt.Errorf("setting %s watch error handler: %w", w.kind.Resource(), err)
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
			return fmt.Errorf("adding %s handler: %w", w.kind.Resource(), err)
		}
		// Synced once the handler, not only the informer, has had the whole list: the batch that
		// says synced then carries all of it.
		synced(reg.HasSynced)
		if w.kind == contract.KindPod {
			pods.reg = reg
			synced(pods.hasSynced)
		}
		return nil
	}
	for _, w := range wire {
		ks := health.add(w.kind)
		if err := wireOne(w, ks, func(f func() bool) { ks.hasSynced = f }); err != nil {
			return nil, err
		}
	}
	// A custom resource is watched where the API server serves it, which discovery says. It is
	// asked in the background, so that a slow answer does not hold up the other kinds' lists, but
	// the source is not synced until it has answered: a gate started at once must not call a
	// Rollout missing because it asked before discovery did.
	for _, r := range optional {
		ks := health.add(r.kind)
		var late atomic.Pointer[func() bool]
		ks.hasSynced = func() bool {
			f := late.Load()
			return f != nil && (*f)()
		}
		done := func(f func() bool) { late.Store(&f) }
		go func() {
			for {
				served, err := r.served(cs)
				if err == nil {
					health.ok(ks)
					if !served {
						done(func() bool { return true })
						return
					}
					list, watch := r.client(cs, ns)
					if err := wireOne(wired{kind: r.kind, obj: r.newObject(), list: list, watch: watch}, ks, done); err != nil {
						health.fail(ks, err)
						done(func() bool { return true })
						return
					}
					factory.Start(ctx.Done())
					return
				}
				health.callFailed(ks, fmt.Errorf("discovery: %w", err))
				select {
				case <-ctx.Done():
					return
				case <-time.After(discoveryRetry):
				}
			}
		}()
	}
	if opts.probe && opts.restConfig != nil {
		go probe(ctx, opts.restConfig, health)
	}
	if streamsLists(client) {
		go pods.probe(ctx, podPage, opts.Selector)
	}

	src := &Source{
		ctx:              ctx,
		out:              make(chan contract.Batch),
		now:              now,
		context:          opts.Context,
		scope:            scope(ns, opts.Selector),
		namespace:        ns,
		defaultNamespace: opts.defaultNamespace,
		client:           client,
		logs:             opts.Logs,
		interval:         interval,
		synced:           make(chan struct{}),
		clients:          cs,
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

// discoveryRetry is how long the source waits before asking discovery again after an error.
const discoveryRetry = 2 * time.Second

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
