package kube

import (
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/clientcmd"
)

// Flags are kubectl's connection flags: --kubeconfig, --context, -n/--namespace, --request-timeout,
// -s/--server, --token, --as and the rest, with kubectl's precedence over the KUBECONFIG
// environment variable and in-cluster config.
//
// They are client-go's own (clientcmd.RecommendedConfigOverrideFlags, bound into the
// ConfigOverrides kubectl's genericclioptions.ConfigFlags builds from its fields), not
// k8s.io/cli-runtime's ConfigFlags: that package also holds kubectl's resource builder, which
// links kustomize, whose Go plugin loader imports the standard library's plugin package. A binary
// that links plugin makes the Go linker export every symbol and keep every exported method
// (kubernetes-sigs/kustomize#5524): doomwatch was 143 MB instead of 50 MB, and the pages the
// runtime touches in it cost 50 MiB of resident memory before a single pod was loaded.
type Flags struct {
	kubeconfig string
	overrides  clientcmd.ConfigOverrides
	// allContexts is --all-contexts: every context of the kubeconfig (Contexts).
	allContexts bool
}

// AddFlags adds kubectl's connection flags to fs. The one difference from kubectl is that
// --request-timeout's zero means DefaultRequestTimeout rather than "never": doomwatch must not
// hang on a server that does not answer.
func AddFlags(fs *pflag.FlagSet) *Flags {
	f := &Flags{overrides: clientcmd.ConfigOverrides{ClusterDefaults: clientcmd.ClusterDefaults}}
	fs.StringVar(&f.kubeconfig, clientcmd.RecommendedConfigPathFlag, "", "Path to the kubeconfig file to use for CLI requests.")
	names := clientcmd.RecommendedConfigOverrideFlags("")
	names.ClusterOverrideFlags.APIServer.ShortName = "s" // kubectl's -s
	// The default stays kubectl's "0" (Connect reads it as DefaultRequestTimeout): any other value
	// makes the flags' config differ from clientcmd's default, and DeferredLoadingClientConfig then
	// never falls back to the in-cluster config, so that serve in a pod would dial localhost:8080.
	names.Timeout.Description = "How long to wait for the API server to answer and for the first sync of --once and wait (e.g. 5s). Zero or unset: " + DefaultRequestTimeout.String() + "."
	clientcmd.BindOverrideFlags(&f.overrides, fs, names)
	if t := fs.Lookup(names.Timeout.LongName); t != nil {
		t.DefValue = "" // the usage says what unset means; "(default \"0\")" would not
	}
	// --context is kubectl's, and more: a comma list or a glob watches several clusters at once.
	if c := fs.Lookup(clientcmd.FlagContext); c != nil {
		c.Usage = "The name of the kubeconfig context to use; a comma list (eu,us) or a glob (prod-*) watches each of those contexts."
	}
	fs.BoolVar(&f.allContexts, "all-contexts", false, "Watch every context of the kubeconfig.")
	return f
}

// newFlags is Flags as AddFlags would leave them after parsing these values.
func newFlags(kubeconfig, kubeContext, timeout string) *Flags {
	f := &Flags{kubeconfig: kubeconfig, overrides: clientcmd.ConfigOverrides{ClusterDefaults: clientcmd.ClusterDefaults}}
	f.overrides.CurrentContext, f.overrides.Timeout = kubeContext, timeout
	return f
}

// loader resolves the kubeconfig as kubectl does: --kubeconfig, else KUBECONFIG, else
// ~/.kube/config, else in-cluster config, with the flags on top.
func (f *Flags) loader() clientcmd.ClientConfig {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.DefaultClientConfig = &clientcmd.DefaultClientConfig
	rules.ExplicitPath = f.kubeconfig
	overrides := f.overrides
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &overrides)
}

// Namespace is -n/--namespace as given, "" when it was not.
func (f *Flags) Namespace() string { return f.overrides.Context.Namespace }

// DefaultNamespace is where kubectl puts an object that names no namespace: -n, else the
// kubeconfig context's, else "default" (in a pod, its own), read without connecting. It is the
// current context's when --context names several.
func (f *Flags) DefaultNamespace() (string, error) {
	ns, _, err := f.loader().Namespace()
	return ns, err
}

// Validate rejects values that cannot name anything, before anything is loaded or reached: a
// namespace that is not a DNS label (the API server's rule for a namespace's name, apimachinery's
// ValidateNamespaceName; kubectl sends it, and the list there is empty), and a --context that is
// not a list of names and globs. A context name is free text in a kubeconfig, as kubectl takes
// it: one the kubeconfig does not have is an error about the kubeconfig (Contexts, Connect), not
// about the command line.
func (f *Flags) Validate() error {
	if ns := f.overrides.Context.Namespace; ns != "" {
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return fmt.Errorf("invalid -n/--namespace %q: %s", ns, errs[0])
		}
	}
	spec := strings.TrimSpace(f.overrides.CurrentContext)
	if f.allContexts && spec != "" {
		return fmt.Errorf("--all-contexts and --context %q: give one", spec)
	}
	if !strings.ContainsAny(spec, ",*?[") {
		return nil
	}
	for _, pat := range strings.Split(spec, ",") {
		pat = strings.TrimSpace(pat)
		if pat == "" {
			return fmt.Errorf("--context %q: an empty name in the list", spec)
		}
		if _, err := path.Match(pat, ""); err != nil {
			return fmt.Errorf("--context: bad pattern %q: %v", pat, err)
		}
	}
	return nil
}

// RequestTimeout reads --request-timeout as kubectl does (a bare number is seconds); zero or unset
// means DefaultRequestTimeout, so nothing waits forever.
func (f *Flags) RequestTimeout() (time.Duration, error) {
	s := strings.TrimSpace(f.overrides.Timeout)
	if s == "" || s == "0" {
		return DefaultRequestTimeout, nil
	}
	if !strings.ContainsAny(s, "smhµu") {
		s += "s"
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("invalid --request-timeout %q: want a duration such as 10s", f.overrides.Timeout)
	}
	if d == 0 {
		return DefaultRequestTimeout, nil
	}
	return d, nil
}
