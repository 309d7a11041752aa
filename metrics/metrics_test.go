package metrics

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	corev1 "k8s.io/api/core/v1"

	"doomwatch/contract"
	"doomwatch/model"
	"doomwatch/model/podtest"
	"doomwatch/model/scaletest"
	"doomwatch/podrec"
)

// configMissing is the kubelet's error for a container whose ConfigMap does not exist
// (kubernetes/kubernetes pkg/kubelet/kubelet_pods.go makeEnvironmentVariables: `configmap %q not
// found`), as classify/RULES.md's config-error row has it.
const configMissing = `configmap "web-config" not found`

// shop is a model of namespace shop: deployment/web's two new pods cannot start (a ConfigMap that
// does not exist, doomed), deployment/api is complete, and one pod of api failed a start on node-1
// with exit 128 and recovered.
func shop() *model.Model {
	m := model.New(model.DefaultConfig())
	t0 := podtest.T0
	m.Apply(&contract.Batch{
		Nodes: []*corev1.Node{podtest.Node("node-1", true, false), podtest.Node("node-2", true, false)},
		Workloads: contract.Workloads(podtest.Deployment("shop", "web", 2, "2"), podtest.ReplicaSet("shop", "web-2", "web", "2"),
			podtest.Deployment("shop", "api", 1, "1"), podtest.ReplicaSet("shop", "api-1", "api", "1")),
		Pods: []*podrec.Record{
			podrec.RecordOf(podtest.Pod("shop", "web-2-a", podtest.OnNode("node-2"), podtest.OwnedBy("ReplicaSet", "web-2"),
				podtest.Waiting("CreateContainerConfigError", configMissing))),
			podrec.RecordOf(podtest.Pod("shop", "web-2-b", podtest.OnNode("node-2"), podtest.OwnedBy("ReplicaSet", "web-2"),
				podtest.Waiting("CreateContainerConfigError", configMissing))),
			podrec.RecordOf(podtest.Pod("shop", "api-1-a", podtest.OnNode("node-1"), podtest.OwnedBy("ReplicaSet", "api-1"),
				podtest.RecoveredAfter128(t0.Add(-time.Minute), 1))),
		},
	}, t0)
	return m
}

func ready() (bool, string) { return true, "" }

// TestCollect: each workload's verdict one-hot with its zeros, its doomed new pods and a doomed
// one's reason; each node's suspect call, start failures and what it runs; pods per namespace and
// verdict. No series is per pod.
func TestCollect(t *testing.T) {
	m := shop()
	c := New(m, &sync.Mutex{}, func() time.Time { return podtest.T0 }, ready)
	want := `
# HELP doomwatch_workload_verdict The verdict of a workload's rollout, one-hot: 1 for its verdict, 0 for the others (progressing, complete, doomed).
# TYPE doomwatch_workload_verdict gauge
doomwatch_workload_verdict{kind="Deployment",name="api",namespace="shop",verdict="complete"} 1
doomwatch_workload_verdict{kind="Deployment",name="api",namespace="shop",verdict="doomed"} 0
doomwatch_workload_verdict{kind="Deployment",name="api",namespace="shop",verdict="progressing"} 0
doomwatch_workload_verdict{kind="Deployment",name="web",namespace="shop",verdict="complete"} 0
doomwatch_workload_verdict{kind="Deployment",name="web",namespace="shop",verdict="doomed"} 1
doomwatch_workload_verdict{kind="Deployment",name="web",namespace="shop",verdict="progressing"} 0
# HELP doomwatch_workload_doomed_pods The workload's new pods (its new ReplicaSet's, its update revision's) that are doomed.
# TYPE doomwatch_workload_doomed_pods gauge
doomwatch_workload_doomed_pods{kind="Deployment",name="api",namespace="shop"} 0
doomwatch_workload_doomed_pods{kind="Deployment",name="web",namespace="shop"} 2
# HELP doomwatch_node_start_failures Transient start failures (exit 128, create errors) on the node within the window.
# TYPE doomwatch_node_start_failures gauge
doomwatch_node_start_failures{node="node-1"} 1
doomwatch_node_start_failures{node="node-2"} 0
# HELP doomwatch_node_suspect 1 while a node stands out by its start failures (the outlier rule), else 0.
# TYPE doomwatch_node_suspect gauge
doomwatch_node_suspect{node="node-1"} 0
doomwatch_node_suspect{node="node-2"} 0
# HELP doomwatch_pods Pods per namespace and verdict (healthy, progressing, transient, doomed, completed).
# TYPE doomwatch_pods gauge
doomwatch_pods{namespace="shop",verdict="completed"} 0
doomwatch_pods{namespace="shop",verdict="doomed"} 2
doomwatch_pods{namespace="shop",verdict="healthy"} 1
doomwatch_pods{namespace="shop",verdict="progressing"} 0
doomwatch_pods{namespace="shop",verdict="transient"} 0
# HELP doomwatch_synced 1 once the informers have synced, no watch is broken and the API server answers, else 0.
# TYPE doomwatch_synced gauge
doomwatch_synced 1
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "doomwatch_workload_verdict", "doomwatch_workload_doomed_pods",
		"doomwatch_node_start_failures", "doomwatch_node_suspect", "doomwatch_pods", "doomwatch_synced"); err != nil {
		t.Error(err)
	}
	// The reason of the doomed workload, as the rollouts panel says it.
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, f := range families {
		if f.GetName() != "doomwatch_workload_doomed_info" {
			continue
		}
		for _, s := range f.GetMetric() {
			for _, l := range s.GetLabel() {
				if l.GetName() == "reason" {
					reasons = append(reasons, l.GetValue())
				}
			}
		}
	}
	if len(reasons) != 1 || !strings.Contains(reasons[0], configMissing) {
		t.Errorf("doomed reasons %q, want web's, with %q", reasons, configMissing)
	}
}

// TestScrapesFollowTheModel: the series a scrape keeps for the next one never outlive what they
// say. A workload whose pods recover is complete at the next scrape, a deleted one's series are
// gone, and what RBAC forbids and the failed calls are reported as the source last said them.
func TestScrapesFollowTheModel(t *testing.T) {
	m := shop()
	c := New(m, &sync.Mutex{}, func() time.Time { return podtest.T0 }, ready)
	first := scrape(t, c)
	for _, want := range []string{
		`doomwatch_workload_verdict{kind="Deployment",name="web",namespace="shop",verdict="doomed"} 1`,
		`doomwatch_workload_verdict{kind="Deployment",name="api",namespace="shop",verdict="complete"} 1`,
		`doomwatch_workload_doomed_info{kind="Deployment",name="web",namespace="shop",reason=`,
		"doomwatch_watch_errors_total 0",
	} {
		if !strings.Contains(first, want) {
			t.Errorf("first scrape lacks %s", want)
		}
	}
	t1 := podtest.T0.Add(time.Minute)
	m.Apply(&contract.Batch{
		Pods: []*podrec.Record{
			podrec.RecordOf(podtest.Pod("shop", "web-2-a", podtest.OnNode("node-2"), podtest.OwnedBy("ReplicaSet", "web-2"))),
			podrec.RecordOf(podtest.Pod("shop", "web-2-b", podtest.OnNode("node-2"), podtest.OwnedBy("ReplicaSet", "web-2"))),
		},
		Deletes: []contract.Ref{{Kind: contract.KindDeployment, Namespace: "shop", Name: "api"},
			{Kind: contract.KindReplicaSet, Namespace: "shop", Name: "api-1"}, {Kind: contract.KindPod, Namespace: "shop", Name: "api-1-a"}},
		Health: &contract.Health{Synced: true, Forbidden: []contract.Kind{contract.KindEvent}, Failures: 3},
	}, t1)
	c.now = func() time.Time { return t1 }
	second := scrape(t, c)
	for _, want := range []string{
		`doomwatch_workload_verdict{kind="Deployment",name="web",namespace="shop",verdict="complete"} 1`,
		`doomwatch_workload_verdict{kind="Deployment",name="web",namespace="shop",verdict="doomed"} 0`,
		`doomwatch_workload_doomed_pods{kind="Deployment",name="web",namespace="shop"} 0`,
		`doomwatch_forbidden{resource="events"} 1`,
		"doomwatch_watch_errors_total 3",
	} {
		if !strings.Contains(second, want) {
			t.Errorf("scrape after the change lacks %s:\n%s", want, second)
		}
	}
	for _, gone := range []string{`name="api"`, "doomwatch_workload_doomed_info{"} {
		if strings.Contains(second, gone) {
			t.Errorf("scrape after the change still has %s:\n%s", gone, second)
		}
	}
	// Every kept series was sent by the last scrape, and no other.
	sent := 0
	for _, l := range strings.Split(second, "\n") {
		if strings.HasPrefix(l, "doomwatch_") {
			sent++
		}
	}
	if len(c.kept) != sent {
		t.Errorf("%d series kept, %d sent", len(c.kept), sent)
	}
}

// TestGatherIsTheRegistrys: Gather, which serve's /metrics reads, returns the families a
// (pedantic) registry gathers from Collect, which checks every series: names, help, types, labels
// sorted, no duplicates, valid UTF-8.
func TestGatherIsTheRegistrys(t *testing.T) {
	m := shop()
	m.Apply(&contract.Batch{Health: &contract.Health{Synced: true, Forbidden: []contract.Kind{contract.KindEvent}, Failures: 2}}, podtest.T0)
	c := New(m, &sync.Mutex{}, func() time.Time { return podtest.T0 }, ready)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	want, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Gather()
	if err != nil {
		t.Fatal(err)
	}
	// The registry sorts families by name and series by labels; Gather keeps the model's order.
	slices.SortFunc(got, func(a, b *dto.MetricFamily) int { return strings.Compare(a.GetName(), b.GetName()) })
	for _, mf := range got {
		slices.SortFunc(mf.Metric, func(a, b *dto.Metric) int { return strings.Compare(a.String(), b.String()) })
	}
	if g, w := exposition(t, got), exposition(t, want); g != w {
		t.Errorf("Gather:\n%s\nthe registry's:\n%s", g, w)
	}
	if !strings.Contains(exposition(t, got), `doomwatch_node_info{container_runtime=`) {
		t.Error("no node info")
	}
}

func exposition(t *testing.T, mfs []*dto.MetricFamily) string {
	var b strings.Builder
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(&b, mf); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// TestNodeInfoUntrusted: what a node says it runs is the node's own text: sanitised (no escape
// sequence, on one line) and bounded in the label values, as the terminal's.
func TestNodeInfoUntrusted(t *testing.T) {
	m := model.New(model.DefaultConfig())
	n := podtest.Node("node-1", true, false)
	n.Status.NodeInfo.KernelVersion = "6.8.0\x1b[2J\n" + strings.Repeat("k", 4096)
	n.Status.NodeInfo.ContainerRuntimeVersion = "containerd://2.1.4"
	m.Apply(&contract.Batch{Nodes: []*corev1.Node{n}}, podtest.T0)
	c := New(m, &sync.Mutex{}, func() time.Time { return podtest.T0 }, ready)
	mfs, err := c.Gather()
	if err != nil {
		t.Fatal(err)
	}
	kernel := ""
	for _, mf := range mfs {
		if mf.GetName() == "doomwatch_node_info" {
			for _, l := range mf.GetMetric()[0].GetLabel() {
				if l.GetName() == "kernel" {
					kernel = l.GetValue()
				}
			}
		}
	}
	if !strings.HasPrefix(kernel, "6.8.0") || len(kernel) > maxReason || strings.ContainsAny(kernel, "\x1b\n") {
		t.Errorf("kernel label: %d bytes, %q…", len(kernel), kernel[:min(len(kernel), 40)])
	}
}

// TestNodeRegisteredAgain: a node deleted and registered again under its name (a new UID) within
// the window is two nodes to the model and one to Prometheus: one series for its name, its
// failures added up, never the same series twice in a scrape.
func TestNodeRegisteredAgain(t *testing.T) {
	m := model.New(model.DefaultConfig())
	t0 := podtest.T0
	first := podtest.Node("node-1", true, false)
	first.UID = "5b1c6f0e-0a51-4bd4-9e1f-7c2d3b4a5f60"
	m.Apply(&contract.Batch{Nodes: []*corev1.Node{first}, Pods: []*podrec.Record{
		podrec.RecordOf(podtest.Pod("shop", "api-a", podtest.OnNode("node-1"), podtest.RecoveredAfter128(t0.Add(-2*time.Minute), 1))),
	}}, t0)
	again := podtest.Node("node-1", true, false)
	again.UID = "9d4e2a7b-3c8f-4e61-b0d5-1a2b3c4d5e6f"
	m.Apply(&contract.Batch{Deletes: []contract.Ref{{Kind: contract.KindNode, Name: "node-1"}}}, t0.Add(time.Second))
	m.Apply(&contract.Batch{Nodes: []*corev1.Node{again}, Pods: []*podrec.Record{
		podrec.RecordOf(podtest.Pod("shop", "api-b", podtest.OnNode("node-1"), podtest.RecoveredAfter128(t0.Add(-time.Minute), 1))),
	}}, t0.Add(2*time.Second))
	now := t0.Add(3 * time.Second)
	named := 0
	for _, n := range m.Nodes(now) {
		if n.Name == "node-1" {
			named++
		}
	}
	if named != 2 {
		t.Fatalf("the model has %d nodes named node-1, want 2 (the case under test)", named)
	}
	c := New(m, &sync.Mutex{}, func() time.Time { return now }, ready)
	want := `
# HELP doomwatch_node_start_failures Transient start failures (exit 128, create errors) on the node within the window.
# TYPE doomwatch_node_start_failures gauge
doomwatch_node_start_failures{node="node-1"} 2
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "doomwatch_node_start_failures"); err != nil {
		t.Error(err)
	}
	if body := scrape(t, c); strings.Count(body, `doomwatch_node_suspect{node="node-1"}`) != 1 || strings.Count(body, `doomwatch_node_info{`) != 1 {
		t.Errorf("node-1's series not once each:\n%s", body)
	}
}

// TestBound: a reason's label value is cut to maxReason bytes on a rune boundary.
func TestBound(t *testing.T) {
	long := strings.Repeat("é", maxReason)
	got := bound(long)
	if len(got) > maxReason || !strings.HasSuffix(got, "…") || !strings.HasPrefix(long, strings.TrimSuffix(got, "…")) {
		t.Errorf("bound: %d bytes, %q…", len(got), got[len(got)-8:])
	}
	if bound("short") != "short" {
		t.Error("a short reason is cut")
	}
}

// scrape is one scrape of c, as Prometheus makes it: /metrics through promhttp, in the text
// format. It returns the body.
func scrape(t testing.TB, c prometheus.Collector) string {
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("scrape: %d %s", rec.Code, rec.Body)
	}
	return rec.Body.String()
}

// BenchmarkScrape is one scrape of serve's /metrics at 150,000 pods (model/scaletest: 1,500
// Deployments in 15 namespaces, on its nodes), as Prometheus pays it: the
// model read under its lock, the registry's gathering and the text encoding, written to a
// connection (a writer that counts the bytes, as a socket keeps none of them). The first scrape,
// which builds every series, is paid once before the loop; a scrape after the model changed
// rebuilds what changed (BenchmarkScrapeChanged).
func BenchmarkScrape(b *testing.B) {
	benchmarkScrape(b, false)
}

// BenchmarkScrapeChanged is a scrape after a batch of 50 pod updates, each of which changes its
// pod's verdict (scaletest.Churn, the model's batch benchmark's churn): the verdicts, doomed pods
// and reasons of their Deployments and their namespace's counts are built anew. The batch itself
// is not timed (model's BenchmarkBatch is its cost).
func BenchmarkScrapeChanged(b *testing.B) {
	benchmarkScrape(b, true)
}

func benchmarkScrape(b *testing.B, change bool) {
	m := model.New(model.DefaultConfig())
	scaletest.Load(m, 150_000)
	c := New(m, &sync.Mutex{}, func() time.Time { return scaletest.T0 }, ready)
	h := promhttp.HandlerFor(Join(prometheus.NewRegistry(), c), promhttp.HandlerOpts{}) // as serve's
	req := httptest.NewRequest("GET", "/metrics", nil)
	w := &countingWriter{header: http.Header{}}
	h.ServeHTTP(w, req)
	batches := scaletest.Churn(400, 50) // two passes over the churned namespace
	next := 0
	for b.Loop() {
		if change {
			b.StopTimer()
			m.Apply(&batches[next%len(batches)], scaletest.T0)
			next++
			b.StartTimer()
		}
		w.n = 0
		h.ServeHTTP(w, req)
	}
	b.ReportMetric(float64(len(c.kept)), "series")
	b.ReportMetric(float64(w.n), "bytes/scrape")
}

// countingWriter is an http.ResponseWriter that keeps only the count of bytes written.
type countingWriter struct {
	header http.Header
	n      int
}

func (w *countingWriter) Header() http.Header { return w.header }
func (w *countingWriter) WriteHeader(int)     {}
func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += len(p)
	return len(p), nil
}
