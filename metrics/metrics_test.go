package metrics

import (
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
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
# HELP doomwatch_synced 1 once the informers have synced and no watch is broken, else 0.
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

// BenchmarkScrape is one scrape of a cluster of 150,000 pods (model/scaletest: 1,500 Deployments
// in 15 namespaces, on its nodes), through promhttp as Prometheus scrapes it: the collector's read
// of the model under its lock, and the encoding. It reports the series a scrape carries and its
// size; the targets are 5 ms and 1 MiB per scrape (docs/serve.md).
func BenchmarkScrape(b *testing.B) {
	m := model.New(model.DefaultConfig())
	scaletest.Load(m, 150_000)
	c := New(m, &sync.Mutex{}, func() time.Time { return scaletest.T0 }, ready)
	var body string
	for b.Loop() {
		body = scrape(b, c)
	}
	series := 0
	for _, l := range strings.Split(body, "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			series++
		}
	}
	b.ReportMetric(float64(series), "series")
	b.ReportMetric(float64(len(body)), "bytes/scrape")
}
