package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"doomwatch/contract"
	"doomwatch/kube"
	"doomwatch/kube/demo"
	"doomwatch/model"
	"doomwatch/tui"
)

var updateFrames = flag.Bool("update-frames", false, "rewrite testdata/demo-frames goldens")

// demoModel runs the demo scenario up to at through the real informer path and returns the model
// the dashboard would hold then.
func demoModel(t *testing.T, at time.Duration) (*model.Model, *kube.Source) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	src, err := demo.Start(ctx, demo.Options{Seed: 1, At: at})
	if err != nil {
		t.Fatal(err)
	}
	m := model.New(model.DefaultConfig())
	if err := src.Settle(ctx, func(b contract.Batch) { m.Apply(&b, src.Now()) }); err != nil {
		t.Fatal(err)
	}
	m.Expire(src.Now())
	return m, src
}

// demoSizes are the terminal sizes the demo is pinned at: the default terminal, a common larger
// one, and a wide one.
var demoSizes = [][2]int{{80, 24}, {120, 40}, {200, 50}}

// TestDemoFrames pins the dashboard on the demo scenario at a few simulated times and three
// terminal sizes, and checks that the story a user should see at 90s is on screen: the pods with
// the suspect node and its why under them, and at 90s the nodes, the rollouts, a doomed pod's
// detail and the pods scrolled to their end.
func TestDemoFrames(t *testing.T) {
	for _, at := range []time.Duration{20 * time.Second, 90 * time.Second} {
		m, src := demoModel(t, at)
		// want are texts the frame must show at 90s, wide those it must show from 120 columns.
		type view struct {
			name       string
			set        func(*tui.FrameOptions)
			want, wide []string
		}
		views := []view{{"", func(*tui.FrameOptions) {}, []string{"suspect node node-3", "✖ doomed", "payments", "search",
			"⚠ SUSPECT node-3", "why: 5 of 5 pods that started here in the last 15m failed to start;", " more\n"}, nil}}
		if at == 90*time.Second {
			rows := m.PodView(model.Query{})
			last := rows.At(rows.Len() - 1)
			views = append(views,
				view{"nodes-", func(o *tui.FrameOptions) { o.Focus = tui.FocusNodes }, []string{"NODES", "⚠ SUSPECT node-3", "node-5", "why: ", "msg: "}, nil},
				view{"rollouts-", func(o *tui.FrameOptions) { o.Focus = tui.FocusRollouts }, []string{"ROLLOUTS 12 rollouts", "READY", "REASON", "2/2 new pods do"},
					[]string{"2/2 new pods doomed: Crashing repeatedly (exit 137)", "2/2 new pods doomed: Image not found"}},
				view{"detail-", func(o *tui.FrameOptions) { o.Selected, o.Detail = rows.At(0).ID(), true }, []string{"POD search/", "✖ doomed", "OOMKilled"}, nil},
				view{"scrolled-", func(o *tui.FrameOptions) { o.Selected = last.ID() }, []string{last.Name, " more above\n"}, nil},
			)
		}
		for _, size := range demoSizes {
			for _, v := range views {
				name := fmt.Sprintf("at-%s-%s%dx%d", at, v.name, size[0], size[1])
				t.Run(name, func(t *testing.T) {
					o := tui.FrameOptions{Width: size[0], Height: size[1], Now: src.Now(), NoColor: true,
						Context: src.Context(), Scope: src.Scope()}
					v.set(&o)
					frame := tui.RenderFrame(m, o)
					if got := strings.Count(frame, "\n") + 1; got != size[1] {
						t.Errorf("frame has %d lines, want %d", got, size[1])
					}
					for i, line := range strings.Split(frame, "\n") {
						if w := len([]rune(line)); w > size[0] {
							t.Errorf("line %d is %d runes wide, more than the terminal's %d", i+1, w, size[0])
						}
					}
					if at == 90*time.Second {
						want := v.want
						if size[0] >= 120 {
							want = append(want[:len(want):len(want)], v.wide...)
						}
						for _, w := range want {
							if !strings.Contains(frame, w) {
								t.Errorf("at 90s the frame does not show %q:\n%s", w, frame)
							}
						}
					}
					goldenFrame(t, name, frame)
				})
			}
		}
	}
}

// demoFleet runs the three demo clusters of --demo --fleet up to at, as demoModel does one.
func demoFleet(t *testing.T, at time.Duration) (*model.Fleet, *kube.Fleet) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	src, err := demo.StartFleet(ctx, demo.Options{Seed: 1, At: at})
	if err != nil {
		t.Fatal(err)
	}
	f := model.NewFleet(model.DefaultConfig(), src.Contexts())
	for i, err := range src.Settle(ctx, func(b contract.Batch) { f.Apply(&b, src.Now()) }) {
		if err != nil {
			t.Fatalf("%s: %v", src.Contexts()[i], err)
		}
	}
	f.Expire(src.Now())
	return f, src
}

// otherRow is a pod row of demo-eu or demo-ap: a context column, one blank, a namespace (the
// header's cluster lines have two blanks after the context).
var otherRow = regexp.MustCompile(`(?m)^[ ▶] demo-(eu|ap) \S`)

// TestDemoFleetFrames pins the dashboard over the three demo clusters at 90s: the pods of every
// cluster with their context, the nodes and rollouts grouped by context, one cluster focused, at
// both terminal sizes; and checks the story of the fleet is on screen.
func TestDemoFleetFrames(t *testing.T) {
	f, src := demoFleet(t, 90*time.Second)
	views := []struct {
		name string
		set  func(*tui.FrameOptions)
		want []string
	}{
		{"pods", func(*tui.FrameOptions) {}, []string{"demo-eu", "demo-us", "demo-ap", "CONTEXT", "3 of 3 clusters live"}},
		{"nodes", func(o *tui.FrameOptions) { o.Focus = tui.FocusNodes }, []string{"the 2 suspect nodes of 2 clusters (demo-eu, demo-us)"}},
		{"rollouts", func(o *tui.FrameOptions) { o.Focus = tui.FocusRollouts }, []string{"payments: doomed in demo-eu, demo-ap; complete in demo-us"}},
		{"focus-us", func(o *tui.FrameOptions) { o.Query.Context = "demo-us" }, []string{"demo-us"}},
	}
	for _, size := range demoSizes {
		for _, v := range views {
			name := fmt.Sprintf("fleet-%s-%dx%d", v.name, size[0], size[1])
			t.Run(name, func(t *testing.T) {
				o := tui.FrameOptions{Width: size[0], Height: size[1], Now: src.Now(), NoColor: true, Scope: src.Scope()}
				v.set(&o)
				frame := tui.RenderFleetFrame(f, o)
				if got := strings.Count(frame, "\n") + 1; got != size[1] {
					t.Errorf("frame has %d lines, want %d", got, size[1])
				}
				for i, line := range strings.Split(frame, "\n") {
					if w := len([]rune(line)); w > size[0] {
						t.Errorf("line %d is %d runes wide, more than the terminal's %d", i+1, w, size[0])
					}
				}
				if size[0] == 200 {
					for _, want := range v.want {
						if !strings.Contains(frame, want) {
							t.Errorf("the frame does not show %q:\n%s", want, frame)
						}
					}
				}
				if v.name == "focus-us" && otherRow.MatchString(frame) {
					t.Errorf("focused on demo-us, the frame shows rows of another cluster:\n%s", frame)
				}
				goldenFrame(t, name, frame)
			})
		}
	}
}

// goldenFrame compares frame with testdata/demo-frames/name.txt, or rewrites it with -update-frames.
func goldenFrame(t *testing.T, name, frame string) {
	t.Helper()
	golden := filepath.Join("testdata", "demo-frames", name+".txt")
	if *updateFrames {
		if err := os.WriteFile(golden, []byte(frame), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update-frames to create it)", err)
	}
	if string(want) != frame {
		t.Errorf("frame differs from %s (-update-frames rewrites it)\n--- got:\n%s\n--- want:\n%s", golden, frame, want)
	}
}
