package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"doomwatch/hack/scale"
)

// report is the run's figures, written as markdown.
type report struct {
	settings
	load       scale.LoadResult
	fleet      *scale.Fleet
	doomwatch  *result
	k9s        *result
	bare       *bareResult
	floor      *floorResult
	once       *onceResult
	record     *recordResult
	serve      *serveResult
	k9sMissing string
	k9sVersion string
	// doomwatchBin is the binary whose churn profile is split by stage.
	doomwatchBin string
	// noGzip: doomwatch and the bare informer ran with --disable-compression.
	noGzip bool
}

// targets are BENCHMARKS.md's, at 10,000 and at 150,000 pods. synced at 150,000 is the bare informer's
// time on the same server, filled in from the run.
type targets struct {
	label               string
	firstRows, synced   time.Duration
	rss                 int64
	cpuIdle, cpuChurn   float64
	updateP99, keyFrame time.Duration
	syncedIsBare        bool
}

func targetsFor(pods int) targets {
	if pods <= 10000 {
		return targets{label: "10,000 pods", firstRows: 500 * time.Millisecond, synced: time.Second, rss: 80 << 20,
			cpuIdle: 0.01, cpuChurn: 0.08, updateP99: 250 * time.Millisecond, keyFrame: 16 * time.Millisecond}
	}
	return targets{label: "150,000 pods", firstRows: 2 * time.Second, syncedIsBare: true, rss: 600 << 20,
		cpuIdle: 0.02, cpuChurn: 0.15, updateP99: 500 * time.Millisecond, keyFrame: 50 * time.Millisecond}
}

func (r *report) write(w io.Writer) {
	t := targetsFor(r.pods)
	if t.syncedIsBare && r.bare != nil && r.bare.err == nil {
		t.synced = r.bare.synced
	}
	cfg := r.fleet.Config()
	fmt.Fprintf(w, "## doomwatch scale bench: %s pods\n\n", thousands(r.pods))
	fmt.Fprintf(w, "- date: %s\n", time.Now().UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(w, "- machine: %d CPUs, %s memory, %s/%s, harness built with %s\n", runtime.NumCPU(), memTotal(), runtime.GOOS, runtime.GOARCH, runtime.Version())
	fmt.Fprintf(w, "- cluster: kube-apiserver and etcd of the e2e suite on loopback; %s pods (2 containers each) on %d nodes in %d namespaces, %d Deployments; %v fail to start containers (exit 128)\n",
		thousands(r.pods), cfg.Nodes, r.fleet.Namespaces(), r.load.Deployments, r.fleet.BadNodeNames())
	if r.load.Attached {
		fmt.Fprintln(w, "- load: by an earlier run holding the servers (--serve), measured here with --attach")
	} else {
		fmt.Fprintf(w, "- load: %s (%.0f pods/s, each a create and a status update)\n", r.load.Took.Round(100*time.Millisecond), r.load.PodsPerSecond)
	}
	fmt.Fprintf(w, "- terminal: %d×%d pseudo-terminal; idle window %s; churn: status patches to the healthy pods of %s, %.0f/s asked for %s\n",
		r.width, r.height, r.idle, scale.NamespaceName(0), r.churnRate, r.churnFor)
	if r.k9sVersion != "" {
		fmt.Fprintf(w, "- k9s: %s, default settings\n", r.k9sVersion)
	}
	if r.k9sMissing != "" {
		fmt.Fprintf(w, "- k9s: not measured: %s\n", r.k9sMissing)
	}
	if r.noGzip {
		fmt.Fprintln(w, "- doomwatch and the bare informer with --disable-compression: their watch streams are not gzipped")
	}
	fmt.Fprintln(w)

	cols := []*result{r.doomwatch, r.k9s}
	fmt.Fprintf(w, "| figure | target (%s) | doomwatch | vs target | k9s | bare typed informer |\n", t.label)
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	row := func(name, target string, cell func(*result) string, check func(*result) string, bare string) {
		cells := make([]string, len(cols))
		for i, c := range cols {
			cells[i] = "—"
			if c != nil {
				cells[i] = cell(c)
			}
		}
		verdict := "—"
		if r.doomwatch != nil && check != nil {
			verdict = check(r.doomwatch)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", name, target, cells[0], verdict, cells[1], bare)
	}
	bareSynced, bareRSS, bareCPU, bareChurn, barePer := "—", "—", "—", "—", "—"
	barePerUpdate := 0.0 // µs
	if r.bare != nil {
		if r.bare.err != nil {
			bareSynced = "error: " + oneLine(r.bare.err.Error())
		} else {
			bareSynced = dur(r.bare.synced)
			bareRSS = mib(r.bare.idle.rssEnd)
			bareCPU = fmt.Sprintf("%.3f", r.bare.idle.cores)
			bareChurn = fmt.Sprintf("%.3f cores at %.0f/s", r.bare.churn.cores, r.bare.churnRun.Rate)
			barePer = perUpdate(r.bare.churn.cores, r.bare.churnRun.Rate)
			if r.bare.churnRun.Rate > 0 {
				barePerUpdate = r.bare.churn.cores / r.bare.churnRun.Rate * 1e6
			}
		}
	}
	syncedTarget := "≤ " + dur(t.synced)
	if t.syncedIsBare {
		syncedTarget = "≤ the bare informer's"
		if t.synced > 0 {
			syncedTarget += " (" + dur(t.synced) + ")"
		}
	}

	row("first pod rows on screen", "≤ "+dur(t.firstRows), func(c *result) string {
		if !c.rowsOK {
			return "none after " + dur(c.firstRows)
		}
		return dur(c.firstRows)
	}, func(c *result) string { return overDur(c.rowsOK, c.firstRows, t.firstRows) }, "—")
	row("synced count on screen", syncedTarget, func(c *result) string {
		if !c.syncedOK {
			return "not after " + dur(c.synced)
		}
		return dur(c.synced)
	}, func(c *result) string {
		if t.synced == 0 {
			return "—"
		}
		return overDur(c.syncedOK, c.synced, t.synced)
	}, bareSynced+" (informer synced)")
	row(fmt.Sprintf("RSS, idle (end of %s)", r.idle), "≤ "+mib(t.rss), func(c *result) string { return mib(c.idle.rssEnd) },
		func(c *result) string { return overBytes(c.idle.rssEnd, t.rss) }, bareRSS)
	row("RSS, under churn (largest sample)", "≤ "+mib(t.rss), func(c *result) string { return mib(c.churn.rssMax) },
		func(c *result) string { return overBytes(c.churn.rssMax, t.rss) }, "—")
	row("RSS, peak since start (VmHWM)", "—", func(c *result) string { return mib(max(c.churn.hwm, c.start.hwm)) }, nil, "—")
	row("while starting: peak RSS, CPU", "—", func(c *result) string {
		return fmt.Sprintf("%s, %.2f cores for %s", mib(c.start.hwm), c.start.cores, dur(c.start.took))
	}, nil, "—")
	row("CPU, idle", fmt.Sprintf("≤ %.2f cores", t.cpuIdle), func(c *result) string { return fmt.Sprintf("%.3f cores", c.idle.cores) },
		func(c *result) string { return overFloat(c.idle.cores, t.cpuIdle, "cores") }, bareCPU+" cores")
	row("CPU, under churn", fmt.Sprintf("≤ %.2f cores at 500/s", t.cpuChurn), func(c *result) string {
		return fmt.Sprintf("%.3f cores at %.0f/s", c.churn.cores, c.churnRun.Rate)
	}, func(c *result) string { return overFloat(c.churn.cores, t.cpuChurn, "cores") }, bareChurn)
	row("CPU per update under churn (cores ÷ updates/s)", "≤ 2× the bare informer's", func(c *result) string {
		return perUpdate(c.churn.cores, c.churnRun.Rate)
	}, func(c *result) string {
		if barePerUpdate == 0 || c.churnRun.Rate == 0 {
			return "—"
		}
		return overFloat(c.churn.cores/c.churnRun.Rate*1e6/barePerUpdate, 2, "× the bare informer's")
	}, barePer)
	row("update → screen, p99 under churn", "≤ "+dur(t.updateP99), func(c *result) string { return quant(c.latency, 0.99) },
		func(c *result) string { return overSamples(c.latency, 0.99, t.updateP99) }, "—")
	row("sort key → frame, p50 / max", "≤ "+dur(t.keyFrame), func(c *result) string { return spread(c.sortKey) },
		func(c *result) string { return overSamples(c.sortKey, 1, t.keyFrame) }, "—")
	row("filter key → frame, p50 / max", "≤ "+dur(t.keyFrame), func(c *result) string { return spread(c.filter) },
		func(c *result) string { return overSamples(c.filter, 1, t.keyFrame) }, "—")
	row("filter cleared (esc) → frame, p50 / max ¹", "≤ "+dur(t.keyFrame), func(c *result) string { return spread(c.clear) },
		func(c *result) string { return overSamples(c.clear, 1, t.keyFrame) }, "—")
	if r.once != nil {
		cell := fmt.Sprintf("%s, peak RSS %s", dur(r.once.took), mib(r.once.maxRSS))
		if r.once.err != nil {
			cell = "error: " + oneLine(r.once.err.Error())
		}
		fmt.Fprintf(w, "| `doomwatch --once -A` | — | %s | — | — | — |\n", cell)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "¹ esc is sent as the terminal would: to a program that pushed the kitty keyboard protocol "+
		"(doomwatch: bubbletea pushes its disambiguation flag), as the protocol encodes it, CSI 27 u, which kitty, foot, "+
		"WezTerm, Ghostty and iTerm2 send; else as a lone ESC byte (k9s), which a program tells from the start of an "+
		"escape sequence only by waiting for what follows: k9s's tcell its own timeout, bubbletea's input reader 50 ms "+
		"(ultraviolet DefaultEscTimeout) in a terminal without the protocol.")
	fmt.Fprintln(w)

	for _, c := range cols {
		if c != nil && c.servers.took > 0 {
			fmt.Fprintf(w, "- While %s was measured under churn, etcd and kube-apiserver took %.2f cores of the machine's %d: "+
				"the churn's rate is what they can serve beside the tool and the churn's own client.\n", c.tool, c.servers.cores, runtime.NumCPU())
		}
	}
	if r.bare != nil && r.bare.err == nil {
		fmt.Fprintln(w, "- The bare typed informer's churn is a window of its own, as the tools' are.")
	}
	if f := r.floor; f != nil {
		if f.err != nil {
			fmt.Fprintf(w, "- An idle bubbletea program (hack/idlefloor): error: %s\n", oneLine(f.err.Error()))
		} else {
			fmt.Fprintf(w, "- An idle bubbletea program that draws one static line (hack/idlefloor, bubbletea's 60 Hz renderer) used %.3f cores over the idle window: the floor of any bubbletea dashboard's idle CPU here.\n", f.idle.cores)
		}
	}
	fmt.Fprintln(w)
	if d := r.doomwatch; d != nil && d.profile != "" {
		sp, err := splitProfile(context.Background(), r.doomwatchBin, d.profile, d.churn.took)
		fmt.Fprintf(w, "doomwatch's CPU under churn by stage (a CPU profile of the churn window, DOOMWATCH_CPUPROFILE; %.0f updates/s):\n\n", d.churnRun.Rate)
		if err != nil {
			fmt.Fprintf(w, "error: %s\n\n", oneLine(err.Error()))
		} else {
			sp.write(w, d.churnRun.Rate)
			fmt.Fprintln(w)
		}
	}

	if r.record != nil {
		r.writeRecord(w, t)
	}
	if r.serve != nil {
		r.writeServe(w)
	}

	fmt.Fprintln(w, "Update → screen samples (p50 / p99 / max, probes, missed):")
	for _, c := range cols {
		if c == nil {
			continue
		}
		fmt.Fprintf(w, "- %s: %s / %s / %s, %d probes, %d missed (> %s); churn sent %d updates in %s, %d failed\n", c.tool,
			quant(c.latency, 0.5), quant(c.latency, 0.99), quant(c.latency, 1), len(c.latency.d)+c.latency.misses, c.latency.misses,
			dur(r.probeTimeout), c.churnRun.Sent, c.churnRun.Took.Round(100*time.Millisecond), c.churnRun.Failed)
		fmt.Fprintf(w, "  - the API server's share, update sent → a plain watch of the pod received it: %s / %s / %s\n",
			quant(c.floor, 0.5), quant(c.floor, 0.99), quant(c.floor, 1))
	}
	for _, c := range cols {
		if c != nil && c.err != nil {
			fmt.Fprintf(w, "\n%s stopped early: %v\n\nLast screen:\n\n```\n%s\n```\n", c.tool, c.err, c.lastScreen)
		}
	}
}

func dur(d time.Duration) string {
	switch {
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	default:
		return fmt.Sprintf("%.2f s", d.Seconds())
	}
}

func quant(s samples, q float64) string {
	if len(s.d)+s.misses == 0 {
		return "no samples"
	}
	v, ok := s.quantile(q)
	if !ok {
		return "timed out"
	}
	return dur(v)
}

func spread(s samples) string {
	out := quant(s, 0.5) + " / " + quant(s, 1)
	if s.misses > 0 {
		out += fmt.Sprintf(" (%d of %d timed out)", s.misses, len(s.d)+s.misses)
	}
	return out
}

func overDur(ok bool, got, target time.Duration) string {
	switch {
	case !ok:
		return "✗ not reached"
	case got <= target:
		return "✓"
	default:
		return fmt.Sprintf("✗ %s over (%.1f×)", dur(got-target), float64(got)/float64(target))
	}
}

func overSamples(s samples, q float64, target time.Duration) string {
	if len(s.d)+s.misses == 0 {
		return "—"
	}
	v, ok := s.quantile(q)
	return overDur(ok, v, target)
}

func overBytes(got, target int64) string {
	if got <= target {
		return "✓"
	}
	return fmt.Sprintf("✗ %s over (%.1f×)", mib(got-target), float64(got)/float64(target))
}

func overFloat(got, target float64, unit string) string {
	if got <= target {
		return "✓"
	}
	return fmt.Sprintf("✗ %.3f %s over (%.1f×)", got-target, unit, got/target)
}

func oneLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return strings.ReplaceAll(s, "|", "/")
}

// memTotal is MemTotal from /proc/meminfo, in GiB.
func memTotal() string {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(rest), "%d", &kb)
			return fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
		}
	}
	return "unknown"
}
