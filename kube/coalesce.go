package kube

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"doomwatch/contract"
	"doomwatch/podrec"
)

// pendingKey identifies one object across kinds.
type pendingKey struct {
	kind contract.Kind
	key  string // namespace/name, or name for nodes
}

// change is the latest thing known about one key since the last batch: an object, or a delete.
type change struct {
	pendingKey
	obj any // nil for a delete
}

// coalescer collects informer events between batches. Handlers never block on the consumer: they
// only take a short lock to overwrite the key's entry, so the latest object per key wins and a
// slow consumer only makes the next batch larger.
type coalescer struct {
	mu    sync.Mutex
	index map[pendingKey]int // position in changes
	// changes keeps first-seen order so batches are deterministic for a deterministic event order.
	changes []change
	// notify is signalled (never blocking) when changes go from empty to non-empty.
	notify chan struct{}
	// onEvent is called under mu for every event, to feed connection health.
	onEvent func(kind contract.Kind, delta int)
}

// shrinkAbove is the size past which take replaces the index instead of clearing it: a Go map
// keeps its buckets when cleared, and the initial list of a large cluster would otherwise pin an
// index of every pod for the life of the process.
const shrinkAbove = 4096

func newCoalescer() *coalescer {
	return &coalescer{index: make(map[pendingKey]int), notify: make(chan struct{}, 1)}
}

// put records the latest state of one key; obj nil means deleted. delta is +1 for an add, -1 for a
// delete and 0 for an update, for the pod counter in health.
func (c *coalescer) put(k pendingKey, obj any, delta int) {
	c.mu.Lock()
	c.putLocked(k, obj, delta)
	c.mu.Unlock()
	c.signal()
}

func (c *coalescer) putLocked(k pendingKey, obj any, delta int) {
	if i, ok := c.index[k]; ok {
		// An update after a delete re-adds; a delete after an update deletes: the last event wins.
		c.changes[i].obj = obj
	} else {
		c.index[k] = len(c.changes)
		c.changes = append(c.changes, change{pendingKey: k, obj: obj})
	}
	if c.onEvent != nil {
		c.onEvent(k.kind, delta)
	}
}

func (c *coalescer) signal() {
	select {
	case c.notify <- struct{}{}:
	default:
	}
}

// take returns the pending changes and starts a new set.
func (c *coalescer) take() []change {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.changes) == 0 {
		return nil
	}
	out := c.changes
	c.changes = nil
	if len(c.index) > shrinkAbove {
		c.index = make(map[pendingKey]int)
	} else {
		clear(c.index)
	}
	return out
}

// deleteMissing records a delete for each key that exists reports gone. It holds the lock while
// asking, so that an informer event adding one of the keys meanwhile is recorded after the delete
// (informers update their store before calling the handlers) and wins.
func (c *coalescer) deleteMissing(kind contract.Kind, keys []string, exists func(key string) bool) {
	c.mu.Lock()
	for _, key := range keys {
		if !exists(key) {
			c.putLocked(pendingKey{kind, key}, nil, -1)
		}
	}
	c.mu.Unlock()
	c.signal()
}

// handler returns the informer event handler for one kind.
func (c *coalescer) handler(kind contract.Kind) cache.ResourceEventHandler {
	return c.podHandler(kind, nil, nil)
}

// podHandler is handler with podSync's hooks: delivered reports objects already handed over
// while the list was arriving, whose add or update is skipped; gone is told of every delete
// first.
func (c *coalescer) podHandler(kind contract.Kind, delivered func(obj any) bool, gone func(obj any)) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if delivered == nil || !delivered(obj) {
				c.onAdd(kind, obj)
			}
		},
		UpdateFunc: func(old, obj any) {
			// The same object again: the transform found nothing changed (keepStored).
			if old == obj {
				return
			}
			if delivered == nil || !delivered(obj) {
				c.onUpdate(kind, obj)
			}
		},
		DeleteFunc: func(obj any) {
			if gone != nil {
				gone(obj)
			}
			c.onDelete(kind, obj)
		},
	}
}

func (c *coalescer) onAdd(kind contract.Kind, obj any) {
	if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
		c.put(pendingKey{kind, key}, obj, 1)
	}
}

func (c *coalescer) onUpdate(kind contract.Kind, obj any) {
	if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
		c.put(pendingKey{kind, key}, obj, 0)
	}
}

// onDelete handles both a plain delete and cache.DeletedFinalStateUnknown, which the informer hands
// over when the watch missed the delete and a relist found the object gone: its key is all we need.
func (c *coalescer) onDelete(kind contract.Kind, obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return
	}
	c.put(pendingKey{kind, key}, nil, -1)
}

// toBatch turns changes into a contract.Batch. Objects of an unexpected type are skipped.
func toBatch(changes []change) contract.Batch {
	var b contract.Batch
	for _, ch := range changes {
		if ch.obj == nil {
			ns, name, err := cache.SplitMetaNamespaceKey(ch.key)
			if err != nil {
				continue
			}
			b.Deletes = append(b.Deletes, contract.Ref{Kind: ch.kind, Namespace: ns, Name: name})
			continue
		}
		switch o := ch.obj.(type) {
		case *podrec.Record:
			b.Pods = append(b.Pods, o)
		case *corev1.Node:
			b.Nodes = append(b.Nodes, o)
		case *corev1.Event:
			b.Events = append(b.Events, o)
		case metav1.Object:
			// Every other kind is a workload kind, carried with its kind from the informer's row.
			b.Workloads = append(b.Workloads, contract.Object{Kind: ch.kind, Obj: o})
		}
	}
	return b
}

// run flushes at most one batch per interval onto out until stop closes. While
// the consumer has not taken the previous batch, new events keep coalescing in c; nothing is
// dropped and the handlers never wait. health returns the current health and whether it changed
// since the last call.
//
// Health is polled every interval until the informers have synced (HasSynced is not an event);
// after that the health tracker signals its changes, and a poll every syncedPoll is only a
// safety net, so an idle dashboard is not woken ten times a second.
func (c *coalescer) run(stop <-chan struct{}, out chan<- contract.Batch, interval time.Duration, health func() (contract.Health, bool)) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	var last time.Time
	slow := false
	for {
		// Wait for something to send: changes (notify) or a health change (found on a tick).
		select {
		case <-stop:
			return
		case <-c.notify:
		case <-ticker.C:
		}
		// Hold until the interval since the last batch has passed, so a burst becomes one batch.
		if wait := interval - time.Since(last); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-stop:
				t.Stop()
				return
			case <-t.C:
			}
		}
		// Health first: once it says synced, every listed object is already among the changes.
		h, changed := health()
		changes := c.take()
		if len(changes) == 0 && !changed {
			continue
		}
		b := toBatch(changes)
		// Every batch with changes carries health: its LastEvent moved.
		b.Health = &h
		select {
		case <-stop:
			return
		case out <- b:
			last = time.Now()
		}
		if h.Synced && !slow {
			slow = true
			ticker.Reset(max(interval, syncedPoll))
		}
	}
}

// syncedPoll is how often the coalescer polls health once the informers have synced.
const syncedPoll = 5 * time.Second
