// Package report holds every document doomwatch prints: the --once snapshot (a table or JSON),
// the --watch stream and the deploy gate's verdict (text or JSON). Each document is built once
// from the model, and each format is a printer beside it, as kubectl's cli-runtime keeps its
// JSON, YAML and table printers apart from the objects they print. Every string in a document
// is sanitised.
package report

import (
	"slices"
	"sort"
	"strings"
	"time"

	"doomwatch/classify"
	"doomwatch/contract"
	"doomwatch/model"
)

// Snapshot is the state printed by `doomwatch --once`. Its JSON form is the stable schema
// documented in docs/json.md: fields may be added, never renamed. Every string in it is
// sanitised.
type Snapshot struct {
	Context     string            `json:"context"`
	GeneratedAt string            `json:"generatedAt"` // RFC3339
	Health      SnapshotHealth    `json:"health"`
	Summary     Summary           `json:"summary"`
	Pods        []SnapshotPod     `json:"pods"`
	Nodes       []SnapshotNode    `json:"nodes"`
	Rollouts    []SnapshotRollout `json:"rollouts"`
	// SuspectsShare says what the suspect nodes have in common that the healthy ones do not
	// (model.Fleet.SuspectsShare), one sentence each; [] when nothing stands out or no node is
	// suspect. With several contexts, each cluster's sentences start with its context, and what
	// the suspects of several clusters share comes first.
	SuspectsShare []string `json:"suspectsShare"`
	// Clusters is how each cluster answered, with more than one context; absent with one.
	Clusters []Cluster `json:"clusters,omitempty"`
	// Spreads are the workloads in more than one cluster with their verdict in each, the worst
	// first, with more than one context; absent with one.
	Spreads []SnapshotSpread `json:"spreads,omitempty"`
}

// SnapshotSpread is one workload that has a rollout in several clusters (model.Spread).
type SnapshotSpread struct {
	// Workload is "namespace/Kind/name", the same in each cluster.
	Workload string `json:"workload"`
	// Verdicts are the rollout's verdict in each cluster that has it, in the fleet's order.
	Verdicts []SpreadVerdict `json:"verdicts"`
	// Line says it as the dashboard does: "shop/Deployment/payments: doomed in eu, ap; complete in us".
	Line string `json:"line"`
}

// SpreadVerdict is one cluster's verdict of a SnapshotSpread.
type SpreadVerdict struct {
	Context string `json:"context"`
	Verdict string `json:"verdict"`
}

// SnapshotHealth is the connection's health when the snapshot was taken, so scripts see what the
// dashboard's header shows: a resource RBAC forbids is missing from the output, not empty.
type SnapshotHealth struct {
	Synced bool `json:"synced"`
	// Forbidden lists the kinds RBAC forbids, sorted; [] when none.
	Forbidden []string `json:"forbidden"`
	// WatchError is the last watch error while a watch is broken, "" when all are healthy.
	WatchError string `json:"watchError"`
}

// Summary counts pods per verdict.
type Summary struct {
	Pods        int `json:"pods"`
	Healthy     int `json:"healthy"`
	Progressing int `json:"progressing"`
	Transient   int `json:"transient"`
	Doomed      int `json:"doomed"`
	Completed   int `json:"completed"`
}

// SnapshotPod is one pod. Status, Ready and Restarts are exactly kubectl's columns.
type SnapshotPod struct {
	// Context is the pod's cluster, with more than one context; absent with one.
	Context   string `json:"context,omitempty"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	UID       string `json:"uid"`
	Node      string `json:"node"`
	Owner     string `json:"owner"`
	Phase     string `json:"phase"`
	Status    string `json:"status"`
	Ready     string `json:"ready"`
	Restarts  string `json:"restarts"`
	// RestartCount sums the restart counts of all containers, init containers included.
	RestartCount int32               `json:"restartCount"`
	Verdict      string              `json:"verdict"`
	Reason       string              `json:"reason"`
	Containers   []SnapshotContainer `json:"containers"`
	// Events are the pod's recent Warning events, newest first; [] when none.
	Events []SnapshotEvent `json:"events"`
}

// SnapshotEvent is one Warning event about a pod or a node (Model.PodEvents, Model.NodeEvents).
type SnapshotEvent struct {
	Reason    string `json:"reason"`
	Message   string `json:"message"`
	Count     int32  `json:"count"`
	FirstSeen string `json:"firstSeen"` // RFC3339
	LastSeen  string `json:"lastSeen"`  // RFC3339
	Source    string `json:"source"`    // "kubelet, node-3"
}

// SnapshotContainer is one container, init containers first.
type SnapshotContainer struct {
	Name         string `json:"name"`
	Init         bool   `json:"init"`
	Ready        bool   `json:"ready"`
	RestartCount int32  `json:"restartCount"`
	// State is null while the kubelet has not reported the container.
	State     *SnapshotState `json:"state"`
	LastState *SnapshotState `json:"lastState"`
	Verdict   string         `json:"verdict"`
	Reason    string         `json:"reason"`
}

// SnapshotState is a container state; ExitCode is null unless terminated.
type SnapshotState struct {
	Kind     string `json:"kind"` // waiting, running or terminated
	Reason   string `json:"reason"`
	Message  string `json:"message"`
	ExitCode *int32 `json:"exitCode"`
}

// SnapshotNode is one node's evidence. A node deleted and registered again under the
// same name is two entries with the same name and different UIDs.
type SnapshotNode struct {
	// Context is the node's cluster, with more than one context; absent with one.
	Context     string `json:"context,omitempty"`
	Name        string `json:"name"`
	UID         string `json:"uid"` // "" when no Node object is known (nodes forbidden by RBAC)
	Known       bool   `json:"known"`
	Ready       bool   `json:"ready"`
	Cordoned    bool   `json:"cordoned"`
	Pods        int    `json:"pods"`
	FailingPods int    `json:"failingPods"`
	// StartFailures counts every transient start failure in the window, whatever the runtime:
	// exit 128 (containerd, cri-dockerd) and create errors (CRI-O). StartFailures128 counts the
	// exit-128 ones only, as it always has.
	StartFailures    int    `json:"startFailures"`
	StartFailures128 int    `json:"startFailures128"`
	FailedPods       int    `json:"failedPods"`
	Workloads        int    `json:"workloads"`
	DominantMessage  string `json:"dominantMessage"`
	Suspect          bool   `json:"suspect"`
	Why              string `json:"why"`
	// Conditions holds the five conditions the model keeps (NodeConditionTypes) by type, always
	// all five: {"Ready": {"status": "True", "reason": "KubeletReady"}, ...}. An object keyed by
	// type rather than a list, so a script reads .conditions.Ready.status; status is "Unknown"
	// when the node does not report the condition or is not known.
	Conditions map[string]SnapshotCondition `json:"conditions"`
	NodeInfo   SnapshotNodeInfo             `json:"nodeInfo"`
	// Zone, Region, InstanceType and Pool come from the node's labels (model.Node); "" when unset.
	Zone         string `json:"zone"`
	Region       string `json:"region"`
	InstanceType string `json:"instanceType"`
	Pool         string `json:"pool"`
	// Events are the Warning events about the node, newest first, on the entry of the node now
	// under that name (events name nodes, not their UIDs); [] otherwise.
	Events []SnapshotEvent `json:"events"`
}

// SnapshotCondition is one node condition.
type SnapshotCondition struct {
	Status string `json:"status"` // True, False or Unknown
	Reason string `json:"reason"`
}

// SnapshotNodeInfo is the part of a node's status.nodeInfo the model keeps, under the API's names;
// "" when not known.
type SnapshotNodeInfo struct {
	KubeletVersion          string `json:"kubeletVersion"`
	ContainerRuntimeVersion string `json:"containerRuntimeVersion"`
	KernelVersion           string `json:"kernelVersion"`
	OSImage                 string `json:"osImage"`
}

// SnapshotRollout is one workload's rollout (Deployment, StatefulSet or DaemonSet).
type SnapshotRollout struct {
	// Context is the rollout's cluster, with more than one context; absent with one.
	Context        string   `json:"context,omitempty"`
	Namespace      string   `json:"namespace"`
	Kind           string   `json:"kind"`
	Name           string   `json:"name"`
	Verdict        string   `json:"verdict"`
	Desired        int32    `json:"desired"`
	Updated        int32    `json:"updated"`
	Ready          int32    `json:"ready"`
	Available      int32    `json:"available"`
	Reason         string   `json:"reason"`
	NewReplicaSet  string   `json:"newReplicaSet"`
	OldReplicaSets []string `json:"oldReplicaSets"`
}

// NewSnapshot captures model m, of the cluster named context, at now: a fleet of one
// (NewFleetSnapshot).
func NewSnapshot(m *model.Model, context string, now time.Time) Snapshot {
	return NewFleetSnapshot(model.FleetOf(context, m), nil, nil, now)
}

// Cluster is what a snapshot says of one cluster of a fleet: its context, its API server, and
// whether it answered (clusters[] of --once -o json with more than one context).
type Cluster struct {
	Context string `json:"context"`
	Server  string `json:"server"`
	Synced  bool   `json:"synced"`
	// Error says why the cluster's part is missing or incomplete: it did not answer within
	// --request-timeout, or a watch is broken; "" when it synced and answers.
	Error string `json:"error"`
	// Forbidden lists the kinds RBAC forbids in this cluster, sorted; [] when none.
	Forbidden []string `json:"forbidden"`
}

// NewFleetSnapshot captures fleet f at now, in a deterministic order: cluster by cluster in the
// fleet's order, and within each pods by namespace/name, nodes by name (the current node before an
// old one of the same name), rollouts by namespace/name. In a fleet of one the document is what
// it has always been; with more, every pod, node and rollout names its context, Clusters says how
// each cluster answered, and Spreads the workloads that are in several clusters. servers are the
// clusters' API servers and errs their sync errors (nil for those that synced), in the fleet's
// order, printed as they are: their sources sanitise them where they enter (kube.Fleet.Servers and
// Settle, recording.Reader.Servers).
func NewFleetSnapshot(f *model.Fleet, servers []string, errs []error, now time.Time) Snapshot {
	clusters := f.Clusters()
	names := make([]string, len(clusters))
	for i, c := range clusters {
		names[i] = c.Context
	}
	s := Snapshot{
		Context:       strings.Join(names, ","),
		GeneratedAt:   now.UTC().Format(time.RFC3339),
		Health:        snapshotHealth(f.Health()),
		Summary:       Summary(f.Counts()),
		Pods:          []SnapshotPod{},
		Nodes:         []SnapshotNode{},
		Rollouts:      []SnapshotRollout{},
		SuspectsShare: append([]string{}, f.SuspectsShare(now)...),
	}
	multi := f.Multi()
	for i, c := range clusters {
		ctx := ""
		if multi {
			ctx = c.Context
			cl := Cluster{Context: c.Context, Synced: c.Health().Synced, Forbidden: snapshotHealth(c.Health()).Forbidden}
			if i < len(servers) {
				cl.Server = servers[i]
			}
			switch h := c.Health(); {
			case i < len(errs) && errs[i] != nil:
				cl.Error = errs[i].Error()
			case h.Unreachable != "":
				cl.Error = h.Unreachable
			case h.WatchError != "":
				cl.Error = h.WatchError
			}
			s.Clusters = append(s.Clusters, cl)
		}
		s.addCluster(c.Model, ctx, now)
	}
	for _, sp := range f.Spreads() {
		ss := SnapshotSpread{Workload: sp.Workload, Line: sp.String()}
		for _, v := range sp.Verdicts {
			ss.Verdicts = append(ss.Verdicts, SpreadVerdict{Context: v.Context, Verdict: string(v.Verdict)})
		}
		s.Spreads = append(s.Spreads, ss)
	}
	return s
}

// addCluster adds model m's pods, nodes and rollouts, each named by ctx ("" in a fleet of one).
func (s *Snapshot) addCluster(m *model.Model, ctx string, now time.Time) {
	var states []model.ContainerState
	for _, p := range m.View(model.Query{Sort: model.ByName}) {
		var sp SnapshotPod
		sp, states = snapshotPod(p, now, states)
		sp.Context = ctx
		sp.Events = snapshotEvents(m.PodEvents(p.Key))
		s.Pods = append(s.Pods, sp)
	}
	from := len(s.Nodes)
	nodes := m.Nodes(now)
	for i := range nodes {
		sn := snapshotNode(&nodes[i])
		sn.Context = ctx
		s.Nodes = append(s.Nodes, sn)
	}
	mine := s.Nodes[from:]
	sort.Slice(mine, func(i, j int) bool {
		a, b := &mine[i], &mine[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		if a.Known != b.Known {
			return a.Known // the node registered now first, then older ones of the same name
		}
		return a.UID < b.UID
	})
	for i := range mine {
		var events []model.Event
		if i == 0 || mine[i-1].Name != mine[i].Name {
			events = m.NodeEvents(mine[i].Name)
		}
		mine[i].Events = snapshotEvents(events)
	}
	from = len(s.Rollouts)
	for _, r := range m.Rollouts() {
		old := r.OldReplicaSets
		if old == nil {
			old = []string{}
		}
		s.Rollouts = append(s.Rollouts, SnapshotRollout{
			Context:   ctx,
			Namespace: r.Namespace, Kind: r.Kind, Name: r.Name, Verdict: string(r.Verdict),
			Desired: r.Desired, Updated: r.Updated, Ready: r.Ready, Available: r.Available,
			Reason: r.Reason, NewReplicaSet: r.NewReplicaSet, OldReplicaSets: old,
		})
	}
	rs := s.Rollouts[from:]
	sort.Slice(rs, func(i, j int) bool {
		a, b := &rs[i], &rs[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
}

func snapshotNode(n *model.Node) SnapshotNode {
	sn := SnapshotNode{
		Name: n.Name, UID: n.UID, Known: n.Known, Ready: n.Ready, Cordoned: n.Cordoned,
		Pods: n.Pods, FailingPods: n.FailingPods, StartFailures: n.Failures, StartFailures128: n.Failures128,
		FailedPods: n.FailedPods, Workloads: n.Workloads, DominantMessage: n.DominantMessage,
		Suspect: n.Suspect, Why: n.Why,
		Conditions: make(map[string]SnapshotCondition, len(n.Conditions)),
		NodeInfo: SnapshotNodeInfo{KubeletVersion: n.Info.Kubelet, ContainerRuntimeVersion: n.Info.Runtime,
			KernelVersion: n.Info.Kernel, OSImage: n.Info.OSImage},
		Zone: n.Zone, Region: n.Region, InstanceType: n.InstanceType, Pool: n.Pool,
	}
	for _, c := range n.Conditions {
		sn.Conditions[c.Type] = SnapshotCondition{Status: c.Status, Reason: c.Reason}
	}
	return sn
}

// snapshotEvents is events as --once prints them, [] for none.
func snapshotEvents(events []model.Event) []SnapshotEvent {
	out := make([]SnapshotEvent, len(events))
	for i, e := range events {
		out[i] = SnapshotEvent{Reason: e.Reason, Message: e.Message, Count: e.Count,
			FirstSeen: rfc3339(e.First), LastSeen: rfc3339(e.Last), Source: e.Source}
	}
	return out
}

func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func snapshotHealth(h contract.Health) SnapshotHealth {
	sh := SnapshotHealth{Synced: h.Synced, Forbidden: make([]string, 0, len(h.Forbidden)), WatchError: h.WatchError}
	for _, k := range h.Forbidden {
		sh.Forbidden = append(sh.Forbidden, string(k))
	}
	sort.Strings(sh.Forbidden)
	sh.Forbidden = slices.Compact(sh.Forbidden)
	return sh
}

// snapshotPod is p as --once prints it at now: the model's view of it (model.Pod.Columns,
// model.Pod.States), which the dashboard's table and detail pane read too.
func snapshotPod(p *model.Pod, now time.Time, states []model.ContainerState) (SnapshotPod, []model.ContainerState) {
	cols := p.Columns(now)
	sp := SnapshotPod{
		Namespace: p.Namespace, Name: p.Name, UID: p.UID, Node: p.Node, Owner: p.Owner,
		Phase:    p.Phase,
		Status:   cols.Status,
		Ready:    cols.Ready,
		Restarts: cols.Restarts,
		Verdict:  p.Verdict.Class.String(),
		Reason:   p.Verdict.Reason,
	}
	states = p.AppendStates(states[:0])
	sp.Containers = make([]SnapshotContainer, 0, len(p.Containers))
	for i := range p.Containers {
		c := &p.Containers[i]
		sc := SnapshotContainer{Name: c.Name, Init: c.Init, Verdict: c.Class.String(), Reason: c.Reason}
		if st := stateOf(states, i, c); st != nil && st.Reported {
			sc.Ready, sc.RestartCount = st.Ready, st.RestartCount
			sc.State = snapshotState(&st.State)
			sc.LastState = snapshotState(&st.LastState)
			sp.RestartCount += st.RestartCount
		}
		sp.Containers = append(sp.Containers, sc)
	}
	return sp, states
}

// stateOf is the state of the container whose verdict is c, the i-th: States lists the containers
// of p.Containers in their order.
func stateOf(states []model.ContainerState, i int, c *classify.ContainerVerdict) *model.ContainerState {
	if i < len(states) && states[i].Name == c.Name && states[i].Init == c.Init {
		return &states[i]
	}
	for j := range states {
		if states[j].Name == c.Name && states[j].Init == c.Init {
			return &states[j]
		}
	}
	return nil
}

func snapshotState(s *model.State) *SnapshotState {
	if s.Kind == model.StateNone {
		return nil
	}
	st := &SnapshotState{Kind: s.Kind.String(), Reason: s.Reason, Message: s.Message}
	if code, ok := s.Exit(); ok {
		st.ExitCode = &code
	}
	return st
}
