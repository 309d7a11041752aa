package report

import (
	"fmt"
	"io"
	"strings"

	"doomwatch/model"
)

// WriteText writes the verdict as Krane prints a failed deploy: a line per workload, then one per
// doomed container ("web-7d9f-x/app: Crashing repeatedly (exit 128): …") with the last lines of
// its log, the suspect nodes, and the transient failures as warnings that name the node.
func (rep *Gate) WriteText(out io.Writer) error {
	var b strings.Builder
	// On a timeout the workloads still waited for come first, under the message.
	order := make([]*Workload, 0, len(rep.Workloads))
	if rep.Message != "" {
		fmt.Fprintf(&b, "%s; still waiting for:\n", rep.Message)
		for i := range rep.Workloads {
			if w := &rep.Workloads[i]; w.Verdict != Complete {
				order = append(order, w)
			}
		}
	}
	for i := range rep.Workloads {
		if w := &rep.Workloads[i]; rep.Message == "" || w.Verdict == Complete {
			order = append(order, w)
		}
	}
	for _, w := range order {
		fmt.Fprintln(&b, w.headline())
		// What it waited for explains a timeout, and a doom with no doomed pod to show (a progress
		// deadline passed while probes failed or pods could not be scheduled).
		if w.Verdict != Complete && (rep.Verdict == Timeout || len(w.Doomed) == 0) {
			writePending(&b, w)
		}
		for j := range w.Doomed {
			c := &w.Doomed[j]
			fmt.Fprintf(&b, "%s: %s\n", c.Ref(), c.Reason)
			writeLog(&b, c)
		}
	}
	for _, l := range rep.warningLines(func(string) bool { return true }) {
		fmt.Fprintln(&b, l)
	}
	if rep.MoreWarnings > 0 {
		fmt.Fprintln(&b, rep.moreWarningsLine())
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// headline is the workload's first line: "deployment/web is doomed: …".
func (w *Workload) headline() string {
	ref := w.Ref()
	switch w.Verdict {
	case Doomed:
		return fmt.Sprintf("%s is doomed: %s", ref, w.Reason)
	case Unsupported:
		return fmt.Sprintf("cannot wait for %s: %s", ref, w.Reason)
	case Missing:
		return w.Reason
	}
	return fmt.Sprintf("%s: %s", ref, w.Reason)
}

// writePending writes what w still waited for, a line per reason with one pod of it.
func writePending(b *strings.Builder, w *Workload) {
	for i := range w.Pending {
		fmt.Fprintf(b, "  %s\n", pendingLine(&w.Pending[i]))
	}
}

// pendingLine is what some of a workload's pods still wait for: "2 pods: Readiness probe … (e.g. api-a/app)".
func pendingLine(p *model.GatePending) string {
	return fmt.Sprintf("%s: %s (e.g. %s)", plural(p.Pods, "pod"), p.Reason, p.Example)
}

// writeLog writes the last lines of c's log, or why there are none.
func writeLog(b *strings.Builder, c *Container) {
	switch {
	case len(c.Log) > 0:
		which := "log"
		if c.LogPrevious {
			which = "previous log"
		}
		fmt.Fprintf(b, "  last %s of %s's %s:\n", plural(len(c.Log), "line"), c.Ref(), which)
		for _, l := range c.Log {
			fmt.Fprintf(b, "    %s\n", l)
		}
	case c.LogError != "":
		fmt.Fprintf(b, "  (no log: %s)\n", c.LogError)
	}
}

// warningLines are the verdict's warnings in the contexts keep accepts: the suspect nodes (a
// warning when the gate passed; otherwise they explain its failure), the workloads' start failures
// in the window and the transient failures seen.
func (rep *Gate) warningLines(keep func(context string) bool) []string {
	var lines []string
	for _, n := range rep.SuspectNodes {
		if !keep(n.Context) {
			continue
		}
		prefix := ""
		if rep.Verdict == Complete {
			prefix = "warning: "
		}
		lines = append(lines, fmt.Sprintf("%s%s%s is suspect: %s", prefix, n.Name, in(n.Context), n.Why))
	}
	for i := range rep.Workloads {
		w := &rep.Workloads[i]
		if !keep(w.Context) {
			continue
		}
		for _, f := range w.StartFailures {
			what := "failed to start"
			if f.Exit128 {
				what += " with exit 128"
			}
			lines = append(lines, fmt.Sprintf("warning: %s: %s %s on node %s in the last %s (transient: the node's runtime; retried)",
				w.Ref(), plural(f.Pods, "pod"), what, f.Node, rep.Window))
		}
	}
	for i := range rep.Warnings {
		if c := &rep.Warnings[i]; keep(c.Context) {
			lines = append(lines, WarningLine(c.Ref(), c.Node, c.Reason))
		}
	}
	return lines
}

func (rep *Gate) moreWarningsLine() string {
	return fmt.Sprintf("warning: and %d more containers with transient failures", rep.MoreWarnings)
}

// WarningLine is a transient failure as a warning that names the node.
func WarningLine(ref, node, reason string) string {
	return fmt.Sprintf("warning: %s (transient, %s): %s", ref, onNode(node), reason)
}

// onNode is where a failing container is: "on node node-3", or "on an unscheduled pod".
func onNode(node string) string {
	if node == "" {
		return "on an unscheduled pod"
	}
	return "on node " + node
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
