package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"doomwatch/e2e"
	"doomwatch/hack/scale"
)

// The fleet mode (--clusters N): N kube-apiservers, each with its own etcd and --pods pods, named
// by the contexts a, b, c, … of one kubeconfig. It measures what watching them all costs: one
// doomwatch with --context a,b,c, against what users run today, one k9s per context, all started
// at once. Both are measured from outside, as the single-cluster mode measures one tool, adding
// up the processes: their CPU, their resident memory, and the time until every cluster's pods are
// on screen.

// fleetCluster is one cluster of the fleet mode.
type fleetCluster struct {
	context string
	cluster *e2e.Cluster
	user    *e2e.User
	client  kubernetes.Interface
	layout  *scale.Fleet
	load    scale.LoadResult
}

// fleetResult is one tool's figures in the fleet mode, its processes added up.
type fleetResult struct {
	tool  string
	procs int
	// firstRows is until a pod row is on any of the tool's screens; synced until every screen
	// shows its full count synced (each is in eachSynced).
	firstRows, synced time.Duration
	eachSynced        []time.Duration
	rowsOK, syncedOK  bool
	start, idle       window
	churn             window
	churnRuns         []scale.ChurnResult
	// servers is what every cluster's etcd and kube-apiserver cost during the churn window;
	// profile the CPU profile of that window (doomwatch's, DOOMWATCH_CPUPROFILE).
	servers     window
	profile     string
	err         error
	lastScreens []string
}

// runFleet starts n clusters, loads each, and measures doomwatch over all of them and one k9s per
// cluster.
func runFleet(ctx context.Context, s settings, f flags, n int, dir string, bins binaries, msgs scale.Messages, logf func(string, ...any)) error {
	if f.attach != "" || f.serve {
		return fmt.Errorf("--clusters does not take --attach or --serve")
	}
	if n > 26 {
		return fmt.Errorf("--clusters %d: at most 26 (contexts a to z)", n)
	}
	cfg := scale.DefaultConfig(s.pods)
	cfg.Nodes, cfg.Messages = f.nodes, msgs
	clusters := make([]*fleetCluster, n)
	for k := range clusters {
		name := string(rune('a' + k))
		cdir := filepath.Join(dir, "cluster-"+name)
		if err := os.MkdirAll(cdir, 0o700); err != nil {
			return err
		}
		logf("starting etcd and kube-apiserver %s of %d from %s", name, n, f.k8sBin)
		cluster, err := e2e.StartClusterWith(ctx, f.k8sBin, cdir, e2e.Options{
			EtcdArgs:      []string{"--quota-backend-bytes=8589934592"},
			APIServerArgs: []string{"--max-requests-inflight=1000", "--max-mutating-requests-inflight=500"},
		})
		if err != nil {
			return fmt.Errorf("starting cluster %s: %w", name, err)
		}
		defer cluster.Stop()
		c := &fleetCluster{context: name, cluster: cluster}
		if c.client, err = scale.NewClient(cluster.Admin); err != nil {
			return err
		}
		if c.user, err = cluster.NewUser("bench", "system:masters"); err != nil {
			return err
		}
		if c.layout, err = scale.NewFleet(cfg); err != nil {
			return err
		}
		clusters[k] = c
	}
	// One cluster loads at a time, with the machine to itself: the servers share its cores.
	for _, c := range clusters {
		logf("loading %d pods into cluster %s", s.pods, c.context)
		var err error
		if c.load, err = c.layout.Load(ctx, c.client, logf); err != nil {
			return fmt.Errorf("loading cluster %s: %w\n%s", c.context, err, c.cluster.Logs(20))
		}
		logf("cluster %s loaded in %s (%.0f pods/s)", c.context, c.load.Took.Round(time.Millisecond), c.load.PodsPerSecond)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig-fleet")
	if err := writeFleetKubeconfig(kubeconfig, clusters); err != nil {
		return err
	}
	logf("letting the servers settle for %s", settleAfterLoad)
	if err := sleep(ctx, settleAfterLoad); err != nil {
		return err
	}

	env := toolEnv(dir)
	contexts := make([]string, n)
	for k, c := range clusters {
		contexts[k] = c.context
	}
	total := n * s.pods
	rep := fleetReport{settings: s, clusters: clusters, kubeconfig: kubeconfig, k9sVersion: bins.k9sVersion, k9sMissing: f.k9sMissing,
		doomwatchBin: bins.doomwatch, noGzip: f.noGzip}
	want := map[string]bool{}
	for _, t := range f.tools {
		want[t] = true
	}
	if want["doomwatch"] {
		logf("measuring doomwatch --context %s", strings.Join(contexts, ","))
		r := runFleetTool(ctx, s, clusters, []tool{doomwatchFleetTool(bins.doomwatch, kubeconfig, dir, f.noGzip, contexts, env)}, []int{total}, logf)
		rep.doomwatch = &r
	}
	if want["k9s"] && bins.k9s != "" {
		logf("measuring %d k9s, one per context", n)
		tools := make([]tool, n)
		counts := make([]int, n)
		for k, c := range contexts {
			tools[k] = k9sTool(bins.k9s, kubeconfig, env)
			tools[k].args = append(tools[k].args, "--context", c)
			counts[k] = s.pods
		}
		r := runFleetTool(ctx, s, clusters, tools, counts, logf)
		rep.k9s = &r
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	rep.write(os.Stdout)
	return nil
}

// writeFleetKubeconfig writes one kubeconfig with a context per cluster, named as the cluster,
// each with the cluster's bench user.
func writeFleetKubeconfig(path string, clusters []*fleetCluster) error {
	kc := clientcmdapi.NewConfig()
	for _, c := range clusters {
		tls := c.user.Config.TLSClientConfig
		kc.Clusters[c.context] = &clientcmdapi.Cluster{Server: c.user.Config.Host, CertificateAuthorityData: tls.CAData}
		kc.AuthInfos[c.context] = &clientcmdapi.AuthInfo{ClientCertificateData: tls.CertData, ClientKeyData: tls.KeyData}
		kc.Contexts[c.context] = &clientcmdapi.Context{Cluster: c.context, AuthInfo: c.context}
	}
	kc.CurrentContext = clusters[0].context
	return clientcmd.WriteToFile(*kc, path)
}

// doomwatchFleetTool runs doomwatch over every namespace of every context.
func doomwatchFleetTool(bin, kubeconfig, dir string, noGzip bool, contexts []string, env []string) tool {
	t := doomwatchTool(bin, kubeconfig, dir, noGzip, env)
	t.args = append(t.args, "--context", strings.Join(contexts, ","))
	// The header's first line counts the clusters live ("3 of 3 clusters live", tui/header.go
	// syncState) and its pods line the pods of all of them.
	t.synced = func(s string, n int) bool {
		live := fmt.Sprintf("%d of %d clusters live", len(contexts), len(contexts))
		return strings.Contains(firstLine(s), live) && containsCount(s, n)
	}
	return t
}

// runFleetTool starts every one of tools at once, each in a pseudo-terminal of its own, and
// measures them as one: until a pod row is on a screen and until every screen shows its count
// (counts) synced, then an idle window and a churn window over every cluster.
func runFleetTool(ctx context.Context, s settings, clusters []*fleetCluster, tools []tool, counts []int, logf func(string, ...any)) (r fleetResult) {
	r = fleetResult{tool: tools[0].name, procs: len(tools), eachSynced: make([]time.Duration, len(tools))}
	start := time.Now()
	var terms []*terminal
	defer func() {
		for i, term := range terms {
			r.lastScreens = append(r.lastScreens, term.screen())
			term.stop(tools[i].quit, 10*time.Second)
		}
	}()
	for _, t := range tools {
		term, err := startTerminal(t.bin, t.args, t.env, s.width, s.height)
		if err != nil {
			r.err = fmt.Errorf("starting %s: %w", t.name, err)
			return r
		}
		terms = append(terms, term)
	}
	pids := make([]int, len(terms))
	for i, term := range terms {
		pids[i] = term.pid()
	}

	startCtx, endStart := context.WithCancel(ctx)
	startDone := make(chan struct{})
	go func() {
		defer close(startDone)
		r.start, _ = observeAll(startCtx, pids, s.startTimeout)
	}()
	stopStart := func() { endStart(); <-startDone }
	defer stopStart()

	type seen struct {
		rows, synced     time.Duration
		rowsOK, syncedOK bool
	}
	each := make([]seen, len(terms))
	var wg sync.WaitGroup
	for i, term := range terms {
		wg.Go(func() {
			at, _, ok := term.await(s.startTimeout, func(screen string) bool { return len(rows(screen)) > 0 })
			each[i].rows, each[i].rowsOK = at.Sub(start), ok
			if !ok {
				return
			}
			at, _, ok = term.await(s.startTimeout-time.Since(start), func(screen string) bool { return tools[i].synced(screen, counts[i]) })
			each[i].synced, each[i].syncedOK = at.Sub(start), ok
		})
	}
	wg.Wait()
	r.rowsOK, r.syncedOK = true, true
	for i, e := range each {
		if i == 0 || e.rows < r.firstRows {
			r.firstRows = e.rows
		}
		r.synced = max(r.synced, e.synced)
		r.eachSynced[i] = e.synced
		r.rowsOK = r.rowsOK && e.rowsOK
		r.syncedOK = r.syncedOK && e.syncedOK
	}
	if !r.rowsOK || !r.syncedOK {
		r.err = fmt.Errorf("not every screen showed its pods synced within %s", s.startTimeout)
		return r
	}
	logf("%s: first rows after %s, every cluster synced after %s", r.tool, r.firstRows.Round(time.Millisecond), r.synced.Round(time.Millisecond))
	stopStart()

	if err := sleep(ctx, 5*time.Second); err != nil {
		r.err = err
		return r
	}
	var err error
	if r.idle, err = observeAll(ctx, pids, s.idle); err != nil {
		r.err = fmt.Errorf("idle window: %w", err)
		return r
	}
	logf("%s: idle %.3f cores, RSS %s", r.tool, r.idle.cores, mib(r.idle.rssEnd))

	// The churn asked for is the single-cluster mode's, split evenly over the clusters, each
	// churning its first namespace.
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.churnRuns = make([]scale.ChurnResult, len(clusters))
	var cg sync.WaitGroup
	rate := s.churnRate / float64(len(clusters))
	for k, c := range clusters {
		cg.Go(func() {
			r.churnRuns[k] = c.layout.Churn(cctx, c.client, scale.ChurnConfig{Namespace: 0, Rate: rate,
				Count: int(rate * s.churnFor.Seconds()), Duration: s.churnFor, Workers: max(48/len(clusters), 1)})
		})
	}
	var servers []int
	for _, c := range clusters {
		servers = append(servers, c.cluster.Pids()...)
	}
	cg.Go(func() { r.servers, _ = observeAll(cctx, servers, s.churnFor) })
	if tools[0].profile != "" && len(pids) == 1 {
		_ = syscall.Kill(pids[0], syscall.SIGUSR1)
	}
	r.churn, err = observeAll(cctx, pids, s.churnFor)
	if tools[0].profile != "" && len(pids) == 1 {
		_ = syscall.Kill(pids[0], syscall.SIGUSR2)
		waitForProfile(tools[0].profile)
		r.profile = tools[0].profile
	}
	cg.Wait()
	if err != nil {
		r.err = fmt.Errorf("churn window: %w", err)
		return r
	}
	logf("%s: churn %.0f/s: %.3f cores, RSS max %s", r.tool, churnRate(r.churnRuns), r.churn.cores, mib(r.churn.rssMax))
	return r
}

// churnRate is the rate the churn runs achieved together.
func churnRate(runs []scale.ChurnResult) float64 {
	var rate float64
	for _, c := range runs {
		rate += c.Rate
	}
	return rate
}

// fleetReport is the fleet mode's figures, written as markdown.
type fleetReport struct {
	settings
	clusters   []*fleetCluster
	kubeconfig string
	doomwatch  *fleetResult
	k9s        *fleetResult
	k9sVersion string
	k9sMissing string
	// doomwatchBin is the binary whose churn profile is split by stage.
	doomwatchBin string
	// noGzip: doomwatch ran with --disable-compression.
	noGzip bool
}

// fleetTargets are the single-cluster targets of the clusters' size (targetsFor), for n of them:
// what one doomwatch costs per cluster at most (resident memory, idle CPU) times n, the rest as
// for one cluster: the first rows, the same churn in all, and the synced count within the
// single-cluster target for each cluster in turn.
func fleetTargets(pods, n int) targets {
	t := targetsFor(pods)
	t.label = fmt.Sprintf("%d × %s", n, t.label)
	t.rss *= int64(n)
	t.cpuIdle *= float64(n)
	t.synced *= time.Duration(n)
	return t
}

func (r *fleetReport) write(w io.Writer) {
	n := len(r.clusters)
	t := fleetTargets(r.pods, n)
	names := make([]string, n)
	for k, c := range r.clusters {
		names[k] = c.context
	}
	cfg := r.clusters[0].layout.Config()
	fmt.Fprintf(w, "## doomwatch scale bench: %d clusters of %s pods\n\n", n, thousands(r.pods))
	fmt.Fprintf(w, "- date: %s\n", time.Now().UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(w, "- machine: %d CPUs, %s memory, %s/%s, harness built with %s\n", runtime.NumCPU(), memTotal(), runtime.GOOS, runtime.GOARCH, runtime.Version())
	fmt.Fprintf(w, "- clusters: %d kube-apiservers, each with its own etcd, of the e2e suite on loopback, contexts %s of one kubeconfig; each %s pods (2 containers each) on %d nodes in %d namespaces, %d Deployments; %v fail to start containers (exit 128)\n",
		n, strings.Join(names, ", "), thousands(r.pods), cfg.Nodes, r.clusters[0].layout.Namespaces(), r.clusters[0].load.Deployments, r.clusters[0].layout.BadNodeNames())
	loads := make([]string, n)
	for k, c := range r.clusters {
		loads[k] = fmt.Sprintf("%s %s (%.0f pods/s)", c.context, c.load.Took.Round(100*time.Millisecond), c.load.PodsPerSecond)
	}
	fmt.Fprintf(w, "- load, one cluster at a time, each pod a create and a status update: %s\n", strings.Join(loads, "; "))
	fmt.Fprintf(w, "- terminal: %d×%d pseudo-terminals; idle window %s; churn: status patches to the healthy pods of %s in every cluster, %.0f/s asked for in all (%.0f/s each) for %s\n",
		r.width, r.height, r.idle, scale.NamespaceName(0), r.churnRate, r.churnRate/float64(n), r.churnFor)
	fmt.Fprintf(w, "- doomwatch: one process, `doomwatch --kubeconfig … -A --context %s`; k9s: one process per context, `k9s --kubeconfig … -A -c pods --context %s` and so on, all started at once\n",
		strings.Join(names, ","), names[0])
	if r.noGzip {
		fmt.Fprintln(w, "- doomwatch with --disable-compression: its watch streams are not gzipped")
	}
	if r.k9sVersion != "" {
		fmt.Fprintf(w, "- k9s: %s, default settings\n", r.k9sVersion)
	}
	if r.k9sMissing != "" {
		fmt.Fprintf(w, "- k9s: not measured: %s\n", r.k9sMissing)
	}
	fmt.Fprintln(w)

	k9sHead := "k9s, one per context"
	if r.k9s != nil {
		k9sHead = fmt.Sprintf("k9s, %d processes", r.k9s.procs)
	}
	fmt.Fprintf(w, "| figure | target (%s) | doomwatch, 1 process | vs target | %s |\n", t.label, k9sHead)
	fmt.Fprintln(w, "|---|---|---|---|---|")
	row := func(name, target string, cell func(*fleetResult) string, check func(*fleetResult) string) {
		cells := [2]string{"—", "—"}
		for i, c := range []*fleetResult{r.doomwatch, r.k9s} {
			if c != nil {
				cells[i] = cell(c)
			}
		}
		verdict := "—"
		if r.doomwatch != nil && check != nil {
			verdict = check(r.doomwatch)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", name, target, cells[0], verdict, cells[1])
	}
	row("first pod rows on screen", "≤ "+dur(t.firstRows), func(c *fleetResult) string {
		if !c.rowsOK {
			return "not on every screen"
		}
		return dur(c.firstRows)
	}, func(c *fleetResult) string { return overDur(c.rowsOK, c.firstRows, t.firstRows) })
	row("every cluster's pods synced on screen", "≤ "+dur(t.synced), func(c *fleetResult) string {
		if !c.syncedOK {
			return "not after " + dur(c.synced)
		}
		return dur(c.synced)
	}, func(c *fleetResult) string { return overDur(c.syncedOK, c.synced, t.synced) })
	row(fmt.Sprintf("RSS, idle, all processes (end of %s)", r.idle), "≤ "+mib(t.rss), func(c *fleetResult) string { return mib(c.idle.rssEnd) },
		func(c *fleetResult) string { return overBytes(c.idle.rssEnd, t.rss) })
	row("RSS, under churn (largest sample of the sum)", "≤ "+mib(t.rss), func(c *fleetResult) string { return mib(c.churn.rssMax) },
		func(c *fleetResult) string { return overBytes(c.churn.rssMax, t.rss) })
	row("RSS, peak since start (sum of VmHWM)", "—", func(c *fleetResult) string { return mib(max(c.churn.hwm, c.start.hwm)) }, nil)
	row("while starting: peak RSS (sum of VmHWM), CPU", "—", func(c *fleetResult) string {
		return fmt.Sprintf("%s, %.2f cores for %s", mib(c.start.hwm), c.start.cores, dur(c.start.took))
	}, nil)
	row("CPU, idle, all processes", fmt.Sprintf("≤ %.2f cores", t.cpuIdle), func(c *fleetResult) string { return fmt.Sprintf("%.3f cores", c.idle.cores) },
		func(c *fleetResult) string { return overFloat(c.idle.cores, t.cpuIdle, "cores") })
	row("CPU, under churn, all processes", fmt.Sprintf("≤ %.2f cores at %.0f/s", t.cpuChurn, r.churnRate), func(c *fleetResult) string {
		return fmt.Sprintf("%.3f cores at %.0f/s", c.churn.cores, churnRate(c.churnRuns))
	}, func(c *fleetResult) string { return overFloat(c.churn.cores, t.cpuChurn, "cores") })
	row("CPU per update under churn (cores ÷ updates/s)", "—", func(c *fleetResult) string {
		return perUpdate(c.churn.cores, churnRate(c.churnRuns))
	}, nil)
	fmt.Fprintln(w)
	for _, c := range []*fleetResult{r.doomwatch, r.k9s} {
		if c != nil && c.servers.took > 0 {
			fmt.Fprintf(w, "- While %s was measured under churn, the clusters' etcd and kube-apiserver took %.2f cores of the machine's %d.\n",
				c.tool, c.servers.cores, runtime.NumCPU())
		}
	}
	if d := r.doomwatch; d != nil && d.profile != "" {
		rate := churnRate(d.churnRuns)
		sp, err := splitProfile(context.Background(), r.doomwatchBin, d.profile, d.churn.took)
		fmt.Fprintf(w, "\ndoomwatch's CPU under churn by stage (a CPU profile of the churn window; %.0f updates/s over the clusters):\n\n", rate)
		if err != nil {
			fmt.Fprintf(w, "error: %s\n", oneLine(err.Error()))
		} else {
			sp.write(w, rate)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "The targets are the %s ones for each cluster: the resident memory and idle CPU of one doomwatch per cluster at most (×%d), the first rows and the CPU under the same churn as for one, each cluster synced within its own target in turn (×%d).\n\n",
		targetsFor(r.pods).label, n, n)
	for _, c := range []*fleetResult{r.doomwatch, r.k9s} {
		if c == nil {
			continue
		}
		each := make([]string, len(c.eachSynced))
		for i, d := range c.eachSynced {
			each[i] = dur(d)
		}
		var sent, failed int
		for _, run := range c.churnRuns {
			sent, failed = sent+run.Sent, failed+run.Failed
		}
		fmt.Fprintf(w, "- %s: synced on each screen after %s; churn sent %d updates, %d failed\n", c.tool, strings.Join(each, ", "), sent, failed)
	}
	for _, c := range []*fleetResult{r.doomwatch, r.k9s} {
		if c != nil && c.err != nil {
			fmt.Fprintf(w, "\n%s stopped early: %v\n", c.tool, c.err)
			for i, s := range c.lastScreens {
				fmt.Fprintf(w, "\nLast screen %d:\n\n```\n%s\n```\n", i+1, s)
			}
		}
	}
}
