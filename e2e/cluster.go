// Package e2e runs doomwatch against a real kube-apiserver backed by etcd, both started on
// loopback by the suite. The binaries come from hack/build-k8s.sh; DOOMWATCH_K8S_BIN
// names their directory.
package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Cluster is one etcd and one kube-apiserver on loopback, with a CA that signs client
// certificates for any user the tests need.
type Cluster struct {
	// Dir holds the certificates, kubeconfigs, etcd's data and the servers' logs.
	Dir string
	// Host is the API server's URL, https://127.0.0.1:<port>.
	Host string
	// Admin is a client in group system:masters.
	Admin       *rest.Config
	AdminClient kubernetes.Interface

	binDir               string
	ca                   *authority
	adminCert            leaf
	etcdClient, etcdPeer int
	apiPort              int
	opts                 Options

	mu   sync.Mutex
	etcd *process
	api  *process
}

// startupTimeout bounds one server's start. kube-apiserver runs its bootstrap hooks (RBAC roles,
// priority levels) before /readyz passes; on two busy cores that takes tens of seconds.
const startupTimeout = 3 * time.Minute

// Options adds flags to the servers' command lines, after the suite's own (a repeated flag takes
// its last value). The scale harness (hack/benchscale) needs them: 150,000 pods outgrow etcd's
// default 2 GiB quota.
type Options struct {
	EtcdArgs, APIServerArgs []string
	// ServiceAccounts enables the ServiceAccount admission plugin, which mounts each pod's service
	// account token: for pods that talk to the API server (serve's, TestServeInCluster). It needs
	// kube-controller-manager (ControlPlane), which creates each namespace's default service
	// account; without it every pod would be refused.
	ServiceAccounts bool
}

// StartCluster starts etcd and kube-apiserver from binDir, keeping its files in dir.
func StartCluster(ctx context.Context, binDir, dir string) (*Cluster, error) {
	return StartClusterWith(ctx, binDir, dir, Options{})
}

// StartClusterWith is StartCluster with extra server flags.
func StartClusterWith(ctx context.Context, binDir, dir string, opts Options) (*Cluster, error) {
	for _, b := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(binDir, b)); err != nil {
			return nil, fmt.Errorf("missing %s in %s (run hack/build-k8s.sh): %w", b, binDir, err)
		}
	}
	c := &Cluster{Dir: dir, binDir: binDir, opts: opts}
	if err := c.writeCerts(); err != nil {
		return nil, fmt.Errorf("writing certificates: %w", err)
	}
	// Ports are free when picked but another process may bind one before the server does:
	// retry with fresh ports a few times.
	var err error
	for range 3 {
		var ports []int
		if ports, err = freePorts(3); err != nil {
			return nil, err
		}
		c.etcdClient, c.etcdPeer, c.apiPort = ports[0], ports[1], ports[2]
		c.Host = "https://" + loopback(c.apiPort)
		c.Admin = c.restConfig(c.ca.certPEM, c.adminCert)
		if c.AdminClient, err = kubernetes.NewForConfig(c.Admin); err != nil {
			return nil, err
		}
		if err = c.StartEtcd(ctx); errors.Is(err, errAddrInUse) {
			c.StopEtcd()
			continue
		}
		if err != nil {
			break
		}
		if err = c.StartAPIServer(ctx); errors.Is(err, errAddrInUse) {
			c.Stop()
			continue
		}
		break
	}
	if err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) path(name string) string { return filepath.Join(c.Dir, name) }

// writeCerts creates the CA, the serving certificate, the service-account key pair and the admin
// client configuration.
func (c *Cluster) writeCerts() error {
	ca, err := newAuthority("doomwatch-e2e-ca")
	if err != nil {
		return err
	}
	c.ca = ca
	serving, err := ca.issue(certSpec{commonName: "kube-apiserver", server: true})
	if err != nil {
		return err
	}
	files := map[string][]byte{
		"ca.crt":      ca.certPEM,
		"serving.crt": serving.certPEM,
		"serving.key": serving.keyPEM,
	}
	for name, b := range files {
		if err := os.WriteFile(c.path(name), b, 0o600); err != nil {
			return err
		}
	}
	if err := writeServiceAccountKey(c.path("sa.key"), c.path("sa.pub")); err != nil {
		return err
	}
	admin, err := ca.issue(certSpec{commonName: "e2e-admin", groups: []string{"system:masters"}})
	if err != nil {
		return err
	}
	c.adminCert = admin
	// The API server's identity towards kubelets (logs, exec, port-forward), as kubeadm's
	// apiserver-kubelet-client certificate is; the real node's kubelet trusts the CA.
	kubeletClient, err := ca.issue(certSpec{commonName: "kube-apiserver-kubelet-client", groups: []string{"system:masters"}})
	if err != nil {
		return err
	}
	for name, b := range map[string][]byte{"kubelet-client.crt": kubeletClient.certPEM, "kubelet-client.key": kubeletClient.keyPEM} {
		if err := os.WriteFile(c.path(name), b, 0o600); err != nil {
			return err
		}
	}
	return nil
}

func (c *Cluster) restConfig(caPEM []byte, l leaf) *rest.Config {
	return &rest.Config{
		Host: c.Host,
		TLSClientConfig: rest.TLSClientConfig{
			CAData: caPEM, CertData: l.certPEM, KeyData: l.keyPEM,
		},
		// The tests write many objects quickly; client-side throttling would only slow them.
		QPS: 500, Burst: 1000,
	}
}

// StartEtcd starts etcd on the cluster's ports and data directory and waits until it is healthy.
func (c *Cluster) StartEtcd(ctx context.Context) error {
	data := c.path("etcd-data")
	if err := os.MkdirAll(data, 0o700); err != nil {
		return err
	}
	client, peer := "http://"+loopback(c.etcdClient), "http://"+loopback(c.etcdPeer)
	p, err := startProcess("etcd", c.path("etcd.log"), filepath.Join(c.binDir, "etcd"), append([]string{
		"--name=e2e",
		"--data-dir=" + data,
		"--listen-client-urls=" + client,
		"--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=e2e=" + peer,
		"--log-level=warn",
		// Durability is pointless for a throwaway cluster and fsync is slow on a shared disk.
		"--unsafe-no-fsync",
	}, c.opts.EtcdArgs...)...)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.etcd = p
	c.mu.Unlock()
	hc := &http.Client{Timeout: 2 * time.Second}
	return waitReady(ctx, p, func(ctx context.Context) bool {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, client+"/health", nil)
		resp, err := hc.Do(req)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode == http.StatusOK && strings.Contains(string(b), `"health":"true"`)
	})
}

// StopEtcd kills etcd (SIGKILL, like a crash). Its data survives for StartEtcd.
func (c *Cluster) StopEtcd() {
	c.mu.Lock()
	p := c.etcd
	c.mu.Unlock()
	p.kill()
}

// apiServerArgs are the options' extra kube-apiserver flags.
func (c *Cluster) apiServerArgs() []string {
	var args []string
	if !c.opts.ServiceAccounts {
		// No controller-manager creates the default service accounts (or the tests do not wait
		// for it to): the plugin would refuse every pod.
		args = append(args, "--disable-admission-plugins=ServiceAccount")
	}
	return append(args, c.opts.APIServerArgs...)
}

// StartAPIServer starts kube-apiserver on the cluster's port and waits until /readyz passes.
func (c *Cluster) StartAPIServer(ctx context.Context) error {
	p, err := startProcess("kube-apiserver", c.path("kube-apiserver.log"), filepath.Join(c.binDir, "kube-apiserver"), append([]string{
		"--etcd-servers=http://" + loopback(c.etcdClient),
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", c.apiPort),
		"--cert-dir=" + c.path("apiserver-certs"),
		"--tls-cert-file=" + c.path("serving.crt"),
		"--tls-private-key-file=" + c.path("serving.key"),
		"--client-ca-file=" + c.path("ca.crt"),
		"--authorization-mode=RBAC",
		"--service-cluster-ip-range=10.0.0.0/24",
		// The endpoint reconciler refuses a loopback advertise address.
		"--endpoint-reconciler-type=none",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + c.path("sa.pub"),
		"--service-account-signing-key-file=" + c.path("sa.key"),
		// For the real node's logs and exec: the kubelet's address is its InternalIP (the node
		// has no resolvable hostname), and the kubelet asks for a client certificate.
		"--kubelet-preferred-address-types=InternalIP",
		"--kubelet-client-certificate=" + c.path("kubelet-client.crt"),
		"--kubelet-client-key=" + c.path("kubelet-client.key"),
		// Fewer moving parts and less CPU on two shared cores.
		"--enable-priority-and-fairness=false",
		"--profiling=false",
	}, c.apiServerArgs()...)...)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.api = p
	c.mu.Unlock()
	cfg := rest.CopyConfig(c.Admin)
	cfg.Timeout = 2 * time.Second
	probe, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	return waitReady(ctx, p, func(ctx context.Context) bool {
		_, err := probe.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil
	})
}

// StopAPIServer kills kube-apiserver (SIGKILL, like a crash).
func (c *Cluster) StopAPIServer() {
	c.mu.Lock()
	p := c.api
	c.mu.Unlock()
	p.kill()
}

// Stop kills both servers. It is safe to call more than once.
func (c *Cluster) Stop() {
	c.StopAPIServer()
	c.StopEtcd()
}

// Logs returns the tail of both servers' logs, for a failure report.
func (c *Cluster) Logs(lines int) string {
	var b strings.Builder
	for _, name := range []string{"etcd.log", "kube-apiserver.log"} {
		fmt.Fprintf(&b, "----- %s (last %d lines of %s)\n%s\n", name, lines, c.path(name), logTail(c.path(name), lines))
	}
	return b.String()
}

// waitReady polls ready until it passes, the process exits or the startup timeout ends.
func waitReady(ctx context.Context, p *process, ready func(context.Context) bool) error {
	ctx, cancel := context.WithTimeout(ctx, startupTimeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if ready(ctx) {
			return nil
		}
		select {
		case <-p.done:
			tail := logTail(p.logPath, 30)
			if strings.Contains(tail, "address already in use") {
				return fmt.Errorf("%s: %w", p.name, errAddrInUse)
			}
			return fmt.Errorf("%s exited during startup (%v); log %s:\n%s", p.name, p.err, p.logPath, tail)
		case <-ctx.Done():
			p.kill()
			return fmt.Errorf("%s not ready after %s; log %s:\n%s", p.name, startupTimeout, p.logPath, logTail(p.logPath, 30))
		case <-tick.C:
		}
	}
}

// User is a client-certificate identity with its kubeconfig.
type User struct {
	Name       string
	Config     *rest.Config
	Kubeconfig string // path to a kubeconfig file whose current context is this user
}

// NewUser signs a client certificate for name (in groups) and writes its kubeconfig.
func (c *Cluster) NewUser(name string, groups ...string) (*User, error) {
	l, err := c.ca.issue(certSpec{commonName: name, groups: groups})
	if err != nil {
		return nil, err
	}
	return c.userWith(name, c.Host, c.ca.certPEM, l)
}

// NewUserAt is NewUser with a kubeconfig that reaches the API server at server (a proxy).
func (c *Cluster) NewUserAt(name, server string, groups ...string) (*User, error) {
	l, err := c.ca.issue(certSpec{commonName: name, groups: groups})
	if err != nil {
		return nil, err
	}
	return c.userWith(name, server, c.ca.certPEM, l)
}

// userWith writes a kubeconfig for a user with certificate l talking to server.
func (c *Cluster) userWith(name, server string, caPEM []byte, l leaf) (*User, error) {
	cfg := c.restConfig(caPEM, l)
	cfg.Host = server
	path := c.path("kubeconfig-" + name)
	if err := WriteKubeconfig(path, server, caPEM, l.certPEM, l.keyPEM, name); err != nil {
		return nil, err
	}
	return &User{Name: name, Config: cfg, Kubeconfig: path}, nil
}

// WriteKubeconfig writes a one-context kubeconfig (context, cluster and user all named name).
func WriteKubeconfig(path, server string, caPEM, certPEM, keyPEM []byte, name string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	kc.CurrentContext = name
	return clientcmd.WriteToFile(*kc, path)
}

// EnsureRunning restarts whichever server is down, so that a failed fault test leaves a working
// cluster to the tests after it.
func (c *Cluster) EnsureRunning(ctx context.Context) error {
	c.mu.Lock()
	etcdDown, apiDown := c.etcd.exited(), c.api.exited()
	c.mu.Unlock()
	if etcdDown {
		if err := c.StartEtcd(ctx); err != nil {
			return err
		}
	}
	if apiDown {
		return c.StartAPIServer(ctx)
	}
	return nil
}

// APIAddr is the API server's host:port, for a Proxy.
func (c *Cluster) APIAddr() string { return loopback(c.apiPort) }

// Pids are the process IDs of etcd and kube-apiserver, for a harness that samples what the
// servers cost (hack/benchscale).
func (c *Cluster) Pids() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []int
	for _, p := range []*process{c.etcd, c.api} {
		if p != nil && p.cmd.Process != nil {
			out = append(out, p.cmd.Process.Pid)
		}
	}
	return out
}
