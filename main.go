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
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"doomwatch/kube"
	"doomwatch/kube/demo"
	"doomwatch/model"
)

// Exit codes: 0 success, 1 an error while running (cluster unreachable, bad kubeconfig, not
// synced in time) or, for wait, a doomed or missing workload, 2 a usage error (unknown flag, bad
// value, conflicting flags), 70 wait's timeout.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
	// exitTimeout is wait's timeout, Krane's code for it (EX_SOFTWARE); exitInterrupted is the
	// shell's code for SIGINT.
	exitTimeout     = 70
	exitInterrupted = 130
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

// options are the parsed flags that are not kubectl's, and wait's workloads.
type options struct {
	allNamespaces bool
	selector      string
	demo          bool
	once          bool
	watch         bool
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

	// wait is the `wait` mode; timeout and args (its workloads) are its own.
	wait    bool
	timeout time.Duration
	args    []string
}

// mode is which of doomwatch's modes a flag set is for: the flags differ, as their help does.
type mode uint8

const (
	modeAny       mode = iota // every flag of every mode: only to find the mode
	modeDashboard             // the dashboard and --once
	modeWait                  // doomwatch wait
)

func newFlags(md mode) (*pflag.FlagSet, *kube.Flags, *options) {
	fs := pflag.NewFlagSet(progName(), pflag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported by run, once, on one line
	fs.SortFlags = false

	o := &options{model: model.DefaultConfig(), wait: md == modeWait}
	if md != modeWait {
		fs.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "Watch pods in every namespace.")
		fs.StringVarP(&o.selector, "selector", "l", "", "Label selector for pods, as kubectl's -l (e.g. app=web,tier!=cache).")
		fs.BoolVar(&o.once, "once", false, "Print a snapshot once the informers have synced, then exit.")
		fs.BoolVarP(&o.watch, "watch", "w", false, "Print every rollout, pod and node once synced, then a line per change of verdict, reason or suspect call.")
		fs.StringVarP(&o.output, "output", "o", "table", "Format with --once or --watch: table or json (--watch: one JSON object per line).")
	} else {
		fs.StringVarP(&o.selector, "selector", "l", "", "Wait for every Deployment whose labels match this selector, as kubectl's -l.")
		fs.DurationVar(&o.timeout, "timeout", defaultWaitTimeout, "Give up (exit 70) when the rollouts have not completed in this long.")
		fs.StringVarP(&o.output, "output", "o", "text", "Verdict format: text or json (the document is on stdout; progress goes to stderr).")
	}
	if md == modeAny {
		fs.DurationVar(&o.timeout, "timeout", defaultWaitTimeout, "")
	}
	fs.BoolVar(&o.demo, "demo", false, "Run against the embedded demo cluster instead of a real one.")
	if md != modeWait {
		fs.DurationVar(&o.at, "at", 0, "With --demo: show the scenario at this simulated time (e.g. 90s) and hold it there.")
	}
	fs.Int64Var(&o.seed, "seed", 1, "With --demo: seed for names and jitter (the story is the same).")
	fs.Float64Var(&o.speed, "speed", 1, "With --demo: simulated seconds per real second.")
	fs.DurationVar(&o.interval, "interval", kube.DefaultInterval, "Coalescing interval: at most one update of the model per interval.")
	fs.DurationVar(&o.model.Window, "window", o.model.Window, "How long start failures (exit 128, CRI-O create errors) count as evidence.")
	fs.IntVar(&o.model.SuspectPods, "suspect-pods", o.model.SuspectPods, fmt.Sprintf("A node is suspect when at least this many distinct pods failed to start on it within the window and it stands out: a share of its started pods at least %dx that of the nodes not suspect, or half of them when the others are too few to tell.", model.SuspectRatio))
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

// parseArgs finds the mode (`wait` is the first argument that is not a flag, wherever the flags
// are, as kubectl's subcommands are found) and parses args with that mode's flags.
func parseArgs(args []string) (*pflag.FlagSet, *kube.Flags, *options, error) {
	md := modeDashboard
	if any, _, _ := newFlags(modeAny); any.Parse(args) == nil && any.Arg(0) == "wait" {
		md = modeWait
	}
	fs, kf, o := newFlags(md)
	err := fs.Parse(args)
	if err == nil && o.wait {
		o.args = fs.Args()[1:]
	}
	return fs, kf, o, err
}

// run is the whole program behind main, returning the exit code; tests call it directly.
func run(args []string, stdout, stderr io.Writer) int {
	fs, kf, o, err := parseArgs(args)
	if err != nil {
		return usageError(stderr, err)
	}
	if o.help {
		fmt.Fprint(stdout, usage(fs, o.wait))
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
	switch {
	case o.wait:
		return runWait(ctx, src, m, o, kf, deadline, stdout, stderr)
	case o.once:
		return runOnce(ctx, src, m, o, deadline, stdout, stderr)
	case o.watch:
		return runWatch(ctx, src, m, o, deadline, stdout, stderr)
	}
	return runDashboard(ctx, src, m, o, stderr)
}

func startSource(ctx context.Context, kf *kube.Flags, o *options, deadline time.Time) (*kube.Source, error) {
	// wait's -l selects Deployments, not pods: it watches every pod of the namespace.
	selector := o.selector
	if o.wait {
		selector = ""
	}
	if o.demo {
		ns := ""
		if !o.allNamespaces {
			ns = kf.Namespace()
		}
		return demo.Start(ctx, demo.Options{
			Seed: o.seed, Speed: o.speed, At: o.at, Interval: o.interval,
			Namespace: ns, Selector: selector,
		})
	}
	return kube.Connect(ctx, kf, deadline, kube.Options{
		AllNamespaces: o.allNamespaces,
		Selector:      selector,
		Interval:      o.interval,
	})
}

// validate rejects flag combinations and values that cannot be what the user meant.
func validate(fs *pflag.FlagSet, o *options) error {
	if !o.wait && fs.NArg() > 0 {
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
		return fmt.Errorf("--suspect-share was removed: a node is suspect when at least --suspect-pods pods failed to start there and it stands out (a share of its started pods %dx that of the nodes not suspect)", model.SuspectRatio)
	}
	if o.wait {
		if err := validateWait(o); err != nil {
			return err
		}
	} else {
		if o.once && o.watch {
			return errors.New("--once and --watch cannot be combined: --once prints one snapshot, --watch a stream of changes")
		}
		if fs.Changed("output") && !o.once && !o.watch {
			return errors.New("-o/--output needs --once or --watch")
		}
		if o.output != "table" && o.output != "json" {
			return fmt.Errorf("-o/--output must be table or json, not %q", o.output)
		}
	}
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
	fmt.Fprintf(stderr, "doomwatch: %s (see %s --help)\n", model.Sanitize(err.Error()), progName())
	return exitUsage
}

// progName is how the user ran doomwatch: "kubectl doomwatch" when kubectl runs it as the plugin
// kubectl-doomwatch (kubectl passes the plugin's path as argv[0]), otherwise "doomwatch".
func progName() string {
	base := filepath.Base(os.Args[0])
	base = strings.TrimSuffix(base, ".exe")
	if rest, ok := strings.CutPrefix(base, "kubectl-"); ok && rest != "" {
		// kubectl maps dashes in a plugin's file name to spaces and underscores to dashes.
		return "kubectl " + strings.ReplaceAll(strings.ReplaceAll(rest, "-", " "), "_", "-")
	}
	return "doomwatch"
}

func usage(fs *pflag.FlagSet, wait bool) string {
	name := progName()
	if wait {
		return fmt.Sprintf(`%[1]s wait: a deploy gate. Waits until each workload's rollout completes, and fails fast,
with the reasons, when one is doomed.

Usage:
  %[1]s wait deployment/NAME [statefulset/NAME daemonset/NAME pod/NAME ...] [-n NS] [--timeout 10m] [-o text|json]
  %[1]s wait deployment NAME [NAME ...]    the names of one kind
  %[1]s wait -l SELECTOR                    every Deployment whose labels match

Names take kubectl's forms: deployment/web, deploy/web, deployments.apps/web; sts/ and ds/ too.
StatefulSets and DaemonSets follow kubectl rollout status's rules for them (RollingUpdate only).
A bare pod (pod/NAME) is judged as Krane judges one it deployed: complete once it has Succeeded,
doomed when its verdict is doomed or when it is being deleted.
Transient failures (a flaky node) are warnings, not failures. Progress goes to stderr: a live view
on a terminal, otherwise a plain line at most every 5s and one per change of verdict.

Exit codes: 0 all rollouts completed, 1 one is doomed (or not found, or an error), 2 usage error,
70 timeout (what was still missing is printed), 130 interrupted.

Flags:
`, name) + fs.FlagUsages()
	}
	return fmt.Sprintf(`%[1]s: a dashboard for Kubernetes rollouts that tells transient pod failures from doomed ones.

Usage:
  %[1]s [flags]                     live dashboard for the current kubeconfig context
  %[1]s --demo                      the embedded demo cluster
  %[1]s --once [-o table|json]      print a snapshot and exit
  %[1]s --watch [-o table|json]     print every verdict, then each change of one, until interrupted
  %[1]s --demo --once --at 90s      the demo scenario at 90s of simulated time
  %[1]s wait deployment/NAME ...    a deploy gate: exit 0 when rolled out, 1 when doomed (see %[1]s wait --help)

doomwatch only gets, lists and watches; it never writes to the cluster.
Exit codes: 0 success, 1 error (e.g. cluster unreachable), 2 usage error.

Flags:
`, name) + fs.FlagUsages()
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
