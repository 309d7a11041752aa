package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"doomwatch/model"
)

// waitReport is wait's verdict: printed as text, or as this document with -o json. The schema is
// documented in the README ("Deploy gate"); fields may be added, never renamed. Every string in it
// is sanitised.
type waitReport struct {
	// Verdict is complete (exit 0), doomed (1), missing (1: a workload does not exist, or was
	// deleted while waited for), unsupported (1: a workload has no rollout status, OnDelete) or
	// timeout (70).
	Verdict  string `json:"verdict"`
	ExitCode int    `json:"exitCode"`
	// Message is the timeout's "timed out after 10m", "" otherwise.
	Message string `json:"message"`
	// Window is how far back start failures count as evidence (--window), e.g. "15m".
	Window    string           `json:"window"`
	Workloads []reportWorkload `json:"workloads"`
	// Warnings are the transient failures seen while waiting, one per container with its latest
	// reason, in the order seen, at most 20; MoreWarnings counts the others.
	Warnings     []reportContainer `json:"warnings"`
	MoreWarnings int               `json:"moreWarnings"`
	// SuspectNodes are the suspect nodes the workloads' failures hit.
	SuspectNodes []reportNode `json:"suspectNodes"`
}

// reportWorkload is one workload's rollout at the end.
type reportWorkload struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Verdict is complete, progressing, doomed, missing or unsupported.
	Verdict   string `json:"verdict"`
	Reason    string `json:"reason"`
	Desired   int32  `json:"desired"`
	Updated   int32  `json:"updated"`
	Ready     int32  `json:"ready"`
	Available int32  `json:"available"`
	// Doomed lists the current pods' doomed containers; Pending what the rollout still waited for.
	Doomed  []reportContainer `json:"doomed"`
	Pending []reportPending   `json:"pending"`
	// StartFailures are the transient start failures of the workload's pods within the window
	// (--window), per node: the runtime's trouble, retried, which did not fail the gate.
	StartFailures []reportStartFailures `json:"startFailures"`
}

type reportStartFailures struct {
	Node     string `json:"node"`
	Pods     int    `json:"pods"`
	Failures int    `json:"failures"`
	// Exit128 is true when every failure was an exit 128 (containerd, cri-dockerd); false when
	// some were create errors (CRI-O).
	Exit128 bool `json:"exit128"`
}

// reportContainer is one failing container ("" container when the pod's own status decided).
type reportContainer struct {
	Namespace string `json:"namespace"`
	Pod       string `json:"pod"`
	Container string `json:"container"`
	Node      string `json:"node"`
	Reason    string `json:"reason"`
	ExitCode  *int32 `json:"exitCode"`
	// Log holds the last lines of the container's log (of its previous instance when LogPrevious),
	// fetched for the first doomed container of each reason; LogError says why there is none.
	Log         []string `json:"log"`
	LogPrevious bool     `json:"logPrevious"`
	LogError    string   `json:"logError"`

	previous bool // the container has a previous instance: fetch its log
}

type reportPending struct {
	Reason  string `json:"reason"`
	Pods    int    `json:"pods"`
	Example string `json:"example"`
}

type reportNode struct {
	Name string `json:"name"`
	Why  string `json:"why"`
}

func containerOf(p *model.GateProblem) reportContainer {
	c := reportContainer{Namespace: p.Namespace, Pod: p.Pod, Container: p.Container, Node: p.Node, Reason: p.Reason,
		Log: []string{}, previous: p.Previous}
	if p.HasExitCode {
		code := p.ExitCode
		c.ExitCode = &code
	}
	return c
}

// report builds the verdict for exit code code, fetching the doomed containers' logs.
func (g *gate) report(ctx context.Context, statuses []model.GateStatus, code int, message string) waitReport {
	rep := waitReport{ExitCode: code, Message: message, Window: model.ShortDuration(g.m.Config().Window),
		Workloads: []reportWorkload{}, Warnings: []reportContainer{},
		SuspectNodes: []reportNode{}}
	// For exit 1 the verdict names the worst cause: a doomed rollout, else a missing workload, else
	// one without a rollout status.
	switch code {
	case exitOK:
		rep.Verdict = "complete"
	case exitTimeout:
		rep.Verdict = "timeout"
	default:
		rep.Verdict = "unsupported"
	}
	worse := func(v string) {
		if code == exitError && (v == "doomed" || v == "missing" && rep.Verdict == "unsupported") {
			rep.Verdict = v
		}
	}
	var doomed []reportContainer
	failedOn := map[string]struct{}{} // nodes where the workloads' pods failed to start (the ledger)
	startFailures := g.m.StartFailures(g.targets, g.src.Now())
	for i := range statuses {
		st := &statuses[i]
		r := &st.Rollout
		w := reportWorkload{Kind: string(st.Target.Kind), Namespace: model.Sanitize(st.Target.Namespace),
			Name: model.Sanitize(st.Target.Name), Verdict: string(r.Verdict), Reason: r.Reason, Desired: r.Desired,
			Updated: r.Updated, Ready: r.Ready, Available: r.Available, Doomed: []reportContainer{}, Pending: []reportPending{},
			StartFailures: []reportStartFailures{}}
		switch {
		case !st.Found && g.started:
			w.Verdict, w.Reason = "missing", st.Target.String()+" was deleted while waiting"
		case !st.Found:
			w.Verdict, w.Reason = "missing", st.Target.String()+" not found in namespace "+model.Sanitize(st.Target.Namespace)
		case st.Unsupported != "":
			w.Verdict, w.Reason = "unsupported", st.Unsupported
		}
		worse(w.Verdict)
		if r.Verdict == model.RolloutDoomed {
			for j := range st.Doomed {
				w.Doomed = append(w.Doomed, containerOf(&st.Doomed[j]))
			}
		}
		for _, p := range st.Pending {
			w.Pending = append(w.Pending, reportPending{Reason: p.Reason, Pods: p.Pods, Example: p.Example})
		}
		for _, f := range startFailures[i] {
			w.StartFailures = append(w.StartFailures, reportStartFailures{Node: f.Node, Pods: f.Pods, Failures: f.Failures, Exit128: f.Exit128})
			failedOn[f.Node] = struct{}{}
		}
		rep.Workloads = append(rep.Workloads, w)
	}
	// One fetch for all workloads' doomed containers, then back into place.
	for _, w := range rep.Workloads {
		doomed = append(doomed, w.Doomed...)
	}
	if len(doomed) > 0 {
		g.fetchLogs(ctx, doomed)
		k := 0
		for i := range rep.Workloads {
			for j := range rep.Workloads[i].Doomed {
				rep.Workloads[i].Doomed[j] = doomed[k]
				k++
			}
		}
	}
	for i := range g.warnings {
		rep.Warnings = append(rep.Warnings, containerOf(&g.warnings[i]))
	}
	rep.MoreWarnings = g.moreWarnings
	// The pods may have recovered; the nodes they failed on can still be suspect.
	if len(failedOn) > 0 {
		for _, n := range g.m.Nodes(g.src.Now()) {
			if _, ok := failedOn[n.Name]; ok && n.Suspect {
				g.noteSuspect(n)
			}
		}
	}
	for _, name := range g.suspectOrder {
		n := g.suspects[name]
		rep.SuspectNodes = append(rep.SuspectNodes, reportNode{Name: n.Name, Why: n.Why})
	}
	return rep
}

// finish prints the report and returns its exit code.
func (g *gate) finish(rep waitReport, o *options, stdout, stderr io.Writer) int {
	var err error
	if o.output == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(rep)
	} else {
		_, err = io.WriteString(stdout, rep.text())
	}
	if err != nil {
		return fail(stderr, fmt.Errorf("writing the verdict: %w", err), "")
	}
	return rep.ExitCode
}

// text is the report as Krane prints a failed deploy: a line per workload, then one per doomed
// container ("web-7d9f-x/app: Crashing repeatedly (exit 128): …") with the last lines of its log,
// the suspect nodes, and the transient failures as warnings that name the node.
func (rep *waitReport) text() string {
	var b strings.Builder
	// On a timeout the workloads still waited for come first, under the message.
	order := make([]*reportWorkload, 0, len(rep.Workloads))
	if rep.Message != "" {
		fmt.Fprintf(&b, "%s; still waiting for:\n", rep.Message)
		for i := range rep.Workloads {
			if w := &rep.Workloads[i]; w.Verdict != string(model.RolloutComplete) {
				order = append(order, w)
			}
		}
	}
	for i := range rep.Workloads {
		if w := &rep.Workloads[i]; rep.Message == "" || w.Verdict == string(model.RolloutComplete) {
			order = append(order, w)
		}
	}
	for _, w := range order {
		ref := w.ref()
		switch w.Verdict {
		case string(model.RolloutDoomed):
			fmt.Fprintf(&b, "%s is doomed: %s\n", ref, w.Reason)
		case "unsupported":
			fmt.Fprintf(&b, "cannot wait for %s: %s\n", ref, w.Reason)
		case "missing":
			fmt.Fprintf(&b, "%s\n", w.Reason)
		default:
			fmt.Fprintf(&b, "%s: %s\n", ref, w.Reason)
		}
		// What it waited for explains a timeout, and a doom with no doomed pod to show (a progress
		// deadline passed while probes failed or pods could not be scheduled).
		if w.Verdict != string(model.RolloutComplete) && (rep.Verdict == "timeout" || len(w.Doomed) == 0) {
			for _, p := range w.Pending {
				fmt.Fprintf(&b, "  %s: %s (e.g. %s)\n", plural(p.Pods, "pod"), p.Reason, p.Example)
			}
		}
		for j := range w.Doomed {
			c := &w.Doomed[j]
			fmt.Fprintf(&b, "%s: %s\n", c.ref(), c.Reason)
			switch {
			case len(c.Log) > 0:
				which := "log"
				if c.LogPrevious {
					which = "previous log"
				}
				fmt.Fprintf(&b, "  last %s of %s's %s:\n", plural(len(c.Log), "line"), c.ref(), which)
				for _, l := range c.Log {
					fmt.Fprintf(&b, "    %s\n", l)
				}
			case c.LogError != "":
				fmt.Fprintf(&b, "  (no log: %s)\n", c.LogError)
			}
		}
	}
	for _, n := range rep.SuspectNodes {
		prefix := ""
		if rep.Verdict == "complete" {
			prefix = "warning: "
		}
		fmt.Fprintf(&b, "%s%s is suspect: %s\n", prefix, n.Name, n.Why)
	}
	for i := range rep.Workloads {
		w := &rep.Workloads[i]
		for _, f := range w.StartFailures {
			what := "failed to start"
			if f.Exit128 {
				what += " with exit 128"
			}
			fmt.Fprintf(&b, "warning: %s: %s %s on node %s in the last %s (transient: the node's runtime; retried)\n",
				w.ref(), plural(f.Pods, "pod"), what, f.Node, rep.Window)
		}
	}
	for i := range rep.Warnings {
		c := &rep.Warnings[i]
		fmt.Fprintln(&b, warningLine(c.ref(), c.Node, c.Reason))
	}
	if rep.MoreWarnings > 0 {
		fmt.Fprintf(&b, "warning: and %d more containers with transient failures\n", rep.MoreWarnings)
	}
	return b.String()
}

// ref is the workload as kubectl names it: "deployment/web".
func (w *reportWorkload) ref() string { return strings.ToLower(w.Kind) + "/" + w.Name }

// ref is "pod/container", or the pod when the pod itself decided.
func (c *reportContainer) ref() string {
	if c.Container == "" {
		return c.Pod
	}
	return c.Pod + "/" + c.Container
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
