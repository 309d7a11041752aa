package e2e

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"
)

// A call is one tool's verdict on a scenario: complete, doomed, timeout, error, none (the stream
// never ended the rollout) or not run, and when.
type call struct {
	outcome string
	at      time.Time
}

// calls are the three tools' verdicts on r: the verdict stream's first verdict that ends the
// rollout, `doomwatch wait`'s exit, kubectl's exit.
func (r *Result) calls() (stream, wait, kubectl call) {
	stream = call{outcome: r.Stream.First, at: r.Stream.FirstAt}
	if stream.outcome == "" {
		stream.outcome = "none"
	}
	return stream, call{r.Wait.Outcome, r.Wait.At}, call{r.Kubectl.Outcome, r.Kubectl.At}
}

// grade is how a call compares with the expectation: correct, false doom, missed doom (complete
// or no verdict on a doomed scenario), undecided (no verdict on a complete one), or not run.
func grade(expect string, c call) string {
	switch c.outcome {
	case "not run":
		return "not run"
	case expect:
		return "correct"
	case "doomed":
		return "false doom"
	}
	if expect == "doomed" {
		return "missed doom"
	}
	return "undecided"
}

// Failures lists where r departs from its scenario's expectation, as the targets count them: a
// wrong verdict from the stream or the gate, a doom at any moment of a transient scenario, a doom
// called later than Within after the first doomed pod, a flip in a crash loop, and suspect nodes
// other than expected. kubectl's verdicts are measured, not held to the expectation.
func (r *Result) Failures() []string {
	s := r.Scenario
	if r.Err != nil {
		return []string{"harness: " + r.Err.Error()}
	}
	var out []string
	if r.Stream.Err != nil {
		out = append(out, "stream: "+r.Stream.Err.Error())
	}
	stream, wait, _ := r.calls()
	want := s.Expect.Verdict
	if g := grade(want, stream); g != "correct" {
		out = append(out, fmt.Sprintf("stream: %s (first verdict %s, want %s)", g, stream.outcome, want))
	}
	if g := grade(want, wait); g != "correct" && g != "not run" {
		out = append(out, fmt.Sprintf("wait: %s (exit %d: %s, want %s)", g, r.Wait.Code, wait.outcome, want))
	}
	if want == "complete" {
		if !r.Stream.DoomedAt.IsZero() {
			out = append(out, fmt.Sprintf("stream: doomed at +%s in a transient scenario", since(r.Trigger, r.Stream.DoomedAt)))
		}
		if r.Stream.Final != "complete" {
			out = append(out, fmt.Sprintf("stream: last verdict %q, want complete", r.Stream.Final))
		}
	}
	if want == "doomed" {
		if r.FirstDoomedPod.IsZero() {
			out = append(out, "no pod showed "+strings.Join(s.Expect.DoomedWhen, " or ")+" in the API")
		} else {
			for _, c := range []struct {
				name string
				c    call
			}{{"stream", stream}, {"wait", wait}} {
				if c.c.outcome == "doomed" && c.c.at.Sub(r.FirstDoomedPod) > s.Expect.Within.Duration {
					out = append(out, fmt.Sprintf("%s: doomed %s after the first doomed pod, want within %s", c.name, since(r.FirstDoomedPod, c.c.at), s.Expect.Within))
				}
			}
		}
		if s.Expect.CrashLoop && r.Stream.Flips+r.Stream.PodFlips > 0 {
			out = append(out, fmt.Sprintf("stream: %d flips of the rollout and %d of pods from doomed back during the crash loop", r.Stream.Flips, r.Stream.PodFlips))
		}
	}
	if !sameNodes(r.Stream.Suspects, s.Expect.Suspects) {
		out = append(out, fmt.Sprintf("suspect nodes %v, want %v", orNone(r.Stream.Suspects), orNone(s.Expect.Suspects)))
	}
	return out
}

func orNone(ns []string) string {
	if len(ns) == 0 {
		return "none"
	}
	return strings.Join(ns, ", ")
}

// since formats b-a to a tenth of a second.
func since(a, b time.Time) string {
	if a.IsZero() || b.IsZero() {
		return "—"
	}
	return b.Sub(a).Round(100 * time.Millisecond).String()
}

// WriteReport prints the scenarios' table, the summary per tool and the targets, as markdown.
func WriteReport(w io.Writer, results []*Result) {
	fmt.Fprintln(w, "| scenario | expected | stream (doomwatch --watch) | doomwatch wait | kubectl | doom after first doomed pod (stream / wait) | doomed at any moment | flips (rollout / pods) | suspect nodes (named / expected) | thread |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range results {
		s := r.Scenario
		if r.Err != nil {
			fmt.Fprintf(w, "| %s | %s | harness error: %s | | | | | | | %s |\n", s.Name, s.Expect.Verdict, cell(r.Err.Error()), s.Thread)
			continue
		}
		stream, wait, kubectl := r.calls()
		fromDoom := "—"
		if s.Expect.Verdict == "doomed" {
			fromDoom = fmt.Sprintf("%s / %s", since(r.FirstDoomedPod, onlyDoomed(stream)), since(r.FirstDoomedPod, onlyDoomed(wait)))
		}
		anyDoom := "no"
		if !r.Stream.DoomedAt.IsZero() {
			anyDoom = "rollout at +" + since(r.Trigger, r.Stream.DoomedAt)
		}
		if r.Stream.DoomedPods > 0 {
			anyDoom += fmt.Sprintf("; %d pods", r.Stream.DoomedPods)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %d / %d | %s / %s | %s |\n",
			s.Name, s.Expect.Verdict, r.callCell(stream), r.callCell(wait), r.callCell(kubectl), fromDoom, anyDoom,
			r.Stream.Flips, r.Stream.PodFlips, orNone(r.Stream.Suspects), orNone(s.Expect.Suspects), s.Thread)
	}
	fmt.Fprintln(w)
	writeWaitFlags(w, results)
	writeSummary(w, results)
	fmt.Fprintln(w)
	writeTargets(w, results)
	writeDisagreements(w, results)
}

func onlyDoomed(c call) time.Time {
	if c.outcome != "doomed" {
		return time.Time{}
	}
	return c.at
}

func (r *Result) callCell(c call) string {
	switch c.outcome {
	case "not run", "none":
		return c.outcome
	}
	mark := ""
	if grade(r.Scenario.Expect.Verdict, c) != "correct" {
		mark = " ✗"
	}
	return fmt.Sprintf("%s +%s%s", c.outcome, since(r.Trigger, c.at), mark)
}

func cell(s string) string {
	s = strings.ReplaceAll(s, "|", "\\|")
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 200 {
		s = s[:197] + "..."
	}
	return s
}

// writeWaitFlags says which flags each `doomwatch wait` ran with: the most common set for the
// number of scenarios that had it, each other set with its scenarios' names.
func writeWaitFlags(w io.Writer, results []*Result) {
	var sets []string
	of := map[string][]string{}
	for _, r := range results {
		if r.Err != nil || !r.Wait.Ran {
			continue
		}
		set := "`" + strings.Join(r.Scenario.waitFlags(), " ") + "`"
		if of[set] == nil {
			sets = append(sets, set)
		}
		of[set] = append(of[set], r.Scenario.Name)
	}
	if len(sets) == 0 {
		return
	}
	sort.SliceStable(sets, func(i, j int) bool { return len(of[sets[i]]) > len(of[sets[j]]) })
	parts := []string{fmt.Sprintf("%s (%d scenarios)", sets[0], len(of[sets[0]]))}
	if len(sets) == 1 {
		parts[0] = fmt.Sprintf("%s (every scenario it ran on)", sets[0])
	}
	for _, set := range sets[1:] {
		parts = append(parts, fmt.Sprintf("%s (%s)", set, strings.Join(of[set], ", ")))
	}
	fmt.Fprintf(w, "`doomwatch wait` ran with %s, beside -n and --kubeconfig.\n\n", strings.Join(parts, "; "))
}

// writeSummary counts each tool's grades and its times to a correct verdict.
func writeSummary(w io.Writer, results []*Result) {
	fmt.Fprintln(w, "| tool | correct | false doom | missed doom | undecided | time to a correct verdict p50 / max | doom after first doomed pod p50 / max |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for i, name := range []string{"doomwatch --watch (first verdict)", "doomwatch wait", "kubectl"} {
		counts := map[string]int{}
		var times, fromDoom []time.Duration
		for _, r := range results {
			if r.Err != nil {
				continue
			}
			c := pick(r, i)
			g := grade(r.Scenario.Expect.Verdict, c)
			counts[g]++
			if g == "correct" {
				times = append(times, c.at.Sub(r.Trigger))
				if c.outcome == "doomed" && !r.FirstDoomedPod.IsZero() {
					fromDoom = append(fromDoom, c.at.Sub(r.FirstDoomedPod))
				}
			}
		}
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %s | %s |\n", name, counts["correct"], counts["false doom"], counts["missed doom"],
			counts["undecided"], p50max(times), p50max(fromDoom))
	}
}

func pick(r *Result, i int) call {
	s, wt, k := r.calls()
	return [3]call{s, wt, k}[i]
}

func p50max(ds []time.Duration) string {
	if len(ds) == 0 {
		return "—"
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return fmt.Sprintf("%s / %s", ds[(len(ds)-1)/2].Round(100*time.Millisecond), ds[len(ds)-1].Round(100*time.Millisecond))
}

// writeTargets checks the accuracy targets and prints each as pass or fail.
func writeTargets(w io.Writer, results []*Result) {
	var falseDoom, late, flips, slow []string
	var ratios []float64
	var harness []string
	for _, r := range results {
		s := r.Scenario
		if r.Err != nil {
			harness = append(harness, s.Name)
			continue
		}
		stream, wait, kubectl := r.calls()
		if s.Expect.Verdict == "complete" {
			if !r.Stream.DoomedAt.IsZero() || wait.outcome == "doomed" {
				falseDoom = append(falseDoom, s.Name)
			}
			continue
		}
		for _, c := range []call{stream, wait} {
			if c.outcome == "not run" {
				continue
			}
			if c.outcome != "doomed" || r.FirstDoomedPod.IsZero() || c.at.Sub(r.FirstDoomedPod) > s.Expect.Within.Duration {
				late = append(late, s.Name)
				break
			}
		}
		if s.Expect.CrashLoop && r.Stream.Flips+r.Stream.PodFlips > 0 {
			flips = append(flips, s.Name)
		}
		if kubectl.outcome == "doomed" {
			ours := stream
			if wait.outcome == "doomed" {
				ours = wait
			}
			if ours.outcome != "doomed" {
				slow = append(slow, s.Name)
				continue
			}
			ratio := float64(kubectl.at.Sub(r.Trigger)) / float64(max(ours.at.Sub(r.Trigger), time.Millisecond))
			ratios = append(ratios, ratio)
			if ratio < 10 {
				slow = append(slow, fmt.Sprintf("%s (%.1fx)", s.Name, ratio))
			}
		}
	}
	verdict := func(fails []string) string {
		if len(fails) == 0 {
			return "**pass**"
		}
		return "**fail**: " + strings.Join(fails, ", ")
	}
	fmt.Fprintln(w, "Targets:")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "- 0 false doom at any moment of a transient scenario (the stream's rollout verdict and wait's exit): %s\n", verdict(falseDoom))
	fmt.Fprintf(w, "- every doomed scenario called (stream and wait) within its window (30 s) of its first doomed pod: %s\n", verdict(late))
	fmt.Fprintf(w, "- 0 flips back from doomed during a crash loop (rollout and pods): %s\n", verdict(flips))
	speed := verdict(slow)
	if len(ratios) == 0 && len(slow) == 0 {
		speed = "n/a: kubectl detected no doomed scenario"
	} else if len(ratios) > 0 {
		sort.Float64s(ratios)
		speed += fmt.Sprintf(" (kubectl's time / doomwatch's, over the %d doomed scenarios kubectl detects: min %.0fx, median %.0fx)", len(ratios), ratios[0], ratios[(len(ratios)-1)/2])
	}
	fmt.Fprintf(w, "- ≥ 10x faster than `kubectl rollout status` where kubectl detects the doom at all: %s\n", speed)
	if len(harness) > 0 {
		fmt.Fprintf(w, "- harness errors (no verdicts): %s\n", strings.Join(harness, ", "))
	}
}

// writeDisagreements quotes, for every scenario that departs from its expectation, what failed
// and the stream's lines about its target, its first doomed pods and its suspect nodes.
func writeDisagreements(w io.Writer, results []*Result) {
	first := true
	for _, r := range results {
		fails := r.Failures()
		if len(fails) == 0 {
			continue
		}
		if first {
			fmt.Fprintln(w)
			fmt.Fprintln(w, "Disagreements with the expectations, with the stream's lines (times after the trigger):")
			first = false
		}
		fmt.Fprintf(w, "\n%s (%s):\n\n", r.Scenario.Name, r.Scenario.Thread)
		for _, f := range fails {
			fmt.Fprintf(w, "- %s\n", f)
		}
		if !r.FirstDoomedPod.IsZero() {
			fmt.Fprintf(w, "- first doomed pod in the API at +%s: %s\n", since(r.Trigger, r.FirstDoomedPod), r.FirstDoomedWhat)
		}
		ex := r.Stream.Excerpt
		if len(ex) > 14 {
			ex = append(slices.Clone(ex[:14]), fmt.Sprintf("... %d more", len(ex)-14))
		}
		if len(ex) > 0 {
			fmt.Fprintln(w, "\n```")
			for _, l := range ex {
				fmt.Fprintln(w, l)
			}
			fmt.Fprintln(w, "```")
		}
	}
}
