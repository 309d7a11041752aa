package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"
)

// WatchLine is one line of `doomwatch --watch`: a rollout, pod or node whose verdict or reason
// changed (or that appeared, or went), at Time. Its JSON form is documented in docs/json.md beside
// the --once schema: fields may be added, never renamed. Every string in it is sanitised.
type WatchLine struct {
	Time string `json:"time"` // RFC3339Nano, the source's clock
	Type string `json:"type"` // rollout, pod or node
	// Context is the object's cluster with several contexts; absent with one.
	Context string `json:"context,omitempty"`
	// Namespace is "" for a node.
	Namespace string `json:"namespace,omitempty"`
	// Kind is a rollout's workload kind (Deployment, StatefulSet, DaemonSet).
	Kind string `json:"kind,omitempty"`
	Name string `json:"name"`
	// Node and Owner are a pod's, as in --once -o json.
	Node  string `json:"node,omitempty"`
	Owner string `json:"owner,omitempty"`
	// Verdict is a rollout's (progressing, complete, doomed) or a pod's (healthy, completed,
	// progressing, transient, doomed); "" for a node.
	Verdict string `json:"verdict,omitempty"`
	// Suspect is a node's suspect call; Reason is then its why sentence ("" when not suspect).
	Suspect *bool  `json:"suspect,omitempty"`
	Reason  string `json:"reason"`
	// Deleted is true on the line that says the object is gone.
	Deleted bool `json:"deleted"`
}

// WatchState is what a watch has printed so far, to tell what changed.
type WatchState struct {
	rollouts map[string]WatchLine
	pods     map[string]WatchLine
	nodes    map[string]WatchLine
}

// Diff returns the lines that take the printed state to snapshot s, in s's order (rollouts, then
// pods, then nodes; the gone ones after each), and remembers s. The first Diff prints everything.
// Only a verdict, a reason, a pod's node or a node's suspect call counts as a change: counts and
// ages move all the time and are --once's business.
func (w *WatchState) Diff(s *Snapshot, at time.Time) []WatchLine {
	ts := at.UTC().Format(time.RFC3339Nano)
	var out []WatchLine
	rollouts := make(map[string]WatchLine, len(s.Rollouts))
	for i := range s.Rollouts {
		r := &s.Rollouts[i]
		l := WatchLine{Type: "rollout", Context: r.Context, Namespace: r.Namespace, Kind: r.Kind, Name: r.Name, Verdict: r.Verdict, Reason: r.Reason}
		key := r.Context + "\x00" + r.Namespace + "/" + r.Kind + "/" + r.Name
		rollouts[key] = l
		out = changed(out, w.rollouts, key, l, ts)
	}
	out = gone(out, w.rollouts, rollouts, ts)
	pods := make(map[string]WatchLine, len(s.Pods))
	for i := range s.Pods {
		p := &s.Pods[i]
		l := WatchLine{Type: "pod", Context: p.Context, Namespace: p.Namespace, Name: p.Name, Node: p.Node, Owner: p.Owner, Verdict: p.Verdict, Reason: p.Reason}
		key := p.UID
		if key == "" {
			key = p.Namespace + "/" + p.Name
		}
		key = p.Context + "\x00" + key // UIDs are unique within a cluster only
		pods[key] = l
		out = changed(out, w.pods, key, l, ts)
	}
	out = gone(out, w.pods, pods, ts)
	nodes := make(map[string]WatchLine, len(s.Nodes))
	for i := range s.Nodes {
		n := &s.Nodes[i]
		suspect := n.Suspect
		l := WatchLine{Type: "node", Context: n.Context, Name: n.Name, Suspect: &suspect}
		if suspect {
			l.Reason = n.Why
		}
		key := n.UID
		if key == "" {
			key = n.Name
		}
		key = n.Context + "\x00" + key
		nodes[key] = l
		out = changed(out, w.nodes, key, l, ts)
	}
	out = gone(out, w.nodes, nodes, ts)
	w.rollouts, w.pods, w.nodes = rollouts, pods, nodes
	return out
}

// changed appends l, stamped ts, when it differs from what was printed under key.
func changed(out []WatchLine, printed map[string]WatchLine, key string, l WatchLine, ts string) []WatchLine {
	if old, ok := printed[key]; ok && sameWatch(&old, &l) {
		return out
	}
	l.Time = ts
	return append(out, l)
}

// gone appends a deleted line for every key printed before and missing now, in a stable order.
func gone(out []WatchLine, printed, now map[string]WatchLine, ts string) []WatchLine {
	start := len(out)
	for k, l := range printed {
		if _, ok := now[k]; !ok {
			l.Time, l.Deleted = ts, true
			out = append(out, l)
		}
	}
	tail := out[start:]
	sortWatch(tail)
	return out
}

func sameWatch(a, b *WatchLine) bool {
	return a.Verdict == b.Verdict && a.Reason == b.Reason && a.Node == b.Node && a.Owner == b.Owner &&
		(a.Suspect == nil) == (b.Suspect == nil) && (a.Suspect == nil || *a.Suspect == *b.Suspect)
}

// writeWatchTable prints one tab-separated line per change: TIME TYPE NAME VERDICT REASON, where
// a rollout's name is namespace/Kind/name and a pod's namespace/name, as `kubectl get --watch`
// prints a row per change.
func writeWatchTable(lines []WatchLine, w io.Writer) error {
	for i := range lines {
		l := &lines[i]
		if _, err := fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", l.Time, l.Type, watchName(l), watchVerdict(l), l.Reason); err != nil {
			return err
		}
	}
	return nil
}

// writeWatchJSON prints one JSON object per line.
func writeWatchJSON(lines []WatchLine, w io.Writer) error {
	for i := range lines {
		b, err := json.Marshal(&lines[i])
		if err == nil {
			_, err = w.Write(append(b, '\n'))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// watchName is the line's object: a rollout's namespace/Kind/name, a pod's namespace/name, a
// node's name, each after its context and a colon with several contexts ("prod-eu:shop/web-1").
func watchName(l *WatchLine) string {
	ctx := ""
	if l.Context != "" {
		ctx = l.Context + ":"
	}
	switch l.Type {
	case "rollout":
		return ctx + l.Namespace + "/" + l.Kind + "/" + l.Name
	case "pod":
		return ctx + l.Namespace + "/" + l.Name
	}
	return ctx + l.Name
}

func watchVerdict(l *WatchLine) string {
	switch {
	case l.Deleted:
		return "deleted"
	case l.Suspect != nil && *l.Suspect:
		return "suspect"
	case l.Suspect != nil:
		return "not-suspect"
	}
	return l.Verdict
}

// sortWatch orders lines by type, namespace, kind and name.
func sortWatch(ls []WatchLine) {
	slices.SortFunc(ls, func(a, b WatchLine) int {
		return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.Context, b.Context), cmp.Compare(a.Namespace, b.Namespace),
			cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name))
	})
}
