package tui

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"doomwatch/contract"
	"doomwatch/model"
)

const connectingTo = "connecting to https://10.0.0.1:6443 (context prod-eu-1)…"

// TestConnectingThenTheDashboard: a dashboard started before its source says where it connects at
// once, and shows the cluster once the connection arrives, at the terminal's size.
func TestConnectingThenTheDashboard(t *testing.T) {
	ch := make(chan Connection, 1)
	c := newConnecting(Options{Connected: ch, Connecting: connectingTo}, true)
	tm := teatest.NewTestModel(t, c, teatest.WithInitialTermSize(120, 40))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return bytes.Contains(b, []byte(connectingTo))
	}, teatest.WithDuration(5*time.Second))
	batches := make(chan []contract.Batch, 1)
	batches <- []contract.Batch{fixtureBatch()}
	ch <- Connection{Model: model.FleetOf("prod-eu-1", model.New(model.DefaultConfig())), Batches: batches,
		Now: func() time.Time { return t0 }, Scope: "all namespaces"}
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return bytes.Contains(b, []byte("suspect node node-3")) && bytes.Contains(b, []byte("context prod-eu-1"))
	}, teatest.WithDuration(5*time.Second))
	tm.Type("q")
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	if c.d == nil || c.d.width != 120 || c.d.height != 40 {
		t.Errorf("the dashboard after connecting is not sized to the terminal: %+v", c.d)
	}
}

// TestConnectingFails: a connection that fails ends Run with its error as it is, for the caller to
// print once the terminal is restored; q while connecting ends it without one.
func TestConnectingFails(t *testing.T) {
	unreachable := errors.New("the API server at https://10.0.0.1:6443 did not answer within 10s")
	ch := make(chan Connection, 1)
	ch <- Connection{Err: unreachable}
	out, err := runDashboard(t, Options{Connected: ch, Connecting: connectingTo, NoColor: true}, "")
	if err != unreachable {
		t.Errorf("Run: %v, want the connection's error as it is", err)
	}
	if !strings.Contains(out, "\x1b[?1049h") || !strings.Contains(out, "\x1b[?1049l") {
		t.Errorf("alternate screen not entered and left: %q", out)
	}
	if _, err := runDashboard(t, Options{Connected: make(chan Connection), Connecting: connectingTo, NoColor: true}, "q"); err != nil {
		t.Errorf("q while connecting: %v, want none", err)
	}
}

// TestConnectingScreenFits: the connecting screen says where it connects whole, wrapped to the
// width, at any size, and how to quit when there is a line for it.
func TestConnectingScreenFits(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {120, 40}, {40, 10}, {30, 6}, {20, 5}} {
		c := newConnecting(Options{Connecting: connectingTo}, true)
		c.width, c.height = sz[0], sz[1]
		frame := ansi.Strip(c.render())
		checkFrame(t, frame, sz[0], sz[1])
		// The words are whole with room for them; a narrow screen may break the address.
		squash := func(s string) string { return strings.Join(strings.Fields(s), "") }
		if !strings.Contains(squash(frame), squash(connectingTo)) {
			t.Errorf("%dx%d: the screen does not say where it connects:\n%s", sz[0], sz[1], frame)
		}
		if lines := strings.Split(frame, "\n"); sz[1] >= 10 && (len(lines) != sz[1] || lines[len(lines)-1] != "q quit") {
			t.Errorf("%dx%d: want %d lines, q quit the last:\n%s", sz[0], sz[1], sz[1], frame)
		}
	}
}
