package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"time"
)

// serveResult is `doomwatch serve -A` on the same server: headless, its figures over the
// dashboard's windows, and what a scrape of /metrics costs it.
type serveResult struct {
	headlessResult
	readyz string // /readyz's answer once serve said it was ready
	// series are the samples of one scrape; verdictSeries those named doomwatch_*.
	series, verdictSeries int
	contentType           string
	first                 time.Duration // the first scrape's wall time: every series built
	plain, gzipped        scrapeRun
}

// scrapeRun is one run of back-to-back scrapes of /metrics in one encoding.
type scrapeRun struct {
	n     int
	bytes int64   // one scrape's body as sent (the last one's)
	took  samples // each scrape's wall time, request to the body's last byte
	wall  time.Duration
	ticks int64 // serve's CPU over the run, in clock ticks
}

// cpuPer is serve's CPU time per scrape.
func (s scrapeRun) cpuPer() time.Duration {
	if s.n == 0 {
		return 0
	}
	return time.Duration(s.ticks) * time.Second / clockTicks / time.Duration(s.n)
}

// prometheusAccept is the Accept header of Prometheus 3's scrapes with its default scrape
// protocols and escaping (prometheus/scrape/scrape.go acceptHeader, config.DefaultScrapeProtocols).
const prometheusAccept = "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.7," +
	"application/openmetrics-text;version=0.0.1;q=0.6,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.5," +
	"text/plain;version=0.0.4;q=0.4,*/*;q=0.3"

// runServe runs `doomwatch serve --listen 127.0.0.1:0 -A` as a headless mode (runHeadless): ready is
// its "synced; ready" line on stderr. Between the idle window and the churn window, with the servers
// at rest, it checks /readyz, scrapes /metrics once to count the series, then b.scrapes times back
// to back as Prometheus asks (its Accept header) without compression and b.scrapes times with gzip,
// timing each and reading serve's CPU from /proc before and after each run.
func (b *bench) runServe(ctx context.Context, bin, kubeconfig string, env []string, logf func(string, ...any)) serveResult {
	args := []string{"serve", "--listen", "127.0.0.1:0", "--kubeconfig", kubeconfig, "-A", "--request-timeout", b.startTimeout.String()}
	if b.noGzip {
		args = append(args, "--disable-compression")
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	var r serveResult
	// base is written by the stderr reader before serve says it is ready, and read after.
	var base string
	const serving, ready = "doomwatch: serving the verdicts of ", "doomwatch: synced; ready"
	r.headlessResult = b.runHeadless(ctx, headless{name: "serve", cmd: cmd,
		line: func(l string) bool {
			switch {
			case strings.HasPrefix(l, serving):
				if _, url, ok := strings.Cut(l, " at "); ok {
					base = strings.TrimSuffix(url, "/metrics")
				}
			case l == ready:
				return true
			case strings.HasPrefix(l, "doomwatch:"):
				logf("serve: %s", l)
			}
			return false
		},
		atRest: func(ctx context.Context, pid int) error {
			if base == "" {
				return fmt.Errorf("serve did not say where it serves")
			}
			return b.scrapeServe(ctx, base, pid, &r, logf)
		},
	}, logf)
	return r
}

// scrapeServe fills in r's scrape figures from serve at base, its process pid.
func (b *bench) scrapeServe(ctx context.Context, base string, pid int, r *serveResult, logf func(string, ...any)) error {
	// One keep-alive connection, as Prometheus keeps to a target; no transparent decompression, so
	// the gzipped bodies are counted as sent.
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 1}}
	defer client.CloseIdleConnections()
	get := func(path, encoding string) (*http.Response, []byte, time.Duration, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, http.NoBody)
		if err != nil {
			return nil, nil, 0, err
		}
		req.Header.Set("Accept", prometheusAccept)
		req.Header.Set("Accept-Encoding", encoding)
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("GET %s: %w", path, err)
		}
		body, err := io.ReadAll(resp.Body)
		took := time.Since(start)
		resp.Body.Close()
		if err != nil {
			return nil, nil, 0, fmt.Errorf("GET %s: %w", path, err)
		}
		if resp.StatusCode != http.StatusOK {
			return nil, nil, 0, fmt.Errorf("GET %s: %s: %s", path, resp.Status, oneLine(string(body)))
		}
		return resp, body, took, nil
	}

	_, body, _, err := get("/readyz", "identity")
	if err != nil {
		return err
	}
	r.readyz = strings.TrimSpace(string(body))
	resp, body, took, err := get("/metrics", "identity")
	if err != nil {
		return err
	}
	r.first, r.contentType = took, resp.Header.Get("Content-Type")
	r.series, r.verdictSeries = countSeries(body)
	logf("serve: %d series (%d doomwatch_*), %d bytes, first scrape %s", r.series, r.verdictSeries, len(body), dur(took))

	run := func(encoding string) (scrapeRun, error) {
		s := scrapeRun{n: b.scrapes}
		before, err := cpuTicks(pid)
		if err != nil {
			return s, err
		}
		start := time.Now()
		for range b.scrapes {
			resp, body, took, err := get("/metrics", encoding)
			if err != nil {
				return s, err
			}
			if got := resp.Header.Get("Content-Encoding"); encoding == "gzip" && got != "gzip" {
				return s, fmt.Errorf("asked for gzip, got Content-Encoding %q", got)
			}
			s.bytes = int64(len(body))
			s.took.add(took, true)
		}
		s.wall = time.Since(start)
		after, err := cpuTicks(pid)
		s.ticks = after - before
		return s, err
	}
	if r.plain, err = run("identity"); err != nil {
		return fmt.Errorf("scraping without compression: %w", err)
	}
	if r.gzipped, err = run("gzip"); err != nil {
		return fmt.Errorf("scraping with gzip: %w", err)
	}
	logf("serve: %d scrapes: p50 %s plain, %s gzip; CPU per scrape %s plain, %s gzip", b.scrapes,
		quant(r.plain.took, 0.5), quant(r.gzipped.took, 0.5), dur(r.plain.cpuPer()), dur(r.gzipped.cpuPer()))
	return nil
}

// countSeries counts the samples of a text exposition: its lines that are neither comments nor
// blank, and of them those of doomwatch's own metrics.
func countSeries(body []byte) (all, doomwatch int) {
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		all++
		if strings.HasPrefix(l, "doomwatch_") {
			doomwatch++
		}
	}
	return all, doomwatch
}

// writeServe is serve's table: its figures beside the dashboard's, and a scrape's cost.
func (r *report) writeServe(w io.Writer) {
	s, d := r.serve, r.doomwatch
	fmt.Fprintln(w, "`doomwatch serve -A` (headless, /metrics for Prometheus), the same server and windows, run on its own:")
	fmt.Fprintln(w)
	if s.err != nil {
		fmt.Fprintf(w, "serve stopped early: %s\n\n", oneLine(s.err.Error()))
	}
	dash := func(f func(*result) string) string {
		if d == nil {
			return "—"
		}
		return f(d)
	}
	fmt.Fprintln(w, "| figure | serve | the dashboard |")
	fmt.Fprintln(w, "|---|---|---|")
	fmt.Fprintf(w, "| synced (serve: \"synced; ready\" on stderr) | %s | %s |\n", dur(s.synced), dash(func(c *result) string { return dur(c.synced) }))
	fmt.Fprintf(w, "| while starting: peak RSS, CPU | %s, %.2f cores for %s | %s |\n", mib(s.start.hwm), s.start.cores, dur(s.start.took),
		dash(func(c *result) string {
			return fmt.Sprintf("%s, %.2f cores for %s", mib(c.start.hwm), c.start.cores, dur(c.start.took))
		}))
	fmt.Fprintf(w, "| RSS, idle (end of %s) | %s | %s |\n", r.idle, mib(s.idle.rssEnd), dash(func(c *result) string { return mib(c.idle.rssEnd) }))
	fmt.Fprintf(w, "| RSS, under churn (largest sample) | %s | %s |\n", mib(s.churn.rssMax), dash(func(c *result) string { return mib(c.churn.rssMax) }))
	fmt.Fprintf(w, "| RSS, peak since start (VmHWM) | %s | %s |\n", mib(max(s.churn.hwm, s.start.hwm)),
		dash(func(c *result) string { return mib(max(c.churn.hwm, c.start.hwm)) }))
	fmt.Fprintf(w, "| CPU, idle | %.3f cores | %s |\n", s.idle.cores, dash(func(c *result) string { return fmt.Sprintf("%.3f cores", c.idle.cores) }))
	fmt.Fprintf(w, "| CPU, under churn | %.3f cores at %.0f/s | %s |\n", s.churn.cores, s.churnRun.Rate,
		dash(func(c *result) string { return fmt.Sprintf("%.3f cores at %.0f/s", c.churn.cores, c.churnRun.Rate) }))
	fmt.Fprintf(w, "| CPU per update under churn | %s | %s |\n", perUpdate(s.churn.cores, s.churnRun.Rate),
		dash(func(c *result) string { return perUpdate(c.churn.cores, c.churnRun.Rate) }))
	fmt.Fprintln(w)
	if s.series == 0 {
		return
	}
	fmt.Fprintf(w, "A scrape as Prometheus pays it (its Accept header; served as `%s`), between the idle and the churn windows, "+
		"back to back on one kept-alive connection: %s series (%s of them doomwatch_*); the first scrape, which builds every series, took %s.\n\n",
		s.contentType, thousands(s.series), thousands(s.verdictSeries), dur(s.first))
	fmt.Fprintln(w, "| per scrape | plain | gzip (Prometheus's default) |")
	fmt.Fprintln(w, "|---|---|---|")
	fmt.Fprintf(w, "| bytes | %s | %s |\n", kib(s.plain.bytes), kib(s.gzipped.bytes))
	fmt.Fprintf(w, "| wall time, p50 / max of %d | %s | %s |\n", s.plain.n, spread(s.plain.took), spread(s.gzipped.took))
	fmt.Fprintf(w, "| serve's CPU (/proc, over the run ÷ %d) | %s (%d ticks in %s) | %s (%d ticks in %s) |\n", s.plain.n,
		dur(s.plain.cpuPer()), s.plain.ticks, dur(s.plain.wall), dur(s.gzipped.cpuPer()), s.gzipped.ticks, dur(s.gzipped.wall))
	fmt.Fprintln(w)
	fmt.Fprintf(w, "- /readyz once serve said it was ready: %q. The CPU is in ticks of 10 ms; at serve's idle rate, its background would add %s to a run of %s.\n",
		s.readyz, dur(time.Duration(s.idle.cores*float64(s.plain.wall))), dur(s.plain.wall))
	fmt.Fprintln(w, "- At rest few values change between scrapes, and the collector rebuilds only the series whose value changed: a scrape under churn builds more.")
	fmt.Fprintln(w)
}

func kib(b int64) string { return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10)) }
