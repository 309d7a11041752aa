// Package tui is doomwatch's bubbletea v2 dashboard over the live model. It imports model/ (and
// classify/ for badge names), never client-go.
package tui

// This file is the package's contract. The bodies are filled in by the tui work (issue 4).

import (
	"context"
	"io"
	"time"

	"doomwatch/model"
)

// Options wire the dashboard to a source of batches.
type Options struct {
	// Model is the state the dashboard owns from now on; batches are applied to it in Update.
	Model *model.Model
	// Batches delivers coalesced batches from kube/; the dashboard re-arms a Cmd on it after each.
	Batches <-chan model.Batch
	// Now is the source's clock (simulated for the demo).
	Now func() time.Time
	// Context and Scope are shown in the header.
	Context string
	Scope   string
	// NoColor disables colour (also implied by the NO_COLOR environment variable).
	NoColor bool
	// Input and Output default to the process's terminal.
	Input  io.Reader
	Output io.Writer
}

// Run runs the dashboard until the user quits or ctx ends, and restores the terminal, also after
// a panic in a component.
func Run(ctx context.Context, opts Options) error { panic("tui.Run: not implemented yet") }
