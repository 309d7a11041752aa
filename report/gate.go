package report

import (
	"strings"
	"time"

	"doomwatch/classify"
	"doomwatch/model"
)

// Verdict is a deploy gate's verdict, of the whole wait or of one workload.
type Verdict string

// The gate's verdicts. A workload is complete, progressing, doomed, missing or unsupported; the
// wait is complete, doomed, missing, unsupported or timeout. The first three are the rollout's
// (classify.RolloutClass); the others are the gate's own.
const (
	Complete    = Verdict(classify.RolloutComplete)
	Progressing = Verdict(classify.RolloutProgressing)
	Doomed      = Verdict(classify.RolloutDoomed)
	// Missing: a workload does not exist, or was deleted while waited for.
	Missing Verdict = "missing"
	// Unsupported: a workload has no rollout status (the OnDelete strategy).
	Unsupported Verdict = "unsupported"
	Timeout     Verdict = "timeout"
)

// Gate is wait's verdict: printed as text, or as this document with -o json. The schema is
// documented in docs/wait.md; fields may be added, never renamed. Every string in it
// is sanitised.
type Gate struct {
	// Verdict is complete (exit 0), doomed, missing or unsupported (1), or timeout (70).
	Verdict  Verdict `json:"verdict"`
	ExitCode int     `json:"exitCode"`
	// Message is the timeout's "timed out after 10m" (with the workloads whose --stable window
	// it cut short), "" otherwise.
	Message string `json:"message"`
	// Window is how far back start failures count as evidence (--window), e.g. "15m".
	Window string `json:"window"`
	// Stable is how long each workload had to stay complete (--stable), e.g. "1m"; "0s" passes
	// as soon as every rollout is complete.
	Stable    string     `json:"stable"`
	Workloads []Workload `json:"workloads"`
	// Warnings are the transient failures seen while waiting, one per container with its latest
	// reason, in the order seen, at most 20; MoreWarnings counts the others.
	Warnings     []Container `json:"warnings"`
	MoreWarnings int         `json:"moreWarnings"`
	// SuspectNodes are the suspect nodes the workloads' failures hit.
	SuspectNodes []SuspectNode `json:"suspectNodes"`
	// Clusters are the verdicts per context of a wait across several (FleetGate); absent with one.
	Clusters []GateCluster `json:"clusters,omitempty"`
	// StartedAt is when the wait started, and Seconds how long it took to the verdict, the first
	// sync included: a JUnit suite's timestamp and time. The caller's, as ExitCode.
	StartedAt time.Time `json:"startedAt"`
	Seconds   float64   `json:"seconds"`
}

// GateCluster is one context's verdict in a wait across several.
type GateCluster struct {
	Context string  `json:"context"`
	Verdict Verdict `json:"verdict"`
	Message string  `json:"message"`
}

// Workload is one workload's rollout at the end.
type Workload struct {
	// Context is the workload's cluster in a wait across several contexts; absent with one.
	Context   string `json:"context,omitempty"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Verdict is complete, progressing, doomed, missing or unsupported.
	Verdict   Verdict `json:"verdict"`
	Reason    string  `json:"reason"`
	Desired   int32   `json:"desired"`
	Updated   int32   `json:"updated"`
	Ready     int32   `json:"ready"`
	Available int32   `json:"available"`
	// Doomed lists the current pods' doomed containers; Pending what the rollout still waited for.
	Doomed  []Container         `json:"doomed"`
	Pending []model.GatePending `json:"pending"`
	// StartFailures are the transient start failures of the workload's pods within the window
	// (--window), per node: the runtime's trouble, retried, which did not fail the gate.
	StartFailures []model.NodeStartFailures `json:"startFailures"`
}

// Container is one failing container ("" container when the pod's own status decided): a
// doomed one, or a transient one as a warning.
type Container struct {
	// Context is the container's cluster in a wait across several contexts; absent with one.
	Context   string `json:"context,omitempty"`
	Namespace string `json:"namespace"`
	Pod       string `json:"pod"`
	Container string `json:"container"`
	Node      string `json:"node"`
	Reason    string `json:"reason"`
	ExitCode  *int32 `json:"exitCode"`
	// Log holds the last lines of the container's log (of its previous instance when LogPrevious),
	// fetched for the first doomed container of each reason; LogError says why there is none.
	Log         []string `json:"log"`
	LogPrevious bool     `json:"logPrevious"`
	LogError    string   `json:"logError"`

	// Previous: the container has a previous instance, whose log explains a crash.
	Previous bool `json:"-"`
	// LogName is the container's name as the API server knows it, to fetch its log
	// (model.ContainerState.LogName); Container is the name shown.
	LogName string `json:"-"`
}

// SuspectNode is a suspect node and the outlier rule's sentence for it.
type SuspectNode struct {
	// Context is the node's cluster in a wait across several contexts; absent with one.
	Context string `json:"context,omitempty"`
	Name    string `json:"name"`
	Why     string `json:"why"`
}

// End is how a gate's wait ended.
type End uint8

// How a wait ends.
const (
	// Ended: every workload completed.
	Ended End = iota
	// Failed: a workload is doomed, missing or unsupported; the worst of them is the verdict.
	Failed
	// TimedOut: --timeout passed first.
	TimedOut
	// Undecided: one context of a wait across several, still progressing when another's
	// failure ended the wait.
	Undecided
)

// GateInput is what a gate knows when its wait ends.
type GateInput struct {
	End     End
	Message string
	Window  time.Duration
	// Stable is --stable: how long each workload had to stay complete.
	Stable time.Duration
	// Statuses are the targets' statuses at the end; StartFailures their start failures in the
	// window, per target (model.Model.StartFailures).
	Statuses      []model.GateStatus
	StartFailures [][]model.NodeStartFailures
	// Started is set once the wait proper began: a workload missing after that was deleted.
	Started bool
	// Warnings are the transient failures seen while waiting; MoreWarnings counts those not kept.
	Warnings     []model.GateProblem
	MoreWarnings int
	// Suspects are the suspect nodes the targets' failures hit, in the order first seen.
	Suspects []model.Node
	// Resources are wait -f's objects of kinds doomwatch does not model (a ConfigMap, a Service, a
	// custom resource), judged with kstatus: workloads after the targets, with a verdict, a reason
	// and the doomed containers of the pods they control, nothing else.
	Resources []Workload
}

// NewGate is the verdict document of a wait that ended as in says. Its ExitCode is the caller's;
// the doomed containers' logs are fetched by the caller too (Gate.Doomed).
func NewGate(in *GateInput) Gate {
	rep := Gate{Message: in.Message, Window: model.ShortDuration(in.Window), Stable: model.ShortDuration(in.Stable),
		Workloads: []Workload{}, Warnings: []Container{}, SuspectNodes: []SuspectNode{}}
	switch in.End {
	case Ended:
		rep.Verdict = Complete
	case TimedOut:
		rep.Verdict = Timeout
	case Undecided:
		rep.Verdict = Progressing
	default:
		rep.Verdict = Unsupported
	}
	// A failed wait names the worst cause: a doomed rollout, else a missing workload, else one
	// without a rollout status.
	worse := func(v Verdict) {
		if in.End == Failed && (v == Doomed || v == Missing && rep.Verdict == Unsupported) {
			rep.Verdict = v
		}
	}
	for i := range in.Statuses {
		st := &in.Statuses[i]
		r := &st.Rollout
		w := Workload{Kind: string(st.Target.Kind), Namespace: st.Namespace,
			Name: st.Name, Verdict: Verdict(r.Verdict), Reason: r.Reason, Desired: r.Desired,
			Updated: r.Updated, Ready: r.Ready, Available: r.Available, Doomed: []Container{}, Pending: []model.GatePending{},
			StartFailures: []model.NodeStartFailures{}}
		switch {
		case !st.Found && in.Started:
			w.Verdict, w.Reason = Missing, st.Target.String()+" was deleted while waiting"
		case !st.Found:
			w.Verdict, w.Reason = Missing, st.Target.String()+" not found in namespace "+st.Namespace
		case st.Unsupported != "":
			w.Verdict, w.Reason = Unsupported, st.Unsupported
		}
		worse(w.Verdict)
		if in.End == Ended && in.Stable > 0 && w.Verdict == Complete {
			w.Reason += "; stable for " + rep.Stable
		}
		if r.Verdict == classify.RolloutDoomed {
			for j := range st.Doomed {
				w.Doomed = append(w.Doomed, ContainerOf(&st.Doomed[j]))
			}
		}
		w.Pending = append(w.Pending, st.Pending...)
		if i < len(in.StartFailures) {
			w.StartFailures = append(w.StartFailures, in.StartFailures[i]...)
		}
		rep.Workloads = append(rep.Workloads, w)
	}
	for _, w := range in.Resources {
		worse(w.Verdict)
		if w.Doomed == nil {
			w.Doomed = []Container{}
		}
		w.Pending, w.StartFailures = []model.GatePending{}, []model.NodeStartFailures{}
		rep.Workloads = append(rep.Workloads, w)
	}
	for i := range in.Warnings {
		rep.Warnings = append(rep.Warnings, ContainerOf(&in.Warnings[i]))
	}
	rep.MoreWarnings = in.MoreWarnings
	for _, n := range in.Suspects {
		rep.SuspectNodes = append(rep.SuspectNodes, SuspectNode{Name: n.Name, Why: n.Why})
	}
	return rep
}

// Doomed returns the doomed containers of every workload, in order, to fill in their logs.
func (g *Gate) Doomed() []*Container {
	var out []*Container
	for i := range g.Workloads {
		for j := range g.Workloads[i].Doomed {
			out = append(out, &g.Workloads[i].Doomed[j])
		}
	}
	return out
}

// ContainerOf is failing container p as the document has it.
func ContainerOf(p *model.GateProblem) Container {
	c := Container{Namespace: p.Namespace, Pod: p.Pod, Container: p.Container, Node: p.Node, Reason: p.Reason,
		Log: []string{}, Previous: p.Previous, LogName: p.LogName}
	if p.HasExitCode {
		code := p.ExitCode
		c.ExitCode = &code
	}
	return c
}

// Ref is the workload as kubectl names it: "deployment/web", and "deployment/web in eu" in a
// wait across several contexts.
func (w *Workload) Ref() string { return strings.ToLower(w.Kind) + "/" + w.Name + in(w.Context) }

// Ref is "pod/container", or the pod when the pod itself decided; " in eu" follows in a wait
// across several contexts.
func (c *Container) Ref() string {
	if c.Container == "" {
		return c.Pod + in(c.Context)
	}
	return c.Pod + "/" + c.Container + in(c.Context)
}

func in(context string) string {
	if context == "" {
		return ""
	}
	return " in " + context
}

// FleetGate is the verdict of a wait across several contexts, made of each context's (NewGate,
// in the fleet's order): doomed, missing or unsupported when any context's is (the first such,
// in that order of severity), timeout when any timed out, complete when all are. Every workload,
// warning and suspect node names its context; Clusters gives each context's verdict.
func FleetGate(contexts []string, gates []Gate) Gate {
	rep := Gate{Verdict: Complete, Workloads: []Workload{}, Warnings: []Container{}, SuspectNodes: []SuspectNode{}}
	rank := map[Verdict]int{Complete: 0, Progressing: 0, Timeout: 1, Unsupported: 2, Missing: 3, Doomed: 4}
	for i, g := range gates {
		ctx := contexts[i]
		if rank[g.Verdict] > rank[rep.Verdict] {
			rep.Verdict, rep.Message = g.Verdict, g.Message
		}
		rep.Window, rep.Stable = g.Window, g.Stable
		rep.Clusters = append(rep.Clusters, GateCluster{Context: ctx, Verdict: g.Verdict, Message: g.Message})
		for _, w := range g.Workloads {
			w.Context = ctx
			for j := range w.Doomed {
				w.Doomed[j].Context = ctx
			}
			rep.Workloads = append(rep.Workloads, w)
		}
		for _, c := range g.Warnings {
			c.Context = ctx
			rep.Warnings = append(rep.Warnings, c)
		}
		rep.MoreWarnings += g.MoreWarnings
		for _, n := range g.SuspectNodes {
			n.Context = ctx
			rep.SuspectNodes = append(rep.SuspectNodes, n)
		}
	}
	return rep
}
