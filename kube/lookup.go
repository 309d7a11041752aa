package kube

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"

	"doomwatch/sanitize"
)

// ErrNotServed is the error of a manifest's kind the API server does not serve: its group and
// version are unknown to discovery, or they do not hold the kind (a CRD not installed).
var ErrNotServed = errors.New("not served by the cluster")

// Found is what Lookup found of one object named in a manifest.
type Found struct {
	// Exists says the object is in the cluster.
	Exists bool
	// Namespaced says its kind is namespaced: a cluster-scoped object (a Namespace, a CRD, a
	// ClusterRole) is looked up without one, as kubectl does.
	Namespaced bool
	// Resource is the kind's resource, as discovery serves it ({"", "v1", "configmaps"}).
	Resource schema.GroupVersionResource
	// Object is the object as the GET returned it, nil when it does not exist.
	Object *unstructured.Unstructured
}

// Lookup finds an object a manifest names: discovery maps its apiVersion and kind to a resource,
// as kubectl's RESTMapper does (one request per group version), and one GET says whether the
// object exists. It only reads (get on the resource). Names are the manifest's, unsanitised; the
// error's text is one sanitised line.
func (s *Source) Lookup(ctx context.Context, apiVersion, kind, namespace, name string) (Found, error) {
	if s.clients.discovery == nil || s.clients.dynamic == nil {
		return Found{}, fmt.Errorf("%s: the demo cluster serves only the kinds it simulates: %w", sanitize.Text(kind), ErrNotServed)
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return Found{}, fmt.Errorf("apiVersion %q: %w", sanitize.Text(apiVersion), err)
	}
	// One discovery request per group version and source: a manifest set names few.
	var list *metav1.APIResourceList
	if v, ok := s.served.Load(gv.String()); ok {
		list = v.(*metav1.APIResourceList)
	} else if list, err = s.clients.discovery.ServerResourcesForGroupVersion(gv.String()); err == nil {
		s.served.Store(gv.String(), list)
	}
	if apierrors.IsNotFound(err) {
		return Found{}, fmt.Errorf("%s %s: no API group version %s: %w", sanitize.Text(kind), sanitize.Text(name), sanitize.Text(gv.String()), ErrNotServed)
	}
	if err != nil {
		return Found{}, oneLine(fmt.Errorf("discovery of %s: %w", sanitize.Text(gv.String()), err))
	}
	for _, r := range list.APIResources {
		// Subresources (deployments/status) carry their parent's kind.
		if r.Kind != kind || strings.Contains(r.Name, "/") {
			continue
		}
		f := Found{Namespaced: r.Namespaced, Resource: gv.WithResource(r.Name)}
		obj, err := s.get(ctx, f, namespace, name)
		switch {
		case err == nil:
			f.Exists, f.Object = true, obj
		case apierrors.IsNotFound(err):
		default:
			return f, oneLine(fmt.Errorf("getting %s %s: %w", r.Name, sanitize.Text(name), err))
		}
		return f, nil
	}
	return Found{}, fmt.Errorf("%s %s: %s serves no kind %s: %w", sanitize.Text(kind), sanitize.Text(name), sanitize.Text(gv.String()), sanitize.Text(kind), ErrNotServed)
}

// Follow watches one object Lookup found until ctx ends: an informer on its resource narrowed to
// its name by a field selector (metadata.name, which every resource serves), so the API server
// sends nothing else. onChange gets each state of it as the informer delivers it, and nil once it
// is deleted; the informer re-lists and re-watches on its own, as the others do. onError gets a
// refusal of its list or watch (RBAC that grants get but not list or watch), which would otherwise
// retry for ever in silence; its text is one sanitised line. The object is the API's, unsanitised.
func (s *Source) Follow(ctx context.Context, f Found, namespace, name string, onChange func(*unstructured.Unstructured), onError func(error)) {
	if !f.Namespaced {
		namespace = metav1.NamespaceNone
	}
	inf := dynamicinformer.NewFilteredDynamicInformer(s.clients.dynamic, f.Resource, namespace, 0, cache.Indexers{},
		func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
		})
	changed := func(obj any) {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			onChange(u)
		}
	}
	_, _ = inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    changed,
		UpdateFunc: func(_, obj any) { changed(obj) },
		DeleteFunc: func(any) { onChange(nil) },
	})
	_ = inf.Informer().SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
		if apierrors.IsForbidden(err) || apierrors.IsMethodNotSupported(err) {
			onError(oneLine(fmt.Errorf("list and watch %s %s: %w", f.Resource.GroupResource(), sanitize.Text(name), err)))
		}
		cache.DefaultWatchErrorHandler(ctx, r, err)
	})
	go inf.Informer().RunWithContext(ctx)
	// An object deleted between Lookup's GET and the informer's list is never added, so never
	// deleted either. But an empty store once synced may also be a list served from the API
	// server's watch cache, which can lag the GET: a fresh GET says which.
	go func() {
		if !cache.WaitForCacheSync(ctx.Done(), inf.Informer().HasSynced) || len(inf.Informer().GetStore().List()) > 0 {
			return
		}
		if _, err := s.get(ctx, f, namespace, name); apierrors.IsNotFound(err) {
			onChange(nil)
		}
	}()
}

// KindFor maps a TYPE as kubectl takes it (a resource's plural, singular or short name, or its
// kind, optionally qualified by group, or by version and group: "widgets", "widget.example.com",
// "deployments.v1.apps") to the kind the API server serves for it, as kubectl's resource builder
// does (k8s.io/cli-runtime pkg/resource/builder.go mappingFor): through discovery's RESTMapper with
// the short names expanded. Discovery reads every group's resources once per Source, on the first
// TYPE (wait's arguments are mapped together, before the wait starts). The
// error is kubectl's for a type the server does not serve ("the server doesn't have a resource type
// \"gadgets\""), which is an ErrNotServed.
func (s *Source) KindFor(typ string) (schema.GroupVersionKind, error) {
	if s.clients.discovery == nil {
		return schema.GroupVersionKind{}, fmt.Errorf("%s: the demo cluster serves only the kinds it simulates: %w", sanitize.Text(typ), ErrNotServed)
	}
	s.mapperOnce.Do(func() {
		// Cached, as kubectl's discovery is: the short-name expander asks on every TYPE.
		cached := memory.NewMemCacheClient(s.clients.discovery)
		groups, err := restmapper.GetAPIGroupResources(cached)
		if err != nil && len(groups) == 0 {
			s.mapperErr = oneLine(fmt.Errorf("discovery: %w", err))
			return
		}
		s.mapper = restmapper.NewShortcutExpander(restmapper.NewDiscoveryRESTMapper(groups), cached, nil)
	})
	if s.mapperErr != nil {
		return schema.GroupVersionKind{}, s.mapperErr
	}
	mapper := s.mapper
	full, gr := schema.ParseResourceArg(strings.ToLower(typ))
	if full != nil {
		if gvk, err := mapper.KindFor(*full); err == nil {
			return gvk, nil
		}
	}
	if gvk, err := mapper.KindFor(gr.WithVersion("")); err == nil {
		return gvk, nil
	}
	fullKind, gk := schema.ParseKindArg(typ)
	if fullKind != nil {
		if m, err := mapper.RESTMapping(fullKind.GroupKind(), fullKind.Version); err == nil {
			return m.GroupVersionKind, nil
		}
	}
	if m, err := mapper.RESTMapping(gk); err == nil {
		return m.GroupVersionKind, nil
	}
	return schema.GroupVersionKind{}, notServed(fmt.Sprintf("the server doesn't have a resource type %q", sanitize.Text(gr.Resource)))
}

// notServed is an ErrNotServed in its own words: kubectl's, for a TYPE.
type notServed string

func (e notServed) Error() string        { return string(e) }
func (e notServed) Is(target error) bool { return target == ErrNotServed }

// get is one GET of the object name of f's resource, in namespace when the resource is namespaced.
func (s *Source) get(ctx context.Context, f Found, namespace, name string) (*unstructured.Unstructured, error) {
	res := s.clients.dynamic.Resource(f.Resource)
	if f.Namespaced {
		return res.Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	}
	return res.Get(ctx, name, metav1.GetOptions{})
}

// crdResource is the resource of CustomResourceDefinitions.
var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// CRDAnnotations are the annotations of the CustomResourceDefinition that defines resource, as
// one GET reads them (Krane's krane.shopify.io/instance-rollout-conditions and instance-timeout):
// ok is false when the resource is not a custom one (no CRD of that name), and when the CRD may not
// be read. The values are the API's, unsanitised.
func (s *Source) CRDAnnotations(ctx context.Context, resource schema.GroupVersionResource) (annotations map[string]string, ok bool) {
	if s.clients.dynamic == nil || resource.Group == "" {
		return nil, false
	}
	crd, err := s.clients.dynamic.Resource(crdResource).Get(ctx, resource.Resource+"."+resource.Group, metav1.GetOptions{})
	if err != nil {
		return nil, false
	}
	return crd.GetAnnotations(), true
}
