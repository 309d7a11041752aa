package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"doomwatch/classify"
)

// doomwatch runs as a kubectl plugin the way krew installs one: an executable named
// kubectl-doomwatch on the PATH (krew's is a symlink into its store), which kubectl finds and
// execs with the arguments after the plugin's name (k8s.io/kubectl pkg/cmd/plugin.go
// HandlePluginCommand). kubectl passes its environment, not its own flags: the plugin reads
// KUBECONFIG itself, and kubectl refuses flags placed before the plugin's name.

var (
	pluginOnce sync.Once
	pluginDir  string
	pluginErr  error
)

// kubectlPluginPath returns a directory holding only kubectl-doomwatch, a symlink to the built
// doomwatch binary, made once per run. A symlink rather than a copy, as krew does: argv[0] is the
// link's name while os.Executable is the binary's.
func kubectlPluginPath(t *testing.T) string {
	t.Helper()
	bin := doomwatchBinary(t)
	pluginOnce.Do(func() {
		dir := filepath.Join(suiteDir, "kubectl-plugins")
		if pluginErr = os.MkdirAll(dir, 0o755); pluginErr != nil {
			return
		}
		if pluginErr = os.Symlink(bin, filepath.Join(dir, "kubectl-doomwatch")); pluginErr == nil {
			pluginDir = dir
		}
	})
	if pluginErr != nil {
		t.Fatalf("installing kubectl-doomwatch: %v", pluginErr)
	}
	return pluginDir
}

// kubectlBinary returns the real kubectl that hack/build-k8s.sh builds next to kube-apiserver.
// Without it the test skips, except under CI, where the e2e suite must run (see runSuite).
func kubectlBinary(t *testing.T) string {
	t.Helper()
	c := needCluster(t)
	bin := filepath.Join(c.binDir, "kubectl")
	if _, err := os.Stat(bin); err != nil {
		msg := "kubectl not built in DOOMWATCH_K8S_BIN=" + c.binDir + ": run hack/build-k8s.sh"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
}

// kubectlCommand returns the real kubectl, not yet started, with args, set up to find doomwatch as
// its plugin: PATH holds only kubectl-doomwatch, KUBECONFIG is kubeconfig (when not empty), and
// HOME is the test's own, so that no ~/.kube/kuberc of the machine's changes kubectl. For a test
// that must act while the plugin runs; runKubectl runs one to completion.
func kubectlCommand(ctx context.Context, t *testing.T, kubeconfig string, args ...string) *exec.Cmd {
	t.Helper()
	kubectl, plugins := kubectlBinary(t), kubectlPluginPath(t)
	cmd := exec.CommandContext(ctx, kubectl, args...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "PATH="+plugins, "HOME="+t.TempDir())
	if kubeconfig != "" {
		cmd.Env = append(cmd.Env, "KUBECONFIG="+kubeconfig)
	}
	return cmd
}

// runKubectl runs the real kubectl with args to completion, bounded by limit, with doomwatch
// installed as its plugin (see kubectlCommand): runKubectl(t, time.Minute, kc, "doomwatch", "--once").
func runKubectl(t *testing.T, limit time.Duration, kubeconfig string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	return runCommand(t, ctx, kubectlCommand(ctx, t, kubeconfig, args...))
}

// TestPluginList: kubectl sees kubectl-doomwatch as a plugin it can run.
func TestPluginList(t *testing.T) {
	r := runKubectl(t, time.Minute, "", "plugin", "list")
	if r.code != 0 {
		t.Fatalf("kubectl plugin list: %s", r)
	}
	want := filepath.Join(kubectlPluginPath(t), "kubectl-doomwatch")
	if !strings.Contains(r.stdout, want) {
		t.Errorf("kubectl plugin list does not list %s:\n%s", want, r)
	}
}

// TestPluginHelp: run as `kubectl doomwatch`, the usage names the command the user typed, so that
// every example in it can be pasted back.
func TestPluginHelp(t *testing.T) {
	r := runKubectl(t, time.Minute, "", "doomwatch", "--help")
	if r.code != 0 {
		t.Fatalf("kubectl doomwatch --help: %s", r)
	}
	lines := usageLines(r.stdout)
	if len(lines) == 0 {
		t.Fatalf("kubectl doomwatch --help has no Usage section:\n%s", r)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "  kubectl doomwatch") {
			t.Errorf("usage line %q does not start with \"  kubectl doomwatch\"", l)
		}
	}
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(l, "  doomwatch ") {
			t.Errorf("help names the bare binary, which is not on the PATH as a plugin: %q", l)
		}
	}
}

// usageLines returns the lines of help's "Usage:" section, up to the blank line that ends it.
func usageLines(help string) []string {
	_, section, ok := strings.Cut(help, "\nUsage:\n")
	if !ok {
		return nil
	}
	section, _, _ = strings.Cut(section, "\n\n")
	return strings.Split(strings.TrimRight(section, "\n"), "\n")
}

// TestPluginOnce: `kubectl doomwatch --once -o json -n NS` reaches the cluster through KUBECONFIG,
// which kubectl hands its plugin in the environment, and honours the flags after the plugin's name.
func TestPluginOnce(t *testing.T) {
	e := newEnv(t)
	node := e.nodeName("n1")
	e.node(node, true)
	e.pod(podSpec{name: "web-a", node: node, status: podStatus(corev1.PodRunning, running("app", true, 0, nil))})
	// A pod in another namespace, which -n must leave out.
	other := newEnv(t)
	other.pod(podSpec{name: "elsewhere", node: node, status: podStatus(corev1.PodRunning, running("app", true, 0, nil))})

	r := runKubectl(t, time.Minute, adminKubeconfig(t), "doomwatch", "--once", "-o", "json", "--request-timeout=20s", "-n", e.ns)
	if r.code != 0 {
		t.Fatalf("kubectl doomwatch --once: %s", r)
	}
	var s snapshot
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		t.Fatalf("decoding kubectl doomwatch --once -o json: %v\n%s", err, r)
	}
	checkSchema(t, r.stdout)
	p, ok := s.pod("web-a")
	if !ok {
		t.Fatalf("kubectl doomwatch --once -n %s does not list pod web-a:\n%s", e.ns, r)
	}
	if p.Namespace != e.ns || p.Node != node || p.Verdict != classify.Healthy.String() {
		t.Errorf("pod web-a: namespace %q node %q verdict %q, want %q %q %q", p.Namespace, p.Node, p.Verdict, e.ns, node, classify.Healthy)
	}
	if _, ok := s.pod("elsewhere"); ok || len(s.Pods) != 1 {
		t.Errorf("-n %s: got %d pods, want only web-a:\n%s", e.ns, len(s.Pods), r.stdout)
	}
}
