package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"

	"doomwatch/hack/scale"
)

// settings are the harness's knobs, shared by every tool's run.
type settings struct {
	pods          int
	width, height int
	startTimeout  time.Duration // until rows and until synced
	idle          time.Duration // the idle window
	churnRate     float64
	churnFor      time.Duration
	probeTimeout  time.Duration // one update → screen wait
	keyTimeout    time.Duration // one key → frame wait
	maxProbes     int
	scrapes       int // serve's scrapes in each encoding
}

// bench is what every run shares: the loaded server and the fleet on it.
type bench struct {
	settings
	client kubernetes.Interface
	fleet  *scale.Fleet
	index  map[string]scale.PodRef
	// servers are etcd's and kube-apiserver's processes (none with --attach): their CPU during
	// each churn window says what limits the rate the churn reaches.
	servers []int
	// noGzip runs the bare informer with --disable-compression, as doomwatch is run.
	noGzip bool
}

// result is one tool's figures.
type result struct {
	tool               string
	firstRows, synced  time.Duration
	rowsOK, syncedOK   bool
	start, idle, churn window // start: from launch until synced (or given up)
	churnRun           scale.ChurnResult
	// servers is what etcd and kube-apiserver cost during the churn window.
	servers window
	// profile is the CPU profile of the churn window (doomwatch only: DOOMWATCH_CPUPROFILE).
	profile string
	latency samples
	// floor is the server's share of latency: update sent → a plain watch received it.
	floor         samples
	sortKey       samples
	filter, clear samples
	err           error
	lastScreen    string
}

// samples are timings of one kind, with the attempts that timed out.
type samples struct {
	d      []time.Duration
	misses int
}

func (s *samples) add(d time.Duration, ok bool) {
	if ok {
		s.d = append(s.d, d)
	} else {
		s.misses++
	}
}

// quantile is the nearest-rank q-quantile, counting misses as longer than any sample; ok is false
// when it falls on a miss.
func (s samples) quantile(q float64) (time.Duration, bool) {
	n := len(s.d) + s.misses
	if n == 0 {
		return 0, false
	}
	sorted := slices.Clone(s.d)
	slices.Sort(sorted)
	rank := int(q*float64(n)+0.999999) - 1 // ceil(q·n), 1-based, then 0-based
	rank = max(rank, 0)
	if rank >= len(sorted) {
		return 0, false
	}
	return sorted[rank], true
}

// runTool measures one tool: start → rows → synced, an idle window, a churn window with update →
// screen probes, then sort and filter keys at rest.
//
// r is a named result: the deferred functions fill in the last screen and what the start cost,
// also when the run stops early.
func (b *bench) runTool(ctx context.Context, t tool, seq int, logf func(string, ...any)) (r result) {
	r = result{tool: t.name}
	start := time.Now()
	term, err := startTerminal(t.bin, t.args, t.env, b.width, b.height)
	if err != nil {
		r.err = fmt.Errorf("starting %s: %w", t.name, err)
		return r
	}
	defer func() {
		r.lastScreen = term.screen()
		term.stop(t.quit, 10*time.Second)
	}()

	// What the start costs, sampled until the synced count is on screen or the tool gives up.
	startCtx, endStart := context.WithCancel(ctx)
	startDone := make(chan struct{})
	go func() {
		defer close(startDone)
		r.start, _ = observe(startCtx, term.pid(), b.startTimeout)
	}()
	stopStart := func() { endStart(); <-startDone }
	defer stopStart()
	at, _, ok := term.await(b.startTimeout, func(s string) bool { return len(rows(s)) > 0 })
	r.firstRows, r.rowsOK = at.Sub(start), ok
	if !ok {
		r.err = fmt.Errorf("no pod rows on screen after %s", b.startTimeout)
		return r
	}
	logf("%s: first rows after %s", t.name, r.firstRows.Round(time.Millisecond))
	at, _, ok = term.await(b.startTimeout-time.Since(start), func(s string) bool { return t.synced(s, b.pods) })
	r.synced, r.syncedOK = at.Sub(start), ok
	if !ok {
		r.err = fmt.Errorf("synced count %d not on screen after %s", b.pods, b.startTimeout)
		return r
	}
	logf("%s: synced after %s", t.name, r.synced.Round(time.Millisecond))
	stopStart()

	// Let the start-up garbage be collected before the idle window, as an operator's dashboard
	// would have been open a while.
	if err := sleep(ctx, 5*time.Second); err != nil {
		r.err = err
		return r
	}
	if r.idle, err = observe(ctx, term.pid(), b.idle); err != nil {
		r.err = fmt.Errorf("idle window: %w", err)
		return r
	}
	logf("%s: idle %.3f cores, RSS %s", t.name, r.idle.cores, mib(r.idle.rssEnd))

	cw, err := b.churnWindow(ctx, term, t.profile, seq, logf)
	r.churnRun, r.churn, r.servers, r.latency, r.floor = cw.run, cw.tool, cw.servers, cw.latency, cw.floor
	if t.profile != "" && err == nil {
		r.profile = t.profile
	}
	if err != nil {
		r.err = err
		return r
	}
	logf("%s: churn %.0f/s: %.3f cores, RSS max %s; %d probes, %d missed", t.name, r.churnRun.Rate, r.churn.cores,
		mib(r.churn.rssMax), len(r.latency.d), r.latency.misses)

	if err := sleep(ctx, 3*time.Second); err != nil {
		r.err = err
		return r
	}
	r.sortKey = b.sortKeys(ctx, term, t)
	r.filter, r.clear = b.filters(ctx, term, t)
	return r
}

// churnResult is one churn window: the churn, what the tool and the servers cost meanwhile, and
// the update → screen probes.
type churnResult struct {
	run            scale.ChurnResult
	tool, servers  window
	latency, floor samples
}

// churnWindow churns one namespace while sampling the tool and probing update → screen latency
// on pods the tool shows. With a profile, the tool profiles its CPU over the window
// (DOOMWATCH_CPUPROFILE: SIGUSR1 starts it, SIGUSR2 writes it).
func (b *bench) churnWindow(ctx context.Context, term *terminal, profile string, seq int, logf func(string, ...any)) (churnResult, error) {
	var cw churnResult
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if profile != "" {
		_ = syscall.Kill(term.pid(), syscall.SIGUSR1)
		defer func() {
			_ = syscall.Kill(term.pid(), syscall.SIGUSR2)
			// The profile is written as the signal is handled: wait for the file to settle.
			waitForProfile(profile)
		}()
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		defer cancel()
		cw.run = b.churn(ctx)
	})
	var werr error
	wg.Go(func() { cw.tool, werr = observe(ctx, term.pid(), b.churnFor) })
	if len(b.servers) > 0 {
		wg.Go(func() { cw.servers, _ = observeAll(ctx, b.servers, b.churnFor) })
	}

	var lat, floor samples
	// Each probe writes a restart count no earlier probe used, so every probe is a change.
	value := 7000 + 1000*seq
	for i := 0; i < b.maxProbes && ctx.Err() == nil; i++ {
		ok, d, server, err := b.probe(ctx, term, i, value+i)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			logf("probe: %v", err)
			continue
		}
		lat.add(d, ok)
		floor.add(server, server >= 0)
		if sleep(ctx, 200*time.Millisecond) != nil {
			break
		}
	}
	wg.Wait()
	cw.latency, cw.floor = lat, floor
	if werr != nil {
		return cw, fmt.Errorf("churn window: %w", werr)
	}
	if cw.run.FirstErr != nil {
		logf("churn: %d of %d updates failed, first: %v", cw.run.Failed, cw.run.Sent, cw.run.FirstErr)
	}
	return cw, nil
}

// waitForProfile waits, for at most 5 s, until the profile's file exists and has stopped growing.
func waitForProfile(path string) {
	last := int64(-1)
	for range 50 {
		time.Sleep(100 * time.Millisecond)
		if fi, err := os.Stat(path); err == nil && fi.Size() > 0 && fi.Size() == last {
			return
		} else if err == nil {
			last = fi.Size()
		}
	}
}

// churn is the churn window's status updates to the first namespace, as every tool gets them.
func (b *bench) churn(ctx context.Context) scale.ChurnResult {
	return b.fleet.Churn(ctx, b.client, scale.ChurnConfig{Namespace: 0, Rate: b.churnRate,
		Count: int(b.churnRate * b.churnFor.Seconds()), Duration: b.churnFor, Workers: 48})
}

// probe sets the restart count of a pod on screen to value and waits for its row to show it. The
// pod is one whose verdict a restart count does not change, so its row stays where it is. It
// returns the tool's latency, from the update's send to the screen, and the server's: from the
// send to a plain watch's receipt of the update.
func (b *bench) probe(ctx context.Context, term *terminal, i, value int) (ok bool, d, server time.Duration, err error) {
	var cands []scale.PodRef
	for _, name := range rows(term.screen()) {
		if ref, ok := b.index[name]; ok && ref.State != scale.StartError {
			cands = append(cands, ref)
		}
	}
	if len(cands) == 0 {
		return false, 0, 0, fmt.Errorf("no pod on screen to probe")
	}
	ref := cands[i%len(cands)]
	key := ref.Namespace + "/" + ref.Name
	b.fleet.Reserve(key)
	defer b.fleet.Release(key)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pr, err := scale.SetRestarts(wctx, b.client, ref.Namespace, ref.Name, int32(value))
	if err != nil {
		return false, 0, 0, err
	}
	at, _, ok := term.await(b.probeTimeout, func(s string) bool { return hasToken(lineWith(s, ref.Name), value) })
	select {
	case <-pr.Seen:
	case <-time.After(b.probeTimeout):
	}
	server = -1
	if pr.SeenOK {
		server = pr.SeenAt.Sub(pr.Sent)
	}
	return ok, at.Sub(pr.Sent), server, nil
}

// sortKeys presses each sort key twice round and times each until the rows on screen change.
func (b *bench) sortKeys(ctx context.Context, term *terminal, t tool) samples {
	var out samples
	for range 2 {
		for _, k := range t.sortKeys {
			before := strings.Join(rows(term.screen()), "\n")
			sent, err := term.send(k)
			if err != nil {
				out.misses++
				continue
			}
			at, _, ok := term.await(b.keyTimeout, func(s string) bool {
				r := rows(s)
				return len(r) > 0 && strings.Join(r, "\n") != before
			})
			out.add(at.Sub(sent), ok)
			if sleep(ctx, time.Second) != nil {
				return out
			}
		}
	}
	return out
}

// filters times the key → frame of a text filter and of clearing it. It types a ReplicaSet's name
// and the dash after it (both tools filter as the user types), waits for that to settle, then
// times the next key, the first character of one pod's suffix, until the rows on screen have
// changed to pods matching it: the key narrows the ReplicaSet's pods to a few, whichever way each
// tool matches (doomwatch fuzzily, k9s by regular expression). Then it ends the prompt, clears
// the filter and times until other pods are back.
func (b *bench) filters(ctx context.Context, term *terminal, t tool) (apply, clear samples) {
	for _, text := range b.filterTexts(3) {
		prefix, last := text[:len(text)-1], text[len(text)-1:]
		if _, err := term.send(t.filterOpen); err != nil {
			apply.misses++
			continue
		}
		if sleep(ctx, 500*time.Millisecond) != nil {
			return
		}
		if _, err := term.send(prefix); err != nil {
			apply.misses++
			continue
		}
		// Settled: every row on screen is the ReplicaSet's.
		_, settled, ok := term.await(b.keyTimeout, func(s string) bool { return allContain(rows(s), prefix) })
		if !ok || sleep(ctx, time.Second) != nil {
			apply.misses++
			continue
		}
		before := strings.Join(rows(settled), "\n")
		sent, err := term.send(last)
		if err != nil {
			apply.misses++
			continue
		}
		at, _, ok := term.await(b.keyTimeout, func(s string) bool {
			r := rows(s)
			return allContain(r, prefix) && strings.Join(r, "\n") != before
		})
		apply.add(at.Sub(sent), ok)
		if _, err := term.send(t.filterApply); err != nil {
			clear.misses++
			continue
		}
		if sleep(ctx, time.Second) != nil {
			return
		}
		sent, err = term.send(term.key(t.filterClear))
		if err != nil {
			clear.misses++
			continue
		}
		at, _, ok = term.await(b.keyTimeout, func(s string) bool { r := rows(s); return len(r) > 0 && !allContain(r, prefix) })
		clear.add(at.Sub(sent), ok)
		if sleep(ctx, time.Second) != nil {
			return
		}
	}
	return
}

// allContain reports whether there are rows and every one contains text.
func allContain(rows []string, text string) bool {
	for _, r := range rows {
		if !strings.Contains(r, text) {
			return false
		}
	}
	return len(rows) > 0
}

// filterTexts are ReplicaSet names from the last namespace, spread over its Deployments, each
// with the dash and the first character of one of its pods' names: a few dozen pods share the
// ReplicaSet, a few the character, and none is on the first screen of any sort.
func (b *bench) filterTexts(n int) []string {
	var out []string
	k := b.fleet.Namespaces() - 1
	deps := b.fleet.DeploymentsIn(k)
	for i := range n {
		rs := scale.ReplicaSetName(k, deps-1-i*deps/(n+1))
		for name := range b.index {
			if strings.HasPrefix(name, rs+"-") {
				out = append(out, name[:len(rs)+2])
				break
			}
		}
	}
	return out
}

// bareResult is the bare informer's figures.
type bareResult struct {
	synced   time.Duration
	idle     window
	churn    window
	churnRun scale.ChurnResult
	err      error
}

// runBare runs the bare typed informer until it has synced, then samples it over the idle window
// and over a churn window like the tools': the floor of what holding the pods costs.
func (b *bench) runBare(ctx context.Context, bin, kubeconfig string, env []string) bareResult {
	var r bareResult
	cmd := exec.Command(bin, "--kubeconfig", kubeconfig, "--max", (b.startTimeout + b.idle + b.churnFor + time.Minute).String(),
		fmt.Sprintf("--disable-compression=%v", b.noGzip))
	cmd.Env = env
	cmd.Stderr = os.Stderr
	out, start, err := startPiped(cmd)
	if err != nil {
		r.err = err
		return r
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}()
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- s
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case s := <-line:
		r.synced = time.Since(start)
		if want := fmt.Sprintf("synced %d", b.pods); strings.TrimSpace(s) != want {
			r.err = fmt.Errorf("bare informer said %q, want %q", strings.TrimSpace(s), want)
			return r
		}
	case <-time.After(b.startTimeout):
		r.err = fmt.Errorf("bare informer not synced after %s", b.startTimeout)
		return r
	case <-ctx.Done():
		r.err = ctx.Err()
		return r
	}
	if err := sleep(ctx, 5*time.Second); err != nil {
		r.err = err
		return r
	}
	if r.idle, r.err = observe(ctx, cmd.Process.Pid, b.idle); r.err != nil {
		return r
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() {
		defer cancel()
		r.churnRun = b.churn(cctx)
	})
	r.churn, r.err = observe(cctx, cmd.Process.Pid, b.churnFor)
	wg.Wait()
	return r
}

// onceResult is `doomwatch --once -A`: wall time and peak RSS.
type onceResult struct {
	took    time.Duration
	maxRSS  int64
	outputs int // lines printed
	err     error
}

func (b *bench) runOnce(ctx context.Context, bin, kubeconfig string, env []string) onceResult {
	var r onceResult
	ctx, cancel := context.WithTimeout(ctx, b.startTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--kubeconfig", kubeconfig, "-A", "--once", "--request-timeout", b.startTimeout.String())
	cmd.Env = env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, start, err := startPiped(cmd)
	if err != nil {
		r.err = err
		return r
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		r.outputs++
	}
	err = cmd.Wait()
	r.took = time.Since(start)
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.maxRSS = ru.Maxrss << 10 // kilobytes on Linux
	}
	if err != nil {
		r.err = fmt.Errorf("doomwatch --once: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return r
}

// startPiped starts cmd, killed if the harness dies, with its stdout piped; start is the time just
// before it started.
func startPiped(cmd *exec.Cmd) (out io.ReadCloser, start time.Time, err error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if out, err = cmd.StdoutPipe(); err != nil {
		return nil, start, err
	}
	start = time.Now()
	return out, start, cmd.Start()
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func mib(b int64) string { return fmt.Sprintf("%d MiB", b>>20) }

// floorResult is an idle bubbletea program's CPU: the renderer's own floor.
type floorResult struct {
	idle window
	err  error
}

// runFloor runs hack/idlefloor in a pseudo-terminal of the tools' size over the idle window.
func (b *bench) runFloor(ctx context.Context, bin string, env []string) floorResult {
	var r floorResult
	term, err := startTerminal(bin, nil, env, b.width, b.height)
	if err != nil {
		r.err = err
		return r
	}
	defer term.stop("q", 10*time.Second)
	if _, _, ok := term.await(b.startTimeout, func(s string) bool { return strings.Contains(s, "static") }); !ok {
		r.err = fmt.Errorf("idlefloor drew nothing")
		return r
	}
	if err := sleep(ctx, 5*time.Second); err != nil {
		r.err = err
		return r
	}
	r.idle, r.err = observe(ctx, term.pid(), b.idle)
	return r
}
