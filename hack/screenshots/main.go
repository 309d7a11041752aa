// Command screenshots renders dashboard frames of the demo scenario through tui.RenderFrame (the
// same rendering the golden tests use), and with -recording the replay of a recording of it,
// and writes them as ANSI text to a directory. The
// `screenshots` make target turns them into SVG (freeze) and PNG (rsvg-convert).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"doomwatch/classify"
	"doomwatch/contract"
	"doomwatch/kube/demo"
	"doomwatch/model"
	"doomwatch/recording"
	"doomwatch/replay"
	"doomwatch/tui"
)

func main() {
	out := flag.String("out", "screenshots/ansi", "directory for the .ansi frames")
	at := flag.Duration("at", 90*time.Second, "simulated time of the demo scenario")
	rec := flag.String("recording", "", "a recording of the demo (doomwatch record --demo) for the replay frame")
	flag.Parse()
	err := run(*out, *at)
	if err == nil && *rec != "" {
		err = replayed(*out, *rec, *at)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "screenshots:", err)
		os.Exit(1)
	}
}

func run(dir string, at time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Snapshot mode: the scenario up to `at` is applied at once and the clock stays there, so
	// the frames are the same on every run.
	src, err := demo.Start(ctx, demo.Options{At: at})
	if err != nil {
		return err
	}
	m := model.New(model.DefaultConfig())
	if err := src.Settle(ctx, func(b contract.Batch) { m.Apply(&b, src.Now()) }); err != nil {
		return err
	}
	now := src.Now()
	m.Expire(now)

	// The doomed pod to open: the first doomed pod whose verdict rests on an exit code, else the
	// first doomed pod.
	var doomed string
	for _, p := range m.View(model.Query{Filter: model.OnlyDoomed}) {
		if doomed == "" || (p.Verdict.HasExitCode && !m.Pod(doomed).Verdict.HasExitCode) {
			doomed = p.Key
		}
	}
	// The pod whose detail shows the most Warning events, one its verdict comes from first (the
	// sandbox the CNI plugin fails to set up).
	var evented string
	best := 0
	for _, p := range m.View(model.Query{}) {
		n := len(m.PodEvents(p.Key))
		if p.Verdict.Source == classify.FromEvents {
			n += 100
		}
		if n > best {
			evented, best = p.Key, n
		}
	}
	// A node that is not suspect but has a Warning event, to select in the nodes panel.
	var quiet string
	for _, n := range m.Nodes(now) {
		if !n.Suspect && len(m.NodeEvents(n.Name)) > 0 {
			quiet = n.Name
			break
		}
	}
	base := tui.FrameOptions{Width: 160, Height: 45, Now: now, Context: src.Context(), Scope: src.Scope()}
	frames := map[string]tui.FrameOptions{
		"overview":      base,
		"suspect-node":  with(base, func(o *tui.FrameOptions) { o.Focus = tui.FocusNodes }),
		"doomed-detail": with(base, func(o *tui.FrameOptions) { o.Selected, o.Detail = doomed, true }),
		"detail-events": with(base, func(o *tui.FrameOptions) { o.Selected, o.Detail = evented, true }),
		"no-color":      with(base, func(o *tui.FrameOptions) { o.NoColor = true }),
		// The nodes panel with what the suspect shares, its node and event lines, and a quiet node
		// selected, whose own lines show under it.
		"node-attrs": with(base, func(o *tui.FrameOptions) { o.Focus, o.Selected = tui.FocusNodes, quiet }),
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, o := range frames {
		if err := os.WriteFile(filepath.Join(dir, name+".ansi"), []byte(tui.RenderFrame(m, o)+"\n"), 0o644); err != nil {
			return err
		}
	}
	return fleet(ctx, dir, at)
}

// fleet renders `--demo --fleet`: the three demo clusters in one dashboard, the rollouts panel
// focused, where the workloads of several clusters and the suspects' shared runtime show.
func fleet(ctx context.Context, dir string, at time.Duration) error {
	src, err := demo.StartFleet(ctx, demo.Options{At: at})
	if err != nil {
		return err
	}
	f := model.NewFleet(model.DefaultConfig(), src.Contexts())
	for i, err := range src.Settle(ctx, func(b contract.Batch) { f.Apply(&b, src.Now()) }) {
		if err != nil {
			return fmt.Errorf("%s: %w", src.Contexts()[i], err)
		}
	}
	f.Expire(src.Now())
	o := tui.FrameOptions{Width: 160, Height: 45, Now: src.Now(), Scope: src.Scope()}
	if err := os.WriteFile(filepath.Join(dir, "fleet.ansi"), []byte(tui.RenderFleetFrame(f, o)+"\n"), 0o644); err != nil {
		return err
	}
	o.Focus = tui.FocusNodes
	return os.WriteFile(filepath.Join(dir, "fleet-nodes.ansi"), []byte(tui.RenderFleetFrame(f, o)+"\n"), 0o644)
}

// replayed renders `doomwatch replay` of a recording of the demo, paused at the story's at: the
// state replayed as the player does (replay.At), under the time bar.
func replayed(dir, path string, at time.Duration) error {
	r, err := recording.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	start, end := r.Span()
	now := start.Add(at)
	f, err := replay.At(r, model.DefaultConfig(), now)
	if err != nil {
		return err
	}
	o := tui.FrameOptions{Width: 160, Height: 45, Now: now, Scope: r.Scope(),
		Replay: &tui.PlayStatus{Of: f.Name(), Start: start, End: end, At: now, Speed: 1}}
	return os.WriteFile(filepath.Join(dir, "replay.ansi"), []byte(tui.RenderFleetFrame(f, o)+"\n"), 0o644)
}

func with(o tui.FrameOptions, f func(*tui.FrameOptions)) tui.FrameOptions {
	f(&o)
	return o
}
