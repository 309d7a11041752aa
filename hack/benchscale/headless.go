package main

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"syscall"
	"time"

	"doomwatch/hack/scale"
)

// headless is a doomwatch mode without a screen (record, serve), measured as the dashboard is but
// told synced by a line on its stderr rather than by its screen.
type headless struct {
	name string
	cmd  *exec.Cmd
	// line sees each line of stderr, from one goroutine, and reports whether it says the process
	// has synced.
	line func(string) (synced bool)
	// atRest, if set, runs between the idle window and the churn window, with the servers at rest.
	atRest func(ctx context.Context, pid int) error
}

// headlessResult is a headless mode's figures over the dashboard's windows.
type headlessResult struct {
	synced      time.Duration
	start, idle window
	churn       window
	churnRun    scale.ChurnResult
	last        string // stderr's last line: the recorder's summary
	err         error
}

// runHeadless starts h.cmd, samples its start until it says it synced, lets its start-up garbage go
// as the dashboard's run does, then samples it over the idle window, runs h.atRest, and samples it
// under the same churn. It stops the process with SIGINT (both modes' clean exit) before it returns.
func (b *bench) runHeadless(ctx context.Context, h headless, logf func(string, ...any)) (r headlessResult) {
	// r is named: the deferred stop fills in the last line and the exit after the return.
	cmd := h.cmd
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		r.err = err
		return r
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		r.err = err
		return r
	}
	// One reader of stderr, so the process never blocks on it.
	synced, eof := make(chan struct{}), make(chan struct{})
	var last string
	go func() {
		defer close(eof)
		seen := false
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			l := sc.Text()
			if h.line(l) && !seen {
				seen = true
				close(synced)
			}
			last = l
		}
	}()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		<-eof
		r.last = last
		if err := cmd.Wait(); err != nil && r.err == nil {
			r.err = fmt.Errorf("doomwatch %s: %v: %s", h.name, err, r.last)
		}
	}()

	startCtx, endStart := context.WithCancel(ctx)
	startDone := make(chan struct{})
	go func() {
		defer close(startDone)
		r.start, _ = observe(startCtx, cmd.Process.Pid, b.startTimeout)
	}()
	select {
	case <-synced:
		r.synced = time.Since(start)
	case <-eof:
		r.err = fmt.Errorf("doomwatch %s stopped before it synced", h.name)
	case <-time.After(b.startTimeout):
		r.err = fmt.Errorf("doomwatch %s not synced after %s", h.name, b.startTimeout)
	case <-ctx.Done():
		r.err = ctx.Err()
	}
	endStart()
	<-startDone
	if r.err != nil {
		return r
	}
	logf("%s: synced after %s", h.name, r.synced.Round(time.Millisecond))
	if err := sleep(ctx, 5*time.Second); err != nil {
		r.err = err
		return r
	}
	if r.idle, err = observe(ctx, cmd.Process.Pid, b.idle); err != nil {
		r.err = fmt.Errorf("idle window: %w", err)
		return r
	}
	logf("%s: idle %.3f cores, RSS %s", h.name, r.idle.cores, mib(r.idle.rssEnd))
	if h.atRest != nil {
		if err := h.atRest(ctx, cmd.Process.Pid); err != nil {
			r.err = err
			return r
		}
	}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer cancel()
		r.churnRun = b.churn(wctx)
	}()
	r.churn, err = observe(wctx, cmd.Process.Pid, b.churnFor)
	<-done
	if err != nil {
		r.err = fmt.Errorf("churn window: %w", err)
		return r
	}
	logf("%s: churn %.0f/s: %.3f cores, RSS max %s", h.name, r.churnRun.Rate, r.churn.cores, mib(r.churn.rssMax))
	return r
}
