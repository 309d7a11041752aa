package cmd

import (
	"context"
	"errors"
	"os"

	"github.com/charmbracelet/x/term"

	"doomwatch/tui"
)

// runDashboard is the default: the live dashboard on the alternate screen until the user quits
// or the source stops.
func (r *root) runDashboard(ctx context.Context, e *env) error {
	// The dashboard draws on stdout; into a pipe or a file it would be escape codes.
	if !term.IsTerminal(os.Stdout.Fd()) {
		return errors.New("the dashboard needs a terminal, and stdout is not one: use --once for a snapshot, or wait as a deploy gate")
	}
	opts := tui.Options{
		Model:   e.m,
		Batches: e.src.Batches(),
		Now:     e.src.Now,
		Scope:   e.src.Scope(),
		NoColor: r.noColor,
		Logs:    e.src,
	}
	var rec *recorder
	stopTee := func() {}
	if r.rec.path != "" {
		var err error
		// The dashboard has the terminal: the recorder's troubles are the header's to show.
		if rec, err = startRecorder(e, &r.rec, r.demo, nil); err != nil {
			return err
		}
		opts.Batches, stopTee = rec.tee(ctx, opts.Batches, e.src.Now)
		opts.Recording = rec.note
	}
	go governMemory(ctx, e.src.Synced())
	err := tui.Run(ctx, opts)
	if rec != nil {
		stopTee()
		if cerr := rec.close(e.src.Now()); cerr != nil && err == nil {
			err = cerr
		} else if cerr == nil {
			rec.summary(e.Stderr)
		}
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	// The dashboard shows a stopped source; once the terminal is restored, say why it stopped.
	return e.src.Err()
}
