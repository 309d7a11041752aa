package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"
)

// stage is one step of an update's way through doomwatch, named by the functions whose presence
// in a CPU sample's stack puts the sample there. The first stage that matches takes the sample.
type stage struct {
	name    string
	markers []string
}

// stages are the steps of BENCHMARKS.md's per-stage table, in the order a sample is matched:
// the background collector first (its stacks hold no caller), then the frame, the refresh, the
// model, the watch stream's decode, the coalescer, and what is left (the scheduler, timers).
var stages = []stage{
	{"GC (background mark and sweep)", []string{"runtime.gcBgMarkWorker", "runtime.bgsweep", "runtime.bgscavenge"}},
	{"render (View, the terminal's diff and write)", []string{"tui.(*dashboard).View", "bubbletea/v2.(*cursedRenderer)", "bubbletea/v2.(*Program).flush"}},
	{"view refresh", []string{"tui.(*dashboard).refresh"}},
	{"model (apply, classify, expire)", []string{"doomwatch/model.", "doomwatch/classify."}},
	{"decode (watch stream → pod record)", []string{"k8s.io/client-go/tools/cache.(*Reflector)", "k8s.io/apimachinery/pkg/watch.", "k8s.io/client-go/rest/watch.", "doomwatch/podrec.", "net/http.", "crypto/tls.", "compress/"}},
	{"coalesce and fan-in", []string{"doomwatch/kube."}},
}

const otherStage = "other (scheduler, timers, input)"

// stageSplit is a CPU profile split by stage: each stage's CPU time, in stages' order, then other.
type stageSplit struct {
	names []string
	cpu   []time.Duration
	total time.Duration
	took  time.Duration // the profile's duration
}

// splitProfile reads the profile's samples with `go tool pprof -traces` and adds each up in its
// stage.
func splitProfile(ctx context.Context, bin, profile string, took time.Duration) (stageSplit, error) {
	out, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-traces", bin, profile).Output()
	if err != nil {
		return stageSplit{}, fmt.Errorf("go tool pprof -traces %s: %w", profile, err)
	}
	return splitTraces(bytes.NewReader(out), took)
}

// splitTraces parses pprof's -traces output: blocks between dashed lines, the first line of each
// the sample's value and its leaf function, the next ones the callers.
func splitTraces(r io.Reader, took time.Duration) (stageSplit, error) {
	sp := stageSplit{took: took}
	for _, s := range stages {
		sp.names = append(sp.names, s.name)
	}
	sp.names = append(sp.names, otherStage)
	sp.cpu = make([]time.Duration, len(sp.names))
	var value time.Duration
	var stack []string
	flush := func() {
		if value == 0 {
			return
		}
		sp.cpu[stageOf(stack)] += value
		sp.total += value
		value, stack = 0, stack[:0]
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "-----------+") {
			flush()
			continue
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if !strings.HasPrefix(line, " ") || strings.HasPrefix(strings.TrimSpace(line), "bytes:") {
			continue // the header (File:, Type:, …) and label lines
		}
		if d, err := time.ParseDuration(fields[0]); err == nil && len(fields) >= 2 && value == 0 && len(stack) == 0 {
			value, stack = d, append(stack, fields[1])
			continue
		}
		stack = append(stack, fields[0])
	}
	flush()
	if err := sc.Err(); err != nil {
		return sp, err
	}
	if sp.total == 0 {
		return sp, fmt.Errorf("the profile holds no samples")
	}
	return sp, nil
}

// stageOf is the index of the first stage one of whose markers is in the stack; else other's.
func stageOf(stack []string) int {
	for i, s := range stages {
		for _, fn := range stack {
			for _, m := range s.markers {
				if strings.Contains(fn, m) {
					return i
				}
			}
		}
	}
	return len(stages)
}

// write prints the split as a markdown table, each stage's cores and its CPU per update at rate
// updates/s.
func (sp stageSplit) write(w io.Writer, rate float64) {
	fmt.Fprintln(w, "| stage | share of the profile | cores | µs per update |")
	fmt.Fprintln(w, "|---|---|---|---|")
	for i, name := range sp.names {
		cores := sp.cpu[i].Seconds() / sp.took.Seconds()
		fmt.Fprintf(w, "| %s | %.0f%% | %.4f | %s |\n", name, 100*float64(sp.cpu[i])/float64(sp.total), cores, perUpdate(cores, rate))
	}
	cores := sp.total.Seconds() / sp.took.Seconds()
	fmt.Fprintf(w, "| **all sampled** | 100%% | %.4f | %s |\n", cores, perUpdate(cores, rate))
}

// perUpdate is cores ÷ updates/s in µs.
func perUpdate(cores, rate float64) string {
	if rate <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f µs", cores/rate*1e6)
}
