package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"doomwatch/model"
)

func snapshotModel() *model.Model {
	m := model.New(model.DefaultConfig())
	m.Apply(&model.Batch{
		Nodes:       []*corev1.Node{node("node-3", true, false), node("node-1", true, false)},
		Deployments: []*appsv1.Deployment{deployment("shop", "web", 3, "1")},
		ReplicaSets: []*appsv1.ReplicaSet{replicaSet("shop", "web-7d9f", "web", "1")},
	}, t0)
	web := func(name string, opts ...podOpt) *corev1.Pod {
		return pod("shop", name, append([]podOpt{onNode("node-3"), ownedBy("ReplicaSet", "web-7d9f")}, opts...)...)
	}
	apply(m, t0,
		web("web-b", recoveredAfter128(t0.Add(-time.Minute), 1)),
		web("web-a", startFailed128(t0.Add(-2*time.Minute), 2)),
		pod("shop", "sts-0", onNode("node-3"), ownedBy("StatefulSet", "sts"), startFailed128(t0.Add(-30*time.Second), 1)),
		pod("infra", "evil", onNode("node-1"), app(func(cs *corev1.ContainerStatus) {
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}
			// An exit message is what the container wrote to its terminationMessagePath: the
			// workload's own text, here a hostile one (not a runtime message).
			cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 2, Reason: "Error",
				Message: "\x1b]0;pwned\x07\x1b[2J\x1b[Hgone\tbad"}
		})))
	return m
}

func TestSnapshotJSONSchema(t *testing.T) {
	s := NewSnapshot(snapshotModel(), "demo", t0)
	var buf bytes.Buffer
	if err := writeJSON(&s, &buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if strings.ContainsAny(out, "\x1b\x07") || strings.Contains(out, `\u001b`) || strings.Contains(out, "pwned") {
		t.Fatalf("escape sequences in JSON: %s", out)
	}
	var doc struct {
		Context     string         `json:"context"`
		GeneratedAt string         `json:"generatedAt"`
		Summary     map[string]int `json:"summary"`
		Pods        []map[string]any
		Nodes       []map[string]any
		Rollouts    []map[string]any
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Context != "demo" || doc.GeneratedAt != "2025-03-01T12:00:00Z" {
		t.Errorf("context/generatedAt = %q/%q", doc.Context, doc.GeneratedAt)
	}
	if doc.Summary["pods"] != 4 || doc.Summary["healthy"] != 1 || doc.Summary["transient"] != 2 || doc.Summary["doomed"] != 1 {
		t.Errorf("summary = %v", doc.Summary)
	}
	var names []string
	for _, p := range doc.Pods {
		names = append(names, p["namespace"].(string)+"/"+p["name"].(string))
		for _, k := range []string{"uid", "node", "owner", "phase", "status", "ready", "restarts", "restartCount", "verdict", "reason", "containers"} {
			if _, ok := p[k]; !ok {
				t.Errorf("pod %v lacks %q", names[len(names)-1], k)
			}
		}
	}
	if got := strings.Join(names, " "); got != "infra/evil shop/sts-0 shop/web-a shop/web-b" {
		t.Errorf("pod order = %s", got)
	}
	webA := doc.Pods[2]
	if webA["owner"] != "Deployment/web" || webA["verdict"] != "transient" || webA["restartCount"] != float64(2) || webA["ready"] != "0/1" {
		t.Errorf("web-a = %v", webA)
	}
	c := webA["containers"].([]any)[0].(map[string]any)
	state, last := c["state"].(map[string]any), c["lastState"].(map[string]any)
	if state["kind"] != "waiting" || state["exitCode"] != nil || last["kind"] != "terminated" || last["exitCode"] != float64(128) {
		t.Errorf("container states = %v / %v", state, last)
	}
	if c["lastState"] == nil || doc.Pods[3]["containers"].([]any)[0].(map[string]any)["verdict"] != "healthy" {
		t.Errorf("web-b container = %v", doc.Pods[3]["containers"])
	}
	if len(doc.Nodes) != 2 || doc.Nodes[0]["name"] != "node-1" || doc.Nodes[1]["suspect"] != true ||
		doc.Nodes[1]["startFailures128"] != float64(3) || doc.Nodes[1]["startFailures"] != float64(3) ||
		doc.Nodes[1]["workloads"] != float64(2) || doc.Nodes[1]["uid"] != "" {
		t.Errorf("nodes = %v", doc.Nodes)
	}
	if len(doc.Rollouts) != 1 || doc.Rollouts[0]["kind"] != "Deployment" || doc.Rollouts[0]["verdict"] != "complete" {
		t.Errorf("rollouts = %v", doc.Rollouts)
	}
}

func TestSnapshotTable(t *testing.T) {
	var buf bytes.Buffer
	if err := writeTable(NewSnapshot(snapshotModel(), "demo", t0), &buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"NAMESPACE   NAME    READY   STATUS",
		"VERDICT     REASON",
		"\nNODES\n",
		"START-FAILURES",
		"3 pods of 2 workloads failed to start with exit 128 here in the last 15m; 0 elsewhere",
		"\nROLLOUTS\n",
		"Deployment/web",
		`deployment "web" successfully rolled out`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.ContainsAny(out, "\x1b\x07\t") {
		t.Errorf("control characters in table:\n%q", out)
	}
}

// --once output carries the connection's health, so a script can tell "no nodes" from "nodes
// forbidden by RBAC".
func TestSnapshotHealth(t *testing.T) {
	decode := func(t *testing.T, s Snapshot) map[string]any {
		t.Helper()
		var buf bytes.Buffer
		if err := writeJSON(&s, &buf); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Health map[string]any `json:"health"`
		}
		if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		return doc.Health
	}
	table := func(t *testing.T, s Snapshot) string {
		t.Helper()
		var buf bytes.Buffer
		if err := s.WriteTable(&buf); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}

	m := snapshotModel()
	m.Apply(&model.Batch{Health: &model.Health{Synced: true}}, t0)
	h := decode(t, NewSnapshot(m, "demo", t0))
	if h["synced"] != true || h["watchError"] != "" {
		t.Errorf("healthy: health = %v", h)
	}
	if f, ok := h["forbidden"].([]any); !ok || len(f) != 0 {
		t.Errorf("healthy: forbidden = %#v, want []", h["forbidden"])
	}
	if out := table(t, NewSnapshot(m, "demo", t0)); strings.Contains(out, "HEALTH") {
		t.Errorf("healthy table shows a HEALTH section:\n%s", out)
	}

	m.Apply(&model.Batch{Health: &model.Health{Synced: true, Forbidden: []model.Kind{model.KindNode, model.KindDeployment, model.KindNode},
		WatchError: "pods: connection refused\x1b[2J"}}, t0)
	s := NewSnapshot(m, "demo", t0)
	h = decode(t, s)
	if f, _ := h["forbidden"].([]any); len(f) != 2 || f[0] != "Deployment" || f[1] != "Node" {
		t.Errorf("forbidden = %v, want [Deployment Node] (sorted, once each)", h["forbidden"])
	}
	if h["watchError"] != "pods: connection refused" {
		t.Errorf("watchError = %q, want it sanitised", h["watchError"])
	}
	out := table(t, s)
	for _, want := range []string{"\nHEALTH\n", "forbidden by RBAC (not shown): Deployment, Node", "reconnecting: pods: connection refused"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

// CRI-O's create errors count in startFailures, beside startFailures128, which keeps its meaning
// unchanged; uid tells a node registered again under its old name from the old one.
func TestSnapshotStartFailuresByRuntime(t *testing.T) {
	m := model.New(model.DefaultConfig())
	m.Apply(&model.Batch{Nodes: []*corev1.Node{withUID(node("crio-1", true, false), "c1"), withUID(node("containerd-1", true, false), "d1")}}, t0)
	apply(m, t0,
		pod("shop", "a", onNode("crio-1"), createError(crioRuntimeMsg)),
		pod("shop", "b", onNode("crio-1"), createError(crioRuntimeMsg)),
		pod("shop", "c", onNode("containerd-1"), startFailed128(t0.Add(-time.Minute), 1)))
	var buf bytes.Buffer
	if err := writeJSON(ptr(NewSnapshot(m, "demo", t0)), &buf); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Nodes []struct {
			Name             string `json:"name"`
			UID              string `json:"uid"`
			StartFailures    *int   `json:"startFailures"`
			StartFailures128 *int   `json:"startFailures128"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string][2]int{}
	for _, n := range doc.Nodes {
		if n.StartFailures == nil || n.StartFailures128 == nil {
			t.Fatalf("node %s lacks startFailures or startFailures128: %s", n.Name, buf.String())
		}
		got[n.Name+"/"+n.UID] = [2]int{*n.StartFailures, *n.StartFailures128}
	}
	want := map[string][2]int{"crio-1/c1": {2, 0}, "containerd-1/d1": {1, 1}}
	if len(got) != len(want) || got["crio-1/c1"] != want["crio-1/c1"] || got["containerd-1/d1"] != want["containerd-1/d1"] {
		t.Errorf("startFailures, startFailures128 per node = %v, want %v", got, want)
	}
}

func ptr[T any](v T) *T { return &v }

func writeTable(s Snapshot, w *bytes.Buffer) error { return s.WriteTable(w) }
