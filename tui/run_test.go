package tui

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest/v2"

	"doomwatch/contract"
	"doomwatch/model"
)

// syncBuffer is an io.Writer the test can read while the program writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestProgramAppliesBatches runs the dashboard as a bubbletea program: a batch arriving on the
// channel shows up on screen, and a closed channel says so.
func TestProgramAppliesBatches(t *testing.T) {
	ch := make(chan []contract.Batch, 1)
	d := newDashboard(Options{Model: model.FleetOf("", model.New(model.DefaultConfig())), Batches: ch,
		Now: func() time.Time { return t0 }}, true)
	tm := teatest.NewTestModel(t, d, teatest.WithInitialTermSize(120, 30))
	ch <- []contract.Batch{fixtureBatch()}
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return bytes.Contains(b, []byte("suspect node node-3"))
	}, teatest.WithDuration(5*time.Second))
	close(ch)
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return bytes.Contains(b, []byte("source stopped"))
	}, teatest.WithDuration(5*time.Second))
	tm.Type("q")
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
}

// runDashboard runs Run on pipes and returns its error and everything it wrote.
func runDashboard(t *testing.T, opts Options, input string) (string, error) {
	t.Helper()
	in, inW := io.Pipe()
	out := &syncBuffer{}
	opts.Input, opts.Output = in, out
	done := make(chan error, 1)
	go func() { done <- Run(context.Background(), opts) }()
	go func() { _, _ = io.WriteString(inW, input) }()
	select {
	case err := <-done:
		inW.Close()
		return out.String(), err
	case <-time.After(10 * time.Second):
		t.Fatalf("Run did not return; output so far:\n%q", out.String())
		return "", nil
	}
}

// TestRunQuitRestoresTerminal: q ends Run without an error and leaves the alternate screen.
func TestRunQuitRestoresTerminal(t *testing.T) {
	ch := make(chan []contract.Batch, 1)
	ch <- []contract.Batch{fixtureBatch()}
	out, err := runDashboard(t, Options{Model: model.FleetOf("", model.New(model.DefaultConfig())), Batches: ch,
		Now: func() time.Time { return t0 }, NoColor: true}, "q")
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !strings.Contains(out, "\x1b[?1049h") || !strings.Contains(out, "\x1b[?1049l") {
		t.Errorf("alternate screen not entered and left: %q", out)
	}
}

// TestRunPanicRestoresTerminal: a panic in a component ends Run with an error, and the terminal
// is restored all the same.
func TestRunPanicRestoresTerminal(t *testing.T) {
	// The clock panics once the test arms it. It arms it only after the running program took a
	// batch (the channel is unbuffered), so the dashboard is built and the terminal set up; the
	// next clock read in Update (that batch's or the next tick's) panics.
	ch := make(chan []contract.Batch)
	var armed atomic.Bool
	now := func() time.Time {
		if armed.Load() {
			panic("clock exploded")
		}
		return t0
	}
	go func() {
		ch <- []contract.Batch{fixtureBatch()}
		armed.Store(true)
	}()
	out, err := runDashboard(t, Options{Model: model.FleetOf("", model.New(model.DefaultConfig())), Batches: ch, Now: now}, "")
	if !armed.Load() {
		t.Fatalf("Run returned (%v) before the program took the batch", err)
	}
	if err == nil || !strings.Contains(err.Error(), "clock exploded") {
		t.Fatalf("Run: %v, want the panic as an error", err)
	}
	if !strings.Contains(out, "\x1b[?1049h") || !strings.Contains(out, "\x1b[?1049l") {
		t.Errorf("alternate screen not entered and left around the panic: %q", out)
	}
}
