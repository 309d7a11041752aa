package e2e

import (
	"encoding/json"
	"testing"
	"time"
)

// snapshot is `doomwatch --once -o json` as issue 3 documents it. Decoding is strict about what we
// read and lenient about what we do not: fields may be added, never renamed.
type snapshot struct {
	Context     string `json:"context"`
	GeneratedAt string `json:"generatedAt"`
	Summary     struct {
		Pods, Healthy, Progressing, Transient, Doomed, Completed int
	} `json:"summary"`
	Pods     []snapPod     `json:"pods"`
	Nodes    []snapNode    `json:"nodes"`
	Rollouts []snapRollout `json:"rollouts"`
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
	Name             string `json:"name"`
	Ready            bool   `json:"ready"`
	Cordoned         bool   `json:"cordoned"`
	Pods             int    `json:"pods"`
	FailingPods      int    `json:"failingPods"`
	StartFailures128 int    `json:"startFailures128"`
	Workloads        int    `json:"workloads"`
	Suspect          bool   `json:"suspect"`
	Why              string `json:"why"`
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

func (s snapshot) node(name string) (snapNode, bool) {
	for _, n := range s.Nodes {
		if n.Name == name {
			return n, true
		}
	}
	return snapNode{}, false
}
