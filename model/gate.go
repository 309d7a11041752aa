package model

import (
	"errors"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"doomwatch/classify"
	"doomwatch/contract"
	"doomwatch/sanitize"
)

// Target is a workload a deploy gate (`doomwatch wait`) waits for.
type Target struct {
	Kind      contract.Kind // KindDeployment, KindStatefulSet, KindDaemonSet, or KindPod for a bare pod
	Namespace string
	Name      string
	// Since is when the wait began, on the cluster's clock: a Job that finished before it is
	// history, not this wait's (a CronJob's earlier runs, a custom resource's finished Jobs).
	Since time.Time
}

// workload is the target as Failure.Workload names it: "shop/Deployment/web", or a bare pod's key.
func (t Target) workload() string {
	if t.Kind == contract.KindPod {
		return t.Namespace + "/" + t.Name
	}
	return t.Namespace + "/" + string(t.Kind) + "/" + t.Name
}

// String is the target as kubectl names it: "deployment/web".
func (t Target) String() string { return strings.ToLower(string(t.Kind)) + "/" + sanitize.Text(t.Name) }

// GateStatus is what the model knows of one target now: the rollout's verdict (the dashboard's,
// Rollouts), and what the target's current pods say about it. A deploy gate reads nothing else.
type GateStatus struct {
	Target Target
	// Namespace and Name are the target's, sanitised for printing; Target holds them as asked,
	// to find the workload by.
	Namespace, Name string
	// Found is false while the model knows no such workload.
	Found bool
	// Timeout is the workload's own timeout (contract.TimeoutAnnotation, Krane's), 0 without
	// one; a value Krane would refuse makes the target Unsupported.
	Timeout time.Duration
	// Unsupported is kubectl's answer for a workload that has no rollout status (a StatefulSet or
	// DaemonSet with the OnDelete strategy), or why its annotation cannot be honoured; "" otherwise.
	Unsupported string
	// Rollout is the workload's rollout, as the rollouts view shows it; zero unless Found and
	// supported.
	Rollout Rollout
	// Pods counts the current pods (the new ReplicaSet's, the update revision's, the template
	// generation's) per verdict; Old counts the others, which the rollout replaces.
	Pods Counts
	Old  int
	// Doomed and Transient are the current pods' doomed and transient containers (or the pod, when
	// the pod itself decided), by pod then container.
	Doomed, Transient []GateProblem
	// Pending is what the rollout still waits for, most pods first: the reasons of the current
	// pods that are neither ready nor failing (readiness probes, scheduling, pulls), and the old
	// pods still terminating.
	Pending []GatePending
	// Suspect lists the suspect nodes that the current pods' failures hit (Nodes, Suspect).
	Suspect []Node
}

// GateProblem is one failing container (Container "" when the pod's own status decided). Every
// string is sanitised.
type GateProblem struct {
	Namespace, Pod, Container, Node string
	// Reason is the verdict's one line, "Crashing repeatedly (exit 128): …".
	Reason      string
	ExitCode    int32
	HasExitCode bool
	// Previous reports that the container has a previous instance (its last state is terminated):
	// that instance's log is the one that explains a crash.
	Previous bool
	// LogName is the container's name as the API server knows it, to fetch its log
	// (ContainerState.LogName); "" when the pod itself decided.
	LogName string
}

// Ref is "pod/container", or the pod's name when the pod itself decided.
func (p *GateProblem) Ref() string {
	if p.Container == "" {
		return p.Pod
	}
	return p.Pod + "/" + p.Container
}

// GatePending is one reason a rollout is still waiting, with how many pods share it and one of
// them. The gate's document (report.Gate, docs/wait.md) prints it as it is.
type GatePending struct {
	Reason  string `json:"reason"`
	Pods    int    `json:"pods"`
	Example string `json:"example"` // "pod/container" or "pod"
}

// Resolve returns the workloads of kind in namespace ns ("" for all) whose labels match sel, by
// namespace and name. The transform keeps workloads' labels for this.
func (m *Model) Resolve(kind contract.Kind, ns string, sel labels.Selector) []Target {
	var out []Target
	for _, o := range m.objects[kind] {
		if (ns == "" || o.GetNamespace() == ns) && sel.Matches(labels.Set(o.GetLabels())) {
			out = append(out, Target{Kind: kind, Namespace: o.GetNamespace(), Name: o.GetName()})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// Gate returns each target's status at now, in the targets' order. It reads only the targets'
// pods (watchedPods: after the first look at a controller, an index kept as pods change), so a
// look costs the targets' pods, not the cluster's (BenchmarkGate).
func (m *Model) Gate(targets []Target, now time.Time) []GateStatus {
	out := make([]GateStatus, len(targets))
	// Which controller's pods belong to which target, and which of them are current.
	type member struct {
		target int
		gateCtrl
	}
	ctrls := make(map[ownerKey]member)
	pending := make([]map[string]*GatePending, len(targets))
	failingNodes := make([]map[string]struct{}, len(targets))
	// doomReasons are the current doomed pods' reasons, for kinds judged by the gate (gateRollout).
	doomReasons := make([]map[string]struct{}, len(targets))
	m.Rollouts() // brings the rollouts up to date
	for i, t := range targets {
		st := &out[i]
		st.Target, st.Namespace, st.Name = t, sanitize.Text(t.Namespace), sanitize.Text(t.Name)
		k := nsName{t.Namespace, t.Name}
		if t.Kind == contract.KindPod {
			if p := m.pods[k]; p != nil {
				st.Found = true
				m.gatePod(st, p)
				if failing(p.Verdict.Class) && p.Node != "" {
					failingNodes[i] = map[string]struct{}{p.Node: {}}
				}
			}
			continue
		}
		km := kinds[t.Kind]
		if km == nil || km.gate == nil {
			continue
		}
		for _, c := range km.gate(m, k, st) {
			ctrls[c.ctrl] = member{i, c}
		}
		if o := m.objects[t.Kind][k]; st.Found && o != nil {
			if v, ok := o.GetAnnotations()[contract.TimeoutAnnotation]; ok {
				d, err := classify.TimeoutOverride(v)
				if err != nil && st.Unsupported == "" {
					st.Unsupported = "annotation " + contract.TimeoutAnnotation + ": " + sanitize.Text(err.Error())
				}
				st.Timeout = d
			}
		}
		if st.Found && st.Unsupported == "" && km.rollout != nil {
			st.Rollout = m.rollouts.byKey[rolloutKey{t.Kind, k}]
		}
	}
	var keys []*Pod
	for k := range ctrls {
		for p := range m.watchedPods(k) {
			keys = append(keys, p)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].Key < keys[j].Key })
	for _, p := range keys {
		mb := ctrls[p.ctrl]
		st := &out[mb.target]
		current := mb.current
		if mb.byRevision {
			current = mb.revision == "" || p.rec.Revision() == mb.revision
		}
		if pending[mb.target] == nil {
			pending[mb.target] = make(map[string]*GatePending)
		}
		if !current {
			st.Old++
			if p.rec.Deleting() {
				notePending(pending[mb.target], "old pods still terminating", p.Name)
			}
			continue
		}
		st.Pods.add(p.Verdict.Class, 1)
		switch p.Verdict.Class {
		case classify.Doomed, classify.Transient:
			problems := gateProblems(p)
			if p.Verdict.Class == classify.Doomed {
				st.Doomed = append(st.Doomed, problems...)
				if doomReasons[mb.target] == nil {
					doomReasons[mb.target] = make(map[string]struct{})
				}
				doomReasons[mb.target][p.Verdict.Reason] = struct{}{}
			} else {
				st.Transient = append(st.Transient, problems...)
			}
			if p.Node != "" {
				if failingNodes[mb.target] == nil {
					failingNodes[mb.target] = make(map[string]struct{})
				}
				failingNodes[mb.target][p.Node] = struct{}{}
			}
			if p.Verdict.Class == classify.Transient {
				notePending(pending[mb.target], p.Verdict.Reason, p.Name+containerSuffix(p.Verdict.Container))
			}
		case classify.Progressing:
			notePending(pending[mb.target], p.Verdict.Reason, p.Name+containerSuffix(p.Verdict.Container))
		}
	}
	var nodes []Node
	for i := range out {
		st := &out[i]
		if st.Target.Kind == contract.KindPod {
			pending[i] = nil // gatePod set its Pending
		}
		if km := kinds[st.Target.Kind]; st.Found && km != nil && km.gateRollout != nil {
			pods := classify.NewPods{Total: st.Pods.Pods, Doomed: st.Pods.Doomed, Healthy: st.Pods.Healthy}
			for r := range doomReasons[i] {
				pods.Reasons = append(pods.Reasons, r)
			}
			sort.Strings(pods.Reasons)
			st.Rollout, _ = km.gateRollout(m, st.Target, pods)
		}
		for _, pd := range pending[i] {
			st.Pending = append(st.Pending, *pd)
		}
		sort.Slice(st.Pending, func(a, b int) bool {
			x, y := &st.Pending[a], &st.Pending[b]
			if x.Pods != y.Pods {
				return x.Pods > y.Pods
			}
			return x.Reason < y.Reason
		})
		if len(failingNodes[i]) == 0 {
			continue
		}
		if nodes == nil {
			nodes = m.Nodes(now)
		}
		for _, n := range nodes {
			if _, ok := failingNodes[i][n.Name]; ok && n.Suspect {
				st.Suspect = append(st.Suspect, n)
			}
		}
	}
	return out
}

func containerSuffix(c string) string {
	if c == "" {
		return ""
	}
	return "/" + c
}

func notePending(m map[string]*GatePending, reason, example string) {
	if reason == "" {
		reason = "not ready yet"
	}
	if pd := m[reason]; pd != nil {
		pd.Pods++
		return
	}
	m[reason] = &GatePending{Reason: reason, Pods: 1, Example: example}
}

// gateProblems lists the failing pod's containers of its verdict's class, or the pod itself when
// its own status decided (evicted, unschedulable, phase Failed).
func gateProblems(p *Pod) []GateProblem {
	var out []GateProblem
	for i := range p.Containers {
		c := &p.Containers[i]
		if c.Class != p.Verdict.Class {
			continue
		}
		st, _ := p.State(c.Name, c.Init)
		out = append(out, GateProblem{Namespace: p.Namespace, Pod: p.Name, Container: c.Name, Node: p.Node,
			Reason: c.Reason, ExitCode: c.ExitCode, HasExitCode: c.HasExitCode, Previous: st.HasPrevious(),
			LogName: st.LogName()})
	}
	if len(out) == 0 {
		v := &p.Verdict
		var st ContainerState
		if v.Container != "" {
			st, _ = p.State(v.Container, v.Init)
		}
		out = append(out, GateProblem{Namespace: p.Namespace, Pod: p.Name, Container: v.Container, Node: p.Node,
			Reason: v.Reason, ExitCode: v.ExitCode, HasExitCode: v.HasExitCode, Previous: st.HasPrevious(),
			LogName: st.LogName()})
	}
	return out
}

// NodeStartFailures is how many of a workload's pods failed to start on one node within the
// window, by the ledger: the evidence a deploy gate warns about once the pods have recovered.
type NodeStartFailures struct {
	Node     string `json:"node"`
	Pods     int    `json:"pods"` // distinct pods
	Failures int    `json:"failures"`
	// Exit128 is true when every failure was an exit 128 (containerd, cri-dockerd), false when
	// some were create errors (CRI-O).
	Exit128 bool `json:"exit128"`
}

// StartFailures returns, for each target, the transient start failures of its pods in the window
// at now, per node, most pods first. It reads the whole ledger once: call it for the gate's
// verdict, not per batch.
func (m *Model) StartFailures(targets []Target, now time.Time) [][]NodeStartFailures {
	type acc struct {
		byNode map[string]*NodeStartFailures
		pods   map[string]map[string]struct{}
		order  []string
	}
	of := make(map[string]*acc, len(targets)) // by workload, as Failure.Workload names it
	for _, t := range targets {
		of[t.workload()] = &acc{byNode: map[string]*NodeStartFailures{}, pods: map[string]map[string]struct{}{}}
	}
	for _, f := range m.Failures(now) {
		a := of[f.Workload]
		if a == nil {
			continue
		}
		n := a.byNode[f.Node]
		if n == nil {
			n = &NodeStartFailures{Node: sanitize.Text(f.Node), Exit128: true}
			a.byNode[f.Node], a.pods[f.Node] = n, map[string]struct{}{}
			a.order = append(a.order, f.Node)
		}
		n.Failures++
		n.Exit128 = n.Exit128 && f.ExitCode == 128
		a.pods[f.Node][f.PodUID] = struct{}{}
	}
	out := make([][]NodeStartFailures, len(targets))
	for i, t := range targets {
		a := of[t.workload()]
		list := make([]NodeStartFailures, 0, len(a.order))
		for _, name := range a.order {
			n := a.byNode[name]
			n.Pods = len(a.pods[name])
			list = append(list, *n)
		}
		sort.SliceStable(list, func(i, j int) bool { return list[i].Pods > list[j].Pods })
		out[i] = list
	}
	return out
}

// gatePod is a bare pod's status for the gate: classify.BarePodStatus, Krane's rule for an
// unmanaged pod, on the pod's verdict after the model's evidence.
func (m *Model) gatePod(st *GateStatus, p *Pod) {
	r := Rollout{Namespace: p.Namespace, Kind: string(contract.KindPod), Name: p.Name, Desired: 1, Updated: 1}
	pod := m.rebuilt.Pod(p.rec)
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			r.Ready, r.Available = 1, 1
		}
	}
	st.Pods.add(p.Verdict.Class, 1)
	msg, done, err := classify.BarePodStatus(pod, p.Verdict)
	switch {
	case errors.Is(err, classify.ErrBarePodDeleted):
		r.Verdict, r.Reason = classify.RolloutDoomed, err.Error()
		st.Doomed = []GateProblem{{Namespace: p.Namespace, Pod: p.Name, Node: p.Node, Reason: r.Reason}}
	case err != nil:
		r.Verdict, r.Reason = classify.RolloutDoomed, sanitize.Text(err.Error())
		st.Doomed = gateProblems(p)
	case done:
		r.Verdict, r.Reason = classify.RolloutComplete, sanitize.Text(msg)
	default:
		r.Verdict, r.Reason = classify.RolloutProgressing, sanitize.Text(msg)
		if p.Verdict.Class == classify.Transient {
			st.Transient = gateProblems(p)
		}
		if p.Verdict.Class != classify.Healthy {
			st.Pending = []GatePending{{Reason: p.Verdict.Reason, Pods: 1, Example: p.Name + containerSuffix(p.Verdict.Container)}}
		}
	}
	st.Rollout = r
}

// watchedPods returns the pods of controller k, indexed from now on: the first ask for a
// controller (a gate's start, a Deployment's new ReplicaSet) makes one pass over the pods, and
// count and uncount keep the set from then on, so a gate's look costs its targets' pods, not the
// cluster's.
func (m *Model) watchedPods(k ownerKey) map[*Pod]struct{} {
	if set, ok := m.watched[k]; ok {
		return set
	}
	if m.watched == nil {
		m.watched = make(map[ownerKey]map[*Pod]struct{})
	}
	set := make(map[*Pod]struct{})
	for _, p := range m.pods {
		if p.ctrl == k {
			set[p] = struct{}{}
		}
	}
	m.watched[k] = set
	return set
}

// watch keeps the watched set of p's controller (d = 1: p is counted, -1: it no longer is).
func (m *Model) watch(p *Pod, d int) {
	set, ok := m.watched[p.ctrl]
	switch {
	case !ok:
	case d > 0:
		set[p] = struct{}{}
	default:
		delete(set, p)
	}
}
