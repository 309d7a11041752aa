package scale

import (
	"fmt"
	"net"
	"net/url"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Tune makes cfg fit for loading: protobuf bodies (the API server decodes them several times
// faster than JSON), no client-side rate limit to speak of (the worker pool bounds concurrency),
// and the user agent the server logs show.
func Tune(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cfg.QPS, cfg.Burst = 100000, 100000
	cfg.UserAgent = "doomwatch-loadgen"
	return cfg
}

// LoopbackOnly refuses a server that is not on a loopback address: the load writes hundreds of
// thousands of objects and must never reach a real cluster by mistake.
func LoopbackOnly(cfg *rest.Config) error {
	u, err := url.Parse(cfg.Host)
	if err != nil {
		return fmt.Errorf("parsing server %q: %w", cfg.Host, err)
	}
	host := u.Hostname()
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("server %s is not on a loopback address; the load generator only writes to a throwaway local API server", cfg.Host)
}

// ClientFromKubeconfig returns a tuned client for the kubeconfig's current context, refusing any
// server that is not on loopback.
func ClientFromKubeconfig(path string) (kubernetes.Interface, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig %s: %w", path, err)
	}
	return NewClient(cfg)
}

// NewClient is a tuned client for cfg, refusing any server that is not on loopback.
func NewClient(cfg *rest.Config) (kubernetes.Interface, error) {
	if err := LoopbackOnly(cfg); err != nil {
		return nil, err
	}
	c, err := kubernetes.NewForConfig(Tune(cfg))
	if err != nil {
		return nil, fmt.Errorf("creating client: %w", err)
	}
	return c, nil
}
