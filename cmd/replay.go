package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/duration"

	"doomwatch/model"
	"doomwatch/recording"
	"doomwatch/replay"
	"doomwatch/report"
	"doomwatch/tui"
)

// replayCmd is `doomwatch replay DIR`: the dashboard over a recording, or with --once its state
// at a moment, or with --timeline its verdict changes. It reads only the recording.
type replayCmd struct {
	*common
	path     string
	once     bool
	seek     bool
	timeline bool
	at       string
	output   string
}

func newReplay() command { return &replayCmd{} }

func (r *replayCmd) name() string { return "replay" }

func (r *replayCmd) addFlags(fs *pflag.FlagSet) *common {
	r.common = newCommon()
	fs.BoolVar(&r.once, "once", false, "Print the state at --at (default: the recording's end) and exit.")
	fs.StringVar(&r.at, "at", "", "With --once: the moment, an offset from the recording's start (90s, 1h30m) or an RFC 3339 time.")
	fs.BoolVar(&r.seek, "seek", false, "With --once: rebuild the state from the recording's snapshot before --at (under a second at any moment) instead of replaying from the start (exact, but a day of a large cluster's churn takes minutes); the nodes' start failures of pods replaced before that snapshot are not counted.")
	fs.BoolVar(&r.timeline, "timeline", false, "Print every verdict change and suspect-node call, each with its time, as --watch would have printed them live.")
	fs.StringVarP(&r.output, "output", "o", "table", "Format with --once or --timeline: "+report.SnapshotPrinters.List()+" (--timeline: one JSON object per line).")
	r.thresholdFlags(fs)
	r.helpFlags(fs)
	return r.common
}

func (r *replayCmd) usage(prog string) string {
	return fmt.Sprintf(`Play a recording (%[1]s record, or %[1]s --record) back in the dashboard, or print from it.

Usage:
  %[1]s replay DIR                        the dashboard over the recording, from its first state
  %[1]s replay DIR --once [--at T] [--seek] [-o table|json]
                                         the state at T (default: the end), as --once printed it live
  %[1]s replay DIR --timeline [-o table|json]
                                         every verdict change and suspect-node call, with its time

The dashboard opens at the recording's first state: its first moment with every cluster synced
(a recording starts before the clusters' lists come, seconds later).
T is an offset from the recording's start (90s; a recording of --demo starts with the story, so
--at 90s is the story at 90 s, at any --speed) or an RFC 3339 time (2026-01-15T10:01:30Z).

Keys (besides the dashboard's): space pause/play, + and - faster/slower, ← → (or , .) 10s back and
forward, [ ] the previous and next verdict change or suspect-node call. The log pane has no logs:
a recording holds pods, nodes, Warning events and workloads, not containers' output.
The model's thresholds (--window and the rest) may differ from the recorder's: the recording holds
what the cluster said, and the verdicts are judged anew.
Exit codes: 0 success, 1 error (e.g. not a recording), 2 usage error.

Flags:
`, prog)
}

func (r *replayCmd) validate(fs *pflag.FlagSet, args []string) error {
	switch {
	case len(args) == 0:
		return errors.New("replay needs the recording's directory: replay DIR")
	case len(args) > 1:
		return fmt.Errorf("unexpected argument %q: replay takes one recording", args[1])
	}
	r.path = args[0]
	if err := r.common.validate(fs); err != nil {
		return err
	}
	switch {
	case r.once && r.timeline:
		return errors.New("--once and --timeline cannot be combined: --once prints one moment, --timeline every change")
	case r.seek && !r.once:
		return errors.New("--seek needs --once (the dashboard seeks by itself)")
	case fs.Changed("at") && !r.once:
		return errors.New("--at needs --once (the dashboard opens at the recording's first state; seek with ← and →)")
	case fs.Changed("output") && !r.once && !r.timeline:
		return errors.New("-o/--output needs --once or --timeline")
	}
	check := report.SnapshotPrinters.Check
	if r.timeline {
		check = report.WatchPrinters.Check
	}
	if err := check(r.output); err != nil {
		return err
	}
	if r.at != "" {
		if _, _, err := parseAt(r.at); err != nil {
			return err
		}
	}
	return r.validateValues()
}

// parseAt reads --at: an offset from the start (off, abs false) or an RFC 3339 time.
func parseAt(s string) (off time.Duration, abs time.Time, err error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return 0, t, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("--at %q is neither an offset such as 90s nor an RFC 3339 time such as 2026-01-15T10:01:30Z", s)
	}
	if d < 0 {
		return 0, time.Time{}, fmt.Errorf("--at must not be negative, got %s", s)
	}
	return d, time.Time{}, nil
}

// validateFleet is never called: replay takes no --context.
func (r *replayCmd) validateFleet() error { return nil }

func (r *replayCmd) source() sourceOptions { return sourceOptions{} }

func (r *replayCmd) run(context.Context, *env) error {
	return errors.New("replay runs without a source")
}

func (r *replayCmd) runAlone(ctx context.Context, p *Program) error {
	if !r.once && !r.timeline {
		return r.runDashboard(ctx)
	}
	rd, err := openRecording(r.path)
	if err != nil {
		return err
	}
	defer rd.Close()
	if r.timeline {
		var ferr error
		err := replay.Timeline(rd, r.model, func(l report.WatchLine) bool {
			ferr = report.WatchPrinters.Print(p.Stdout, r.output, []report.WatchLine{l})
			return ferr == nil && ctx.Err() == nil
		})
		switch {
		case ferr != nil:
			return fmt.Errorf("writing the timeline: %w", ferr)
		case ctx.Err() != nil:
			return ErrInterrupted
		}
		return err
	}
	t, err := r.moment(rd)
	if err != nil {
		return err
	}
	var m *model.Fleet
	if r.seek {
		m, err = replay.Seek(rd, r.model, t)
	} else {
		m, err = replay.At(rd, r.model, t)
	}
	if err != nil {
		return err
	}
	snap := report.NewFleetSnapshot(m, rd.Servers(), nil, t)
	if err := report.SnapshotPrinters.Print(p.Stdout, r.output, &snap); err != nil {
		return fmt.Errorf("writing snapshot: %w", err)
	}
	return nil
}

// moment is --at on rd's span: its end when not given.
func (r *replayCmd) moment(rd *recording.Reader) (time.Time, error) {
	first, last := rd.Span()
	if r.at == "" {
		return last, nil
	}
	off, t, _ := parseAt(r.at)
	if t.IsZero() {
		t = first.Add(off)
	}
	span := fmt.Sprintf("the recording spans %s to %s (+%s)", first.UTC().Format(time.RFC3339), last.UTC().Format(time.RFC3339),
		duration.HumanDuration(last.Sub(first)))
	switch {
	case t.Before(first):
		return time.Time{}, fmt.Errorf("--at %s is before the recording's start: %s", r.at, span)
	case t.After(last):
		return time.Time{}, fmt.Errorf("--at %s is after the recording's end: %s", r.at, span)
	}
	return t, nil
}

// openRecording opens the recording at path, with an error that says what is wrong with it.
func openRecording(path string) (*recording.Reader, error) {
	rd, err := recording.Open(path)
	switch {
	case errors.Is(err, recording.ErrEmpty):
		return nil, fmt.Errorf("%s holds no recording: it has no segment with a record intact (doomwatch record -o %s makes one)", path, path)
	case errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("%s: no such recording", path)
	case err != nil:
		return nil, err
	}
	return rd, nil
}

// runDashboard is the dashboard over the recording, playing from its first state.
func (r *replayCmd) runDashboard(ctx context.Context) error {
	if !term.IsTerminal(os.Stdout.Fd()) {
		return errors.New("the dashboard needs a terminal, and stdout is not one: use replay --once or --timeline")
	}
	rd, err := openRecording(r.path)
	if err != nil {
		return err
	}
	p, m, err := replay.NewPlayer(rd, r.model)
	if err != nil {
		return err
	}
	defer p.Close()
	// Playing from its first state before the dashboard draws its first frame, whose time bar
	// says so: were it started on Play's goroutine, that frame could say paused.
	p.Toggle()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Play(ctx, r.path)
	}()
	err = tui.Run(ctx, tui.Options{
		Model:   m,
		Now:     p.Now,
		Scope:   p.Scope(),
		NoColor: r.noColor,
		Replay:  p,
		Logs:    replay.NoLogs{},
	})
	cancel()
	<-done
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}
