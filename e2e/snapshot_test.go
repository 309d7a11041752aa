package e2e

import (
	"encoding/json"
	"testing"
	"time"
)

// snapshot is `doomwatch --once -o json` as the README documents it. Fields may be added, never
// renamed: json.Unmarshal would zero-fill a renamed field silently, so onceJSON also checks that
// every documented key is present (checkSchema).
type snapshot struct {
	Context     string `json:"context"`
	GeneratedAt string `json:"generatedAt"`
	Summary     struct {
		Pods, Healthy, Progressing, Transient, Doomed, Completed int
	} `json:"summary"`
	Pods     []snapPod     `json:"pods"`
	Nodes    []snapNode    `json:"nodes"`
	Rollouts []snapRollout `json:"rollouts"`
	Health   struct {
		Synced    bool     `json:"synced"`
		Forbidden []string `json:"forbidden"`
	} `json:"health"`
}

type snapPod struct {
	Namespace    string          `json:"namespace"`
	Name         string          `json:"name"`
	UID          string          `json:"uid"`
	Node         string          `json:"node"`
	Owner        string          `json:"owner"`
	Phase        string          `json:"phase"`
	Status       string          `json:"status"`
	Ready        string          `json:"ready"`
	Restarts     string          `json:"restarts"`
	RestartCount int             `json:"restartCount"`
	Verdict      string          `json:"verdict"`
	Reason       string          `json:"reason"`
	Containers   []snapContainer `json:"containers"`
	Events       []snapEvent     `json:"events"`
}

type snapEvent struct {
	Reason    string `json:"reason"`
	Message   string `json:"message"`
	Count     int    `json:"count"`
	FirstSeen string `json:"firstSeen"`
	LastSeen  string `json:"lastSeen"`
	Source    string `json:"source"`
}

type snapContainer struct {
	Name         string     `json:"name"`
	Init         bool       `json:"init"`
	Ready        bool       `json:"ready"`
	RestartCount int        `json:"restartCount"`
	State        snapState  `json:"state"`
	LastState    *snapState `json:"lastState"`
	Verdict      string     `json:"verdict"`
	Reason       string     `json:"reason"`
}

type snapState struct {
	Kind     string `json:"kind"`
	Reason   string `json:"reason"`
	Message  string `json:"message"`
	ExitCode *int   `json:"exitCode"`
}

type snapNode struct {
	Name             string      `json:"name"`
	Ready            bool        `json:"ready"`
	Cordoned         bool        `json:"cordoned"`
	Pods             int         `json:"pods"`
	FailingPods      int         `json:"failingPods"`
	StartFailures128 int         `json:"startFailures128"`
	Workloads        int         `json:"workloads"`
	Suspect          bool        `json:"suspect"`
	Why              string      `json:"why"`
	Events           []snapEvent `json:"events"`
}

type snapRollout struct {
	Namespace string `json:"namespace"`
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Verdict   string `json:"verdict"`
	Desired   int    `json:"desired"`
	Updated   int    `json:"updated"`
	Ready     int    `json:"ready"`
	Available int    `json:"available"`
	Reason    string `json:"reason"`
}

// onceJSON runs `doomwatch --once -o json` with args and decodes its snapshot.
func onceJSON(t *testing.T, args ...string) snapshot {
	t.Helper()
	r := runDoomwatch(t, time.Minute, nil, append([]string{"--once", "-o", "json", "--request-timeout=20s"}, args...)...)
	if r.code != 0 {
		t.Fatalf("doomwatch --once: %s", r)
	}
	var s snapshot
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		t.Fatalf("decoding --once -o json: %v\n%s", err, r)
	}
	checkSchema(t, r.stdout)
	if _, err := time.Parse(time.RFC3339, s.GeneratedAt); err != nil {
		t.Errorf("generatedAt %q is not RFC3339: %v", s.GeneratedAt, err)
	}
	return s
}

func (s snapshot) pod(name string) (snapPod, bool) {
	for _, p := range s.Pods {
		if p.Name == name {
			return p, true
		}
	}
	return snapPod{}, false
}

// podIn finds a pod by namespace and name, for snapshots of all namespaces.
func (s snapshot) podIn(ns, name string) (snapPod, bool) {
	for _, p := range s.Pods {
		if p.Namespace == ns && p.Name == name {
			return p, true
		}
	}
	return snapPod{}, false
}

func (s snapshot) node(name string) (snapNode, bool) {
	for _, n := range s.Nodes {
		if n.Name == name {
			return n, true
		}
	}
	return snapNode{}, false
}

// The documented keys of the --once -o json schema (README), per object.
var (
	schemaTop       = []string{"context", "generatedAt", "summary", "pods", "nodes", "rollouts", "suspectsShare"}
	schemaSummary   = []string{"pods", "healthy", "progressing", "transient", "doomed", "completed"}
	schemaPod       = []string{"namespace", "name", "uid", "node", "owner", "phase", "status", "ready", "restarts", "restartCount", "verdict", "reason", "containers"}
	schemaContainer = []string{"name", "init", "ready", "restartCount", "state", "lastState", "verdict", "reason"}
	schemaState     = []string{"kind", "reason", "message", "exitCode"}
	schemaNode      = []string{"name", "ready", "cordoned", "pods", "failingPods", "startFailures128", "workloads", "suspect", "why",
		"conditions", "nodeInfo", "zone", "region", "instanceType", "pool"}
	schemaNodeInfo  = []string{"kubeletVersion", "containerRuntimeVersion", "kernelVersion", "osImage"}
	schemaCondition = []string{"status", "reason"}
	schemaRollout   = []string{"namespace", "kind", "name", "verdict", "desired", "updated", "ready", "available", "reason"}
	// Every pod and node has "events", each with these keys.
	schemaEvent = []string{"reason", "message", "count", "firstSeen", "lastSeen", "source"}
)

// checkSchema fails when any documented key is missing from any object of the snapshot.
func checkSchema(t *testing.T, out string) {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("decoding --once -o json: %v", err)
	}
	has := func(where string, obj any, keys []string) {
		t.Helper()
		m, ok := obj.(map[string]any)
		if !ok {
			t.Errorf("%s is %T, not an object", where, obj)
			return
		}
		for _, k := range keys {
			if _, ok := m[k]; !ok {
				t.Errorf("%s has no %q: the documented schema says it must", where, k)
			}
		}
	}
	list := func(key string) []any {
		l, _ := doc[key].([]any)
		return l
	}
	has("snapshot", doc, schemaTop)
	has("summary", doc["summary"], schemaSummary)
	for _, p := range list("pods") {
		has("pod", p, schemaPod)
		cs, _ := p.(map[string]any)["containers"].([]any)
		for _, c := range cs {
			has("container", c, schemaContainer)
			cm := c.(map[string]any)
			// Both are null while the kubelet has reported no state for the container.
			if st := cm["state"]; st != nil {
				has("container state", st, schemaState)
			}
			if ls := cm["lastState"]; ls != nil {
				has("container lastState", ls, schemaState)
			}
		}
	}
	for _, n := range list("nodes") {
		has("node", n, schemaNode)
		nm, _ := n.(map[string]any)
		has("node nodeInfo", nm["nodeInfo"], schemaNodeInfo)
		// Always the five condition types, whether or not the node reports them.
		for _, typ := range []string{"Ready", "MemoryPressure", "DiskPressure", "PIDPressure", "NetworkUnavailable"} {
			cs, _ := nm["conditions"].(map[string]any)
			has("node condition "+typ, cs[typ], schemaCondition)
		}
	}
	if _, ok := doc["suspectsShare"].([]any); !ok {
		t.Errorf("suspectsShare is %T, not a list", doc["suspectsShare"])
	}
	for _, r := range list("rollouts") {
		has("rollout", r, schemaRollout)
	}
	for _, kind := range []string{"pods", "nodes"} {
		for _, o := range list(kind) {
			om, _ := o.(map[string]any)
			evs, ok := om["events"].([]any)
			if !ok {
				t.Errorf("%s %v: events is %T, not a list", kind, om["name"], om["events"])
				continue
			}
			for _, e := range evs {
				has(kind+" event", e, schemaEvent)
			}
		}
	}
}
