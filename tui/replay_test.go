package tui

import (
	"regexp"
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

// TestTimeBarFits: the time bar keeps its bar at 80 columns, whatever the note and the name of
// what is replayed: the date gives way first, then the time, then the note is clipped, then the
// name; on a wide terminal all of it shows.
func TestTimeBarFits(t *testing.T) {
	const long = "pod shop/api-7d9f8b6c5-xk2lq doomed"
	bar := regexp.MustCompile(`\[[█░]{10,}\]`)
	at := t0.Add(90 * time.Second)
	cases := []struct {
		of, note string
		width    int
		// want are on the line.
		want []string
	}{
		{"demo", "", 80, []string{"replay of demo", at.UTC().Format(time.RFC3339), "+90s of 5m", "▶ playing ×2"}},
		{"prod-eu-1", long, 80, []string{"replay of prod-eu-1", "+90s of 5m", "▶ playing ×2", "pod shop/api-"}},
		{"arn:aws:eks:eu-west-1:123456789012:cluster/prod-eu-1", long, 80, []string{"replay of arn:aws:eks", "+90s of 5m", "▶ playing ×2"}},
		{"prod-eu-1", long, 200, []string{"replay of prod-eu-1", at.UTC().Format(time.RFC3339), "+90s of 5m", "▶ playing ×2", long}},
	}
	for _, c := range cases {
		p := &fakePlayer{status: PlayStatus{Of: c.of, Start: t0, End: t0.Add(5 * time.Minute), At: at, Playing: true, Speed: 2, Note: c.note}}
		d := newDashboard(Options{Model: model.FleetOf("", fixtureModel()), Now: func() time.Time { return at }, Replay: p}, true)
		d.Update(tea.WindowSizeMsg{Width: c.width, Height: 24})
		line := strings.Split(screen(d), "\n")[1]
		if w := width(line); w > c.width {
			t.Errorf("%d columns, %s: the time bar is %d wide: %q", c.width, c.of, w, line)
		}
		if !bar.MatchString(line) {
			t.Errorf("%d columns, %s, note %q: no bar on the time bar: %q", c.width, c.of, c.note, line)
		}
		for _, w := range c.want {
			if !strings.Contains(line, w) {
				t.Errorf("%d columns, %s: the time bar lacks %q: %q", c.width, c.of, w, line)
			}
		}
	}
}
