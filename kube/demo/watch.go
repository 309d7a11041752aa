package demo

import (
	"context"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// watches lets the demo engine write no faster than the informers read. The fake clientset's
// object tracker hands every write to each matching watcher's buffered channel and panics with
// "channel full" when one already holds watch.DefaultChanSize (100) undelivered events
// (client-go testing/fixture.go tracker.add and tracker.delete; apimachinery pkg/watch
// RaceFreeFakeWatcher). The buffer size is fixed inside the tracker, so instead of replacing the
// watchers we record them as the informers open them and make each write wait until they have
// room: a write then blocks, as it would against a busy API server, and never panics.
type watches struct {
	mu       sync.Mutex
	watchers map[string][]watcher // by resource, e.g. "pods"
}

// watcher is what the tracker's watchers (*watch.RaceFreeFakeWatcher) offer beyond
// watch.Interface.
type watcher interface {
	watch.Interface
	IsStopped() bool
}

// watchPoll is how often a blocked write looks again. The informers drain their watchers
// within microseconds when scheduled, so the wait is short and rare.
const watchPoll = time.Millisecond

// watchClient installs a watch reactor in front of the fake clientset's own that does what the
// default one does (client-go kubernetes/fake NewClientset) and also records the watcher.
func watchClient(cs *fake.Clientset) *watches {
	d := &watches{watchers: map[string][]watcher{}}
	tracker := cs.Tracker()
	cs.PrependWatchReactor("*", func(action k8stesting.Action) (bool, watch.Interface, error) {
		var opts metav1.ListOptions
		if wa, ok := action.(k8stesting.WatchActionImpl); ok {
			opts = wa.ListOptions
		}
		w, err := tracker.Watch(action.GetResource(), action.GetNamespace(), opts)
		if err != nil {
			return false, nil, err
		}
		if dw, ok := w.(watcher); ok {
			d.mu.Lock()
			d.watchers[action.GetResource().Resource] = append(d.watchers[action.GetResource().Resource], dw)
			d.mu.Unlock()
		}
		return true, w, nil
	})
	return d
}

// wait returns once one write of resource can no longer overflow a watcher: an informer is
// watching it (so no write falls between its list and its watch, which the tracker would replay
// into the new watcher all at once) and every open watcher is at most half full. The engine is
// the only writer and one write adds at most one event per watcher, so half the buffer is a wide
// margin.
func (d *watches) wait(ctx context.Context, resource string) error {
	if d.room(resource) {
		return nil
	}
	t := time.NewTicker(watchPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		if d.room(resource) {
			return nil
		}
	}
}

// room drops stopped watchers (an informer stops its watch when it re-lists or shuts down) and
// reports whether resource has an open watcher and every open watcher has room.
func (d *watches) room(resource string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	open := slices.DeleteFunc(d.watchers[resource], func(w watcher) bool { return w.IsStopped() })
	d.watchers[resource] = open
	for _, w := range open {
		// ResultChan is the tracker's buffered channel itself; len and cap read how full it is.
		if ch := w.ResultChan(); len(ch) > cap(ch)/2 {
			return false
		}
	}
	return len(open) > 0
}
