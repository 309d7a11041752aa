package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"doomwatch/model"
)

// fakePlayer records the playback keys it was handed and delivers the frames it is given.
type fakePlayer struct {
	status PlayStatus
	calls  []string
	frames chan Frame
}

func (p *fakePlayer) Frames() <-chan Frame { return p.frames }
func (p *fakePlayer) Status() PlayStatus   { return p.status }
func (p *fakePlayer) Toggle()              { p.calls = append(p.calls, "toggle") }
func (p *fakePlayer) Pace(faster bool) {
	p.calls = append(p.calls, map[bool]string{true: "faster", false: "slower"}[faster])
}
func (p *fakePlayer) Seek(d time.Duration) { p.calls = append(p.calls, "seek "+d.String()) }
func (p *fakePlayer) Jump(next bool) {
	p.calls = append(p.calls, map[bool]string{true: "next", false: "prev"}[next])
}

// TestReplayKeysAndTimeBar: a replay's header has the time bar, its keys reach the player, a
// frame carrying a model replaces the one shown, and live the keys are off.
func TestReplayKeysAndTimeBar(t *testing.T) {
	p := &fakePlayer{frames: make(chan Frame, 1), status: PlayStatus{Of: "demo", Start: t0, End: t0.Add(5 * time.Minute),
		At: t0.Add(90 * time.Second), Playing: true, Speed: 2}}
	d := newDashboard(Options{Model: model.FleetOf("", fixtureModel()), Now: func() time.Time { return p.status.At }, Replay: p}, true)
	d.Update(tea.WindowSizeMsg{Width: 160, Height: 30})
	top := strings.Split(screen(d), "\n")[1]
	for _, want := range []string{"replay of demo", t0.Add(90 * time.Second).UTC().Format(time.RFC3339), "+90s of 5m", "▶ playing ×2", "█░"} {
		if !strings.Contains(top, want) {
			t.Errorf("time bar %q lacks %q", top, want)
		}
	}
	press(d, " ", "+", "-", "[", "]", ".", ",")
	d.Update(tea.KeyPressMsg{Code: tea.KeyLeft})
	want := "toggle faster slower prev next seek 10s seek -10s seek -10s"
	if got := strings.Join(p.calls, " "); got != want {
		t.Errorf("player got %q, want %q", got, want)
	}
	if !strings.Contains(screen(d), "space pause/play") {
		t.Errorf("the footer does not offer the playback keys:\n%s", screen(d))
	}

	empty := model.FleetOf("", model.New(model.DefaultConfig()))
	d.Update(frameMsg{f: Frame{Model: empty}})
	if d.m != empty || d.snap.pods.Len() != 0 {
		t.Errorf("a seek's model was not shown: %d pods", d.snap.pods.Len())
	}

	live := newTestDashboard(t, 160, 30)
	if strings.Contains(screen(live), "replay") || strings.Contains(screen(live), "pause/play") {
		t.Errorf("a live dashboard shows replay: %s", screen(live))
	}
}
