package kube

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
)

// TestLookup: an object a manifest names is found through discovery's resource for its kind
// (namespaced or not) and one GET; a missing object is not an error, a kind the cluster does not
// serve is ErrNotServed. The fake clientset stands in for discovery and the dynamic fake for the
// GET: e2e runs wait -f against a real kube-apiserver.
func TestLookup(t *testing.T) {
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"namespace": "shop", "name": "app-config"}}}
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": "shop"}}}
	client := fake.NewClientset()
	client.Resources = []*metav1.APIResourceList{{GroupVersion: "v1", APIResources: []metav1.APIResource{
		{Name: "configmaps", Namespaced: true, Kind: "ConfigMap"},
		{Name: "namespaces", Namespaced: false, Kind: "Namespace"},
		{Name: "namespaces/status", Namespaced: false, Kind: "Namespace"},
	}}}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		{Version: "v1", Resource: "configmaps"}: "ConfigMapList", {Version: "v1", Resource: "namespaces"}: "NamespaceList",
	}, cm, ns)
	src := &Source{clients: clients{typed: client, dynamic: dyn, discovery: client.Discovery()}}
	ctx := context.Background()
	configmaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	namespaces := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	for _, tc := range []struct {
		apiVersion, kind, ns, name string
		want                       Found
		err                        string
	}{
		{"v1", "ConfigMap", "shop", "app-config", Found{Exists: true, Namespaced: true, Resource: configmaps}, ""},
		{"v1", "ConfigMap", "other", "app-config", Found{Namespaced: true, Resource: configmaps}, ""},
		{"v1", "Namespace", "default", "shop", Found{Exists: true, Resource: namespaces}, ""},
		{"v1", "Secret", "shop", "db", Found{}, "Secret db: v1 serves no kind Secret: not served by the cluster"},
		{"widgets.example.com/v1", "Widget", "shop", "w", Found{}, "not served by the cluster"},
		{"a/b/c", "Widget", "shop", "w", Found{}, `apiVersion "a/b/c"`},
	} {
		got, err := src.Lookup(ctx, tc.apiVersion, tc.kind, tc.ns, tc.name)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s %s/%s: error %v, want %q", tc.kind, tc.ns, tc.name, err, tc.err)
			}
			continue
		}
		if (got.Object != nil) != got.Exists || got.Object != nil && got.Object.GetName() != tc.name {
			t.Errorf("%s %s/%s: object %v", tc.kind, tc.ns, tc.name, got.Object)
		}
		got.Object = nil
		if err != nil || got != tc.want {
			t.Errorf("%s %s/%s: %+v, %v; want %+v", tc.kind, tc.ns, tc.name, got, err, tc.want)
		}
	}
	// The demo has no dynamic client: every kind is ErrNotServed there.
	demo := &Source{clients: clients{typed: client, discovery: client.Discovery()}}
	if _, err := demo.Lookup(ctx, "v1", "ConfigMap", "shop", "app-config"); !errors.Is(err, ErrNotServed) {
		t.Errorf("the demo's lookup: %v, want ErrNotServed", err)
	}
}

// TestFollow: Follow delivers an object's changes and its deletion as the informer sees them, and
// an object already gone when it starts as deleted. The dynamic fake stands in for the API
// server's list and watch (its field selectors unapplied: it holds only the followed object).
func TestFollow(t *testing.T) {
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"namespace": "shop", "name": "app-config"}, "data": map[string]any{"v": "1"}}}
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	newDyn := func(objs ...runtime.Object) *dynamicfake.FakeDynamicClient {
		return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{gvr: "ConfigMapList"}, objs...)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	follow := func(dyn *dynamicfake.FakeDynamicClient) <-chan *unstructured.Unstructured {
		seen := make(chan *unstructured.Unstructured, 10)
		src := &Source{clients: clients{dynamic: dyn}}
		src.Follow(ctx, Found{Exists: true, Namespaced: true, Resource: gvr}, "shop", "app-config", func(u *unstructured.Unstructured) { seen <- u },
			func(err error) { t.Errorf("list or watch refused: %v", err) })
		return seen
	}
	next := func(seen <-chan *unstructured.Unstructured, what string) *unstructured.Unstructured {
		t.Helper()
		select {
		case u := <-seen:
			return u
		case <-time.After(10 * time.Second):
			t.Fatalf("no %s", what)
		}
		return nil
	}

	dyn := newDyn(cm.DeepCopy())
	seen := follow(dyn)
	if u := next(seen, "first state"); u == nil || u.GetName() != "app-config" {
		t.Fatalf("first state %v", u)
	}
	changed := cm.DeepCopy()
	changed.Object["data"] = map[string]any{"v": "2"}
	if _, err := dyn.Resource(gvr).Namespace("shop").Update(ctx, changed, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if u := next(seen, "the change"); u == nil || u.Object["data"].(map[string]any)["v"] != "2" {
		t.Fatalf("after the update: %v", u)
	}
	if err := dyn.Resource(gvr).Namespace("shop").Delete(ctx, "app-config", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if u := next(seen, "the deletion"); u != nil {
		t.Fatalf("after the delete: %v", u)
	}

	gone := follow(newDyn())
	if u := next(gone, "the object gone before the list"); u != nil {
		t.Fatalf("an object gone before the list: %v", u)
	}
}

// TestKindFor: a TYPE maps to its kind as kubectl maps it: by plural, singular or short name, by
// kind, qualified by group or by version and group; an unknown one is kubectl's "the server doesn't
// have a resource type", which is ErrNotServed. e2e runs wait TYPE/NAME against a real API server.
func TestKindFor(t *testing.T) {
	client := fake.NewClientset()
	client.Resources = []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "services", SingularName: "service", ShortNames: []string{"svc"}, Namespaced: true, Kind: "Service"},
		}},
		{GroupVersion: "doomwatch.test/v1", APIResources: []metav1.APIResource{
			{Name: "widgets", SingularName: "widget", ShortNames: []string{"wd"}, Namespaced: true, Kind: "Widget"},
		}},
	}
	src := &Source{clients: clients{typed: client, discovery: client.Discovery()}}
	widget := schema.GroupVersionKind{Group: "doomwatch.test", Version: "v1", Kind: "Widget"}
	service := schema.GroupVersionKind{Version: "v1", Kind: "Service"}
	for typ, want := range map[string]schema.GroupVersionKind{
		"widgets": widget, "widget": widget, "wd": widget, "Widget": widget, "widgets.doomwatch.test": widget,
		"widgets.v1.doomwatch.test": widget, "services": service, "svc": service,
	} {
		if got, err := src.KindFor(typ); err != nil || got != want {
			t.Errorf("KindFor(%q) = %v, %v; want %v", typ, got, err, want)
		}
	}
	_, err := src.KindFor("gadgets")
	if err == nil || err.Error() != `the server doesn't have a resource type "gadgets"` || !errors.Is(err, ErrNotServed) {
		t.Errorf("KindFor(gadgets): %v", err)
	}
}
