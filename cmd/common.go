package cmd

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"doomwatch/classify"
	"doomwatch/contract"
	"doomwatch/kube"
	"doomwatch/kube/demo"
	"doomwatch/model"
)

// common are the options every command shares: the demo, the model's configuration, logging, and
// kubectl's connection flags. Each group is declared by a method, so that a command lists its own
// flags and the groups in the order its help shows them.
type common struct {
	demo     bool
	fleet    bool
	at       time.Duration
	seed     int64
	speed    float64
	interval time.Duration
	logFile  string
	noColor  bool
	help     bool
	version  bool
	model    model.Config
	kube     *kube.Flags
}

// newCommon is the options at their defaults, for the flags a command does not declare too.
func newCommon() *common {
	return &common{model: model.DefaultConfig(), speed: 1, interval: kube.DefaultInterval}
}

// demoFlags are --demo and its knobs; --at only for the commands that can hold the scenario at a
// time (wait's verdict needs the story to go on).
func (o *common) demoFlags(fs *pflag.FlagSet, at bool) {
	fs.BoolVar(&o.demo, "demo", false, "Run against the embedded demo cluster instead of a real one.")
	fs.BoolVar(&o.fleet, "fleet", false, "With --demo: three demo clusters (demo-eu, demo-us, demo-ap) in one view, as --context a,b,c shows real ones.")
	if at {
		fs.DurationVar(&o.at, "at", 0, fmt.Sprintf("With --demo: show the scenario at this simulated time (e.g. 90s) and hold it there. --once defaults to %ds, when its doomed rollouts and its suspect node are all on screen (--at 0s: the story's start); the dashboard and --watch play the story from its start.", int(demoOnceAt/time.Second)))
	}
	fs.Int64Var(&o.seed, "seed", 1, "With --demo: seed for names and jitter (the story is the same).")
	fs.Float64Var(&o.speed, "speed", 1, "With --demo: simulated seconds per real second.")
}

// intervalFlag is the coalescing interval.
func (o *common) intervalFlag(fs *pflag.FlagSet) {
	fs.DurationVar(&o.interval, "interval", kube.DefaultInterval, "Coalescing interval: at most one update of the model per interval (with --demo, of the story's time).")
}

// modelFlags are the coalescing interval and the model's thresholds.
func (o *common) modelFlags(fs *pflag.FlagSet) {
	o.intervalFlag(fs)
	o.thresholdFlags(fs)
}

// thresholdFlags are the model's thresholds.
func (o *common) thresholdFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&o.model.Window, "window", o.model.Window, "How long start failures (exit 128, CRI-O create errors) count as evidence.")
	fs.IntVar(&o.model.SuspectPods, "suspect-pods", o.model.SuspectPods, fmt.Sprintf("A node is suspect when at least this many distinct pods failed to start on it within the window and it stands out: a share of its started pods at least %dx that of the nodes not suspect, or half of them when the others are too few to tell.", classify.SuspectRatio))
	// --suspect-share was the share of the cluster's exit-128 failures a node had to hold; a node is
	// now suspect when it stands out from the others. Kept, hidden, so that scripts passing it get a
	// usage error that says so rather than "unknown flag".
	fs.Float64Var(new(float64), "suspect-share", 0, "")
	_ = fs.MarkHidden("suspect-share")
	fs.IntVar(&o.model.EscalateNodes, "escalate-nodes", o.model.EscalateNodes, "A workload whose containers failed to start on this many nodes is doomed (not node-local).")
}

// programFlags are logging, colour, help and version, then kubectl's own connection flags and
// precedence: --kubeconfig, --context, -n, --request-timeout, KUBECONFIG, in-cluster config. The
// request timeout defaults to 10s rather than kubectl's "never".
func (o *common) programFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.logFile, "log-file", "", "Write klog/client-go logs and API server warnings to this file (default: discard them).")
	o.helpFlags(fs)
	o.kube = kube.AddFlags(fs)
}

// helpFlags are colour, help and version: what a command that talks to no cluster has of
// programFlags.
func (o *common) helpFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.noColor, "no-color", false, "Disable colour (also NO_COLOR=1).")
	fs.BoolVarP(&o.help, "help", "h", false, "Show this help.")
	fs.BoolVar(&o.version, "version", false, "Print the version and exit.")
}

// validate rejects shared flags and values that cannot be what the user meant.
func (o *common) validate(fs *pflag.FlagSet) error {
	if !o.demo && fs.Lookup("demo") != nil {
		for _, name := range []string{"at", "seed", "speed", "fleet"} {
			if fs.Changed(name) {
				return fmt.Errorf("--%s needs --demo", name)
			}
		}
	}
	if o.demo {
		// The demo's clusters are not a kubeconfig's contexts: picking among them is --fleet's.
		for _, name := range []string{"context", "all-contexts"} {
			if fs.Changed(name) {
				names := make([]string, len(demo.Fleet))
				for i, v := range demo.Fleet {
					names[i] = v.Name()
				}
				return fmt.Errorf("--%s picks kubeconfig contexts, which --demo does not read: --demo --fleet shows its clusters %s in one view", name, strings.Join(names, ", "))
			}
		}
	}
	if o.kube != nil {
		if err := o.kube.Validate(); err != nil {
			return err
		}
	}
	if fs.Changed("suspect-share") {
		return fmt.Errorf("--suspect-share was removed: a node is suspect when at least --suspect-pods pods failed to start there and it stands out (a share of its started pods %dx that of the nodes not suspect)", classify.SuspectRatio)
	}
	return nil
}

// validateValues rejects values out of range; a command calls it after its own checks, so that
// its errors about what it was asked come first.
func (o *common) validateValues() error {
	switch {
	case o.at < 0:
		return fmt.Errorf("--at must not be negative, got %s", o.at)
	case o.speed <= 0:
		return fmt.Errorf("--speed must be positive, got %g", o.speed)
	case o.interval <= 0:
		return fmt.Errorf("--interval must be positive, got %s", o.interval)
	case o.model.Window <= 0:
		return fmt.Errorf("--window must be positive, got %s", o.model.Window)
	case o.model.SuspectPods < 1:
		return fmt.Errorf("--suspect-pods must be at least 1, got %d", o.model.SuspectPods)
	case o.model.EscalateNodes < 2:
		return fmt.Errorf("--escalate-nodes must be at least 2, got %d", o.model.EscalateNodes)
	}
	return nil
}

// contexts are the kubeconfig contexts the command watches (kube.Flags.Contexts): one, "" for
// the current one, unless --context names several or --all-contexts is given. The demo's are its
// own.
func (o *common) contexts() ([]string, error) {
	if o.demo {
		if o.fleet {
			names := make([]string, len(demo.Fleet))
			for i, v := range demo.Fleet {
				names[i] = v.Name()
			}
			return names, nil
		}
		return []string{demo.Classic.Name()}, nil
	}
	return o.kube.Contexts()
}

// start starts the sources: the demo cluster (or its fleet), or informers on each real one.
func (o *common) start(ctx context.Context, src sourceOptions, contexts []string, deadline time.Time) (*kube.Fleet, error) {
	selector, allNamespaces := src.selector, src.allNamespaces
	if o.demo {
		ns := ""
		if !allNamespaces {
			ns = o.kube.Namespace()
		}
		opts := demo.Options{
			Seed: o.seed, Speed: o.speed, At: o.at, From: src.demoFrom, Interval: o.interval,
			Namespace: ns, Selector: selector,
		}
		if o.fleet {
			return demo.StartFleet(ctx, opts)
		}
		s, err := demo.Start(ctx, opts)
		if err != nil {
			return nil, err
		}
		return kube.Join(ctx, []*kube.Source{s}, []string{""}), nil
	}
	return kube.ConnectFleet(ctx, o.kube, contexts, deadline, kube.Options{
		AllNamespaces: allNamespaces,
		Namespace:     src.namespace,
		Selector:      selector,
		Interval:      o.interval,
	})
}

// cluster marks err as the real cluster's, for main's hints; the demo's errors have none.
func (o *common) cluster(err error) error {
	if err == nil || o.demo {
		return err
	}
	return &ClusterError{err}
}

// settle waits for the first sync of every cluster, applying their batches, until ctx's
// deadline: one error per cluster, nil for those that synced.
func (e *env) settle(ctx context.Context) []error {
	return e.src.Settle(ctx, func(b contract.Batch) { e.m.Apply(&b, e.src.Now()) })
}

// settleAll is settle for the commands that need every cluster: the first error, named by its
// context when there are several.
func (e *env) settleAll(ctx context.Context) error {
	for i, err := range e.settle(ctx) {
		if err != nil {
			if e.m.Multi() {
				return fmt.Errorf("context %s: %w", e.m.Clusters()[i].Context, err)
			}
			return err
		}
	}
	return nil
}

// quietLogs sends klog and API server warnings to path, or nowhere, never to the terminal the
// dashboard draws on.
func quietLogs(path string) (func(), error) {
	if path == "" {
		return kube.QuietLogs(nil)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening log file: %w", err)
	}
	flush, err := kube.QuietLogs(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() { flush(); f.Close() }, nil
}
