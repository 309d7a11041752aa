package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
)

// RealNode is a kubelet with a real container runtime (containerd, its runc shim, runc) and a real
// pod network (the CNI bridge and host-local plugins), registered with a ControlPlane beside kwok's
// simulated nodes. The statuses of its pods are the ones the kubelet and the runtime write, which
// the fixtures copied from upstream issues can only guess at.
//
// The node lives in a network namespace of its own, reached from the host through a veth pair:
// the kubelet refuses a loopback node IP, and the machines this runs on carry traffic only on
// loopback and inside namespaces the test makes. The kubelet reaches the API server, and containerd
// the image registry, through listeners the suite opens on the namespace's own loopback; the API
// server reaches the kubelet (logs, exec) at the node's address in the namespace. Everything the
// node makes (the namespace, its links, mounts, cgroups, containers, shims, the kubelet's kernel
// settings and its /var/log/containers links) is undone by Stop.
type RealNode struct {
	// Name is the Node's name; IP its InternalIP, inside the namespace.
	Name, IP string
	// Registry is the image registry's host:port as the node pulls from it. Images under
	// Registry+"/private/" need credentials, which the node does not have. RegistryOnHost is the
	// same registry as the suite pushes to it.
	Registry, RegistryOnHost string
	// Versions names the kubelet, containerd and runc, for the fixtures' citations.
	Versions NodeVersions

	dir, netns, hostLink, cgroupName string
	cgroupRoots                      []string
	runcRoot                         string
	runcPath                         string
	sysctlFile                       string
	cp                               *ControlPlane

	mu                  sync.Mutex
	containerd, kubelet *process
	servers             []*http.Server
	proxy               *Proxy
}

// NodeVersions are the versions the node's binaries report.
type NodeVersions struct{ Kubelet, Containerd, Runc string }

func (v NodeVersions) String() string {
	return fmt.Sprintf("kubelet %s, containerd %s, runc %s", v.Kubelet, v.Containerd, v.Runc)
}

// RealNodeOptions says where the binaries are.
type RealNodeOptions struct {
	// K8sBin holds the kubelet (hack/build-k8s.sh); NodeBin containerd, its shim, runc and the CNI
	// plugins (hack/build-node.sh).
	K8sBin, NodeBin string
	// Log, when set, reports each step of the start and how long it took.
	Log func(format string, args ...any)
}

// RealNodeBinaries are the binaries hack/build-node.sh builds.
var RealNodeBinaries = []string{"containerd", "containerd-shim-runc-v2", "runc", "bridge", "host-local", "loopback"}

// FlakyRuntimeClass is the RuntimeClass (and containerd runtime handler) that fails the first
// FlakyFailsEnv creates of a container in runc (e2e/cmd/flakyrunc).
const FlakyRuntimeClass = "flaky"

// FlakyFailsEnv is the container environment variable that says how many creates fail.
const FlakyFailsEnv = "DOOMWATCH_FLAKY_FAILS"

// ErrNoRealNode wraps the reason a machine cannot run the real node (not root, no cgroups, a
// missing tool): the tests fail with it under CI and skip with it elsewhere, never silently.
var ErrNoRealNode = errors.New("this machine cannot run the real node")

// nodeNamePrefix names everything the node makes on the host, with the test binary's pid: a later
// run removes what a run killed before its cleanup left behind, and only that.
const nodeNamePrefix = "dwnode"

// CheckRealNode says whether this machine can run a real node, and why not.
func CheckRealNode(o RealNodeOptions) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("%w: the kubelet and containerd need root (running as uid %d)", ErrNoRealNode, os.Geteuid())
	}
	for _, tool := range []string{"ip", "nsenter", "mount"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%w: %s is not installed (iproute2, util-linux)", ErrNoRealNode, tool)
		}
	}
	if len(cgroupMounts()) == 0 {
		return fmt.Errorf("%w: no cgroup hierarchy is mounted under /sys/fs/cgroup", ErrNoRealNode)
	}
	if _, err := os.Stat("/proc/self/ns/net"); err != nil {
		return fmt.Errorf("%w: no network namespaces: %v", ErrNoRealNode, err)
	}
	if _, err := os.Stat(filepath.Join(o.K8sBin, "kubelet")); err != nil {
		return fmt.Errorf("missing kubelet in %s (run hack/build-k8s.sh): %w", o.K8sBin, err)
	}
	for _, b := range RealNodeBinaries {
		if _, err := os.Stat(filepath.Join(o.NodeBin, b)); err != nil {
			return fmt.Errorf("missing %s in %s (run hack/build-node.sh): %w", b, o.NodeBin, err)
		}
	}
	return nil
}

// StartRealNode starts a kubelet, containerd and the image registry, keeping their files in dir,
// and waits until the node is Ready. On error, whatever it made is removed again.
func StartRealNode(ctx context.Context, cp *ControlPlane, dir string, o RealNodeOptions) (n *RealNode, err error) {
	if err := CheckRealNode(o); err != nil {
		return nil, err
	}
	sweepRealNodes()
	id := fmt.Sprintf("%s%d", nodeNamePrefix, os.Getpid())
	// Socket paths must stay under 108 bytes: the runtime's files live in a short directory.
	short, err := os.MkdirTemp("/run", id+"-")
	if err != nil {
		return nil, err
	}
	n = &RealNode{
		Name: "real-node-1", dir: short, netns: id, hostLink: "dwn" + strconv.Itoa(os.Getpid()) + "h",
		cgroupName: id, cp: cp, runcPath: filepath.Join(o.NodeBin, "runc"),
		runcRoot: filepath.Join(short, "runc"),
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w\n%s", err, n.Logs(30))
			n.Stop()
			n = nil
		}
	}()
	if err := os.Symlink(short, filepath.Join(dir, "real-node")); err != nil {
		return n, err
	}
	for _, step := range []struct {
		name string
		run  func() error
	}{
		{"versions", func() (err error) { n.Versions, err = nodeVersions(o); return err }},
		{"network namespace", n.network},
		{"registry and images", func() error { return n.startRegistry(ctx) }},
		{"containerd", func() error { return n.startContainerd(ctx, o) }},
		{"kubelet until the node is Ready", func() error { return n.startKubelet(ctx, o) }},
	} {
		start := time.Now()
		if err := step.run(); err != nil {
			return n, fmt.Errorf("real node: %s: %w", step.name, err)
		}
		if o.Log != nil {
			o.Log("real node: %s in %s", step.name, time.Since(start).Round(time.Millisecond))
		}
	}
	return n, nil
}

func (n *RealNode) path(name string) string { return filepath.Join(n.dir, name) }

// nodeVersions asks each binary its version.
func nodeVersions(o RealNodeOptions) (NodeVersions, error) {
	run := func(bin string, args ...string) (string, error) {
		out, err := exec.Command(bin, args...).Output()
		if err != nil {
			return "", fmt.Errorf("%s %s: %w", filepath.Base(bin), strings.Join(args, " "), err)
		}
		return string(out), nil
	}
	var v NodeVersions
	out, err := run(filepath.Join(o.K8sBin, "kubelet"), "--version")
	if err != nil {
		return v, err
	}
	v.Kubelet = strings.TrimPrefix(strings.TrimSpace(out), "Kubernetes ")
	if out, err = run(filepath.Join(o.NodeBin, "containerd"), "--version"); err != nil {
		return v, err
	}
	// "containerd github.com/containerd/containerd/v2 2.4.2+unknown"
	if f := strings.Fields(out); len(f) >= 3 {
		v.Containerd = "v" + strings.TrimSuffix(f[2], "+unknown")
	}
	if out, err = run(filepath.Join(o.NodeBin, "runc"), "--version"); err != nil {
		return v, err
	}
	// "runc version 1.5.3\n..."
	if f := strings.Fields(out); len(f) >= 3 {
		v.Runc = "v" + f[2]
	}
	return v, nil
}

// network makes the node's namespace and the veth pair that joins it to the host.
func (n *RealNode) network() error {
	third := os.Getpid() % 250
	hostIP := fmt.Sprintf("10.201.%d.1", third)
	n.IP = fmt.Sprintf("10.201.%d.2", third)
	nodeLink := n.hostLink[:len(n.hostLink)-1] + "n"
	for _, args := range [][]string{
		{"netns", "add", n.netns},
		{"link", "add", n.hostLink, "type", "veth", "peer", "name", nodeLink},
		{"link", "set", nodeLink, "netns", n.netns},
		{"addr", "add", hostIP + "/30", "dev", n.hostLink},
		{"link", "set", n.hostLink, "up"},
		{"-n", n.netns, "addr", "add", n.IP + "/30", "dev", nodeLink},
		{"-n", n.netns, "link", "set", nodeLink, "up"},
		{"-n", n.netns, "link", "set", "lo", "up"},
		{"-n", n.netns, "route", "add", "default", "via", hostIP},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}

// listenInNode opens a TCP listener on the node namespace's loopback. The socket stays in the
// namespace it was made in. The goroutine that makes it enters the namespace on a locked thread and
// leaves it again before unlocking: a thread a locked goroutine leaves behind is destroyed, and the
// servers the suite started from that thread would get their parent-death signal (Pdeathsig
// follows the thread that forked, not the process) and die.
func (n *RealNode) listenInNode() (net.Listener, error) {
	type result struct {
		ln  net.Listener
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: err}
			return
		}
		defer unix.Close(orig)
		fd, err := unix.Open("/run/netns/"+n.netns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: err}
			return
		}
		defer unix.Close(fd)
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: fmt.Errorf("entering the node's network namespace: %w", err)}
			return
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if back := unix.Setns(orig, unix.CLONE_NEWNET); back == nil {
			runtime.UnlockOSThread()
		} else if err == nil {
			// The thread stays locked and is destroyed with this goroutine, which beats running
			// other goroutines in the node's namespace.
			err = fmt.Errorf("leaving the node's network namespace: %w", back)
		}
		ch <- result{ln, err}
	}()
	r := <-ch
	return r.ln, r.err
}

// serve serves h on ln until Stop.
func (n *RealNode) serve(ln net.Listener, h http.Handler) {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	n.mu.Lock()
	n.servers = append(n.servers, srv)
	n.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
}

// nodeCommand runs bin in the node's network namespace (only that one: the mount namespace stays
// the host's, so the kubelet sees the host's cgroup mounts, which `ip netns exec` would hide).
func (n *RealNode) nodeCommand(name, bin string, args ...string) (*process, error) {
	return startProcess(name, n.path(name+".log"), "nsenter", append([]string{"--net=/run/netns/" + n.netns, "--", bin}, args...)...)
}

// startContainerd writes containerd's configuration (the CRI plugin, runc and the flaky handler,
// the CNI network, the registry) and starts it.
func (n *RealNode) startContainerd(ctx context.Context, o RealNodeOptions) error {
	flaky, err := n.buildFlakyRuntime(o)
	if err != nil {
		return err
	}
	cniDir := n.path("cni")
	if err := os.MkdirAll(cniDir, 0o755); err != nil {
		return err
	}
	// The pod network is a bridge inside the node's namespace, as on a one-node cluster.
	cni := `{
  "cniVersion": "1.0.0",
  "name": "doomwatch-e2e",
  "plugins": [{
    "type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
    "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.244.0.0/24"}]], "dataDir": "` + n.path("cni-ipam") + `"}
  }]
}`
	if err := os.WriteFile(filepath.Join(cniDir, "10-bridge.conflist"), []byte(cni), 0o644); err != nil {
		return err
	}
	// Plain HTTP to the suite's registry (containerd's docs/hosts.md).
	hosts := filepath.Join(n.path("certs.d"), n.Registry)
	if err := os.MkdirAll(hosts, 0o755); err != nil {
		return err
	}
	hostsTOML := fmt.Sprintf("server = \"http://%s\"\n\n[host.\"http://%s\"]\n  capabilities = [\"pull\", \"resolve\"]\n", n.Registry, n.Registry)
	if err := os.WriteFile(filepath.Join(hosts, "hosts.toml"), []byte(hostsTOML), 0o644); err != nil {
		return err
	}
	runtimeTable := func(name, binary string) string {
		return fmt.Sprintf(`      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.%[1]s]
        runtime_type = 'io.containerd.runc.v2'
        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.%[1]s.options]
          BinaryName = %[2]q
          Root = %[3]q
          SystemdCgroup = false
`, name, binary, n.runcRoot)
	}
	cfg := fmt.Sprintf(`version = 4
root = %[1]q
state = %[2]q
imports = []

[plugins]
  [plugins.'io.containerd.server.v1.grpc']
    address = %[3]q
  [plugins.'io.containerd.server.v1.ttrpc']
    address = %[4]q
  [plugins.'io.containerd.shim.v1.manager']
    socket_dir = %[5]q
  [plugins.'io.containerd.internal.v1.opt']
    path = %[6]q
  [plugins.'io.containerd.nri.v1.nri']
    disable = true
  [plugins.'io.containerd.cri.v1.images']
    snapshotter = 'overlayfs'
    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = %[7]q
    [plugins.'io.containerd.cri.v1.images'.registry]
      config_path = %[8]q
  [plugins.'io.containerd.cri.v1.runtime']
    # The VM's root may not lower OOM scores below its own: without this, runc fails every
    # sandbox ("can't get final child's PID from pipe: EOF").
    restrict_oom_score_adj = true
    # The pods' network namespaces under the state directory, not /run/netns.
    netns_mounts_under_state_dir = true
    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = 'runc'
%[9]s%[10]s    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = [%[11]q]
      conf_dir = %[12]q
`, n.path("containerd"), n.path("state"), n.path("containerd.sock"), n.path("containerd.sock.ttrpc"),
		n.path("s"), n.path("opt"), n.Registry+"/doomwatch/pause:1", n.path("certs.d"),
		runtimeTable("runc", filepath.Join(o.NodeBin, "runc")), runtimeTable(FlakyRuntimeClass, flaky),
		o.NodeBin, cniDir)
	cfgPath := n.path("containerd.toml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		return err
	}
	// containerd finds its shim on PATH.
	p, err := n.nodeCommand("containerd", "env", "PATH="+o.NodeBin+":"+os.Getenv("PATH"), filepath.Join(o.NodeBin, "containerd"), "--config="+cfgPath)
	if err != nil {
		return err
	}
	n.mu.Lock()
	n.containerd = p
	n.mu.Unlock()
	sock := n.path("containerd.sock")
	return waitReady(ctx, p, func(context.Context) bool {
		c, err := net.DialTimeout("unix", sock, time.Second)
		if err != nil {
			return false
		}
		c.Close()
		return true
	})
}

// buildFlakyRuntime builds e2e/cmd/flakyrunc and its settings beside it.
func (n *RealNode) buildFlakyRuntime(o RealNodeOptions) (string, error) {
	bin := n.path("flakyrunc")
	if err := goBuild("./cmd/flakyrunc", bin); err != nil {
		return "", err
	}
	state := n.path("flakyrunc-state")
	if err := os.MkdirAll(state, 0o755); err != nil {
		return "", err
	}
	settings, err := json.Marshal(map[string]any{"runc": filepath.Join(o.NodeBin, "runc"), "stateDir": state})
	if err != nil {
		return "", err
	}
	return bin, os.WriteFile(bin+".json", settings, 0o644)
}

// goBuild builds a package of the e2e module statically, for the node's images and runtime.
func goBuild(pkg, out string) error {
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	return nil
}

// kubeletSysctls are the kernel settings the kubelet sets when protectKernelDefaults is false
// (kubernetes/kubernetes pkg/kubelet/cm/container_manager_linux.go setupKernelTunables); Stop
// puts back what they were.
var kubeletSysctls = []string{"vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops", "kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes"}

// startKubelet writes the kubelet's configuration and credentials and starts it, then waits until
// its Node is Ready.
func (n *RealNode) startKubelet(ctx context.Context, o RealNodeOptions) error {
	// Saved outside the node's directory, so that a later run puts them back when this one is
	// killed before its cleanup.
	saved := map[string]string{}
	for _, k := range kubeletSysctls {
		if b, err := os.ReadFile("/proc/sys/" + k); err == nil {
			saved[k] = strings.TrimSpace(string(b))
		}
	}
	b, err := json.Marshal(saved)
	if err != nil {
		return err
	}
	n.sysctlFile = "/run/" + n.cgroupName + ".sysctl.json"
	if err := os.WriteFile(n.sysctlFile, b, 0o600); err != nil {
		return err
	}
	// The kubelet's --cgroup-root must exist in every hierarchy it uses; one of the node's own
	// keeps its pods apart from the host's.
	for _, m := range cgroupMounts() {
		p := filepath.Join(m, n.cgroupName)
		if err := os.Mkdir(p, 0o755); err != nil && !os.IsExist(err) {
			return fmt.Errorf("making cgroup %s: %w", p, err)
		}
		n.cgroupRoots = append(n.cgroupRoots, p)
	}
	ln, err := n.listenInNode()
	if err != nil {
		return fmt.Errorf("listening for the kubelet's API connection: %w", err)
	}
	proxy := ProxyOn(ln, n.cp.APIAddr())
	n.mu.Lock()
	n.proxy = proxy
	n.mu.Unlock()
	// The cluster authorizes with RBAC only (no Node authorizer, no NodeRestriction), so the
	// kubelet's identity is in system:masters; its name is the one a kubelet has.
	u, err := n.cp.NewUserAt("system:node:"+n.Name, "https://"+proxy.Addr, "system:nodes", "system:masters")
	if err != nil {
		return err
	}
	cfg := fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# This machine has cgroup v1, which the kubelet refuses since v1.35 unless told otherwise.
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /%[1]s
failSwapOn: false
containerRuntimeEndpoint: unix://%[2]s
address: %[3]s
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 0
podLogsDir: %[4]s
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: false
  x509:
    clientCAFile: %[5]s
# The API server is the only client (logs, exec) and holds a certificate of the suite's CA.
authorization:
  mode: AlwaysAllow
serializeImagePulls: false
# The node shares the machine's disk and memory with the suite: no evictions for pressure.
evictionHard:
  memory.available: "1Mi"
  nodefs.available: "1%%"
  imagefs.available: "1%%"
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
`, n.cgroupName, n.path("containerd.sock"), n.IP, n.path("pod-logs"), n.cp.path("ca.crt"))
	cfgPath := n.path("kubelet.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		return err
	}
	p, err := n.nodeCommand("kubelet", filepath.Join(o.K8sBin, "kubelet"),
		"--config="+cfgPath,
		"--kubeconfig="+u.Kubeconfig,
		"--root-dir="+n.path("kubelet"),
		"--cert-dir="+n.path("kubelet-pki"),
		"--hostname-override="+n.Name,
		"--node-ip="+n.IP,
		"--v=2",
	)
	if err != nil {
		return err
	}
	n.mu.Lock()
	n.kubelet = p
	n.mu.Unlock()
	return waitReady(ctx, p, func(ctx context.Context) bool {
		ready, _ := n.cp.nodeReady(ctx, n.Name)
		return ready
	})
}

// mount is one line of /proc/self/mountinfo: where, and what filesystem type.
type mount struct{ point, fstype string }

// mounts reads /proc/self/mountinfo.
func mounts() []mount {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []mount
	s := bufio.NewScanner(f)
	for s.Scan() {
		// "36 35 0:31 / /sys/fs/cgroup/memory rw,... - cgroup cgroup rw,memory"
		fields := strings.Fields(s.Text())
		if len(fields) < 5 {
			continue
		}
		m := mount{point: fields[4]}
		for i, fl := range fields {
			if fl == "-" && i+1 < len(fields) {
				m.fstype = fields[i+1]
				break
			}
		}
		out = append(out, m)
	}
	return out
}

// cgroupMounts lists the cgroup hierarchies (v1, and the v2 root) mounted under /sys/fs/cgroup.
func cgroupMounts() []string {
	var out []string
	for _, m := range mounts() {
		if (m.fstype == "cgroup" || m.fstype == "cgroup2") && strings.HasPrefix(m.point, "/sys/fs/cgroup") {
			out = append(out, m.point)
		}
	}
	return out
}

// Stop kills the kubelet, containerd, the containers and their shims, and removes every mount,
// cgroup, network namespace and link the node made, and puts back the kernel settings the kubelet
// changed. It is safe to call more than once and after a failed start.
func (n *RealNode) Stop() {
	n.mu.Lock()
	kubelet, ctrd, servers, proxy := n.kubelet, n.containerd, n.servers, n.proxy
	n.kubelet, n.containerd, n.servers, n.proxy = nil, nil, nil, nil
	n.mu.Unlock()
	kubelet.kill()
	ctrd.kill()
	n.killContainers()
	for _, s := range servers {
		_ = s.Close()
	}
	if proxy != nil {
		proxy.Close()
	}
	unmountUnder(n.dir)
	restoreSysctls(n.sysctlFile)
	removeCgroups(n.cgroupRoots)
	_ = exec.Command("ip", "netns", "del", n.netns).Run()
	_ = exec.Command("ip", "link", "del", n.hostLink).Run()
	removeContainerLogLinks(n.dir)
	// The kubelet's root holds read-only files the runtime made; unmounted, they are plain files.
	_ = os.RemoveAll(n.dir)
}

// killContainers kills every container runc runs for the node, and the shims that watch them:
// a shim runs in its own session and outlives containerd.
func (n *RealNode) killContainers() {
	if n.runcRoot == "" {
		return
	}
	// runc's root per containerd namespace: Root/k8s.io.
	roots, _ := filepath.Glob(filepath.Join(n.runcRoot, "*"))
	for _, root := range roots {
		entries, _ := os.ReadDir(root)
		for _, e := range entries {
			_ = exec.Command(n.runcPath, "--root", root, "delete", "--force", e.Name()).Run()
		}
	}
	killShims(func(cmdline string) bool { return strings.Contains(cmdline, n.dir+"/") })
}

// killShims kills the runc shims whose command line (its containerd's address, which names the
// node's directory) matches: only the nodes' own.
func killShims(match func(cmdline string) bool) {
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, path := range cmdlines {
		b, _ := os.ReadFile(path)
		args := strings.Split(string(b), "\x00")
		if len(args) == 0 || filepath.Base(args[0]) != "containerd-shim-runc-v2" || !match(string(b)) {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(path))); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// unmountUnder detaches every mount below dir, deepest first.
func unmountUnder(dir string) {
	if dir == "" {
		return
	}
	var points []string
	for _, m := range mounts() {
		if m.point == dir || strings.HasPrefix(m.point, dir+"/") {
			points = append(points, m.point)
		}
	}
	sort.Slice(points, func(i, j int) bool { return len(points[i]) > len(points[j]) })
	for _, p := range points {
		_ = unix.Unmount(p, unix.MNT_DETACH)
	}
}

// removeCgroups kills every process left in the cgroup trees (a container whose shim and runc
// state are gone, after a run was killed) and removes the trees, leaves first. A cgroup whose last
// process is still exiting refuses for a moment; it is retried for a few seconds.
func removeCgroups(roots []string) {
	deadline := time.Now().Add(10 * time.Second)
	for _, root := range roots {
		for {
			var dirs []string
			_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
				if err == nil && d.IsDir() {
					dirs = append(dirs, p)
					killProcs(filepath.Join(p, "cgroup.procs"))
				}
				return nil
			})
			sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
			var failed error
			for _, d := range dirs {
				if err := unix.Rmdir(d); err != nil && !errors.Is(err, unix.ENOENT) {
					failed = err
				}
			}
			if failed == nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}

// restoreSysctls writes back the kernel settings saved in file, and removes it.
func restoreSysctls(file string) {
	if file == "" {
		return
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return
	}
	var saved map[string]string
	if json.Unmarshal(b, &saved) == nil {
		for k, v := range saved {
			_ = os.WriteFile("/proc/sys/"+k, []byte(v), 0o644)
		}
	}
	_ = os.Remove(file)
}

// killProcs kills the processes a cgroup.procs file lists.
func killProcs(procs string) {
	b, err := os.ReadFile(procs)
	if err != nil {
		return
	}
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 1 && pid != os.Getpid() {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// removeContainerLogLinks removes the links the kubelet makes in /var/log/containers (a path it
// does not let one configure) that point into dir.
func removeContainerLogLinks(dir string) {
	entries, _ := os.ReadDir("/var/log/containers")
	for _, e := range entries {
		p := filepath.Join("/var/log/containers", e.Name())
		if target, err := os.Readlink(p); err == nil && strings.HasPrefix(target, dir+"/") {
			_ = os.Remove(p)
		}
	}
}

// sweepRealNodes removes what a run that was killed before its cleanup left behind: the
// namespaces, links and cgroups named after a test binary that is no longer running.
func sweepRealNodes() {
	dead := func(name string) bool {
		digits := strings.TrimPrefix(name, nodeNamePrefix)
		if i := strings.IndexByte(digits, '-'); i >= 0 {
			digits = digits[:i]
		}
		pid, err := strconv.Atoi(digits)
		if err != nil || pid == os.Getpid() {
			return false
		}
		return syscall.Kill(pid, 0) == syscall.ESRCH
	}
	// A shim's address is /run/dwnode<pid>-<random>/containerd.sock.
	killShims(func(cmdline string) bool {
		i := strings.Index(cmdline, "/run/"+nodeNamePrefix)
		if i < 0 {
			return false
		}
		rest := cmdline[i+len("/run/"):]
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			rest = rest[:j]
		}
		return dead(rest)
	})
	dirs, _ := filepath.Glob("/run/" + nodeNamePrefix + "*")
	for _, d := range dirs {
		if !dead(strings.TrimSuffix(filepath.Base(d), ".sysctl.json")) {
			continue
		}
		if strings.HasSuffix(d, ".sysctl.json") {
			restoreSysctls(d)
		} else {
			unmountUnder(d)
			removeContainerLogLinks(d)
			_ = os.RemoveAll(d)
		}
	}
	nss, _ := os.ReadDir("/run/netns")
	for _, e := range nss {
		if strings.HasPrefix(e.Name(), nodeNamePrefix) && dead(e.Name()) {
			_ = exec.Command("ip", "netns", "del", e.Name()).Run()
		}
	}
	links, _ := net.Interfaces()
	for _, l := range links {
		if strings.HasPrefix(l.Name, "dwn") && strings.HasSuffix(l.Name, "h") && dead(nodeNamePrefix+strings.TrimSuffix(strings.TrimPrefix(l.Name, "dwn"), "h")) {
			_ = exec.Command("ip", "link", "del", l.Name).Run()
		}
	}
	for _, m := range cgroupMounts() {
		cgs, _ := filepath.Glob(filepath.Join(m, nodeNamePrefix+"*"))
		for _, c := range cgs {
			if dead(filepath.Base(c)) {
				removeCgroups([]string{c})
			}
		}
	}
}

// APIServerInNode is the API server's host:port as the node's network namespace reaches it (the
// kubelet's way in, on the namespace's loopback), for pods on the host's network: the machines
// this runs on have no kube-proxy, so the kubernetes Service's ClusterIP leads nowhere.
func (n *RealNode) APIServerInNode() string { return n.proxy.Addr }

// Logs returns the tail of the kubelet's and containerd's logs, for a failure report.
func (n *RealNode) Logs(lines int) string {
	var b strings.Builder
	for _, name := range []string{"containerd.log", "kubelet.log"} {
		if _, err := os.Stat(n.path(name)); err == nil {
			fmt.Fprintf(&b, "----- %s (last %d lines)\n%s\n", name, lines, logTail(n.path(name), lines))
		}
	}
	return b.String()
}

// Exited names the node's processes that have died.
func (n *RealNode) Exited() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return exitedOf(n.containerd, n.kubelet)
}

// PodOnNode places a pod spec on this node (by its hostname label, through the scheduler).
func (n *RealNode) PodOnNode(spec *corev1.PodSpec) {
	if spec.NodeSelector == nil {
		spec.NodeSelector = map[string]string{}
	}
	spec.NodeSelector[corev1.LabelHostname] = n.Name
}
