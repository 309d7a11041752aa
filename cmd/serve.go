package cmd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/pflag"

	"doomwatch/contract"
	"doomwatch/metrics"
	"doomwatch/sanitize"
)

// serve is `doomwatch serve`: the verdicts as Prometheus metrics, for alerts (metrics.Collector).
// One serve watches one cluster; a fleet is scaled out with one serve per cluster and Prometheus
// federation (or Thanos, Mimir), not with one process watching every cluster.
type serve struct {
	*common
	pods   sourceOptions // -A, -l
	listen string
}

func newServe() command { return &serve{} }

func (s *serve) name() string { return "serve" }

func (s *serve) addFlags(fs *pflag.FlagSet) *common {
	s.common = newCommon()
	fs.StringVar(&s.listen, "listen", ":9090", "Serve /metrics, /healthz and /readyz on this `ADDRESS` (host:port; :9090 for every interface).")
	s.pods.podFlags(fs, "Watch")
	s.demoFlags(fs, false)
	s.modelFlags(fs)
	s.programFlags(fs)
	return s.common
}

func (s *serve) usage(prog string) string {
	return fmt.Sprintf(`%[1]s serve: the verdicts as Prometheus metrics, for alerts that page sooner and truer.

Usage:
  %[1]s serve [--listen :9090] [-n NS | -A] [-l SELECTOR] [flags]
  %[1]s serve --demo                    the demo cluster's verdicts

It serves /metrics (every workload's verdict, one-hot, its doomed pods and reason; every node's
suspect call, start failures and what it runs; pods per namespace and verdict: never a series per
pod), /healthz (the process) and /readyz (ready once the informers have synced; not while a watch
is broken or the API server does not answer, saying why; "ok, degraded" naming what RBAC forbids).
In a pod it uses the in-cluster config: deploy/ runs it, deploy/prometheus/rules.yaml alerts on it.
It watches one cluster: run one per cluster, and federate. doomwatch only gets, lists and watches;
it never writes to the cluster.
Exit codes: 0 interrupted (SIGINT, SIGTERM), 1 error (the address is taken, the cluster
unreachable at the start), 2 usage error.

Flags:
`, prog)
}

func (s *serve) validate(fs *pflag.FlagSet, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("unexpected argument %q", args[0])
	}
	if err := s.common.validate(fs); err != nil {
		return err
	}
	if err := s.pods.validate(); err != nil {
		return err
	}
	if _, _, err := net.SplitHostPort(s.listen); err != nil {
		return fmt.Errorf("--listen %q: %w", s.listen, err)
	}
	return s.validateValues()
}

func (s *serve) validateFleet() error {
	return errors.New("serve watches one cluster: run one serve per cluster and federate them (Prometheus federation, Thanos, Mimir)")
}

func (s *serve) source() sourceOptions { return s.pods }

// servePoll is how often serve lets evidence expire without a batch, as the dashboard's tick.
const servePoll = time.Second

func (s *serve) run(ctx context.Context, e *env) error {
	ln, err := net.Listen("tcp", s.listen)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", s.listen, err)
	}
	// The model is read by the scrapes and written by the batches: one lock for both.
	var mu sync.Mutex
	c := e.m.Clusters()[0]
	synced := e.src.Synced()
	// ready says whether serve is ready, and why not; degraded names what RBAC forbids, which
	// leaves serve ready: the verdicts go on without it, as the dashboard's do. The health's text is
	// the model's, sanitised where it entered (model.sanitizeHealth).
	ready := func() (ok bool, why string) {
		select {
		case <-synced:
		default:
			return false, "the informers have not synced yet"
		}
		mu.Lock()
		h := c.Health()
		mu.Unlock()
		switch {
		case h.Unreachable != "":
			return false, "the API server does not answer: " + h.Unreachable
		case h.WatchError != "":
			return false, "a watch is broken: " + h.WatchError
		}
		return true, forbidden(h.Forbidden)
	}
	reg := prometheus.NewRegistry()
	// The verdicts' series go to the encoder as the collector keeps them (metrics.Collector.Gather);
	// serve's own (build, Go, process, batch duration) through the registry.
	verdicts := metrics.New(c.Model, &mu, e.src.Now, ready)
	batchDuration := metrics.NewBatchDuration()
	reg.MustRegister(batchDuration,
		collectors.NewBuildInfoCollector(), collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(metrics.Join(reg, verdicts), promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		ok, why := ready()
		switch {
		case !ok:
			http.Error(w, "not ready: "+why, http.StatusServiceUnavailable)
		case why != "":
			fmt.Fprintln(w, "ok, degraded: "+why)
		default:
			fmt.Fprintln(w, "ok")
		}
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	fmt.Fprintf(e.Stderr, "doomwatch: serving the verdicts of %s at http://%s/metrics\n", sanitize.Text(e.src.Scope()), displayAddr(ln.Addr()))
	poll := time.NewTicker(servePoll)
	defer poll.Stop()
	batches, justSynced := e.src.Batches(), synced
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-served:
			return fmt.Errorf("serving /metrics: %w", err)
		case <-justSynced:
			justSynced = nil // ready reads synced, which stays closed
			fmt.Fprintln(e.Stderr, "doomwatch: synced; ready")
		case <-poll.C:
			mu.Lock()
			e.m.Expire(e.src.Now())
			mu.Unlock()
		case bs, ok := <-batches:
			if !ok {
				return e.src.Err()
			}
			mu.Lock()
			start := time.Now()
			e.m.ApplyAll(bs, e.src.Now())
			batchDuration.Observe(time.Since(start).Seconds())
			mu.Unlock()
		}
	}
}

// forbidden says what RBAC forbids and what the verdicts lack for it; "" when nothing is.
func forbidden(kinds []contract.Kind) string {
	if len(kinds) == 0 {
		return ""
	}
	resources := make([]string, len(kinds))
	for i, k := range kinds {
		resources[i] = k.Resource()
	}
	return "RBAC forbids listing or watching " + strings.Join(resources, ", ") + "; the verdicts go on without them"
}

// displayAddr is addr as a URL's host: "localhost:9090" for every interface.
func displayAddr(addr net.Addr) string {
	s := addr.String()
	if strings.HasPrefix(s, "[::]:") || strings.HasPrefix(s, "0.0.0.0:") {
		return "localhost:" + s[strings.LastIndex(s, ":")+1:]
	}
	return s
}
