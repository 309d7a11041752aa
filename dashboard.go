package main

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/charmbracelet/x/term"

	"doomwatch/kube"
	"doomwatch/model"
	"doomwatch/tui"
)

// runDashboard is the default mode: the live dashboard on the alternate screen until the user
// quits or the source stops.
func runDashboard(ctx context.Context, src *kube.Source, m *model.Model, o *options, stderr io.Writer) int {
	// The dashboard draws on stdout; into a pipe or a file it would be escape codes.
	if !term.IsTerminal(os.Stdout.Fd()) {
		return fail(stderr, errors.New("the dashboard needs a terminal, and stdout is not one: use --once for a snapshot, or wait as a deploy gate"), "")
	}
	go governMemory(ctx, src.Synced())
	err := tui.Run(ctx, tui.Options{
		Model:   m,
		Batches: src.Batches(),
		Now:     src.Now,
		Context: src.Context(),
		Scope:   src.Scope(),
		NoColor: o.noColor,
		Logs:    src,
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
