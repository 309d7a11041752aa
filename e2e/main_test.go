package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The suite shares one cluster: starting kube-apiserver costs tens of seconds on two cores. Each
// test works in its own namespace and names its nodes after it, so tests do not see each other's
// objects in the assertions they make.
var (
	cluster *Cluster
	// skipReason is set when the servers are not available outside CI; every test skips with it.
	skipReason string
	// suiteDir holds the cluster's files and the doomwatch binary.
	suiteDir string
)

func TestMain(m *testing.M) { os.Exit(runSuite(m)) }

func runSuite(m *testing.M) int {
	flag.Parse() // testing.Short needs parsed flags in TestMain
	ci := os.Getenv("CI") == "true"
	binDir := os.Getenv("DOOMWATCH_K8S_BIN")
	missing := ""
	switch {
	case binDir == "":
		missing = "DOOMWATCH_K8S_BIN is not set"
	default:
		for _, b := range []string{"etcd", "kube-apiserver"} {
			if _, err := os.Stat(filepath.Join(binDir, b)); err != nil {
				missing = fmt.Sprintf("%s not found in DOOMWATCH_K8S_BIN=%s", b, binDir)
			}
		}
	}
	if missing != "" {
		if ci {
			// Under CI the e2e suite must run: a missing binary is a failure, never a skip.
			fmt.Fprintf(os.Stderr, "e2e: %s (CI=true: failing; run `make test`, which builds them with hack/build-k8s.sh)\n", missing)
			return 1
		}
		skipReason = "e2e: " + missing + "; run `make test` or DOOMWATCH_K8S_BIN=$(hack/build-k8s.sh | tail -n1) go test ./e2e"
		return m.Run()
	}
	if testing.Short() && !ci {
		skipReason = "e2e: skipped in -short mode"
		return m.Run()
	}

	dir, err := os.MkdirTemp("", "doomwatch-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	suiteDir = dir
	start := time.Now()
	cluster, err = StartCluster(context.Background(), binDir, dir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: starting the cluster: %v\n(files kept in %s)\n", err, dir)
		return 1
	}
	fmt.Fprintf(os.Stderr, "e2e: etcd and kube-apiserver ready at %s in %s\n", cluster.Host, time.Since(start).Round(time.Millisecond))
	code := m.Run()
	cluster.Stop()
	if code != 0 {
		// The servers' logs explain most failures (a crash, a refused flag, an RBAC denial).
		fmt.Fprintf(os.Stderr, "e2e: failed; files kept in %s\n%s", dir, cluster.Logs(40))
		return code
	}
	os.RemoveAll(dir)
	return code
}

// needCluster returns the shared cluster, or skips the test when the servers are unavailable
// (only outside CI: TestMain fails the run under CI).
func needCluster(t *testing.T) *Cluster {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
	return cluster
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// doomwatchBinary builds the doomwatch binary once per run, on first use.
func doomwatchBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		binPath = filepath.Join(suiteDir, "doomwatch")
		args := []string{"build", "-o", binPath}
		if raceEnabled {
			args = append(args, "-race")
		}
		cmd := exec.Command("go", append(args, "..")...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build doomwatch: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// result is one finished doomwatch run.
type result struct {
	stdout, stderr string
	code           int
	took           time.Duration
	timedOut       bool
}

// runDoomwatch runs the binary to completion, bounded by limit. It never sleeps: the context
// deadline is the only clock, and a run that hits it reports timedOut.
func runDoomwatch(t *testing.T, limit time.Duration, env []string, args ...string) result {
	t.Helper()
	bin := doomwatchBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = doomwatchEnv(env...)
	return runCommand(t, ctx, cmd)
}

// runCommand runs cmd (made with ctx) to completion and collects its output, exit code and time.
func runCommand(t *testing.T, ctx context.Context, cmd *exec.Cmd) result {
	t.Helper()
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String(), took: time.Since(start), timedOut: ctx.Err() != nil}
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			r.code = ee.ExitCode()
		} else {
			t.Fatalf("running %q: %v", cmd.Args, err)
		}
	}
	return r
}

func (r result) String() string {
	return fmt.Sprintf("exit %d after %s (timed out: %v)\n--- stdout:\n%s\n--- stderr:\n%s", r.code, r.took.Round(time.Millisecond), r.timedOut, r.stdout, r.stderr)
}

// adminKubeconfig writes (once per test) a kubeconfig for a system:masters user.
func adminKubeconfig(t *testing.T) string {
	t.Helper()
	u, err := cluster.NewUser("admin-"+strings.ToLower(notDNS.ReplaceAllString(t.Name(), "-")), "system:masters")
	if err != nil {
		t.Fatal(err)
	}
	return u.Kubeconfig
}
