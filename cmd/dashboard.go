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
	go governMemory(ctx, e.src.Synced())
	err := tui.Run(ctx, tui.Options{
		Model:   e.m,
		Batches: e.src.Batches(),
		Now:     e.src.Now,
		Scope:   e.src.Scope(),
		NoColor: r.noColor,
		Logs:    e.src,
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	// The dashboard shows a stopped source; once the terminal is restored, say why it stopped.
	return e.src.Err()
}
