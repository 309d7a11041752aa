// Package tui is doomwatch's bubbletea v2 dashboard over the live model. It imports model/ (its
// views, a pod's included: model.Pod.Columns for kubectl's READY/STATUS/RESTARTS, model.Pod.States
// for its containers, all sanitised) and classify/ (verdict classes for badges, verdict types for the
// detail pane), never client-go, and sanitises nothing itself.
package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"doomwatch/contract"
	"doomwatch/model"
)

// Options wire the dashboard to a source of batches.
type Options struct {
	// Model is the state the dashboard owns from now on, one cluster's or several's; batches are
	// applied to it in Update.
	Model *model.Fleet
	// Batches delivers coalesced batches from kube/, those of one interval together (kube's
	// Fleet.Batches); the dashboard applies each delivery, refreshes once and re-arms a Cmd on it.
	Batches <-chan []contract.Batch
	// Now is the source's clock (simulated for the demo).
	Now func() time.Time
	// Scope is shown in the header, with the context (or, with several, a line per cluster), as
	// it is: the source sanitises it (kube.Source.Scope, recording.Reader.Scope).
	Scope string
	// NoColor disables colour (also implied by the NO_COLOR environment variable).
	NoColor bool
	// Stable is --stable: the rollouts panel keeps judging each rollout this long after it
	// completes (model.Soak); 0 shows the rollouts as the model judges them.
	Stable time.Duration
	// Replay, when set, is a recording played back: its frames take the place of Batches, its
	// position is Now, and the header shows its time bar.
	Replay Player
	// Recording, when set, says how the recording made beside the dashboard goes (--record):
	// the header shows its note, sanitised by the recorder, in the danger style while failing
	// (it cannot write).
	Recording func() (note string, failing bool)
	// Logs serves the log pane (`l`); nil shows "no log source here" in it.
	Logs LogSource
	// Connected, when set, starts the dashboard before its source has connected: it shows
	// Connecting ("connecting to https://… (context prod)…") until a Connection arrives on it,
	// which brings the Model, Batches, Now, Scope, Logs and Recording above (those set here are
	// not used), or the error Run then returns.
	Connected  <-chan Connection
	Connecting string
	// Input and Output default to the process's terminal.
	Input  io.Reader
	Output io.Writer
}

// Run runs the dashboard until the user quits or ctx ends, and restores the terminal, also after
// a panic in a component.
func Run(ctx context.Context, opts Options) (err error) {
	if opts.Model == nil && opts.Connected == nil {
		return errors.New("dashboard: no model")
	}
	// NO_COLOR is set when present and not empty (https://no-color.org).
	// bubbletea recovers panics in Update, View and Cmds itself and restores the terminal before
	// Run returns (tea.go Program.Run, recoverFromPanic); the dashboard also turns panics in its
	// components into d.err. This recover is the last line for anything outside both.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("dashboard: panic: %v", r)
		}
	}()
	noColor := opts.NoColor || os.Getenv("NO_COLOR") != ""
	// The program starts as the dashboard, or as the screen that stands in for it until its source
	// has connected; failed is the error either ended with.
	var (
		start   tea.Model
		onPanic *func(error)
		failed  func() error
	)
	if opts.Connected != nil {
		c := newConnecting(opts, noColor)
		start, onPanic, failed = c, &c.onPanic, c.failed
	} else {
		d := newDashboard(opts, noColor)
		start, onPanic, failed = d, &d.onPanic, func() error { return d.err }
	}

	popts := []tea.ProgramOption{tea.WithContext(ctx)}
	if opts.Input != nil {
		popts = append(popts, tea.WithInput(opts.Input))
	}
	if opts.Output != nil {
		popts = append(popts, tea.WithOutput(opts.Output))
	}
	if noColor {
		popts = append(popts, tea.WithColorProfile(colorprofile.Ascii))
	}
	p := tea.NewProgram(start, popts...)
	// A panic while drawing cannot return a Cmd; it reaches Update as a message instead. Send
	// blocks until the event loop reads it, and render runs on that loop, hence the goroutine.
	*onPanic = func(err error) { go p.Send(panicMsg{err: err}) }

	_, runErr := p.Run()
	switch err := failed(); {
	case err != nil:
		return err
	case runErr == nil:
		return nil
	case errors.Is(runErr, tea.ErrProgramKilled) && ctx.Err() != nil && !errors.Is(runErr, tea.ErrProgramPanic):
		// The caller ended the dashboard (signal, demo over): not a failure.
		return nil
	default:
		return fmt.Errorf("dashboard: %w", runErr)
	}
}
