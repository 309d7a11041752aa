// Package kube is, with the demo cluster in kube/demo, the only package that imports client-go.
// It runs typed informers (against a real cluster, or against the demo's fake clientset: the same
// path), turns their events into coalesced contract batches and reports connection health as data.
package kube

import (
	"context"
	"errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sync"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"doomwatch/contract"
)

// Options scope and pace a Source.
type Options struct {
	// Namespace scopes the informers ("" with AllNamespaces for every namespace). Connect fills it
	// in from the kubeconfig when it is empty.
	Namespace     string
	AllNamespaces bool
	// Selector is a label selector for pods (kubectl's -l).
	Selector string
	// Interval is the coalescing interval: at most one batch per interval (default 100ms).
	Interval time.Duration
	// Now is the source's clock (the demo's simulated clock); nil means time.Now.
	Now func() time.Time
	// Context is the kubeconfig context name shown in the header ("demo" for the demo).
	Context string
	// Logs, when set, serves TailLog in place of the API server's pods/log: the demo's fake
	// clientset answers every log request with the same placeholder, so the demo brings its own.
	Logs LogFunc

	// restConfig, set by Connect, is the real cluster's connection: the pod informer then decodes
	// pods straight into records with a client of its own (podcodec.go).
	restConfig *rest.Config
	// defaultNamespace, set by Connect, is -n or the kubeconfig's namespace, whatever is watched.
	defaultNamespace string
	// requestTimeout, set by Connect, bounds each discovery request (--request-timeout, as
	// kubectl's discovery): restConfig has none, for its watches' sake.
	requestTimeout time.Duration
	// dynamic, when set, is the client custom resources are watched with (tests); otherwise one
	// is made from restConfig, and without either none are.
	dynamic dynamic.Interface
	// trim, when set, is the trimmer shared by a fleet's sources, so strings are interned across
	// clusters (ConnectFleet).
	trim *trimmer
	// probe starts the reachability probe (probe.go); keepGoing starts the informers without
	// Connect's check, whose failure would otherwise be the source's: set for a fleet's clusters,
	// where one that does not answer must not hold up the others.
	probe, keepGoing bool
}

// Source runs informers and hands the model coalesced batches.
type Source struct {
	// ctx is the context the source runs under; its cause says why the source stopped.
	ctx     context.Context
	out     chan contract.Batch
	now     func() time.Time
	context string
	scope   string
	// namespace is the namespace watched, "" for all; defaultNamespace is -n or the kubeconfig's.
	namespace, defaultNamespace string
	// client serves TailLog, or logs when set (Options.Logs).
	client kubernetes.Interface
	logs   LogFunc
	// interval is the coalescing interval, which paces Settle.
	interval time.Duration
	// synced is closed once every informer that is not forbidden has synced.
	synced chan struct{}
	// server is the API server's address ("" for the demo).
	server string
	// clients serve Lookup: discovery and the dynamic client (none for the demo); served caches
	// discovery's answer per group version (*metav1.APIResourceList).
	clients clients
	served  sync.Map
	// mapper maps wait's TYPEs to kinds (KindFor), made from discovery on first use, once.
	mapperOnce sync.Once
	mapper     meta.RESTMapper
	mapperErr  error
}

// Start starts informers on client and returns at once; batches flow on Batches() until ctx ends.
// Both a real cluster (via Connect) and the demo cluster go through here.
func Start(ctx context.Context, client kubernetes.Interface, opts Options) (*Source, error) {
	return start(ctx, client, opts)
}

// Batches delivers coalesced batches, at most one per interval. It is closed when the source stops.
func (s *Source) Batches() <-chan contract.Batch { return s.out }

// Synced is closed once every informer that RBAC does not forbid has handed over its initial list:
// the end of the start's burst of work and memory.
func (s *Source) Synced() <-chan struct{} { return s.synced }

// Err tells why the source stopped on its own, such as the demo engine failing: after Batches is
// closed, a non-nil Err is an error to report. It is nil while the source runs and when it stopped
// because its context was cancelled or timed out.
func (s *Source) Err() error {
	cause := context.Cause(s.ctx)
	if cause == nil || errors.Is(cause, context.Canceled) || errors.Is(cause, context.DeadlineExceeded) {
		return nil
	}
	return cause
}

// Now is the source's clock: time.Now for a real cluster, simulated time for the demo.
func (s *Source) Now() time.Time { return s.now() }

// Context is the kubeconfig context name ("demo" for the demo cluster).
func (s *Source) Context() string { return s.context }

// Namespace is the namespace the source watches, "" when it watches all of them.
func (s *Source) Namespace() string { return s.namespace }

// DefaultNamespace is -n, else the kubeconfig context's namespace, whichever namespaces are
// watched: where kubectl puts a manifest's object that names none. The namespace watched for a
// source Connect did not make (the demo).
func (s *Source) DefaultNamespace() string {
	if s.defaultNamespace == "" {
		return s.namespace
	}
	return s.defaultNamespace
}

// Scope describes the namespace scope and selector, e.g. "ns default · app=web" or "all namespaces".
func (s *Source) Scope() string { return s.scope }
