// Command loadgen writes a realistic fleet of pods into a local kube-apiserver and then churns
// the status of one namespace's pods at a given rate, stopping by itself. It refuses any server
// that is not on loopback. hack/benchscale drives the same code (package hack/scale); this
// command is for loading a cluster by hand, e.g. the e2e suite's servers.
//
//	go run ./hack/loadgen --kubeconfig /tmp/kc --pods 10000 --churn-rate 500 --churn-for 60s
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"doomwatch/hack/scale"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

func run() error {
	cfg := scale.DefaultConfig(10000)
	kubeconfig := pflag.String("kubeconfig", "", "kubeconfig of a loopback API server (required)")
	fixtures := pflag.String("fixtures", "classify/testdata", "classify's fixtures, where the runtime messages come from")
	skipLoad := pflag.Bool("churn-only", false, "do not load: churn a fleet loaded earlier with the same --pods")
	pflag.IntVar(&cfg.Pods, "pods", cfg.Pods, "pods to create")
	pflag.IntVar(&cfg.Nodes, "nodes", cfg.Nodes, "nodes to create")
	pflag.IntVar(&cfg.PodsPerNamespace, "pods-per-namespace", cfg.PodsPerNamespace, "pods per namespace")
	pflag.IntVar(&cfg.Replicas, "replicas", cfg.Replicas, "pods per Deployment")
	pflag.IntVar(&cfg.BadNodes, "bad-nodes", cfg.BadNodes, "nodes whose runtime fails with exit 128 (at most 3)")
	pflag.IntVar(&cfg.Workers, "workers", cfg.Workers, "concurrent requests while loading")
	rate := pflag.Float64("churn-rate", 0, "status updates per second after loading (0: no churn)")
	churnFor := pflag.Duration("churn-for", time.Minute, "churn at most this long")
	churnCount := pflag.Int("churn-count", 0, "churn at most this many updates (default: rate × duration)")
	churnNS := pflag.Int("churn-namespace", 0, "index of the namespace to churn")
	pflag.Parse()
	if *kubeconfig == "" {
		return fmt.Errorf("--kubeconfig is required")
	}
	if *churnFor > time.Hour {
		return fmt.Errorf("--churn-for %s: at most an hour", *churnFor)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	client, err := scale.ClientFromKubeconfig(*kubeconfig)
	if err != nil {
		return err
	}
	if cfg.Messages, err = scale.LoadMessages(*fixtures); err != nil {
		return err
	}
	fleet, err := scale.NewFleet(cfg)
	if err != nil {
		return err
	}
	logf := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
	}
	if !*skipLoad {
		counts := fleet.Counts()
		logf("loading %d pods (%d healthy, %d crash-loop, %d oom-loop, %d start-error on %v) on %d nodes in %d namespaces",
			cfg.Pods, counts[scale.Healthy], counts[scale.CrashLoop], counts[scale.OOMLoop], counts[scale.StartError],
			fleet.BadNodeNames(), cfg.Nodes, fleet.Namespaces())
		res, err := fleet.Load(ctx, client, logf)
		if err != nil {
			return err
		}
		logf("loaded %d pods, %d deployments in %s (%.0f pods/s)", res.Pods, res.Deployments, res.Took.Round(time.Millisecond), res.PodsPerSecond)
	}
	if *rate <= 0 {
		return nil
	}
	if *skipLoad {
		if err := fleet.Attach(ctx, client); err != nil {
			return err
		}
	}
	count := *churnCount
	if count <= 0 {
		count = int(*rate * churnFor.Seconds())
	}
	logf("churning %s at %.0f updates/s for at most %s or %d updates", scale.NamespaceName(*churnNS), *rate, *churnFor, count)
	res := fleet.Churn(ctx, client, scale.ChurnConfig{Namespace: *churnNS, Rate: *rate, Count: count, Duration: *churnFor, Workers: 32})
	logf("churn: %d updates in %s (%.0f/s), %d failed", res.Sent, res.Took.Round(time.Millisecond), res.Rate, res.Failed)
	if res.FirstErr != nil {
		return fmt.Errorf("churn: %w", res.FirstErr)
	}
	return nil
}
