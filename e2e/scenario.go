package e2e

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"math"
	"path"
	"slices"
	"sort"
	"strings"
	"text/template"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// A Scenario is one file of e2e/scenarios: a rollout on kwok nodes under the real controllers, the
// node behaviours that disturb it, what a careful operator expects of it, and the public thread
// it reproduces. RunScenario plays it with doomwatch's verdict stream, `doomwatch wait` and
// `kubectl rollout status` watching, and scores them against the expectation.
type Scenario struct {
	// Name is the file's name without .yaml; the namespace is sc-<Name>, each node <Name>-<node>.
	Name string `json:"-"`
	// Title says in a line what happens; Thread is the public thread it reproduces (a URL).
	Title  string `json:"title"`
	Thread string `json:"thread"`
	// Quick puts it in `make test`'s subset.
	Quick bool `json:"quick"`
	// Nodes are the scenario's kwok nodes. Its pods are pinned to them (the runner adds a
	// nodeSelector), so that scenarios running at once never share a node.
	Nodes []NodeGroup `json:"nodes"`
	// Setup is applied and rolled out before the scenario starts (the running version).
	Setup []map[string]any `json:"setup"`
	// Rollout is applied at the trigger: a new version of a Setup workload (its rollout) or a new
	// workload. Times are measured from the moment it is applied.
	Rollout []map[string]any `json:"rollout"`
	// Behaviours are the node behaviours, each a Stage template of testdata/kwok.
	Behaviours []Behaviour `json:"behaviours"`
	// Actions happen to the cluster at set times after the trigger.
	Actions []Action `json:"actions"`
	// Timeout is the --timeout given to `doomwatch wait` and kubectl (default 5m).
	Timeout Duration `json:"timeout"`
	// WaitFlags are more flags for `doomwatch wait`, each --flag=value: --stable=60s for a rollout
	// that completes, then fails. The report lists every run's flags.
	WaitFlags []string `json:"waitFlags"`
	Expect    Expect   `json:"expect"`
}

// NodeGroup is one named node, or Count nodes named Prefix01, Prefix02, ...
type NodeGroup struct {
	Name   string            `json:"name"`
	Prefix string            `json:"prefix"`
	Count  int               `json:"count"`
	CPU    string            `json:"cpu"`
	Memory string            `json:"memory"`
	Pods   string            `json:"pods"`
	Labels map[string]string `json:"labels"`
}

// Behaviour puts a Stage template on some of the scenario's nodes for a while.
type Behaviour struct {
	// Stage is the template's file name in testdata/kwok without .yaml: node-start-failure,
	// node-sandbox-failure, node-config-cache-sync or node-eviction.
	Stage string `json:"stage"`
	// Nodes are the scenario's node names it acts on; empty means all of them.
	Nodes []string `json:"nodes"`
	// Rate is the percentage of starts that fail (node-start-failure).
	Rate float64 `json:"rate"`
	// MaxFailures stops a pod failing after that many failed starts; 0 means never.
	MaxFailures int `json:"maxFailures"`
	// Message names the runtime's error in nodeMessages.
	Message string `json:"message"`
	// From and For: it starts From after the trigger and lasts For (0: to the end).
	From Duration `json:"from"`
	For  Duration `json:"for"`
}

// Action is something done to the cluster At a time after the trigger.
type Action struct {
	At Duration `json:"at"`
	// LoseNode removes the kwok label from that node: its lease is no longer renewed, as when a
	// node's kubelet dies, and the node lifecycle controller marks it Unknown, taints it and the
	// taint eviction controller deletes its pods.
	LoseNode string `json:"loseNode"`
}

// Expect is what a careful operator expects.
type Expect struct {
	// Target is the rollout judged, KIND/NAME as kubectl takes it: deployment/web,
	// statefulset/db, daemonset/agent, job/migrate, or an Argo Rollout, rollout/web.
	Target string `json:"target"`
	// Verdict is complete or doomed. A complete scenario is transient: it must never be called
	// doomed, at any moment.
	Verdict string `json:"verdict"`
	// Within is how soon after the first doomed pod a doom must be called (default 30s).
	Within Duration `json:"within"`
	// DoomedWhen says when a pod is doomed as the API shows it: a container waiting reason
	// (CrashLoopBackOff, ErrImagePull, CreateContainerConfigError, ...), Failed (the pod's
	// phase) or JobFailed (the Job's Failed condition). The first pod of the namespace to show
	// one is the first doomed pod.
	DoomedWhen []string `json:"doomedWhen"`
	// Suspects are the nodes a careful operator would name as suspect; empty means none.
	Suspects []string `json:"suspects"`
	// CrashLoop counts the target's and its pods' verdicts going from doomed back to
	// progressing, healthy or complete while the loop goes on.
	CrashLoop bool `json:"crashLoop"`
}

// Duration is a time.Duration written as "30s" in a scenario.
type Duration struct{ time.Duration }

// UnmarshalJSON reads a Go duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a duration is a string such as \"30s\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

//go:embed scenarios/*.yaml
var scenarioFiles embed.FS

// LoadScenarios reads every scenario of e2e/scenarios, by name.
func LoadScenarios() ([]*Scenario, error) {
	entries, err := scenarioFiles.ReadDir("scenarios")
	if err != nil {
		return nil, err
	}
	var out []*Scenario
	for _, e := range entries {
		b, err := scenarioFiles.ReadFile("scenarios/" + e.Name())
		if err != nil {
			return nil, err
		}
		s, err := ParseScenario(strings.TrimSuffix(e.Name(), ".yaml"), b)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// ParseScenario reads one scenario and checks it.
func ParseScenario(name string, b []byte) (*Scenario, error) {
	s := &Scenario{Name: name}
	if err := yaml.UnmarshalStrict(b, s); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", name, err)
	}
	if s.Timeout.Duration == 0 {
		s.Timeout.Duration = 5 * time.Minute
	}
	if s.Expect.Within.Duration == 0 {
		s.Expect.Within.Duration = 30 * time.Second
	}
	if err := s.check(); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", name, err)
	}
	return s, nil
}

func (s *Scenario) check() error {
	switch {
	case s.Title == "" || !strings.HasPrefix(s.Thread, "https://"):
		return fmt.Errorf("needs a title and the thread it reproduces (a URL)")
	case len(s.Nodes) == 0 || len(s.Rollout) == 0:
		return fmt.Errorf("needs nodes and a rollout")
	case s.Expect.Verdict != "complete" && s.Expect.Verdict != "doomed":
		return fmt.Errorf("expect.verdict is complete or doomed, not %q", s.Expect.Verdict)
	case s.Expect.Verdict == "doomed" && len(s.Expect.DoomedWhen) == 0:
		return fmt.Errorf("a doomed scenario says when its first pod is doomed (expect.doomedWhen)")
	}
	if _, _, err := s.target(); err != nil {
		return err
	}
	for _, f := range s.WaitFlags {
		name, _, _ := strings.Cut(f, "=")
		switch {
		case !strings.HasPrefix(f, "--"):
			return fmt.Errorf("waitFlags: %q is not --flag=value", f)
		case slices.Contains([]string{"--timeout", "--namespace", "--kubeconfig", "--output"}, name):
			return fmt.Errorf("waitFlags: the runner sets %s (--timeout is the scenario's timeout)", name)
		}
	}
	nodes := s.nodeNames()
	known := func(n string) bool { return slices.Contains(nodes, n) }
	for _, b := range s.Behaviours {
		if _, err := kwokFiles.ReadFile("testdata/kwok/" + b.Stage + ".yaml"); err != nil || !strings.HasPrefix(b.Stage, "node-") {
			return fmt.Errorf("behaviour %q: no node Stage template testdata/kwok/%s.yaml", b.Stage, b.Stage)
		}
		if b.Message != "" && nodeMessages[b.Message] == "" {
			return fmt.Errorf("behaviour %s: unknown message %q (see e2e/messages.go)", b.Stage, b.Message)
		}
		for _, n := range b.Nodes {
			if !known(n) {
				return fmt.Errorf("behaviour %s: unknown node %q", b.Stage, n)
			}
		}
	}
	for _, a := range s.Actions {
		if a.LoseNode == "" || !known(a.LoseNode) {
			return fmt.Errorf("action at %s: loseNode names none of the scenario's nodes", a.At)
		}
	}
	for _, n := range s.Expect.Suspects {
		if !known(n) {
			return fmt.Errorf("expect.suspects: unknown node %q", n)
		}
	}
	return nil
}

// target splits Expect.Target into kubectl's resource and the name.
func (s *Scenario) target() (kind, name string, err error) {
	kind, name, ok := strings.Cut(s.Expect.Target, "/")
	if !ok || name == "" {
		return "", "", fmt.Errorf("expect.target is KIND/NAME, not %q", s.Expect.Target)
	}
	switch kind {
	case "deployment", "statefulset", "daemonset", "job", "rollout":
		return kind, name, nil
	}
	return "", "", fmt.Errorf("expect.target's kind is deployment, statefulset, daemonset, job or rollout, not %q", kind)
}

// NeedsArgo says the scenario's target is an Argo Rollout: the runner starts the real Argo
// Rollouts controller for it.
func (s *Scenario) NeedsArgo() bool {
	kind, _, _ := s.target()
	return kind == "rollout"
}

// waitFlags are the flags `doomwatch wait` runs with, beside -n and --kubeconfig.
func (s *Scenario) waitFlags() []string {
	return append([]string{"--timeout=" + s.Timeout.Duration.String()}, s.WaitFlags...)
}

// Namespace is where the scenario's workloads run.
func (s *Scenario) Namespace() string { return "sc-" + s.Name }

// nodeNames lists the scenario's node names as the scenario writes them.
func (s *Scenario) nodeNames() []string {
	var out []string
	for _, g := range s.Nodes {
		if g.Name != "" {
			out = append(out, g.Name)
			continue
		}
		for i := 1; i <= g.Count; i++ {
			out = append(out, fmt.Sprintf("%s%02d", g.Prefix, i))
		}
	}
	return out
}

// NodeName is a scenario node's name in the cluster.
func (s *Scenario) NodeName(n string) string { return s.Name + "-" + n }

// ScenarioLabel pins a scenario's pods to its nodes.
const ScenarioLabel = "doomwatch.test/scenario"

// nodeSpecs are the scenario's nodes as the cluster gets them.
func (s *Scenario) nodeSpecs() []NodeSpec {
	var out []NodeSpec
	add := func(g NodeGroup, name string) {
		labels := map[string]string{ScenarioLabel: s.Name}
		for k, v := range g.Labels {
			labels[k] = v
		}
		out = append(out, NodeSpec{Name: s.NodeName(name), Labels: labels, CPU: g.CPU, Memory: g.Memory, Pods: g.Pods})
	}
	for _, g := range s.Nodes {
		if g.Name != "" {
			add(g, g.Name)
			continue
		}
		for i := 1; i <= g.Count; i++ {
			add(g, fmt.Sprintf("%s%02d", g.Prefix, i))
		}
	}
	return out
}

// size is how much of the cluster the scenario takes at once, to run scenarios side by side
// without overloading two cores: its pods (the largest replica count of its workloads, counted
// twice for the surge and the old pods being replaced) and its nodes.
func (s *Scenario) size() int {
	n := len(s.nodeNames())
	for _, m := range append(slices.Clone(s.Setup), s.Rollout...) {
		if r, ok, _ := unstructured.NestedInt64(m, "spec", "replicas"); ok {
			n += 2 * int(r)
		} else if p, ok, _ := unstructured.NestedInt64(m, "spec", "parallelism"); ok {
			n += int(p)
		} else {
			n += 2 * len(s.nodeNames()) // a DaemonSet: a pod per node
		}
	}
	return n
}

// manifests turns manifests into objects in the scenario's namespace, their pods pinned to its
// nodes.
func (s *Scenario) manifests(ms []map[string]any) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, m := range ms {
		b, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(b); err != nil {
			return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
		}
		if _, ok, _ := unstructured.NestedMap(u.Object, "spec", "template", "spec"); ok {
			sel, _, _ := unstructured.NestedStringMap(u.Object, "spec", "template", "spec", "nodeSelector")
			if sel == nil {
				sel = map[string]string{}
			}
			sel[ScenarioLabel] = s.Name
			if err := unstructured.SetNestedStringMap(u.Object, sel, "spec", "template", "spec", "nodeSelector"); err != nil {
				return nil, err
			}
		}
		out = append(out, u)
	}
	return out, nil
}

// stageObjects renders behaviour i's Stages for the scenario: the template's fields filled in,
// each Stage named after the scenario and scoped to its namespace and the behaviour's nodes. The
// ones marked doomwatch.test/lifetime: scenario outlive the behaviour (until the scenario ends).
func (s *Scenario) stageObjects(i int, end time.Time) (window, lasting []*unstructured.Unstructured, err error) {
	b := s.Behaviours[i]
	src, err := kwokFiles.ReadFile("testdata/kwok/" + b.Stage + ".yaml")
	if err != nil {
		return nil, nil, err
	}
	t, err := template.New(b.Stage).Delims("<%", "%>").Funcs(template.FuncMap{"quote": jsonQuote}).Parse(string(src))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", b.Stage, err)
	}
	maxFailures := b.MaxFailures
	if maxFailures <= 0 {
		maxFailures = 1000
	}
	var buf bytes.Buffer
	err = t.Execute(&buf, map[string]any{
		"Weight":      stageWeight(b.Rate),
		"MaxFailures": maxFailures,
		"Message":     nodeMessages[b.Message],
		"Until":       end.UTC().Format(time.RFC3339Nano),
		"UntilJitter": end.Add(5 * time.Second).UTC().Format(time.RFC3339Nano),
	})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", b.Stage, err)
	}
	objs, err := parseObjects(b.Stage, buf.Bytes())
	if err != nil {
		return nil, nil, err
	}
	nodes := b.Nodes
	if len(nodes) == 0 {
		nodes = s.nodeNames()
	}
	var names []any
	for _, n := range nodes {
		names = append(names, s.NodeName(n))
	}
	for _, o := range objs {
		o.SetName(fmt.Sprintf("%s-%d-%s", s.Name, i, o.GetName()))
		exprs, _, _ := unstructured.NestedSlice(o.Object, "spec", "selector", "matchExpressions")
		exprs = append(exprs,
			map[string]any{"key": ".metadata.namespace", "operator": "In", "values": []any{s.Namespace()}},
			map[string]any{"key": ".spec.nodeName", "operator": "In", "values": names},
		)
		if err := unstructured.SetNestedSlice(o.Object, exprs, "spec", "selector", "matchExpressions"); err != nil {
			return nil, nil, err
		}
		if o.GetAnnotations()["doomwatch.test/lifetime"] == "scenario" {
			lasting = append(lasting, o)
		} else {
			window = append(window, o)
		}
	}
	return window, lasting, nil
}

// stageWeight is the weight that makes rate percent of the starts fail against the "ok" outcome's
// 100 (pod-ready.yaml): w/(w+100) = rate/100. At 100% the failure outbids it a million to 100.
func stageWeight(rate float64) int64 {
	if rate >= 100 {
		return 1000000
	}
	if rate <= 0 {
		return 0
	}
	return int64(math.Round(100 * rate / (100 - rate)))
}

// jsonQuote quotes s as a JSON string, which is also a YAML and a Go template string literal.
func jsonQuote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// SelectScenarios picks scenarios by a comma-separated list of names, "all", or "quick".
func SelectScenarios(all []*Scenario, which string) ([]*Scenario, error) {
	if which == "all" {
		return all, nil
	}
	var out []*Scenario
	for _, w := range strings.Split(which, ",") {
		w = strings.TrimSpace(w)
		found := false
		for _, s := range all {
			if (w == "quick" && s.Quick) || s.Name == w || matchGlob(w, s.Name) {
				if !slices.Contains(out, s) {
					out = append(out, s)
				}
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("no scenario %q", w)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func matchGlob(pattern, name string) bool {
	ok, _ := path.Match(pattern, name)
	return ok && strings.ContainsAny(pattern, "*?[")
}

// NodeCount is how many nodes the scenario has.
func (s *Scenario) NodeCount() int { return len(s.nodeNames()) }
