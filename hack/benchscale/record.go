package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// recordResult is `doomwatch record -A` on the same server: headless, so its figures are the
// process's alone, over the same idle and churn windows as the dashboard's.
type recordResult struct {
	headlessResult
	size    int64 // the recording's bytes on disk at the end
	summary string
}

// runRecord runs the recorder as a headless mode (runHeadless), logging its trouble; once it has
// stopped, its last line is its summary.
func (b *bench) runRecord(ctx context.Context, bin, kubeconfig, dir string, env []string, logf func(string, ...any)) recordResult {
	out := filepath.Join(dir, "recording")
	cmd := exec.Command(bin, "record", "-o", out, "--kubeconfig", kubeconfig, "-A", "--request-timeout", b.startTimeout.String())
	cmd.Env = env
	hr := b.runHeadless(ctx, headless{name: "record", cmd: cmd, line: func(l string) bool {
		if strings.HasPrefix(l, "doomwatch: recording:") {
			logf("record: %s", l)
		}
		return strings.Contains(l, "synced after")
	}}, logf)
	return recordResult{headlessResult: hr, summary: hr.last, size: dirSize(out)}
}

// dirSize is the bytes of the regular files in dir.
func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// writeRecord is the recorder's table: its figures beside the dashboard's, whose RSS it must not
// exceed and whose CPU under churn it may exceed by half (BENCHMARKS.md, "The flight recorder").
func (r *report) writeRecord(w io.Writer, t targets) {
	rc, d := r.record, r.doomwatch
	fmt.Fprintln(w, "`doomwatch record -A` (headless), the same server and windows:")
	fmt.Fprintln(w)
	if rc.err != nil {
		fmt.Fprintf(w, "record stopped early: %s\n\n", oneLine(rc.err.Error()))
	}
	fmt.Fprintln(w, "| figure | target | record | vs target | the dashboard |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	dash := func(f func(*result) string) string {
		if d == nil {
			return "—"
		}
		return f(d)
	}
	rssTarget := t.rss
	if d != nil && d.churn.rssMax > 0 {
		rssTarget = min(rssTarget, max(d.idle.rssEnd, d.churn.rssMax))
	}
	fmt.Fprintf(w, "| synced | — | %s | — | %s |\n", dur(rc.synced), dash(func(c *result) string { return dur(c.synced) }))
	fmt.Fprintf(w, "| RSS, idle (end of %s) | ≤ %s | %s | %s | %s |\n", r.idle, mib(rssTarget), mib(rc.idle.rssEnd),
		overBytes(rc.idle.rssEnd, rssTarget), dash(func(c *result) string { return mib(c.idle.rssEnd) }))
	fmt.Fprintf(w, "| RSS, under churn (largest sample) | ≤ %s | %s | %s | %s |\n", mib(rssTarget), mib(rc.churn.rssMax),
		overBytes(rc.churn.rssMax, rssTarget), dash(func(c *result) string { return mib(c.churn.rssMax) }))
	fmt.Fprintf(w, "| RSS, peak since start (VmHWM) | — | %s | — | %s |\n", mib(max(rc.churn.hwm, rc.start.hwm)),
		dash(func(c *result) string { return mib(max(c.churn.hwm, c.start.hwm)) }))
	fmt.Fprintf(w, "| CPU, idle | ≤ %.2f cores | %.3f cores | %s | %s |\n", t.cpuIdle, rc.idle.cores, overFloat(rc.idle.cores, t.cpuIdle, "cores"),
		dash(func(c *result) string { return fmt.Sprintf("%.3f cores", c.idle.cores) }))
	cpuTarget, cpuCheck := "≤ 1.5 × the dashboard's", "—"
	if d != nil && d.churn.cores > 0 {
		cpuTarget = fmt.Sprintf("≤ 1.5 × %.3f = %.3f cores", d.churn.cores, 1.5*d.churn.cores)
		cpuCheck = overFloat(rc.churn.cores, 1.5*d.churn.cores, "cores")
	}
	fmt.Fprintf(w, "| CPU, under churn | %s | %.3f cores at %.0f/s | %s | %s |\n", cpuTarget, rc.churn.cores, rc.churnRun.Rate, cpuCheck,
		dash(func(c *result) string { return fmt.Sprintf("%.3f cores at %.0f/s", c.churn.cores, c.churnRun.Rate) }))
	fmt.Fprintf(w, "| recording on disk at the end | — | %.1f MiB | — | — |\n", float64(rc.size)/(1<<20))
	fmt.Fprintln(w)
	if rc.summary != "" {
		fmt.Fprintf(w, "The recorder's last words: `%s`\n\n", strings.ReplaceAll(rc.summary, "`", "'"))
	}
}
