package report

import (
	"fmt"
	"io"
	"strings"
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
		ref := w.Ref()
		switch w.Verdict {
		case Doomed:
			fmt.Fprintf(&b, "%s is doomed: %s\n", ref, w.Reason)
		case Unsupported:
			fmt.Fprintf(&b, "cannot wait for %s: %s\n", ref, w.Reason)
		case Missing:
			fmt.Fprintf(&b, "%s\n", w.Reason)
		default:
			fmt.Fprintf(&b, "%s: %s\n", ref, w.Reason)
		}
		// What it waited for explains a timeout, and a doom with no doomed pod to show (a progress
		// deadline passed while probes failed or pods could not be scheduled).
		if w.Verdict != Complete && (rep.Verdict == Timeout || len(w.Doomed) == 0) {
			for _, p := range w.Pending {
				fmt.Fprintf(&b, "  %s: %s (e.g. %s)\n", plural(p.Pods, "pod"), p.Reason, p.Example)
			}
		}
		for j := range w.Doomed {
			c := &w.Doomed[j]
			fmt.Fprintf(&b, "%s: %s\n", c.Ref(), c.Reason)
			switch {
			case len(c.Log) > 0:
				which := "log"
				if c.LogPrevious {
					which = "previous log"
				}
				fmt.Fprintf(&b, "  last %s of %s's %s:\n", plural(len(c.Log), "line"), c.Ref(), which)
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
		if rep.Verdict == Complete {
			prefix = "warning: "
		}
		fmt.Fprintf(&b, "%s%s%s is suspect: %s\n", prefix, n.Name, in(n.Context), n.Why)
	}
	for i := range rep.Workloads {
		w := &rep.Workloads[i]
		for _, f := range w.StartFailures {
			what := "failed to start"
			if f.Exit128 {
				what += " with exit 128"
			}
			fmt.Fprintf(&b, "warning: %s: %s %s on node %s in the last %s (transient: the node's runtime; retried)\n",
				w.Ref(), plural(f.Pods, "pod"), what, f.Node, rep.Window)
		}
	}
	for i := range rep.Warnings {
		c := &rep.Warnings[i]
		fmt.Fprintln(&b, WarningLine(c.Ref(), c.Node, c.Reason))
	}
	if rep.MoreWarnings > 0 {
		fmt.Fprintf(&b, "warning: and %d more containers with transient failures\n", rep.MoreWarnings)
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// WarningLine is a transient failure as a warning that names the node.
func WarningLine(ref, node, reason string) string {
	where := "on an unscheduled pod"
	if node != "" {
		where = "on node " + node
	}
	return fmt.Sprintf("warning: %s (transient, %s): %s", ref, where, reason)
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
