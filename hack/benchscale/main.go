// Command benchscale measures doomwatch and k9s side by side on a real kube-apiserver holding N
// realistic pods, from outside each process: it starts the e2e suite's etcd and
// kube-apiserver on loopback, loads the pods (package hack/scale), then runs each tool in a
// pseudo-terminal, one after the other, reading its screen through a terminal emulator and its
// CPU and memory from /proc; doomwatch's headless modes, record and serve (with what a scrape of
// its /metrics costs), run after the dashboard, each alone. It prints the figures as markdown
// tables on stdout; progress goes to stderr. `make bench-scale N=…` runs it.
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"k8s.io/client-go/kubernetes"

	"doomwatch/e2e"
	"doomwatch/hack/scale"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "benchscale:", err)
		os.Exit(1)
	}
}

type flags struct {
	k8sBin, k9s, k9sMissing, doomwatch, fixtures string
	attach                                       string
	tools                                        []string
	keep, serve, noGzip                          bool
	nodes, clusters                              int
}

func run() error {
	s := settings{width: 200, height: 50, probeTimeout: 10 * time.Second, keyTimeout: 10 * time.Second, maxProbes: 300}
	var f flags
	pflag.IntVar(&s.pods, "pods", 10000, "pods to load")
	pflag.IntVar(&f.nodes, "nodes", 100, "nodes to load")
	pflag.IntVar(&f.clusters, "clusters", 1, "clusters to start, each with --pods pods: with more than one, doomwatch watches them all (--context a,b,…) beside one k9s per cluster (fleet.go)")
	pflag.StringVar(&f.k8sBin, "k8s-bin", os.Getenv("DOOMWATCH_K8S_BIN"), "directory with etcd and kube-apiserver (hack/build-k8s.sh)")
	pflag.StringVar(&f.k9s, "k9s", "", "k9s binary (hack/build-k9s.sh); empty: doomwatch alone")
	pflag.StringVar(&f.k9sMissing, "k9s-missing", "", "why there is no k9s binary, for the report")
	pflag.StringVar(&f.doomwatch, "doomwatch", "", "doomwatch binary (default: go build the module in the current directory)")
	pflag.StringVar(&f.fixtures, "fixtures", "classify/testdata", "classify's fixtures, where the runtime messages come from")
	pflag.StringSliceVar(&f.tools, "tools", []string{"doomwatch", "k9s", "bare", "floor", "once", "record", "serve"}, "what to measure (record: doomwatch record -A, headless, beside the dashboard's figures; serve: doomwatch serve -A, likewise, and its scrapes; floor: an idle bubbletea program, hack/idlefloor)")
	pflag.IntVar(&s.scrapes, "scrapes", 100, "back-to-back scrapes of serve's /metrics in each encoding (plain, gzip)")
	pflag.DurationVar(&s.idle, "idle", 30*time.Second, "idle window")
	pflag.Float64Var(&s.churnRate, "churn-rate", 500, "status updates per second during the churn window")
	pflag.DurationVar(&s.churnFor, "churn-for", 60*time.Second, "churn window")
	pflag.DurationVar(&s.startTimeout, "start-timeout", 0, "how long a tool may take to show its rows and sync (default: 60 s + 1 s per 250 pods)")
	pflag.BoolVar(&f.keep, "keep", false, "keep the servers' files and logs")
	pflag.StringVar(&f.attach, "attach", "", "kubeconfig of a loopback server that a --serve run loaded with the same --pods and --nodes: measure there instead of starting and loading one")
	pflag.BoolVar(&f.noGzip, "disable-compression", false, "run doomwatch (and the bare informer, with one cluster) with --disable-compression (k9s has no such setting)")
	pflag.BoolVar(&f.serve, "serve", false, "after measuring, keep the loaded servers running and print an admin kubeconfig, until interrupted (use --tools none to only load)")
	pflag.Parse()
	if f.k8sBin == "" && f.attach == "" {
		return fmt.Errorf("--k8s-bin (or DOOMWATCH_K8S_BIN) is required: run hack/build-k8s.sh")
	}
	if s.startTimeout == 0 {
		s.startTimeout = time.Minute + time.Duration(s.pods*max(f.clusters, 1)/250)*time.Second
	}
	if s.idle > 10*time.Minute || s.churnFor > 10*time.Minute {
		return fmt.Errorf("windows are bounded to 10 minutes")
	}
	if s.scrapes < 1 {
		return fmt.Errorf("--scrapes must be at least 1")
	}
	want := map[string]bool{}
	for _, t := range f.tools {
		want[t] = true
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logf := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
	}

	dir, err := os.MkdirTemp("", "doomwatch-bench-")
	if err != nil {
		return err
	}
	defer func() {
		if f.keep {
			logf("files kept in %s", dir)
			return
		}
		os.RemoveAll(dir)
	}()

	// The binaries first: a build error should not cost a cluster start and a load.
	bins, err := buildBinaries(ctx, dir, f, logf)
	if err != nil {
		return err
	}

	msgs, err := scale.LoadMessages(f.fixtures)
	if err != nil {
		return err
	}
	if f.clusters > 1 {
		return runFleet(ctx, s, f, f.clusters, dir, bins, msgs, logf)
	}
	cfg := scale.DefaultConfig(s.pods)
	cfg.Nodes, cfg.Messages = f.nodes, msgs
	fleet, err := scale.NewFleet(cfg)
	if err != nil {
		return err
	}

	var client kubernetes.Interface
	var kubeconfig string
	var servers []int
	var load scale.LoadResult
	if f.attach != "" {
		if client, err = scale.ClientFromKubeconfig(f.attach); err != nil {
			return err
		}
		kubeconfig = f.attach
		logf("attaching to the fleet on %s", f.attach)
		if err := fleet.Attach(ctx, client); err != nil {
			return err
		}
		load.Pods, load.Nodes, load.Namespaces = cfg.Pods, cfg.Nodes, fleet.Namespaces()
		for k := range fleet.Namespaces() {
			load.Deployments += fleet.DeploymentsIn(k)
		}
		load.Attached = true
	} else {
		logf("starting etcd and kube-apiserver from %s", f.k8sBin)
		cluster, err := e2e.StartClusterWith(ctx, f.k8sBin, dir, e2e.Options{
			// 150,000 pods with their status and churn outgrow etcd's default 2 GiB quota.
			EtcdArgs: []string{"--quota-backend-bytes=8589934592"},
			// The load's worker pool, the tools' lists and the churn at once.
			APIServerArgs: []string{"--max-requests-inflight=1000", "--max-mutating-requests-inflight=500"},
		})
		if err != nil {
			return fmt.Errorf("starting the cluster: %w", err)
		}
		defer cluster.Stop()
		if client, err = scale.NewClient(cluster.Admin); err != nil {
			return err
		}
		user, err := cluster.NewUser("bench", "system:masters")
		if err != nil {
			return err
		}
		kubeconfig = user.Kubeconfig
		servers = cluster.Pids()

		counts := fleet.Counts()
		logf("loading %d pods (%d healthy, %d crash-loop, %d oom-loop, %d start-error on %v) on %d nodes in %d namespaces",
			s.pods, counts[scale.Healthy], counts[scale.CrashLoop], counts[scale.OOMLoop], counts[scale.StartError],
			fleet.BadNodeNames(), cfg.Nodes, fleet.Namespaces())
		if load, err = fleet.Load(ctx, client, logf); err != nil {
			return fmt.Errorf("loading: %w\n%s", err, cluster.Logs(20))
		}
		logf("loaded in %s (%.0f pods/s)", load.Took.Round(time.Millisecond), load.PodsPerSecond)
		// The server is still busy with the load for a while (its watch cache, etcd's compaction):
		// a tool started at once would be measured against that, not against the cluster.
		logf("letting the servers settle for %s", settleAfterLoad)
		if err := sleep(ctx, settleAfterLoad); err != nil {
			return err
		}
	}

	b := &bench{settings: s, client: client, fleet: fleet, index: fleet.Index(), servers: servers, noGzip: f.noGzip}
	env := toolEnv(dir)
	rep := report{settings: s, noGzip: f.noGzip, load: load, fleet: fleet, k9sMissing: f.k9sMissing, k9sVersion: bins.k9sVersion, doomwatchBin: bins.doomwatch}
	if want["doomwatch"] {
		logf("measuring doomwatch")
		r := b.runTool(ctx, doomwatchTool(bins.doomwatch, kubeconfig, dir, f.noGzip, env), 0, logf)
		rep.doomwatch = &r
	}
	if want["bare"] {
		logf("measuring the bare typed informer")
		r := b.runBare(ctx, bins.bare, kubeconfig, env)
		rep.bare = &r
	}
	if want["floor"] {
		logf("measuring an idle bubbletea program")
		r := b.runFloor(ctx, bins.floor, env)
		rep.floor = &r
	}
	if want["once"] {
		logf("measuring doomwatch --once -A")
		r := b.runOnce(ctx, bins.doomwatch, kubeconfig, env)
		rep.once = &r
	}
	if want["record"] {
		logf("measuring doomwatch record -A")
		r := b.runRecord(ctx, bins.doomwatch, kubeconfig, dir, env, logf)
		rep.record = &r
	}
	if want["serve"] {
		logf("measuring doomwatch serve -A")
		r := b.runServe(ctx, bins.doomwatch, kubeconfig, env, logf)
		rep.serve = &r
	}
	// k9s last: at 150,000 pods it takes many GiB, and the page cache it evicts would slow the
	// server for whatever came after it.
	if want["k9s"] && bins.k9s != "" {
		logf("measuring k9s")
		r := b.runTool(ctx, k9sTool(bins.k9s, kubeconfig, env), 1, logf)
		rep.k9s = &r
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	rep.write(os.Stdout)
	if f.serve {
		logf("serving %s pods; kubeconfig: %s (interrupt to stop)", thousands(s.pods), kubeconfig)
		<-ctx.Done()
	}
	return nil
}

// settleAfterLoad is how long the servers are left alone between the load and the first tool.
const settleAfterLoad = time.Minute

type binaries struct {
	doomwatch, k9s, bare, floor string
	k9sVersion                  string
}

// buildBinaries builds doomwatch (unless given) and the bare informer into dir.
func buildBinaries(ctx context.Context, dir string, f flags, logf func(string, ...any)) (binaries, error) {
	bins := binaries{doomwatch: f.doomwatch, k9s: f.k9s, bare: filepath.Join(dir, "bareinformer"), floor: filepath.Join(dir, "idlefloor")}
	build := func(out, pkg string) error {
		logf("go build %s", pkg)
		cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go build %s: %w", pkg, err)
		}
		return nil
	}
	if bins.doomwatch == "" {
		bins.doomwatch = filepath.Join(dir, "doomwatch")
		if err := build(bins.doomwatch, "."); err != nil {
			return bins, err
		}
	}
	if err := build(bins.bare, "./hack/bareinformer"); err != nil {
		return bins, err
	}
	if err := build(bins.floor, "./hack/idlefloor"); err != nil {
		return bins, err
	}
	if bins.k9s != "" {
		out, err := exec.CommandContext(ctx, bins.k9s, "version", "--short").Output()
		if err != nil {
			return bins, fmt.Errorf("%s version: %w", bins.k9s, err)
		}
		bins.k9sVersion = strings.Join(strings.Fields(string(out)), " ")
	}
	return bins, nil
}

// toolEnv is the tools' environment: a fresh home and XDG directories under dir, so neither
// reads the user's configuration nor writes into it, and a 256-colour terminal. Go runtime
// settings (GOGC, GOMAXPROCS, GOMEMLIMIT) are not passed on: each tool runs with its own.
func toolEnv(dir string) []string {
	home := filepath.Join(dir, "home")
	env := []string{
		"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TERM=xterm-256color", "COLORTERM=truecolor", "LANG=C.UTF-8",
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_DATA_HOME=" + filepath.Join(home, ".local/share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local/state"), "XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"K9S_CONFIG_DIR=" + filepath.Join(home, ".config/k9s"),
	}
	for _, d := range []string{".config/k9s", ".local/share", ".local/state", ".cache"} {
		_ = os.MkdirAll(filepath.Join(home, d), 0o700)
	}
	return env
}
