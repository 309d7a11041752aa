package kube

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// Flags are kubectl's own connection flags (k8s.io/cli-runtime genericclioptions.ConfigFlags):
// --kubeconfig, --context, -n/--namespace, --request-timeout, --server, --token, --as and the
// rest, with kubectl's precedence over the KUBECONFIG environment variable and in-cluster config.
type Flags struct {
	cf *genericclioptions.ConfigFlags
}

// AddFlags adds kubectl's connection flags to fs. The one difference from kubectl is that
// --request-timeout defaults to DefaultRequestTimeout rather than "never": doomwatch must not hang
// on a server that does not answer.
func AddFlags(fs *pflag.FlagSet) *Flags {
	cf := genericclioptions.NewConfigFlags(false)
	cf.CacheDir = nil // no discovery cache: doomwatch knows its resources
	timeout := DefaultRequestTimeout.String()
	cf.Timeout = &timeout
	cf.AddFlags(fs)
	fs.Lookup("request-timeout").Usage = "How long to wait for the API server to answer and for --once to sync (e.g. 5s). Zero means the default."
	return &Flags{cf: cf}
}

// Namespace is -n/--namespace as given, "" when it was not.
func (f *Flags) Namespace() string {
	if f.cf.Namespace == nil {
		return ""
	}
	return *f.cf.Namespace
}

// RequestTimeout reads --request-timeout as kubectl does (a bare number is seconds); zero or unset
// means DefaultRequestTimeout, so nothing waits forever.
func (f *Flags) RequestTimeout() (time.Duration, error) {
	if f.cf.Timeout == nil {
		return DefaultRequestTimeout, nil
	}
	s := strings.TrimSpace(*f.cf.Timeout)
	if s == "" || s == "0" {
		return DefaultRequestTimeout, nil
	}
	if !strings.ContainsAny(s, "smhµu") {
		s += "s"
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("invalid --request-timeout %q: want a duration such as 10s", *f.cf.Timeout)
	}
	if d == 0 {
		return DefaultRequestTimeout, nil
	}
	return d, nil
}
