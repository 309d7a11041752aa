package tui

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	corev1 "k8s.io/api/core/v1"

	"doomwatch/contract"
	"doomwatch/model"
)

// updating reports -update, the flag that github.com/charmbracelet/x/exp/golden (imported by
// teatest) already defines; defining our own would clash.
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if updating() {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./tui -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("frame differs from %s (run go test ./tui -update after checking):\n--- got ---\n%s\n--- want ---\n%s",
			path, ansi.Strip(got), ansi.Strip(string(want)))
	}
}

// checkFrame asserts what every frame must satisfy: exactly h lines, none wider than w.
func checkFrame(t *testing.T, frame string, w, h int) {
	t.Helper()
	lines := strings.Split(frame, "\n")
	if len(lines) > h {
		t.Errorf("frame has %d lines, terminal has %d", len(lines), h)
	}
	for i, l := range lines {
		if lw := ansi.StringWidth(l); lw > w {
			t.Errorf("line %d is %d cells wide, terminal has %d: %q", i, lw, w, ansi.Strip(l))
		}
	}
}

var sizes = []struct {
	name string
	w, h int
}{{"80x24", 80, 24}, {"120x40", 120, 40}, {"200x50", 200, 50}}

func TestGoldenFrames(t *testing.T) {
	fixture, events, pages := fixtureModel(), eventsModel(), pagesModel()
	cases := []struct {
		name string
		opts FrameOptions
		// want are texts a user must see on this screen.
		want []string
		// m is the model shown, fixtureModel when nil; keys are pressed before the frame is drawn,
		// each after a frame.
		m    *model.Model
		keys []string
	}{
		{"overview", FrameOptions{}, []string{"live", "✖", "doomed", "suspect node node-3", "PODS", "? help", "q quit"}, nil, nil},
		{"doomed-detail", FrameOptions{Selected: "shop/api-7d9f8b6c5-xk2lq", Detail: true},
			[]string{"POD shop/api-7d9f8b6c5-xk2lq", "✖ doomed", "StartError", "exit 128", "stat /go-runner", "CrashLoopBackOff"}, nil, nil},
		{"suspect-node", FrameOptions{Focus: FocusNodes}, []string{"NODES", "⚠ SUSPECT", "node-3", "why:"}, nil, nil},
		{"filter", FrameOptions{Query: model.Query{Text: "payments"}, Filtering: true}, []string{"/payments", "payments-7d9f8b6c5-p00"}, nil, nil},
		{"node-attrs", FrameOptions{Focus: FocusNodes}, []string{"⚠ node-3 runs containerd://2.2.0 (0 of 4 others do)",
			"node: containerd://2.2.0 · kubelet v1.37.2 · kernel 6.8.0-1031-aws", "event: ContainerGCFailed x5 40s ago: rpc error",
			"Ready,DiskPressure"}, events, nil},
		{"detail-events", FrameOptions{Selected: "shop/web-5c9d7f6b8-m2x4k", Detail: true},
			[]string{"Events", "20s ago x12 FailedMount", `MountVolume.SetUp failed for volume "config-volume"`}, events, nil},
		{"replay", FrameOptions{Replay: &PlayStatus{Of: "prod-eu-1", Start: t0.Add(-10 * time.Minute), End: t0.Add(5 * time.Minute),
			At: t0, Playing: true, Speed: 2, Note: "pod shop/api-7d9f8b6c5-xk2lq doomed"}},
			[]string{"all namespaces  synced", "replay of prod-eu-1", "+10m of 15m", "▶ playing ×2", "✖ doomed"}, nil, nil},
		{"copied", FrameOptions{Selected: "shop/api-7d9f8b6c5-xk2lq", Detail: true},
			[]string{"BackOff", "copied: kubectl logs -p -n shop api-7d9f8b6c5-xk2lq -c api — "}, events, []string{"y"}},
		{"rollouts", FrameOptions{Focus: FocusRollouts}, []string{"ROLLOUTS 4 rollouts", "NAMESPACE", "READY", "REASON",
			"payments", "✖ doomed", "◐ progressing", "12/12  8/12"}, nil, nil},
		// Two pages down a table longer than any screen: rows from further on, and the marker of
		// those below.
		{"scrolled", FrameOptions{}, []string{"PODS 99 of 99", "agent-", " more", "NODES"}, pages, []string{"pgdown", "pgdown"}},
	}
	for _, c := range cases {
		for _, sz := range sizes {
			for _, color := range []bool{false, true} {
				o := c.opts
				o.Width, o.Height, o.Now, o.NoColor = sz.w, sz.h, t0, !color
				o.Context, o.Scope = "prod-eu-1", "all namespaces"
				suffix := ".txt"
				if color {
					suffix = ".ansi"
				}
				name := c.name + "-" + sz.name + suffix
				m := c.m
				if m == nil {
					m = fixture
				}
				t.Run(name, func(t *testing.T) {
					d := frameDashboard(model.FleetOf(o.Context, m), o)
					// As the program does, a frame is drawn before the first key and after each.
					d.frame(o)
					for _, k := range c.keys {
						press(d, k)
						d.frame(o)
					}
					frame := d.frame(o)
					checkFrame(t, frame, sz.w, sz.h)
					plain := ansi.Strip(frame)
					for _, w := range c.want {
						if !strings.Contains(plain, w) {
							t.Errorf("frame lacks %q:\n%s", w, plain)
						}
					}
					if !color && strings.ContainsRune(frame, 0x1b) {
						t.Errorf("NoColor frame holds an escape sequence")
					}
					if color && !strings.ContainsRune(frame, 0x1b) {
						t.Errorf("coloured frame holds no colour")
					}
					golden(t, name, frame)
				})
			}
		}
	}
}

// TestTooSmall: below 60×15 the screen says the terminal is too small, its size and the size
// needed, each whole on a line that fits, down to 12×1.
func TestTooSmall(t *testing.T) {
	m := fixtureModel()
	for _, sz := range [][2]int{{59, 24}, {80, 14}, {50, 12}, {30, 8}, {20, 5}, {18, 2}, {12, 1}, {1, 1}, {0, 0}} {
		frame := RenderFrame(m, FrameOptions{Width: sz[0], Height: sz[1], Now: t0, NoColor: true})
		if sz[0] >= 18 && sz[1] >= 2 && !strings.Contains(frame, "terminal too small") {
			t.Errorf("%dx%d: want the too-small message, got %q", sz[0], sz[1], frame)
		}
		if size := fmt.Sprintf("%d×%d", sz[0], sz[1]); sz[0] >= 12 && (!strings.Contains(frame, size) || !strings.Contains(frame, "60×15")) {
			t.Errorf("%dx%d: want both sizes, %s and 60×15, whole, got %q", sz[0], sz[1], size, frame)
		}
		if sz[0] > 0 {
			checkFrame(t, frame, sz[0], max(sz[1], 1))
		}
	}
	if frame := RenderFrame(m, FrameOptions{Width: 60, Height: 15, Now: t0, NoColor: true}); strings.Contains(frame, "too small") {
		t.Errorf("60x15 is usable, got the too-small message")
	}
}

// TestEscapeSequences: a container can write any bytes into its termination message
// (CVE-2021-25743 for kubectl). None of them may reach the terminal.
func TestEscapeSequences(t *testing.T) {
	evil := "\x1b]0;pwned\x07\x1b[2J\x1b[5Aboom\x9b31m\r\x08"
	b := fixtureBatch()
	p := mkPod(podSpec{ns: "attack", name: "evil-pod", node: "node-1", created: time.Minute,
		status: []corev1.ContainerStatus{waiting("evil", "img\x1b]0;pwned\x07", "CrashLoopBackOff\x1b[2J", evil, 4,
			terminated("Error\x1b[5A", evil, 1, 30*time.Second))}})
	b.Pods = appendPods(nil, p)
	// Exit-128 start failures carrying the same bytes make node-2 suspect: its dominant message
	// reaches the nodes panel, its why the header. The watch error reaches the header too.
	for i := range 3 {
		b.Pods = appendPods(b.Pods, mkPod(podSpec{ns: "attack", name: fmt.Sprintf("evil-start-%d", i), node: "node-2",
			created: time.Minute, status: []corev1.ContainerStatus{running("app", "img", 1,
				terminated("StartError", evil+runtime128, 128, 20*time.Second))}}))
	}
	b.Nodes, b.Workloads = nil, nil
	b.Health = &contract.Health{Synced: true, LastEvent: t0, WatchError: evil}
	m := model.New(model.DefaultConfig())
	m.Apply(&b, t0)
	key := "attack/evil-pod"
	if nodes := m.Nodes(t0); len(nodes) == 0 || !nodes[0].Suspect || !strings.Contains(nodes[0].DominantMessage, "boom") {
		t.Fatalf("node-2 should be suspect with the evil message dominant: %+v", nodes)
	}
	for _, sz := range sizes {
		for _, o := range []FrameOptions{{}, {Selected: key, Detail: true}, {Focus: FocusNodes}} {
			o.Width, o.Height, o.Now = sz.w, sz.h, t0
			o.NoColor = true
			plain := RenderFrame(m, o)
			if i := strings.IndexAny(plain, "\x1b\x07\u009b\r\x08"); i >= 0 {
				t.Errorf("%s detail=%v: NoColor frame holds a control character at %d: %q", sz.name, o.Detail, i, plain)
			}
			// The printable text stays: in the detail, the nodes panel's msg line and the header's
			// reconnecting line.
			if !strings.Contains(plain, "boom") {
				t.Errorf("%s %+v: the message's printable text should still be shown: %q", sz.name, o, plain)
			}
			if o.Focus == FocusNodes && !strings.Contains(plain, "msg: boom") {
				t.Errorf("%s: the nodes panel should show the dominant message's text: %q", sz.name, plain)
			}
			o.NoColor = false
			color := RenderFrame(m, o)
			for _, bad := range []string{"]0;pwned", "\x07", "\x1b[2J", "\x1b[5A", "\x9b"} {
				if strings.Contains(color, bad) {
					t.Errorf("%s detail=%v: coloured frame holds %q", sz.name, o.Detail, bad)
				}
			}
		}
	}
}
