// Package metrics is doomwatch's verdicts as Prometheus metrics, for `doomwatch serve`: a custom
// collector (prometheus.Collector) that reads the model at scrape time, as kube-state-metrics and
// node_exporter do, not gauges set per pod. Every series is per workload, node or namespace, never
// per pod (BenchmarkCollect), and a workload's or node's verdict is one-hot with explicit zeros, so
// that a series does not go stale while its object exists (kubernetes-mixin#645, #674).
package metrics

import (
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"doomwatch/classify"
	"doomwatch/model"
)

// maxReason bounds a label value of free text from the API (a reason, what a node says it runs),
// in bytes, as the terminal bounds a line: text from the API is untrusted (the model sanitises
// it), and a label value's length is every series' cost.
const maxReason = 256

// Verdicts are a workload's verdicts, each a series of doomwatch_workload_verdict.
var workloadVerdicts = []classify.RolloutClass{classify.RolloutProgressing, classify.RolloutComplete, classify.RolloutDoomed}

// Collector reports what the model knows of the cluster at each scrape. The model is not safe for
// concurrent use: lock is held while it is read, and whoever applies batches to it holds it too.
//
// It is a prometheus.Collector (Collect), for registries and client_golang's testutil, and a
// prometheus.Gatherer (Gather), which serve's /metrics reads: the registry's Gather builds, checks
// and sorts a dto.Metric per series at every scrape (a dozen allocations and a hash each), which at
// 150,000 pods is most of a scrape's cost for series that rarely change (BenchmarkScrape). Gather
// hands the kept series to the encoder as they are; TestGatherIsTheRegistrys holds the two paths
// to the same families.
type Collector struct {
	m    *model.Model
	lock sync.Locker
	now  func() time.Time
	// health says whether the source is ready (synced, every watch working), and why not.
	health func() (ready bool, why string)

	workload, workloadDoomed, workloadReason *prometheus.Desc
	suspect, startFailures, nodeInfo         *prometheus.Desc
	pods, up, watchErrors, forbidden         *prometheus.Desc
	// families are the metrics' names, help and types, in the order Gather returns them.
	families []family

	// kept is every series of the last scrape, by its labels: a scrape sends the kept series
	// whose value has not changed, and builds only the others. It is read and written under lock.
	kept map[seriesKey]keptSeries
	// scrape numbers the scrapes, so that a series no scrape sent is dropped from kept.
	scrape uint64
	// nodes and byName are the nodes of a scrape by name, kept to be reused.
	nodes  []model.Node
	byName map[string]int
}

// family is one metric's name, help and type, for Gather.
type family struct {
	desc       *prometheus.Desc
	name, help string
	typ        dto.MetricType
}

// seriesKey is a series' identity: its metric and its label values, in the Desc's order.
type seriesKey struct {
	desc               *prometheus.Desc
	l0, l1, l2, l3, l4 string
}

type keptSeries struct {
	s    *series
	seen uint64
}

// series is one series, built once and sent by every scrape until its value changes. It is
// immutable once built: the registry's contract is that a Metric's label pairs are never changed
// (Registry.Gather copies them before it sorts), and the encoder only reads, so scrapes that
// overlap share it safely. prometheus.MustNewConstMetric builds the same thing anew each time,
// about 20 allocations a series.
type series struct {
	desc   *prometheus.Desc
	metric *dto.Metric
}

func (s *series) Desc() *prometheus.Desc { return s.desc }

func (s *series) Write(out *dto.Metric) error {
	out.Label, out.Gauge, out.Counter = s.metric.Label, s.metric.Gauge, s.metric.Counter
	return nil
}

func (s *series) value() float64 {
	if s.metric.Counter != nil {
		return s.metric.Counter.GetValue()
	}
	return s.metric.Gauge.GetValue()
}

// New is a Collector of m, read under lock at now; health says whether the source is ready, and
// why not.
func New(m *model.Model, lock sync.Locker, now func() time.Time, health func() (bool, string)) *Collector {
	c := &Collector{m: m, lock: lock, now: now, health: health, kept: map[seriesKey]keptSeries{}, byName: map[string]int{}}
	gauge := func(d **prometheus.Desc, name, help string, labels ...string) {
		*d = prometheus.NewDesc(name, help, labels, nil)
		c.families = append(c.families, family{desc: *d, name: name, help: help, typ: dto.MetricType_GAUGE})
	}
	gauge(&c.workload, "doomwatch_workload_verdict",
		"The verdict of a workload's rollout, one-hot: 1 for its verdict, 0 for the others (progressing, complete, doomed).",
		"namespace", "kind", "name", "verdict")
	gauge(&c.workloadDoomed, "doomwatch_workload_doomed_pods",
		"The workload's new pods (its new ReplicaSet's, its update revision's) that are doomed.",
		"namespace", "kind", "name")
	gauge(&c.workloadReason, "doomwatch_workload_doomed_info",
		"Why a doomed workload is doomed: its reason, bounded in length; 1 while it is doomed, absent otherwise.",
		"namespace", "kind", "name", "reason")
	gauge(&c.suspect, "doomwatch_node_suspect",
		"1 while a node stands out by its start failures (the outlier rule), else 0.",
		"node")
	gauge(&c.startFailures, "doomwatch_node_start_failures",
		"Transient start failures (exit 128, create errors) on the node within the window.",
		"node")
	gauge(&c.nodeInfo, "doomwatch_node_info",
		"What a node runs and where, for what suspect nodes share: its container runtime, kernel and kubelet versions, its zone; always 1.",
		"node", "container_runtime", "kernel", "kubelet", "zone")
	gauge(&c.pods, "doomwatch_pods",
		"Pods per namespace and verdict (healthy, progressing, transient, doomed, completed).",
		"namespace", "verdict")
	gauge(&c.up, "doomwatch_synced",
		"1 once the informers have synced, no watch is broken and the API server answers, else 0.")
	gauge(&c.forbidden, "doomwatch_forbidden",
		"1 for each resource RBAC forbids doomwatch to list or watch: the verdicts go on without it (nodes: no suspect nodes; events: no event evidence).",
		"resource")
	errorsHelp := "List and watch calls to the API server that failed, forbidden ones included; client-go's reflector retried each with backoff. A watch's routine end (the server's timeout, a too-old resource version) does not count."
	c.watchErrors = prometheus.NewDesc("doomwatch_watch_errors_total", errorsHelp, nil, nil)
	c.families = append(c.families, family{desc: c.watchErrors, name: "doomwatch_watch_errors_total", help: errorsHelp, typ: dto.MetricType_COUNTER})
	return c
}

// Describe sends the descriptions of every metric the collector reports.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, f := range c.families {
		ch <- f.desc
	}
}

// Collect reads the model and sends a metric for every workload, node and namespace.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	synced, _ := c.health() // before the lock: health takes it too
	c.lock.Lock()
	defer c.lock.Unlock()
	c.collect(synced, func(s *series) { ch <- s })
}

// Gather reads the model and returns its metrics' families, each series as the last scrape that
// sent it built it. The families are the caller's; their series are shared and must not be
// changed.
func (c *Collector) Gather() ([]*dto.MetricFamily, error) {
	synced, _ := c.health() // before the lock: health takes it too
	c.lock.Lock()
	defer c.lock.Unlock()
	byDesc := make(map[*prometheus.Desc]*dto.MetricFamily, len(c.families))
	out := make([]*dto.MetricFamily, 0, len(c.families))
	for _, f := range c.families {
		mf := &dto.MetricFamily{Name: &f.name, Help: &f.help, Type: f.typ.Enum()}
		byDesc[f.desc], out = mf, append(out, mf)
	}
	c.collect(synced, func(s *series) {
		mf := byDesc[s.desc]
		mf.Metric = append(mf.Metric, s.metric)
	})
	kept := out[:0]
	for _, mf := range out {
		if len(mf.Metric) > 0 { // as the registry's: no family without series
			kept = append(kept, mf)
		}
	}
	return kept, nil
}

// collect reads the model and passes every series to send, under lock.
func (c *Collector) collect(synced bool, send func(*series)) {
	c.scrape++
	now := c.now()
	c.send(send, seriesKey{desc: c.up}, 0, boolValue(synced), false)
	h := c.m.Health()
	c.send(send, seriesKey{desc: c.watchErrors}, 0, float64(h.Failures), true)
	for _, k := range h.Forbidden {
		c.send(send, seriesKey{desc: c.forbidden, l0: k.Resource()}, 1, 1, false)
	}
	for _, r := range c.m.Rollouts() {
		cur, _ := c.m.Current(&r) // the new pods' counts as they are now
		w := seriesKey{l0: r.Namespace, l1: r.Kind, l2: r.Name}
		for _, v := range workloadVerdicts {
			k := w
			k.desc, k.l3 = c.workload, string(v)
			c.send(send, k, 4, boolValue(r.Verdict == v), false)
		}
		w.desc = c.workloadDoomed
		c.send(send, w, 3, float64(cur.NewDoomed), false)
		if r.Verdict == classify.RolloutDoomed {
			w.desc, w.l3 = c.workloadReason, bound(r.Reason)
			c.send(send, w, 4, 1, false)
		}
	}
	// The model tells nodes apart by UID: a node deleted and registered again under its name
	// within the window is two of its nodes, and one node to Prometheus, whose series are by name
	// (a series twice in a scrape is an error). Their failures add up; either's suspect call holds.
	clear(c.byName)
	c.nodes = c.nodes[:0]
	for _, n := range c.m.Nodes(now) {
		i, ok := c.byName[n.Name]
		if !ok {
			c.byName[n.Name], c.nodes = len(c.nodes), append(c.nodes, n)
			continue
		}
		merged := &c.nodes[i]
		merged.Failures += n.Failures
		merged.Suspect = merged.Suspect || n.Suspect
		if n.Known && !merged.Known { // the node as it is now
			merged.Known, merged.Info, merged.Zone = true, n.Info, n.Zone
		}
	}
	for _, n := range c.nodes {
		c.send(send, seriesKey{desc: c.suspect, l0: n.Name}, 1, boolValue(n.Suspect), false)
		c.send(send, seriesKey{desc: c.startFailures, l0: n.Name}, 1, float64(n.Failures), false)
		if n.Known {
			c.send(send, seriesKey{desc: c.nodeInfo, l0: n.Name, l1: bound(n.Info.Runtime), l2: bound(n.Info.Kernel), l3: bound(n.Info.Kubelet), l4: n.Zone}, 5, 1, false)
		}
	}
	// The namespaces in order, so that a scrape reads the same from one to the next.
	var namespaces []string
	counts := map[string]model.Counts{}
	c.m.NamespaceCounts(func(ns string, k *model.Counts) {
		namespaces = append(namespaces, ns)
		counts[ns] = *k
	})
	slices.Sort(namespaces)
	for _, ns := range namespaces {
		k := counts[ns]
		for _, v := range []struct {
			verdict string
			n       int
		}{{"completed", k.Completed}, {"doomed", k.Doomed}, {"healthy", k.Healthy}, {"progressing", k.Progressing}, {"transient", k.Transient}} {
			c.send(send, seriesKey{desc: c.pods, l0: ns, l1: v.verdict}, 2, float64(v.n), false)
		}
	}
	for k, e := range c.kept {
		if e.seen != c.scrape {
			delete(c.kept, k) // its workload, node or namespace is gone
		}
	}
}

// send passes on the series k (its first n label values) with value v: the kept one if its value
// is v, else a new one, kept for the next scrape.
func (c *Collector) send(send func(*series), k seriesKey, n int, v float64, counter bool) {
	e, ok := c.kept[k]
	if !ok || e.s.value() != v {
		m := &dto.Metric{}
		if ok {
			m.Label = e.s.metric.Label
		} else {
			m.Label = prometheus.MakeLabelPairs(k.desc, []string{k.l0, k.l1, k.l2, k.l3, k.l4}[:n])
		}
		value := v // on the heap only when a series is built: &v would put every call's there
		if counter {
			m.Counter = &dto.Counter{Value: &value}
		} else {
			m.Gauge = &dto.Gauge{Value: &value}
		}
		e.s = &series{desc: k.desc, metric: m}
	}
	e.seen = c.scrape
	c.kept[k] = e
	send(e.s)
}

// Join is a Gatherer of the families gs gather, in their order, for Gatherers whose metrics'
// names differ: unlike prometheus.Gatherers, it does not check every series again.
func Join(gs ...prometheus.Gatherer) prometheus.Gatherer {
	return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		var out []*dto.MetricFamily
		var errs prometheus.MultiError
		for _, g := range gs {
			mfs, err := g.Gather()
			errs.Append(err)
			out = append(out, mfs...)
		}
		return out, errs.MaybeUnwrap()
	})
}

// NewBatchDuration is doomwatch_batch_duration_seconds, the time serve takes to apply one batch of
// the informers' changes to the model: the scrapes wait that long for the model's lock at most,
// and the verdicts are that late behind the informers.
func NewBatchDuration() prometheus.Histogram {
	return prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "doomwatch_batch_duration_seconds",
		Help: "The time taken to apply a batch of the informers' changes to the model (the verdicts, node clusters and rollouts).",
		// 100 µs to 3.3 s: a batch of a few changes at 150,000 pods takes about 1.5 ms
		// (model's BenchmarkBatch); the initial list of 150,000 pods, seconds.
		Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
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
