package kube

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"doomwatch/contract"
	"doomwatch/sanitize"
)

// Fleet is the sources of several clusters, one per kubeconfig context, fanned into one stream of
// batches, each marked with its cluster (contract.Batch.Cluster), handed over together at most once
// per coalescing interval (fanIn). Each cluster has its own client, credentials (an exec
// credential plugin runs once per context: client-go caches its authenticator per rest.Config's
// exec settings), informers, health and RBAC: one that is slow to sync or stops answering delays
// nothing of the others.
type Fleet struct {
	sources  []*Source
	contexts []string
	servers  []string
	out      chan []contract.Batch
	synced   chan struct{}
	fanIn    func()
}

// Join fans sources into one fleet, in their order; contexts and servers name them. The servers
// come from the kubeconfig and are kept sanitised (Servers).
func Join(ctx context.Context, sources []*Source, servers []string) *Fleet {
	f := &Fleet{sources: sources, out: make(chan []contract.Batch), synced: make(chan struct{})}
	for _, s := range servers {
		f.servers = append(f.servers, sanitize.Text(s))
	}
	var interval time.Duration
	for _, s := range sources {
		f.contexts = append(f.contexts, s.Context())
		interval = max(interval, s.interval)
	}
	if len(sources) == 1 {
		interval = 0 // one source's coalescer paces its batches already: nothing to gather
	}
	// The fan-in starts with the first call to Batches, not here: Settle reads each source's
	// own channel, and two readers of one channel would each miss the other's batches.
	f.fanIn = sync.OnceFunc(func() { fanIn(ctx, sources, interval, f.out) })
	go func() {
		for _, s := range sources {
			select {
			case <-s.Synced():
			case <-ctx.Done():
				return
			}
		}
		close(f.synced)
	}()
	return f
}

// Batches delivers the clusters' batches, each marked with its cluster's index: at most one
// delivery per coalescing interval, with what the clusters sent since the previous one, at most
// one batch of each, to be applied together (model.Fleet.ApplyAll). A batch waits at most an
// interval, and each cluster's come in their order. It is closed when every source has stopped.
// Call Settle, if at all, before it.
func (f *Fleet) Batches() <-chan []contract.Batch {
	f.fanIn()
	return f.out
}

// Synced is closed once every cluster has synced.
func (f *Fleet) Synced() <-chan struct{} { return f.synced }

// Sources are the clusters' sources, in the fleet's order.
func (f *Fleet) Sources() []*Source { return f.sources }

// Contexts are the clusters' context names, in the fleet's order.
func (f *Fleet) Contexts() []string { return f.contexts }

// Servers are the clusters' API server addresses ("" for the demo), in the fleet's order,
// sanitised.
func (f *Fleet) Servers() []string { return f.servers }

// Now is the fleet's clock: its first source's (every source of a fleet shares one).
func (f *Fleet) Now() time.Time { return f.sources[0].Now() }

// Err is the first error a source stopped with (Source.Err).
func (f *Fleet) Err() error {
	for _, s := range f.sources {
		if err := s.Err(); err != nil {
			if len(f.sources) > 1 {
				return fmt.Errorf("%s: %w", s.Context(), err)
			}
			return err
		}
	}
	return nil
}

// Scope is what each cluster watches: the same namespace and selector in each, or, when each
// context uses its own default namespace, "ns from each context".
func (f *Fleet) Scope() string {
	s := f.sources[0].Scope()
	for _, o := range f.sources[1:] {
		if o.Scope() != s {
			sel := ""
			if _, after, ok := strings.Cut(s, " · "); ok {
				sel = " · " + after
			}
			return "each context's namespace" + sel
		}
	}
	return s
}

// TailLog serves the log pane for a pod of the cluster named context ("" in a fleet of one):
// Source.TailLog's lines and error, sanitised.
func (f *Fleet) TailLog(ctx context.Context, context, namespace, pod, container string, previous bool, lines int) ([]string, error) {
	i := 0
	if len(f.sources) > 1 {
		i = slices.Index(f.contexts, context)
		if i < 0 {
			return nil, lineErrorf(nil, "no cluster %q", context)
		}
	}
	return f.sources[i].TailLog(ctx, namespace, pod, container, previous, lines)
}

// Source returns the source of the cluster named context, or nil.
func (f *Fleet) Source(context string) *Source {
	if i := slices.Index(f.contexts, context); i >= 0 {
		return f.sources[i]
	}
	return nil
}

// Settle hands every cluster's batches to apply until each has synced and gone quiet, all at
// once (Source.Settle), until ctx ends. It returns one error per cluster, nil for those that
// synced, each one sanitised line (a --once document prints it). apply is called on one
// goroutine at a time.
func (f *Fleet) Settle(ctx context.Context, apply func(contract.Batch)) []error {
	errs := make([]error, len(f.sources))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, s := range f.sources {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.Settle(ctx, func(b contract.Batch) {
				b.Cluster = i
				mu.Lock()
				defer mu.Unlock()
				apply(b)
			})
			errs[i] = oneLine(err)
		}()
	}
	wg.Wait()
	return errs
}

// Contexts resolves --context and --all-contexts to the kubeconfig contexts to watch: --context
// may be one name (as kubectl takes it), a comma list, or globs (path.Match: prod-*), each glob
// matched against the kubeconfig's contexts in their sorted order; --all-contexts is every
// context. Without either, it is the current context: one entry, "" (Connect resolves it).
func (f *Flags) Contexts() ([]string, error) {
	spec := strings.TrimSpace(f.overrides.CurrentContext)
	if !f.allContexts && !strings.ContainsAny(spec, ",*?[") {
		return []string{spec}, nil
	}
	if f.allContexts && spec != "" {
		return nil, fmt.Errorf("--all-contexts and --context %q: give one", spec)
	}
	raw, err := f.loader().RawConfig()
	if err != nil {
		return nil, lineErrorf(err, "loading kubeconfig: %v", err)
	}
	known := make([]string, 0, len(raw.Contexts))
	for name := range raw.Contexts {
		known = append(known, name)
	}
	slices.Sort(known)
	if f.allContexts {
		if len(known) == 0 {
			return nil, fmt.Errorf("--all-contexts: the kubeconfig has no contexts")
		}
		return known, nil
	}
	var out []string
	for _, pat := range strings.Split(spec, ",") {
		pat = strings.TrimSpace(pat)
		if pat == "" {
			return nil, fmt.Errorf("--context %q: an empty name in the list", spec)
		}
		if !strings.ContainsAny(pat, "*?[") {
			if _, ok := raw.Contexts[pat]; !ok {
				return nil, fmt.Errorf("--context: no context %q in the kubeconfig (it has %s)", sanitize.Text(pat), listContexts(known))
			}
			if !slices.Contains(out, pat) {
				out = append(out, pat)
			}
			continue
		}
		if _, err := path.Match(pat, ""); err != nil {
			return nil, fmt.Errorf("--context: bad pattern %q: %v", sanitize.Text(pat), err)
		}
		n := 0
		for _, name := range known {
			if ok, _ := path.Match(pat, name); ok {
				n++
				if !slices.Contains(out, name) {
					out = append(out, name)
				}
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("--context: no context matches %q (the kubeconfig has %s)", sanitize.Text(pat), listContexts(known))
		}
	}
	return out, nil
}

func listContexts(known []string) string {
	if len(known) == 0 {
		return "none"
	}
	const most = 8
	s := make([]string, 0, min(len(known), most))
	for _, k := range known[:min(len(known), most)] {
		s = append(s, sanitize.Text(k))
	}
	if len(known) > most {
		return strings.Join(s, ", ") + fmt.Sprintf(" and %d more", len(known)-most)
	}
	return strings.Join(s, ", ")
}

// ConnectFleet connects to each of contexts (Flags.Contexts) at once. One context is Connect,
// and fails as it does. With several, a cluster that cannot be reached, or refuses us, does not
// stop the others: its source starts all the same, its header line says what is wrong, its
// informers retry on their own with client-go's backoff, and a probe names it unreachable within
// probeEvery+probeTimeout of its going silent (probe.go). Only a context whose kubeconfig entry
// cannot be loaded at all is an error.
func ConnectFleet(ctx context.Context, f *Flags, contexts []string, deadline time.Time, opts Options) (*Fleet, error) {
	if len(contexts) <= 1 {
		s, err := Connect(ctx, f, deadline, opts)
		if err != nil {
			return nil, err
		}
		return Join(ctx, []*Source{s}, []string{s.server}), nil
	}
	trim := newTrimmer() // strings are interned across clusters: they repeat across them too
	sources := make([]*Source, len(contexts))
	servers := make([]string, len(contexts))
	errs := make([]error, len(contexts))
	var wg sync.WaitGroup
	for i, name := range contexts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cf := f.forContext(name)
			o := opts
			o.Context = name
			o.trim = trim
			o.probe = true
			o.keepGoing = true
			s, err := Connect(ctx, cf, deadline, o)
			if err != nil {
				errs[i] = fmt.Errorf("context %s: %w", sanitize.Text(name), err)
				return
			}
			sources[i], servers[i] = s, s.server
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return Join(ctx, sources, servers), nil
}

// forContext is f with --context set to one name.
func (f *Flags) forContext(name string) *Flags {
	c := *f
	c.overrides.CurrentContext = name
	c.allContexts = false
	return &c
}
