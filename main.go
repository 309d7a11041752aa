// Command doomwatch is a terminal dashboard for Kubernetes rollouts that labels each pod transient
// or doomed. This file only parses flags and wires kube/ → model/ → tui/ (or the --once printers).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"doomwatch/kube"
	"doomwatch/model"
	"doomwatch/tui"
)

// Exit codes: 0 success, 1 an error while running (cluster unreachable, bad kubeconfig, not
// synced in time), 2 a usage error (unknown flag, bad value, conflicting flags).
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// Hints are added once, here at the boundary, to errors about the cluster, each to the kind of
// error it can help with.
const (
	connectHint = "is the cluster reachable? check --context/--kubeconfig"
	authHint    = "check the credentials of this context, e.g. with kubectl auth whoami"
	rbacHint    = "see the README's RBAC section for what doomwatch needs"
)

// version is set at build time with -ldflags "-X main.version=…"; otherwise the module version.
var version = ""

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// options are the parsed flags that are not kubectl's.
type options struct {
	allNamespaces bool
	selector      string
	demo          bool
	once          bool
	output        string
	at            time.Duration
	seed          int64
	speed         float64
	interval      time.Duration
	logFile       string
	noColor       bool
	help          bool
	version       bool
	model         model.Config
}

func newFlags() (*pflag.FlagSet, *kube.Flags, *options) {
	fs := pflag.NewFlagSet("doomwatch", pflag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported by run, once, on one line
	fs.SortFlags = false

	o := &options{model: model.DefaultConfig()}
	fs.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "Watch pods in every namespace.")
	fs.StringVarP(&o.selector, "selector", "l", "", "Label selector for pods, as kubectl's -l (e.g. app=web,tier!=cache).")
	fs.BoolVar(&o.once, "once", false, "Print a snapshot once the informers have synced, then exit.")
	fs.StringVarP(&o.output, "output", "o", "table", "Snapshot format with --once: table or json.")
	fs.BoolVar(&o.demo, "demo", false, "Run against the embedded demo cluster instead of a real one.")
	fs.DurationVar(&o.at, "at", 0, "With --demo: show the scenario at this simulated time (e.g. 90s) and hold it there.")
	fs.Int64Var(&o.seed, "seed", 1, "With --demo: seed for names and jitter (the story is the same).")
	fs.Float64Var(&o.speed, "speed", 1, "With --demo: simulated seconds per real second.")
	fs.DurationVar(&o.interval, "interval", kube.DefaultInterval, "Coalescing interval: at most one update of the model per interval.")
	fs.DurationVar(&o.model.Window, "window", o.model.Window, "How long start failures (exit 128, CRI-O create errors) count as evidence.")
	fs.IntVar(&o.model.SuspectPods, "suspect-pods", o.model.SuspectPods, fmt.Sprintf("A node is suspect when at least this many distinct pods failed to start on it within the window and it stands out: at least %dx the median of the other nodes.", model.SuspectRatio))
	// --suspect-share was the share of the cluster's exit-128 failures a node had to hold; a node is
	// now suspect when it stands out from the others. Kept, hidden, so that scripts passing it get a
	// usage error that says so rather than "unknown flag".
	fs.Float64Var(new(float64), "suspect-share", 0, "")
	_ = fs.MarkHidden("suspect-share")
	fs.IntVar(&o.model.EscalateNodes, "escalate-nodes", o.model.EscalateNodes, "A workload whose containers failed to start on this many nodes is doomed (not node-local).")
	fs.StringVar(&o.logFile, "log-file", "", "Write klog/client-go logs and API server warnings to this file (default: discard them).")
	fs.BoolVar(&o.noColor, "no-color", false, "Disable colour (also NO_COLOR=1).")
	fs.BoolVarP(&o.help, "help", "h", false, "Show this help.")
	fs.BoolVar(&o.version, "version", false, "Print the version and exit.")

	// kubectl's own flags and precedence: --kubeconfig, --context, -n, --request-timeout, KUBECONFIG,
	// in-cluster config. The request timeout defaults to 10s rather than kubectl's "never".
	kf := kube.AddFlags(fs)
	return fs, kf, o
}

// run is the whole program behind main, returning the exit code; tests call it directly.
func run(args []string, stdout, stderr io.Writer) int {
	fs, kf, o := newFlags()
	if err := fs.Parse(args); err != nil {
		return usageError(stderr, err)
	}
	if o.help {
		fmt.Fprint(stdout, usage(fs))
		return exitOK
	}
	if o.version {
		fmt.Fprintln(stdout, "doomwatch", buildVersion())
		return exitOK
	}
	if err := validate(fs, o); err != nil {
		return usageError(stderr, err)
	}
	timeout, err := kf.RequestTimeout()
	if err != nil {
		return usageError(stderr, err)
	}

	closeLog, err := quietLogs(o.logFile)
	if err != nil {
		return fail(stderr, err, "")
	}
	defer closeLog()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Stopping the source (informers, demo engine) when run returns.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// One bound for all that --request-timeout covers: the connection check and --once's sync
	// share it, so the worst case is the timeout, not twice it. The informers have none.
	deadline := time.Now().Add(timeout)
	src, err := startSource(ctx, kf, o, deadline)
	if err != nil {
		return fail(stderr, err, clusterHint(err, o.demo))
	}
	m := model.New(o.model)

	if o.once {
		syncCtx, cancelSync := context.WithDeadline(ctx, deadline)
		err := src.Settle(syncCtx, func(b model.Batch) { m.Apply(&b, src.Now()) })
		cancelSync()
		if err != nil {
			return fail(stderr, err, clusterHint(err, o.demo))
		}
		snap := m.Snapshot(src.Context(), src.Now())
		if o.output == "json" {
			err = snap.WriteJSON(stdout)
		} else {
			err = snap.WriteTable(stdout)
		}
		if err != nil {
			return fail(stderr, fmt.Errorf("writing snapshot: %w", err), "")
		}
		return exitOK
	}

	go governMemory(ctx, src.Synced())
	err = tui.Run(ctx, tui.Options{
		Model:   m,
		Batches: src.Batches(),
		Now:     src.Now,
		Context: src.Context(),
		Scope:   src.Scope(),
		NoColor: o.noColor,
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		return fail(stderr, err, "")
	}
	// The dashboard shows a stopped source; once the terminal is restored, say why it stopped.
	if err := src.Err(); err != nil {
		return fail(stderr, err, "")
	}
	return exitOK
}

func startSource(ctx context.Context, kf *kube.Flags, o *options, deadline time.Time) (*kube.Source, error) {
	if o.demo {
		ns := ""
		if !o.allNamespaces {
			ns = kf.Namespace()
		}
		return kube.StartDemo(ctx, kube.DemoOptions{
			Seed: o.seed, Speed: o.speed, At: o.at, Interval: o.interval,
			Namespace: ns, Selector: o.selector,
		})
	}
	return kube.Connect(ctx, kf, deadline, kube.Options{
		AllNamespaces: o.allNamespaces,
		Selector:      o.selector,
		Interval:      o.interval,
	})
}

// validate rejects flag combinations and values that cannot be what the user meant.
func validate(fs *pflag.FlagSet, o *options) error {
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if !o.demo {
		for _, name := range []string{"at", "seed", "speed"} {
			if fs.Changed(name) {
				return fmt.Errorf("--%s needs --demo", name)
			}
		}
	}
	if fs.Changed("suspect-share") {
		return fmt.Errorf("--suspect-share was removed: a node is suspect when at least --suspect-pods pods failed to start there and it stands out (%dx the median of the other nodes)", model.SuspectRatio)
	}
	if fs.Changed("output") && !o.once {
		return errors.New("-o/--output needs --once")
	}
	switch {
	case o.output != "table" && o.output != "json":
		return fmt.Errorf("-o/--output must be table or json, not %q", o.output)
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

// fail prints err as one sanitised line, with the hint that fits it if any, and returns exit
// code 1.
func fail(stderr io.Writer, err error, hint string) int {
	msg := model.Sanitize(err.Error())
	if hint != "" {
		msg += " (" + hint + ")"
	}
	fmt.Fprintln(stderr, "doomwatch: "+msg)
	return exitError
}

// clusterHint is the hint for an error from a real cluster (none for the demo): the connection
// hint only when the server could not be reached or the informers did not sync in time, not when
// it answered with a refusal (credentials, RBAC) or the kubeconfig was at fault (its message says
// what to fix).
func clusterHint(err error, demo bool) string {
	switch {
	case demo:
		return ""
	case errors.Is(err, kube.ErrUnreachable), errors.Is(err, kube.ErrNotSynced):
		return connectHint
	case errors.Is(err, kube.ErrUnauthorized):
		return authHint
	case errors.Is(err, kube.ErrForbidden):
		return rbacHint
	}
	return ""
}

func usageError(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "doomwatch: %s (see doomwatch --help)\n", model.Sanitize(err.Error()))
	return exitUsage
}

func usage(fs *pflag.FlagSet) string {
	return `doomwatch: a dashboard for Kubernetes rollouts that tells transient pod failures from doomed ones.

Usage:
  doomwatch [flags]                     live dashboard for the current kubeconfig context
  doomwatch --demo                      the embedded demo cluster
  doomwatch --once [-o table|json]      print a snapshot and exit
  doomwatch --demo --once --at 90s      the demo scenario at 90s of simulated time

doomwatch only gets, lists and watches; it never writes to the cluster.
Exit codes: 0 success, 1 error (e.g. cluster unreachable), 2 usage error.

Flags:
` + fs.FlagUsages()
}

func buildVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
