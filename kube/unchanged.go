package kube

import (
	"reflect"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"doomwatch/podrec"
)

// keepStored returns the object the informer already holds under obj's key when obj, trimmed,
// differs from it in nothing but the resource version, and obj otherwise. An update that changed
// only what the transform drops (a node's heartbeat, a pod's IP, an annotation, any update of a
// kind kept as a stub) then costs nothing past this point: the informer keeps the object it has,
// so the model's pointer to it stays the only copy, and the handler, handed the same object as
// old and new, drops the update (coalescer.podHandler), so no batch follows. (client-go would
// not: an update that keeps the resource version counts as a resync, but a handler without a
// resync period is "syncing" from the start and is never recomputed, so it gets them all;
// tools/cache/shared_informer.go sharedProcessor.addListener and shouldResync.)
//
// obj must be the transform's fresh output: it is compared by setting its resource version to
// the stored one for the comparison.
func keepStored(store cache.Store, obj any) any {
	cur, ok := obj.(metav1.Object)
	if !ok {
		return obj
	}
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		return obj
	}
	old, exists, err := store.GetByKey(key)
	if err != nil || !exists || reflect.TypeOf(old) != reflect.TypeOf(obj) {
		return obj
	}
	if r, ok := obj.(*podrec.Record); ok {
		if r.SameContent(old.(*podrec.Record)) {
			return old
		}
		return obj
	}
	stored := old.(metav1.Object)
	rv := cur.GetResourceVersion()
	cur.SetResourceVersion(stored.GetResourceVersion())
	same := equality.Semantic.DeepEqual(old, obj)
	cur.SetResourceVersion(rv)
	if same {
		return old
	}
	return obj
}
