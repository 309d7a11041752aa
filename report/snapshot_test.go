package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"doomwatch/contract"
	"doomwatch/model"
	"doomwatch/model/podtest"
	"doomwatch/podrec"
)

func snapshotModel() *model.Model {
	m := model.New(model.DefaultConfig())
	m.Apply(&contract.Batch{
		Nodes:     []*corev1.Node{podtest.Node("node-3", true, false), podtest.Node("node-1", true, false)},
		Workloads: contract.Workloads(podtest.Deployment("shop", "web", 3, "1"), podtest.ReplicaSet("shop", "web-7d9f", "web", "1")),
	}, podtest.T0)
	web := func(name string, opts ...podtest.PodOpt) *corev1.Pod {
		return podtest.Pod("shop", name, append([]podtest.PodOpt{podtest.OnNode("node-3"), podtest.OwnedBy("ReplicaSet", "web-7d9f")}, opts...)...)
	}
	apply(m, podtest.T0,
		web("web-b", podtest.RecoveredAfter128(podtest.T0.Add(-time.Minute), 1)),
		web("web-a", podtest.StartFailed128(podtest.T0.Add(-2*time.Minute), 2)),
		podtest.Pod("shop", "sts-0", podtest.OnNode("node-3"), podtest.OwnedBy("StatefulSet", "sts"), podtest.StartFailed128(podtest.T0.Add(-30*time.Second), 1)),
		podtest.Pod("infra", "evil", podtest.OnNode("node-1"), podtest.App(func(cs *corev1.ContainerStatus) {
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}
			// An exit message is what the container wrote to its terminationMessagePath: the
			// workload's own text, here a hostile one (not a runtime message).
			cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 2, Reason: "Error",
				Message: "\x1b]0;pwned\x07\x1b[2J\x1b[Hgone\tbad"}
		})))
	return m
}

func TestSnapshotJSONSchema(t *testing.T) {
	s := NewSnapshot(snapshotModel(), "demo", podtest.T0)
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
	snap := NewSnapshot(snapshotModel(), "demo", podtest.T0)
	if err := snap.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"NAMESPACE   NAME    READY   STATUS",
		"VERDICT     REASON",
		"\nNODES\n",
		"START-FAILURES",
		"3 of 3 pods that started here in the last 15m failed with exit 128; none started elsewhere (thin evidence: too few to compare)",
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
	m.Apply(&contract.Batch{Health: &contract.Health{Synced: true}}, podtest.T0)
	h := decode(t, NewSnapshot(m, "demo", podtest.T0))
	if h["synced"] != true || h["watchError"] != "" {
		t.Errorf("healthy: health = %v", h)
	}
	if f, ok := h["forbidden"].([]any); !ok || len(f) != 0 {
		t.Errorf("healthy: forbidden = %#v, want []", h["forbidden"])
	}
	if out := table(t, NewSnapshot(m, "demo", podtest.T0)); strings.Contains(out, "HEALTH") {
		t.Errorf("healthy table shows a HEALTH section:\n%s", out)
	}

	m.Apply(&contract.Batch{Health: &contract.Health{Synced: true, Forbidden: []contract.Kind{contract.KindNode, contract.KindDeployment, contract.KindNode},
		WatchError: "pods: connection refused\x1b[2J"}}, podtest.T0)
	s := NewSnapshot(m, "demo", podtest.T0)
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
	m.Apply(&contract.Batch{Nodes: []*corev1.Node{podtest.WithUID(podtest.Node("crio-1", true, false), "c1"), podtest.WithUID(podtest.Node("containerd-1", true, false), "d1")}}, podtest.T0)
	apply(m, podtest.T0,
		podtest.Pod("shop", "a", podtest.OnNode("crio-1"), podtest.CreateError(podtest.CrioRuntimeMsg)),
		podtest.Pod("shop", "b", podtest.OnNode("crio-1"), podtest.CreateError(podtest.CrioRuntimeMsg)),
		podtest.Pod("shop", "c", podtest.OnNode("containerd-1"), podtest.StartFailed128(podtest.T0.Add(-time.Minute), 1)))
	var buf bytes.Buffer
	snap := NewSnapshot(m, "demo", podtest.T0)
	if err := writeJSON(&snap, &buf); err != nil {
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

// apply applies the pods' records, as kube's transform makes them.
func apply(m *model.Model, now time.Time, pods ...*corev1.Pod) {
	recs := make([]*podrec.Record, len(pods))
	for i, p := range pods {
		recs[i] = podrec.RecordOf(p)
	}
	m.Apply(&contract.Batch{Pods: recs}, now)
}
