package kube

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"doomwatch/contract"
	"doomwatch/podrec"
)

// listPageSize is how many pods one page of a paged list holds: large enough that a 150,000-pod
// list is a few hundred requests, small enough that an untrimmed page is a few megabytes.
const listPageSize = 500

// podSync hands the model the pods of the initial list while the list is still arriving, with a
// count and an estimate of the total, instead of all at once when it ends.
//
// An informer hands its handlers nothing until the whole initial list is in: a streamed list
// (WatchList, client-go's default since v1.35) collects every object in a temporary store and
// replaces the informer's store at the end (client-go tools/cache/reflector.go watchList), and a
// plain list is one call that returns everything. What does see each pod as it is decoded is the
// transform, which runs as the streamed list fills the temporary store, and for a plain list we
// make the list call ourselves, page by page (list). So the pod informer's transform delivers each
// pod to the coalescer as soon as it is trimmed, and remembers it:
//
//   - when the informer's store is then replaced with the same objects, client-go transforms
//     them again: the transform knows them and returns them as they are, and the handler skips
//     the adds that follow, as the model already has them;
//   - once the handler has been handed the initial list (finish), pods delivered but not in the
//     informer's store (a streamed list that failed half-way and was retried after some pods were
//     deleted) are deleted, and the bookkeeping goes.
//
// The estimate of the total comes from the API server's remainingItemCount: a paged list's pages
// carry it, and for a streamed list, which does not, from a one-item list made at the start
// (probe). The server leaves it out when a label selector is set, and the count is then shown
// without a total.
type podSync struct {
	co     *coalescer
	health *healthTracker
	// informer is the pod informer; reg its handler's registration, set before the informer starts.
	informer cache.SharedIndexInformer
	reg      cache.ResourceEventHandlerRegistration

	mu sync.Mutex
	// sent holds the object last delivered for each key while the initial list arrives; nil once
	// done.
	sent map[objKey]*podrec.Record
	// pending holds the delivered objects whose informer add is still to come.
	pending map[*podrec.Record]struct{}
	// listed is set once the initial list is complete: the informer's own events take over.
	listed bool
	done   bool
}

type objKey struct{ ns, name string }

func (k objKey) String() string { return k.ns + "/" + k.name }

func newPodSync(co *coalescer, health *healthTracker) *podSync {
	return &podSync{co: co, health: health, sent: make(map[objKey]*podrec.Record), pending: make(map[*podrec.Record]struct{})}
}

// transform wraps the pod informer's transform.
func (s *podSync) transform(next cache.TransformFunc) cache.TransformFunc {
	return func(obj any) (any, error) {
		if s.replaying(obj) {
			return obj, nil
		}
		out, err := next(obj)
		if err != nil {
			return nil, err
		}
		if p, ok := out.(*podrec.Record); ok {
			s.deliver(p)
		}
		return out, nil
	}
}

// replaying reports an object this transform already returned during the initial list: client-go
// is replacing the informer's store with the list. From then on the informer's events take over.
func (s *podSync) replaying(obj any) bool {
	p, ok := obj.(*podrec.Record)
	if !ok {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done || s.sent[objKey{p.GetNamespace(), p.GetName()}] != p {
		return false
	}
	s.listed = true
	return true
}

// deliver hands one pod of the initial list to the coalescer.
func (s *podSync) deliver(p *podrec.Record) {
	k := objKey{p.GetNamespace(), p.GetName()}
	s.mu.Lock()
	// An empty list replaces the store without passing through here; the informer has synced
	// right after, before the first watch event.
	if !s.listed && s.informer.HasSynced() {
		s.listed = true
	}
	if s.done || s.listed {
		s.mu.Unlock()
		return
	}
	old, seen := s.sent[k]
	if seen && old == p {
		s.mu.Unlock()
		return
	}
	if seen {
		// A key delivered twice while listing belongs to a list that failed and is being retried:
		// the first attempt's object never reaches the informer.
		delete(s.pending, old)
	}
	s.sent[k] = p
	s.pending[p] = struct{}{}
	s.mu.Unlock()
	delta := 1
	if seen {
		delta = 0
	}
	s.co.put(pendingKey{contract.KindPod, k.String()}, p, delta)
}

// delivered is the handler's filter: it reports, once, an object delivered while listing.
func (s *podSync) delivered(obj any) bool {
	p, ok := obj.(*podrec.Record)
	if !ok {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.pending[p]; !ok {
		return false
	}
	delete(s.pending, p)
	if len(s.pending) == 0 {
		s.pending = make(map[*podrec.Record]struct{}) // let the initial list's buckets go
	}
	return true
}

// gone is told of every pod delete before the coalescer.
func (s *podSync) gone(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	p, ok := obj.(*podrec.Record)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pending, p)
	if s.sent != nil {
		delete(s.sent, objKey{p.GetNamespace(), p.GetName()})
	}
}

// finish ends the initial list once the handler has been handed all of it: it deletes what was
// delivered but is not in the informer's store and drops the bookkeeping. It is called before
// every health poll.
func (s *podSync) finish() {
	s.mu.Lock()
	if s.done || s.reg == nil || !s.reg.HasSynced() {
		s.mu.Unlock()
		return
	}
	keys := make([]string, 0, len(s.sent))
	for k := range s.sent {
		keys = append(keys, k.String())
	}
	s.sent, s.done = nil, true
	s.mu.Unlock()
	store := s.informer.GetStore()
	s.co.deleteMissing(contract.KindPod, keys, func(key string) bool {
		_, exists, err := store.GetByKey(key)
		return exists || err != nil
	})
}

// hasSynced is the pod kind's sync state for health: finish has run.
func (s *podSync) hasSynced() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done
}

// podPager lists one page of pods: a *corev1.PodList from the typed client, or a metav1.List of
// records from the record client (podcodec.go).
type podPager func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error)

// list is the pod informer's list call, used when the client or server cannot stream lists. It
// pages through the pods itself, whatever page size the reflector asked for, and trims each page
// as it arrives (transform is the informer's, which also delivers the pods): client-go would
// otherwise hold the whole untrimmed list before trimming any of it, and the API server's watch
// cache ignores the page size the reflector asks for at resourceVersion "0". Pages after the first
// are read at the first page's resource version (the continue token carries it), so the result is
// one consistent list, which the reflector watches from.
func (s *podSync) list(ctx context.Context, o metav1.ListOptions, page podPager, transform cache.TransformFunc) (runtime.Object, error) {
	switch {
	case o.ResourceVersion == "0":
		// "Any version" would be served whole from the watch cache; the most recent is paged.
		o.ResourceVersion, o.ResourceVersionMatch = "", ""
	case o.ResourceVersion != "" && o.ResourceVersionMatch == "":
		// What the reflector means by a relist at its last version, unpaged; paged, an unset
		// match would mean exactly that version.
		o.ResourceVersionMatch = metav1.ResourceVersionMatchNotOlderThan
	}
	o.Limit, o.Continue = listPageSize, ""
	out := &metav1.List{}
	for {
		obj, err := page(ctx, o)
		if err != nil {
			return nil, err
		}
		lm, items, err := listParts(obj)
		if err != nil {
			return nil, err
		}
		if out.ResourceVersion == "" {
			out.ResourceVersion = lm.GetResourceVersion()
		}
		for _, item := range items {
			obj, err := transform(item)
			if err != nil {
				return nil, err
			}
			// RawExtension items are handed to the reflector as they are (apimachinery meta
			// ExtractListWithAlloc), so the informer stores the objects delivered here.
			out.Items = append(out.Items, runtime.RawExtension{Object: obj.(runtime.Object)})
		}
		if total, ok := remaining(lm); ok {
			s.health.estimate(len(out.Items) + total)
		}
		if lm.GetContinue() == "" {
			return out, nil
		}
		o.Continue, o.ResourceVersion, o.ResourceVersionMatch = lm.GetContinue(), "", ""
	}
}

// listParts is a page's list metadata and items.
func listParts(obj runtime.Object) (metav1.ListInterface, []runtime.Object, error) {
	switch l := obj.(type) {
	case *corev1.PodList:
		items := make([]runtime.Object, len(l.Items))
		for i := range l.Items {
			items[i] = &l.Items[i]
		}
		return l, items, nil
	case *metav1.List:
		items := make([]runtime.Object, len(l.Items))
		for i := range l.Items {
			if items[i] = l.Items[i].Object; items[i] == nil {
				return nil, nil, fmt.Errorf("listing pods: an item came undecoded")
			}
		}
		return l, items, nil
	}
	return nil, nil, fmt.Errorf("listing pods: unexpected %T", obj)
}

// remaining is how many pods the list holds past this page, when known.
func remaining(l metav1.ListInterface) (int, bool) {
	switch {
	case l.GetRemainingItemCount() != nil:
		return int(*l.GetRemainingItemCount()), true
	case l.GetContinue() == "":
		return 0, true
	}
	return 0, false
}

// probe estimates the initial list's size from a one-item list, for a streamed list, which
// carries no count. A failure only leaves the total unknown: the informer reports its own.
func (s *podSync) probe(ctx context.Context, page podPager, selector string) {
	obj, err := page(ctx, metav1.ListOptions{Limit: 1, LabelSelector: selector})
	if err != nil {
		return
	}
	lm, items, err := listParts(obj)
	if err != nil {
		return
	}
	if n, ok := remaining(lm); ok {
		s.health.estimate(len(items) + n)
	}
}
