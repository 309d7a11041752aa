// Package metrics is doomwatch's verdicts as Prometheus metrics, for `doomwatch serve`: a custom
// collector (prometheus.Collector) that reads the model at scrape time, as kube-state-metrics and
// node_exporter do, not gauges set per pod. Every series is per workload, node or namespace, never
// per pod (BenchmarkCollect), and a workload's or node's verdict is one-hot with explicit zeros, so
// that a series does not go stale while its object exists (kubernetes-mixin#645, #674).
package metrics

import (
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"doomwatch/classify"
	"doomwatch/model"
)

// maxReason bounds a reason's label value, in bytes, as the terminal bounds a line: text from the
// API is untrusted (the model sanitises it), and a label value's length is every series' cost.
const maxReason = 256

// Verdicts are a workload's verdicts, each a series of doomwatch_workload_verdict.
var workloadVerdicts = []classify.RolloutClass{classify.RolloutProgressing, classify.RolloutComplete, classify.RolloutDoomed}

// Collector reports what the model knows of the cluster at each scrape. The model is not safe for
// concurrent use: lock is held while it is read, and whoever applies batches to it holds it too.
type Collector struct {
	m    *model.Model
	lock sync.Locker
	now  func() time.Time
	// health says whether the source is ready (synced, every watch working), and why not.
	health func() (ready bool, why string)

	workload, workloadDoomed, workloadReason *prometheus.Desc
	suspect, startFailures, nodeInfo         *prometheus.Desc
	pods, up                                 *prometheus.Desc
}

// New is a Collector of m, read under lock at now; health says whether the source is ready, and
// why not.
func New(m *model.Model, lock sync.Locker, now func() time.Time, health func() (bool, string)) *Collector {
	return &Collector{m: m, lock: lock, now: now, health: health,
		workload: prometheus.NewDesc("doomwatch_workload_verdict",
			"The verdict of a workload's rollout, one-hot: 1 for its verdict, 0 for the others (progressing, complete, doomed).",
			[]string{"namespace", "kind", "name", "verdict"}, nil),
		workloadDoomed: prometheus.NewDesc("doomwatch_workload_doomed_pods",
			"The workload's new pods (its new ReplicaSet's, its update revision's) that are doomed.",
			[]string{"namespace", "kind", "name"}, nil),
		workloadReason: prometheus.NewDesc("doomwatch_workload_doomed_info",
			"Why a doomed workload is doomed: its reason, bounded in length; 1 while it is doomed, absent otherwise.",
			[]string{"namespace", "kind", "name", "reason"}, nil),
		suspect: prometheus.NewDesc("doomwatch_node_suspect",
			"1 while a node stands out by its start failures (the outlier rule), else 0.",
			[]string{"node"}, nil),
		startFailures: prometheus.NewDesc("doomwatch_node_start_failures",
			"Transient start failures (exit 128, create errors) on the node within the window.",
			[]string{"node"}, nil),
		nodeInfo: prometheus.NewDesc("doomwatch_node_info",
			"What a node runs, for what suspect nodes share: its container runtime, kernel and kubelet versions; always 1.",
			[]string{"node", "container_runtime", "kernel", "kubelet"}, nil),
		pods: prometheus.NewDesc("doomwatch_pods",
			"Pods per namespace and verdict (healthy, progressing, transient, doomed, completed).",
			[]string{"namespace", "verdict"}, nil),
		up: prometheus.NewDesc("doomwatch_synced",
			"1 once the informers have synced and no watch is broken, else 0.",
			nil, nil),
	}
}

// Describe sends the descriptions of every metric the collector reports.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.workload, c.workloadDoomed, c.workloadReason, c.suspect, c.startFailures, c.nodeInfo, c.pods, c.up} {
		ch <- d
	}
}

// Collect reads the model and sends a metric for every workload, node and namespace.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	synced, _ := c.health()
	c.lock.Lock()
	defer c.lock.Unlock()
	now := c.now()
	ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, boolValue(synced))
	for _, r := range c.m.Rollouts() {
		cur, _ := c.m.Current(&r) // the new pods' counts as they are now
		for _, v := range workloadVerdicts {
			ch <- prometheus.MustNewConstMetric(c.workload, prometheus.GaugeValue, boolValue(r.Verdict == v), r.Namespace, r.Kind, r.Name, string(v))
		}
		ch <- prometheus.MustNewConstMetric(c.workloadDoomed, prometheus.GaugeValue, float64(cur.NewDoomed), r.Namespace, r.Kind, r.Name)
		if r.Verdict == classify.RolloutDoomed {
			ch <- prometheus.MustNewConstMetric(c.workloadReason, prometheus.GaugeValue, 1, r.Namespace, r.Kind, r.Name, bound(r.Reason))
		}
	}
	for _, n := range c.m.Nodes(now) {
		ch <- prometheus.MustNewConstMetric(c.suspect, prometheus.GaugeValue, boolValue(n.Suspect), n.Name)
		ch <- prometheus.MustNewConstMetric(c.startFailures, prometheus.GaugeValue, float64(n.Failures), n.Name)
		if n.Known {
			ch <- prometheus.MustNewConstMetric(c.nodeInfo, prometheus.GaugeValue, 1, n.Name, n.Info.Runtime, n.Info.Kernel, n.Info.Kubelet)
		}
	}
	c.m.NamespaceCounts(func(ns string, k *model.Counts) {
		for _, v := range []struct {
			verdict string
			n       int
		}{{"healthy", k.Healthy}, {"progressing", k.Progressing}, {"transient", k.Transient}, {"doomed", k.Doomed}, {"completed", k.Completed}} {
			ch <- prometheus.MustNewConstMetric(c.pods, prometheus.GaugeValue, float64(v.n), ns, v.verdict)
		}
	})
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// bound cuts s to maxReason bytes, on a rune boundary, with an ellipsis when cut.
func bound(s string) string {
	if len(s) <= maxReason {
		return s
	}
	cut := maxReason - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
