package cmd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"doomwatch/report"
)

// root is the command without a name: the live dashboard, or with --once a snapshot, or with
// --watch a stream of changes (dashboard.go, once.go, watch.go).
type root struct {
	*common
	pods   sourceOptions // -A, -l
	once   bool
	watch  bool
	output string
	// stable is --stable: the rollouts panel keeps judging a completed rollout this long.
	stable time.Duration
	// rec is --record and its bounds: a recording made beside the dashboard.
	rec recordFlags
}

func newRoot() command { return &root{} }

func (r *root) name() string { return "" }

func (r *root) addFlags(fs *pflag.FlagSet) *common {
	r.common = newCommon()
	r.pods.podFlags(fs, "Watch")
	fs.BoolVar(&r.once, "once", false, "Print a snapshot once the informers have synced, then exit.")
	fs.BoolVarP(&r.watch, "watch", "w", false, "Print every rollout, pod and node once synced, then a line per change of verdict, reason or suspect call.")
	fs.StringVarP(&r.output, "output", "o", "table", "Format with --once or --watch: "+report.SnapshotPrinters.List()+" (--watch: one JSON object per line).")
	fs.DurationVar(&r.stable, "stable", 0, "On the dashboard: keep judging each rollout this long after it completes; a new pod doomed within it dooms the rollout's line, as wait --stable fails the wait (0: off).")
	fs.StringVar(&r.rec.path, "record", "", "Record what the dashboard is shown into `DIR` (new, or empty), for doomwatch replay; with --retention and --max-size as record takes them.")
	r.rec.bounds(fs)
	r.demoFlags(fs, true)
	r.modelFlags(fs)
	r.programFlags(fs)
	return r.common
}

func (r *root) usage(prog string) string {
	return fmt.Sprintf(`%[1]s: a dashboard for Kubernetes rollouts that tells transient pod failures from doomed ones.

Usage:
  %[1]s [flags]                     live dashboard for the current kubeconfig context
  %[1]s --demo                      the embedded demo cluster
  %[1]s --once [-o table|json]      print a snapshot and exit
  %[1]s --watch [-o table|json]     print every verdict, then each change of one, until interrupted
  %[1]s --demo --once               the demo's story at 90s of simulated time (--at for another moment)
  %[1]s --context 'prod-*'          several clusters in one view (a comma list, a glob or --all-contexts)
  %[1]s --demo --fleet              three demo clusters in one view
  %[1]s wait deployment/NAME ...    a deploy gate: exit 0 when rolled out, 1 when doomed (see %[1]s wait --help)
  %[1]s record -o DIR               record headless for replay (see %[1]s record --help)
  %[1]s --record DIR                the dashboard, recording what it is shown
  %[1]s replay DIR                  the dashboard over a recording (see %[1]s replay --help)

doomwatch only gets, lists and watches; it never writes to the cluster.
Exit codes: 0 success, 1 error (e.g. cluster unreachable; --once with several contexts: any of
them did not sync, the others are printed), 2 usage error: an unknown flag or argument, a value
that cannot be right (an invalid -n namespace or -l selector), flags that do not go together.

Flags:
`, prog)
}

func (r *root) validate(fs *pflag.FlagSet, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("unexpected argument %q", args[0])
	}
	if err := r.common.validate(fs); err != nil {
		return err
	}
	if err := r.pods.validate(); err != nil {
		return err
	}
	if r.demo && r.once && !fs.Changed("at") {
		r.at = demoOnceAt
	}
	if r.once && r.watch {
		return errors.New("--once and --watch cannot be combined: --once prints one snapshot, --watch a stream of changes")
	}
	if r.stable < 0 {
		return fmt.Errorf("--stable %s: a window cannot be negative", r.stable)
	}
	if fs.Changed("stable") && (r.once || r.watch) {
		return errors.New("--stable is the dashboard's (and wait's): --once and --watch print the rollouts as they are")
	}
	if fs.Changed("output") && !r.once && !r.watch {
		return errors.New("-o/--output needs --once or --watch")
	}
	if r.rec.path == "" && (fs.Changed("retention") || fs.Changed("max-size")) {
		return errors.New("--retention and --max-size need --record (or doomwatch record)")
	}
	if r.rec.path != "" {
		if r.once || r.watch {
			return errors.New("--record records beside the dashboard; without one, use doomwatch record -o DIR")
		}
		if err := r.rec.validate("--record"); err != nil {
			return err
		}
	}
	check := report.SnapshotPrinters.Check
	if r.watch {
		check = report.WatchPrinters.Check
	}
	if err := check(r.output); err != nil {
		return err
	}
	return r.validateValues()
}

// validateFleet: every mode of the root takes several contexts.
func (r *root) validateFleet() error { return nil }

func (r *root) source() sourceOptions { return r.pods }

func (r *root) run(ctx context.Context, e *env) error {
	switch {
	case r.once:
		return r.runOnce(ctx, e)
	case r.watch:
		return r.runWatch(ctx, e)
	}
	return r.runDashboard(ctx, e)
}
