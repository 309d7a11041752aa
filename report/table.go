package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"doomwatch/classify"
)

// WriteTable writes a kubectl-like table of pods with VERDICT and REASON columns, then a NODES
// and a ROLLOUTS section.
func (s *Snapshot) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	// With more than one context, each line starts with its cluster's.
	multi := len(s.Clusters) > 0
	ctx := func(c string) string {
		if !multi {
			return ""
		}
		return c + "\t"
	}
	fmt.Fprintln(tw, ctx("CONTEXT")+"NAMESPACE\tNAME\tREADY\tSTATUS\tRESTARTS\tNODE\tVERDICT\tREASON")
	for _, p := range s.Pods {
		fmt.Fprintf(tw, "%s%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			ctx(p.Context), p.Namespace, p.Name, p.Ready, p.Status, p.Restarts, orNone(p.Node), p.Verdict, p.Reason)
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "NODES")
	fmt.Fprintln(tw, ctx("CONTEXT")+"NAME\tREADY\tCORDONED\tPODS\tFAILING\tSTART-FAILURES\tWORKLOADS\tSUSPECT\tWHY")
	for _, n := range s.Nodes {
		ready := "unknown"
		if n.Known {
			ready = strconv.FormatBool(n.Ready)
		}
		fmt.Fprintf(tw, "%s%s\t%s\t%t\t%d\t%d\t%d\t%d\t%t\t%s\n",
			ctx(n.Context), n.Name, ready, n.Cordoned, n.Pods, n.FailingPods, n.StartFailures, n.Workloads, n.Suspect, n.Why)
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "ROLLOUTS")
	fmt.Fprintln(tw, ctx("CONTEXT")+"NAMESPACE\tNAME\tVERDICT\tREADY\tUP-TO-DATE\tAVAILABLE\tREASON")
	for _, r := range s.Rollouts {
		fmt.Fprintf(tw, "%s%s\t%s/%s\t%s\t%d/%d\t%d\t%d\t%s\n",
			ctx(r.Context), r.Namespace, r.Kind, r.Name, r.Verdict, r.Ready, r.Desired, r.Updated, r.Available, r.Reason)
	}
	if multi {
		fmt.Fprintln(tw)
		fmt.Fprintln(tw, "CLUSTERS")
		fmt.Fprintln(tw, "CONTEXT\tSERVER\tSYNCED\tFORBIDDEN\tERROR")
		for _, c := range s.Clusters {
			fmt.Fprintf(tw, "%s\t%s\t%t\t%s\t%s\n", c.Context, orNone(c.Server), c.Synced, orNone(strings.Join(c.Forbidden, ",")), orNone(c.Error))
		}
		if len(s.Spreads)+len(s.SuspectsShare) > 0 {
			fmt.Fprintln(tw)
			fmt.Fprintln(tw, "ACROSS CLUSTERS")
			for _, line := range s.SuspectsShare {
				fmt.Fprintln(tw, line)
			}
			for _, line := range acrossLines(s.Spreads) {
				fmt.Fprintln(tw, line)
			}
		}
	}
	if len(s.Health.Forbidden) > 0 || s.Health.WatchError != "" || !s.Health.Synced {
		fmt.Fprintln(tw)
		fmt.Fprintln(tw, "HEALTH")
		if !s.Health.Synced {
			fmt.Fprintln(tw, "not synced: the state may be incomplete")
		}
		if len(s.Health.Forbidden) > 0 {
			fmt.Fprintf(tw, "forbidden by RBAC (not shown): %s\n", strings.Join(s.Health.Forbidden, ", "))
		}
		if s.Health.WatchError != "" {
			fmt.Fprintf(tw, "reconnecting: %s\n", s.Health.WatchError)
		}
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing snapshot table: %w", err)
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// acrossLines are the table's lines of the workloads in several clusters: each one whose verdict
// differs between its clusters, the fleet's story (payments doomed in two, complete in the
// third), then one line that counts the others, the same everywhere they run, by verdict. The
// dashboard's header leads with the first that differs and counts the others alike
// (tui/header.go). The JSON document keeps every spread, each with its verdicts.
func acrossLines(spreads []SnapshotSpread) []string {
	var out []string
	same := map[string]int{}
	n := 0
	for i := range spreads {
		sp := &spreads[i]
		if sp.differs() {
			out = append(out, sp.Line)
			continue
		}
		n++
		same[sp.Verdicts[0].Verdict]++
	}
	if n == 0 {
		return out
	}
	var counts []string
	for _, v := range []classify.RolloutClass{classify.RolloutDoomed, classify.RolloutProgressing, classify.RolloutComplete} {
		if k := same[string(v)]; k > 0 {
			counts = append(counts, fmt.Sprintf("%d %s", k, v))
		}
	}
	noun, where := "workloads", "they run"
	if n == 1 {
		noun, where = "workload", "it runs"
	}
	return append(out, fmt.Sprintf("%d %s the same everywhere %s: %s", n, noun, where, strings.Join(counts, ", ")))
}

// differs reports whether the workload's verdict is not the same in each of its clusters
// (model.Spread.Differs).
func (s *SnapshotSpread) differs() bool {
	for _, v := range s.Verdicts[1:] {
		if v.Verdict != s.Verdicts[0].Verdict {
			return true
		}
	}
	return false
}
