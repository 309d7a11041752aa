package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/charmbracelet/x/term"

	"doomwatch/sanitize"
	"doomwatch/tui"
)

// first: the dashboard is on screen while its source connects; --once and --watch print their
// answer, and connect first.
func (r *root) first() bool { return !r.once && !r.watch }

// runDashboard is the default: the live dashboard on the alternate screen until the user quits
// or the source stops. It is on screen at once, saying where it connects, while the source
// connects (env.start); a failure to connect ends it, and is told once the terminal is restored,
// in the words and with the exit code it had when the dashboard started only once connected.
func (r *root) runDashboard(ctx context.Context, e *env) error {
	// The dashboard draws on stdout; into a pipe or a file it would be escape codes.
	if !term.IsTerminal(os.Stdout.Fd()) {
		return errors.New("the dashboard needs a terminal, and stdout is not one: use --once for a snapshot, or wait as a deploy gate")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	connected := make(chan tui.Connection, 1)
	var rec *recorder
	stopTee := func() {}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c := r.connect(ctx, e)
		rec, stopTee = c.rec, c.stopTee
		connected <- c.Connection
	}()
	// What connects or fails within connectGrace needs no connecting screen: a failure is told as
	// it is, without the dashboard coming and going.
	select {
	case c := <-connected:
		if c.Err != nil {
			<-done
			return c.Err
		}
		connected <- c
	case <-time.After(connectGrace):
	}
	err := tui.Run(ctx, tui.Options{NoColor: r.noColor, Stable: r.stable, Connected: connected, Connecting: connectingText(e)})
	select {
	case <-done:
	default:
		// The dashboard ended before its source connected: stop connecting.
		cancel()
		<-done
	}
	if e.src == nil {
		return err
	}
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

// connection is what connecting gives the dashboard, and the recording made beside it (--record)
// with the function that stops feeding it.
type connection struct {
	tui.Connection
	rec     *recorder
	stopTee func()
}

// connect starts the source and, with --record, the recording beside the dashboard; its error is
// the dashboard's to end with.
func (r *root) connect(ctx context.Context, e *env) connection {
	c := connection{stopTee: func() {}}
	if err := e.start(ctx); err != nil {
		c.Err = err
		return c
	}
	c.Connection = tui.Connection{Model: e.m, Batches: e.src.Batches(), Now: e.src.Now, Scope: e.src.Scope(), Logs: e.src}
	if r.rec.path != "" {
		// The dashboard has the terminal: the recorder's troubles are the header's to show.
		rec, err := startRecorder(e, &r.rec, r.demo, nil)
		if err != nil {
			c.Err = err
			return c
		}
		c.rec = rec
		c.Batches, c.stopTee = rec.tee(ctx, c.Batches, e.src.Now)
		c.Recording = rec.note
	}
	go governMemory(ctx, e.src.Synced())
	return c
}

// connectingText says where the dashboard connects, read from the kubeconfig (kube.Flags.Target)
// before it has: "connecting to https://10.0.0.1:6443 (context prod)…".
func connectingText(e *env) string {
	names := e.contexts
	list := sanitize.Text(strings.Join(names[:min(len(names), maxNamed)], ", "))
	if len(names) > maxNamed {
		list += fmt.Sprintf(" and %d more", len(names)-maxNamed)
	}
	switch {
	case e.o.demo && len(names) > 1:
		return "starting the demo clusters (contexts " + list + ")…"
	case e.o.demo:
		return "starting the demo cluster (context " + list + ")…"
	case len(names) > 1:
		return fmt.Sprintf("connecting to %d clusters (contexts %s)…", len(names), list)
	}
	name, server := e.o.kube.Target(names[0])
	if server == "" {
		return "connecting (context " + sanitize.Text(name) + ")…"
	}
	return "connecting to " + sanitize.Text(server) + " (context " + sanitize.Text(name) + ")…"
}

// connectGrace is how long the dashboard waits for its source before it shows the connecting
// screen: short enough to seem at once, and long enough for a kubeconfig that cannot be read or a
// server that refuses the connection to fail first. A terminal program that quits within
// milliseconds of starting leaves the terminal's answers to the questions it asked on starting
// (synchronized output, unicode) to the shell, which prints them at its prompt.
const connectGrace = 200 * time.Millisecond

// maxNamed bounds the contexts the connecting screen names.
const maxNamed = 8
