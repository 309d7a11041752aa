package kube

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"doomwatch/sanitize"
)

// DefaultRequestTimeout bounds the connection check when --request-timeout is unset or zero, so
// doomwatch never hangs on a server that does not answer (kubectl waits forever by default).
const DefaultRequestTimeout = 10 * time.Second

// Connect resolves kubectl's flags (--kubeconfig, --context, -n, --request-timeout, the KUBECONFIG
// environment variable and in-cluster config, with kubectl's precedence), checks before deadline
// that the API server answers and lets us list pods in the scope, then starts a Source.
//
// The deadline is the caller's, so that one --request-timeout bounds everything it covers (this
// check and --once's Settle) rather than each part in turn; zero means the request timeout from
// now. The informers themselves have no deadline: they run until ctx ends.
//
// opts.Namespace and opts.Context are filled in from the kubeconfig. doomwatch only gets, lists and
// watches: it never writes to the cluster.
func Connect(ctx context.Context, f *Flags, deadline time.Time, opts Options) (*Source, error) {
	loader := f.loader()
	if noConfig(f, loader) {
		// client-go would fall back to http://localhost:8080, which is never what was meant.
		return nil, noConfigError(f)
	}
	cfg, err := loader.ClientConfig()
	if err != nil {
		return nil, lineErrorf(err, "loading kubeconfig: %v", err)
	}
	// -n, else the context's namespace, else "default" (or the pod's own namespace in-cluster):
	// the namespace watched, unless the caller named one (wait -f's manifests) or all of them, and
	// in any case the namespace of a manifest's object that names none.
	ns, _, err := loader.Namespace()
	if err != nil {
		return nil, lineErrorf(err, "reading namespace from kubeconfig: %v", err)
	}
	opts.defaultNamespace = ns
	if !opts.AllNamespaces && opts.Namespace == "" {
		opts.Namespace = ns
	}
	if opts.Context == "" {
		opts.Context = contextName(f, loader)
	}

	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultRequestTimeout
	}
	if deadline.IsZero() {
		deadline = time.Now().Add(timeout)
	}
	tune(cfg)

	// The check runs with the deadline on the HTTP client as well as the context, so dialing, TLS
	// and an exec credential plugin are all bounded. (A zero client timeout would mean none.)
	if !opts.keepGoing {
		checkCfg := rest.CopyConfig(cfg)
		checkCfg.Timeout = max(time.Until(deadline), time.Nanosecond)
		if err := check(ctx, checkCfg, opts, deadline, timeout); err != nil {
			return nil, err
		}
	}

	// Informers hold watches open for minutes; an HTTP client timeout would cut them off.
	cfg.Timeout = 0
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, lineErrorf(err, "creating client: %v", err)
	}
	opts.restConfig, opts.requestTimeout = cfg, timeout
	s, err := Start(ctx, client, opts)
	if err != nil {
		return nil, err
	}
	s.server = cfg.Host
	return s, nil
}

// tune asks for protobuf, which the API server encodes and we decode several times faster than
// JSON for pods, and sets a rate limit roomy enough for seven initial lists.
func tune(cfg *rest.Config) {
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cfg.QPS = 50
	cfg.Burst = 100
	cfg.UserAgent = "doomwatch " + rest.DefaultKubernetesUserAgent()
}

// check lists one pod in the scope: it proves the server answers, our credentials work and RBAC lets
// us list pods, the one permission doomwatch cannot do without (nodes and workloads may be
// forbidden; those parts are then shown as such).
// timeout is --request-timeout, for the message.
func check(ctx context.Context, cfg *rest.Config, opts Options, deadline time.Time, timeout time.Duration) error {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return lineErrorf(err, "creating client: %v", err)
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	ns, where := opts.Namespace, "namespace "+opts.Namespace
	if opts.AllNamespaces {
		ns, where = metav1.NamespaceAll, "all namespaces"
	}
	_, err = client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{Limit: 1, LabelSelector: opts.Selector})
	switch {
	case err == nil:
		return nil
	case apierrors.IsForbidden(err):
		return kindErrorf(ErrForbidden, err, "not allowed to list pods in %s: %v", where, apiMessage(err))
	case apierrors.IsUnauthorized(err):
		return kindErrorf(ErrUnauthorized, err, "the API server at %s rejected our credentials: %v", cfg.Host, apiMessage(err))
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return kindErrorf(ErrUnreachable, err, "the API server at %s did not answer within %s", cfg.Host, timeout)
	default:
		return kindErrorf(ErrUnreachable, err, "cannot reach the API server at %s: %v", cfg.Host, err)
	}
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

func apiMessage(err error) string {
	var st apierrors.APIStatus
	if errors.As(err, &st) && st.Status().Message != "" {
		return st.Status().Message
	}
	return err.Error()
}

// contextName is the kubeconfig context in use, for the header: --context, else current-context,
// else "in-cluster" when running in a pod without a kubeconfig.
func contextName(f *Flags, loader clientcmd.ClientConfig) string {
	if f.overrides.CurrentContext != "" {
		return f.overrides.CurrentContext
	}
	if raw, err := loader.RawConfig(); err == nil && raw.CurrentContext != "" {
		return raw.CurrentContext
	}
	return "in-cluster"
}

// noConfig reports that there is nothing to connect to: no kubeconfig clusters, no --server and
// not running in a pod.
func noConfig(f *Flags, loader clientcmd.ClientConfig) bool {
	if f.overrides.ClusterInfo.Server != "" {
		return false
	}
	if os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
		return false
	}
	raw, err := loader.RawConfig()
	return err == nil && len(raw.Clusters) == 0
}

// noConfigError says why there is no cluster to connect to, naming the files looked for: client-go
// skips a file KUBECONFIG names that does not exist (and ~/.kube/config when it is not there)
// without a word, where a missing --kubeconfig is an error of its own ("stat …").
func noConfigError(f *Flags) error {
	files, from := []string{f.kubeconfig}, " (from --kubeconfig)"
	if f.kubeconfig == "" {
		files, from = clientcmd.NewDefaultClientConfigLoadingRules().GetLoadingPrecedence(), ""
		if os.Getenv(clientcmd.RecommendedConfigPathEnvVar) != "" {
			from = " (from " + clientcmd.RecommendedConfigPathEnvVar + ")"
		}
	}
	var missing, empty []string
	for _, file := range files {
		if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
			missing = append(missing, file)
		} else {
			empty = append(empty, file)
		}
	}
	var what []string
	if len(missing) > 0 {
		verb := " does not exist"
		if len(missing) > 1 {
			verb = " do not exist"
		}
		what = append(what, strings.Join(missing, ", ")+from+verb)
	}
	if len(empty) > 0 {
		what = append(what, strings.Join(empty, ", ")+from+" defines no cluster")
	}
	lead := "no kubeconfig found"
	if len(empty) > 0 {
		lead = "no cluster in the kubeconfig"
	}
	return fmt.Errorf("%s: %s; set KUBECONFIG or --kubeconfig, or try --demo", lead, sanitize.Text(strings.Join(what, "; ")))
}

// What went wrong when connecting, for the caller to tell apart with errors.Is (main adds a hint
// that fits each).
var (
	// ErrUnreachable: the API server could not be reached or did not answer in time.
	ErrUnreachable = errors.New("API server unreachable")
	// ErrUnauthorized: the API server rejected the credentials (HTTP 401).
	ErrUnauthorized = errors.New("credentials rejected")
	// ErrForbidden: RBAC does not allow listing pods in the scope asked for (HTTP 403).
	ErrForbidden = errors.New("forbidden")
)

// lineError keeps the wrapped error, and what kind of failure it is, for errors.Is/As but prints
// as one line: API and kubeconfig errors can span several, and doomwatch reports errors on a
// single stderr line.
type lineError struct {
	msg  string
	err  error
	kind error // one of the Err* values above, or nil
}

func (e *lineError) Error() string { return e.msg }

func (e *lineError) Unwrap() []error {
	if e.kind == nil {
		return []error{e.err}
	}
	return []error{e.kind, e.err}
}

// oneLine is err with its message sanitised on one line (sanitize.Text), its chain kept for
// errors.Is: a lineError already is one.
func oneLine(err error) error {
	if _, ok := err.(*lineError); ok || err == nil {
		return err
	}
	return &lineError{msg: sanitize.Text(err.Error()), err: err}
}

func lineErrorf(err error, format string, args ...any) error {
	return &lineError{msg: sanitize.Text(fmt.Sprintf(format, args...)), err: err}
}

func kindErrorf(kind, err error, format string, args ...any) error {
	return &lineError{msg: sanitize.Text(fmt.Sprintf(format, args...)), err: err, kind: kind}
}

// Target is where Connect connects for the context named name ("" for the current one): the
// context's name, as the header shows it, and the API server's address, read from the kubeconfig
// without a request, so that the dashboard can say where it connects before Connect returns.
// server is "" when the kubeconfig cannot say; Connect then says why.
func (f *Flags) Target(name string) (context, server string) {
	cf := f.forContext(name)
	loader := cf.loader()
	if cfg, err := loader.ClientConfig(); err == nil {
		server = cfg.Host
	}
	return contextName(cf, loader), server
}
