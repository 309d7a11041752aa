package cmd

import (
	"context"
	"fmt"
	"sync"

	"doomwatch/classify"
	"doomwatch/contract"
	"doomwatch/kube"
	"doomwatch/model"
	"doomwatch/report"
	"doomwatch/sanitize"
)

// maxWarnings caps the transient failures a verdict lists; the rest are counted.
const maxWarnings = 20

// gate is one run of wait: the model, its source, and what has been seen so far.
type gate struct {
	src     *kube.Source
	m       *model.Model
	targets []model.Target
	ns      string
	// started is set once the wait proper began: a workload missing after that was deleted.
	started bool
	// warnings are the transient failures seen while waiting, one per container (its latest
	// reason), in the order first seen, at most maxWarnings (moreWarnings counts the rest): a
	// transient pod usually recovers before the end, and its warning must not go with it.
	warnings     []model.GateProblem
	warned       map[string]int // warnKey → index in warnings, -1 when not kept
	moreWarnings int
	// suspects are the suspect nodes the targets' failures hit, by name, last word kept.
	suspects     map[string]model.Node
	suspectOrder []string
}

// warnKey identifies a transient failure for the warnings: its container. Its reason may change
// while it fails (a NotReady node's duration, each retry's container ID), and must not make a new
// warning each time.
func warnKey(p *model.GateProblem) string { return p.Namespace + "/" + p.Ref() }

// forbidden is the error for a kind the targets need that RBAC refuses (contract.Health.Forbidden):
// the pods, the targets' own kinds, and ReplicaSets for Deployments (the new pods are theirs).
func (g *gate) forbidden(refused []contract.Kind, deployments bool) error {
	need := map[contract.Kind]bool{contract.KindPod: true}
	if deployments {
		need[contract.KindDeployment] = true
	}
	for _, t := range g.targets {
		need[t.Kind] = true
	}
	if need[contract.KindDeployment] {
		need[contract.KindReplicaSet] = true
	}
	for _, k := range refused {
		if need[k] {
			return &kindError{kind: kube.ErrForbidden,
				msg: fmt.Sprintf("not allowed to list and watch %s in namespace %s, which the gate needs", k.Resource(), sanitize.Text(g.ns))}
		}
	}
	return nil
}

// decide is the gate's answer: failed as soon as one target is doomed (or was deleted while
// waited for), ended when all are complete, or not yet.
func (g *gate) decide(statuses []model.GateStatus) (how report.End, done bool) {
	complete := 0
	for i := range statuses {
		st := &statuses[i]
		switch {
		case !st.Found, st.Unsupported != "":
			return report.Failed, true
		case st.Rollout.Verdict == classify.RolloutDoomed:
			return report.Failed, true
		case st.Rollout.Verdict == classify.RolloutComplete:
			complete++
		}
	}
	if complete == len(statuses) {
		return report.Ended, true
	}
	return 0, false
}

// note remembers the transient failures and suspect nodes seen, for the warnings.
func (g *gate) note(statuses []model.GateStatus) {
	for i := range statuses {
		st := &statuses[i]
		for _, p := range st.Transient {
			key := warnKey(&p)
			switch i, ok := g.warned[key]; {
			case ok && i >= 0:
				g.warnings[i] = p // its latest reason
			case ok:
			case len(g.warnings) < maxWarnings:
				g.warned[key] = len(g.warnings)
				g.warnings = append(g.warnings, p)
			default:
				g.warned[key] = -1
				g.moreWarnings++
			}
		}
		for _, n := range st.Suspect {
			g.noteSuspect(n)
		}
	}
}

func (g *gate) noteSuspect(n model.Node) {
	if _, ok := g.suspects[n.Name]; !ok {
		g.suspectOrder = append(g.suspectOrder, n.Name)
	}
	g.suspects[n.Name] = n
}

// document is the verdict of a wait that ended as how says, with the doomed containers' logs.
func (g *gate) document(ctx context.Context, statuses []model.GateStatus, how report.End, message string) report.Gate {
	now := g.src.Now()
	startFailures := g.m.StartFailures(g.targets, now)
	// The pods may have recovered; the nodes they failed on can still be suspect.
	failedOn := map[string]struct{}{}
	for _, fs := range startFailures {
		for _, f := range fs {
			failedOn[f.Node] = struct{}{}
		}
	}
	if len(failedOn) > 0 {
		for _, n := range g.m.Nodes(now) {
			if _, ok := failedOn[n.Name]; ok && n.Suspect {
				g.noteSuspect(n)
			}
		}
	}
	suspects := make([]model.Node, len(g.suspectOrder))
	for i, name := range g.suspectOrder {
		suspects[i] = g.suspects[name]
	}
	rep := report.NewGate(&report.GateInput{End: how, Message: message, Window: g.m.Config().Window,
		Statuses: statuses, StartFailures: startFailures, Started: g.started,
		Warnings: g.warnings, MoreWarnings: g.moreWarnings, Suspects: suspects})
	if doomed := rep.Doomed(); len(doomed) > 0 {
		g.fetchLogs(ctx, doomed)
	}
	return rep
}

// fetchLogs gets the previous log (or the current one, for a container that never restarted) of
// the first doomed container of each distinct reason, concurrently, within logTimeout.
func (g *gate) fetchLogs(ctx context.Context, doomed []*report.Container) {
	ctx, cancel := context.WithTimeout(ctx, logTimeout)
	defer cancel()
	seen := map[string]struct{}{}
	var wg sync.WaitGroup
	for _, c := range doomed {
		if c.Container == "" || !c.Previous && c.ExitCode == nil {
			continue // a container that never ran (a pull, a config error) has no log
		}
		if _, ok := seen[c.Reason]; ok || len(seen) == maxLogContainers {
			continue
		}
		seen[c.Reason] = struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The source sanitises the lines and the error (kube.Source.TailLog).
			lines, err := g.src.TailLog(ctx, c.Namespace, c.Pod, c.LogName, c.Previous, waitLogLines)
			if err != nil {
				c.LogError = err.Error()
				return
			}
			c.Log = lines
			if c.Log == nil {
				c.Log = []string{}
			}
			c.LogPrevious = c.Previous
		}()
	}
	wg.Wait()
}
