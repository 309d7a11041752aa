package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/x/term"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"doomwatch/kube"
	"doomwatch/model"
	"doomwatch/tui"
)

// defaultWaitTimeout is wait's --timeout: Krane's default for a Deployment's rollout is 5m plus
// its progress deadline; `kubectl rollout status` waits forever. Ten minutes bounds a CI job.
const defaultWaitTimeout = 10 * time.Minute

// waitPoll is how often wait looks again without a batch: expiring evidence, the timeout, the
// plain progress line.
const waitPoll = time.Second

// logTimeout bounds fetching the logs of a doomed rollout, so the failure is reported within
// seconds of the verdict however slow the kubelets are.
const logTimeout = 3 * time.Second

// waitLogLines is how much of a doomed container's log the verdict prints, as Krane prints.
const waitLogLines = 25

// maxLogContainers is how many doomed containers get their log printed: one per distinct reason,
// at most this many.
const maxLogContainers = 3

// workloadRef is one workload named on the command line, before its namespace is known.
type workloadRef struct {
	kind model.Kind
	name string
}

// workloadKinds are the resource names kubectl accepts for the kinds wait knows, with their
// short names and group-qualified forms (kubectl api-resources).
var workloadKinds = map[string]model.Kind{
	"deployment": model.KindDeployment, "deployments": model.KindDeployment, "deploy": model.KindDeployment,
	"deployment.apps": model.KindDeployment, "deployments.apps": model.KindDeployment,
	"statefulset": model.KindStatefulSet, "statefulsets": model.KindStatefulSet, "sts": model.KindStatefulSet,
	"statefulset.apps": model.KindStatefulSet, "statefulsets.apps": model.KindStatefulSet,
	"daemonset": model.KindDaemonSet, "daemonsets": model.KindDaemonSet, "ds": model.KindDaemonSet,
	"daemonset.apps": model.KindDaemonSet, "daemonsets.apps": model.KindDaemonSet,
	"pod": model.KindPod, "pods": model.KindPod, "po": model.KindPod,
}

// parseWorkloads reads kubectl's two forms: TYPE/NAME arguments, and TYPE followed by names.
// Kinds are matched without regard to case, as kubectl does.
func parseWorkloads(args []string) ([]workloadRef, error) {
	var out []workloadRef
	var kind model.Kind // the TYPE of the TYPE NAME... form
	for _, a := range args {
		typ, name, slash := strings.Cut(a, "/")
		if !slash {
			if k, ok := workloadKinds[strings.ToLower(a)]; ok && kind == "" && len(out) == 0 {
				kind = k
				continue
			}
			if kind == "" {
				return nil, fmt.Errorf("%q is not TYPE/NAME: name a deployment, statefulset, daemonset or pod, e.g. deployment/%s", a, a)
			}
			typ, name = "", a
		} else if typ == "" {
			return nil, fmt.Errorf("arguments in resource/name form must have a single resource and name, not %q", a)
		} else if kind != "" {
			return nil, fmt.Errorf("there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (%q)", a)
		}
		k := kind
		if typ != "" {
			var ok bool
			if k, ok = workloadKinds[strings.ToLower(typ)]; !ok {
				return nil, fmt.Errorf("cannot wait for %q: wait knows deployments, statefulsets, daemonsets and pods", typ)
			}
		}
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			return nil, fmt.Errorf("invalid name %q: %s", name, errs[0])
		}
		out = append(out, workloadRef{k, name})
	}
	if kind != "" && len(out) == 0 {
		return nil, fmt.Errorf("name the %s to wait for", strings.ToLower(string(kind)))
	}
	return out, nil
}

// validateWait checks wait's own arguments and flags.
func validateWait(o *options) error {
	if len(o.args) > 0 && o.selector != "" {
		return errors.New("name workloads or pass -l, not both (as kubectl rollout status)")
	}
	if len(o.args) == 0 && o.selector == "" {
		return errors.New("wait needs workloads to wait for: deployment/NAME ..., or -l SELECTOR")
	}
	if _, err := parseWorkloads(o.args); err != nil {
		return err
	}
	if o.selector != "" {
		if _, err := labels.Parse(o.selector); err != nil {
			return fmt.Errorf("parsing -l %q: %w", o.selector, err)
		}
	}
	switch {
	case o.output != "text" && o.output != "json":
		return fmt.Errorf("-o/--output must be text or json, not %q", o.output)
	case o.timeout <= 0:
		return fmt.Errorf("--timeout must be positive, got %s", o.timeout)
	}
	return nil
}

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

// warningLine is a transient failure as a warning that names the node.
func warningLine(ref, node, reason string) string {
	where := "on an unscheduled pod"
	if node != "" {
		where = "on node " + node
	}
	return fmt.Sprintf("warning: %s (transient, %s): %s", ref, where, reason)
}

// runWait is `doomwatch wait`: it syncs (within the request timeout and --timeout), resolves the
// workloads, then applies batches until every rollout is complete (0), one is doomed (1) or
// --timeout passes (70). Progress goes to stderr; the verdict to stdout.
func runWait(ctx context.Context, src *kube.Source, m *model.Model, o *options, kf *kube.Flags, deadline time.Time, stdout, stderr io.Writer) int {
	start := time.Now()
	timeoutAt := start.Add(o.timeout)
	syncCtx, cancelSync := context.WithDeadline(ctx, earliest(deadline, timeoutAt))
	err := src.Settle(syncCtx, func(b model.Batch) { m.Apply(&b, src.Now()) })
	cancelSync()
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return interrupted(stderr)
		case timeoutAt.Before(deadline) && !time.Now().Before(timeoutAt):
			fmt.Fprintf(stderr, "doomwatch: timed out after %s while the informers synced\n", o.timeout)
			return exitTimeout
		}
		return fail(stderr, err, clusterHint(err, o.demo))
	}
	ns := src.Namespace()
	if ns == "" {
		ns = "default" // the demo without -n; a real cluster's namespace comes from the kubeconfig
	}
	g := &gate{src: src, m: m, ns: ns, warned: map[string]int{}, suspects: map[string]model.Node{}}
	if o.selector != "" {
		sel, _ := labels.Parse(o.selector) // validated
		g.targets = m.Resolve(model.KindDeployment, ns, sel)
	} else {
		refs, _ := parseWorkloads(o.args) // validated
		seen := map[workloadRef]bool{}
		for _, r := range refs {
			if !seen[r] {
				seen[r] = true
				g.targets = append(g.targets, model.Target{Kind: r.kind, Namespace: ns, Name: r.name})
			}
		}
	}
	// A kind RBAC refuses would read as "not found", or, for ReplicaSets, as a gate that never
	// sees the new pods: say so instead.
	if err := g.forbidden(m.Health().Forbidden, o.selector != ""); err != nil {
		return fail(stderr, err, rbacHint)
	}
	if len(g.targets) == 0 {
		return fail(stderr, fmt.Errorf("no deployments in namespace %s match -l %s", model.Sanitize(ns), model.Sanitize(o.selector)), "")
	}
	statuses := m.Gate(g.targets, src.Now())
	var missing []string
	for _, st := range statuses {
		switch {
		case !st.Found:
			missing = append(missing, st.Target.String())
		case st.Unsupported != "" && len(missing) == 0:
			err = fmt.Errorf("cannot wait for %s: %s", st.Target, st.Unsupported)
		}
	}
	if len(missing) > 0 {
		err = fmt.Errorf("%s not found in namespace %s", strings.Join(missing, ", "), model.Sanitize(ns))
	}
	if err != nil {
		// The error is the line on stderr; -o json still gets its document.
		if o.output == "json" {
			g.finish(g.report(ctx, statuses, exitError, ""), o, stdout, stderr)
		}
		return fail(stderr, err, "")
	}
	g.started = true

	var prog progress = &plainProgress{w: stderr}
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(f.Fd()) {
		prog = tui.StartProgress(ctx, f, o.noColor)
	}
	// end stops the progress while the verdict (and the doomed containers' logs) is made.
	end := func(code int, message string) int {
		rc := make(chan waitReport, 1)
		go func() { rc <- g.report(ctx, statuses, code, message) }()
		prog.Stop()
		return g.finish(<-rc, o, stdout, stderr)
	}
	timeout := time.NewTimer(time.Until(timeoutAt))
	defer timeout.Stop()
	poll := time.NewTicker(waitPoll)
	defer poll.Stop()
	batches := src.Batches()
	// The gate is looked at again only when the model changed (a batch, or evidence expiring); the
	// progress is shown again on every poll too, for a plain status line that has come due.
	var version uint64
	looked := false
	for {
		if v := m.Version(); !looked || v != version {
			looked, version = true, v
			statuses = m.Gate(g.targets, src.Now())
			g.note(statuses)
			if code, done := g.decide(statuses); done {
				prog.Update(statuses, time.Now())
				return end(code, "")
			}
		}
		prog.Update(statuses, time.Now())
		select {
		case <-ctx.Done():
			prog.Stop()
			return interrupted(stderr)
		case <-timeout.C:
			return end(exitTimeout, fmt.Sprintf("timed out after %s", o.timeout))
		case <-poll.C:
			m.Expire(src.Now())
		case b, ok := <-batches:
			if !ok {
				prog.Stop()
				if err := src.Err(); err != nil {
					return fail(stderr, err, "")
				}
				return interrupted(stderr)
			}
			m.Apply(&b, src.Now())
		}
	}
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func interrupted(stderr io.Writer) int {
	fmt.Fprintln(stderr, "doomwatch: interrupted")
	return exitInterrupted
}

// forbidden is the error for a kind the targets need that RBAC refuses (model.Health.Forbidden):
// the pods, the targets' own kinds, and ReplicaSets for Deployments (the new pods are theirs).
func (g *gate) forbidden(refused []model.Kind, deployments bool) error {
	need := map[model.Kind]bool{model.KindPod: true}
	if deployments {
		need[model.KindDeployment] = true
	}
	for _, t := range g.targets {
		need[t.Kind] = true
	}
	if need[model.KindDeployment] {
		need[model.KindReplicaSet] = true
	}
	for _, k := range refused {
		if need[k] {
			return fmt.Errorf("not allowed to list and watch %s in namespace %s, which the gate needs", kindPlural(k), model.Sanitize(g.ns))
		}
	}
	return nil
}

// kindPlural is the resource name of a kind: "replicasets".
func kindPlural(k model.Kind) string { return strings.ToLower(string(k)) + "s" }

// decide is the gate's answer: doomed as soon as one target is, complete when all are, or a target
// deleted while waited for (1), or not yet.
func (g *gate) decide(statuses []model.GateStatus) (code int, done bool) {
	complete := 0
	for i := range statuses {
		st := &statuses[i]
		switch {
		case !st.Found, st.Unsupported != "":
			return exitError, true
		case st.Rollout.Verdict == model.RolloutDoomed:
			return exitError, true
		case st.Rollout.Verdict == model.RolloutComplete:
			complete++
		}
	}
	if complete == len(statuses) {
		return exitOK, true
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

// fetchLogs gets the previous log (or the current one, for a container that never restarted) of
// the first doomed container of each distinct reason, concurrently, within logTimeout.
func (g *gate) fetchLogs(ctx context.Context, doomed []reportContainer) {
	ctx, cancel := context.WithTimeout(ctx, logTimeout)
	defer cancel()
	seen := map[string]struct{}{}
	var wg sync.WaitGroup
	for i := range doomed {
		c := &doomed[i]
		if c.Container == "" || !c.previous && c.ExitCode == nil {
			continue // a container that never ran (a pull, a config error) has no log
		}
		if _, ok := seen[c.Reason]; ok || len(seen) == maxLogContainers {
			continue
		}
		seen[c.Reason] = struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			lines, err := g.src.TailLog(ctx, c.Namespace, c.Pod, c.Container, c.previous, waitLogLines)
			if err != nil {
				c.LogError = model.Sanitize(err.Error())
				return
			}
			c.Log = make([]string, len(lines))
			for j, l := range lines {
				c.Log[j] = model.Sanitize(l)
			}
			c.LogPrevious = c.previous
		}()
	}
	wg.Wait()
}

// progress shows the gate's progress on stderr.
type progress interface {
	Update(statuses []model.GateStatus, now time.Time)
	Stop()
}

// plainProgress is progress for a log (CI): a line per change of a workload's verdict as it
// happens, a line per transient failure the first time it is seen, and otherwise each workload's
// line when it changed, at most every plainEvery.
type plainProgress struct {
	w        io.Writer
	verdicts map[string]model.RolloutVerdict
	lines    map[string]string
	warned   map[string]bool
	last     time.Time
}

// plainEvery is the plain progress's pace.
const plainEvery = 5 * time.Second

func (p *plainProgress) Update(statuses []model.GateStatus, now time.Time) {
	if p.verdicts == nil {
		p.verdicts, p.lines, p.warned = map[string]model.RolloutVerdict{}, map[string]string{}, map[string]bool{}
	}
	stamp := now.UTC().Format("15:04:05")
	due := now.Sub(p.last) >= plainEvery
	printed := false
	for i := range statuses {
		st := &statuses[i]
		name := st.Target.String()
		v := st.Rollout.Verdict
		if old, ok := p.verdicts[name]; !ok || old != v {
			p.verdicts[name] = v
			fmt.Fprintf(p.w, "%s %s: %s: %s\n", stamp, name, v, st.Rollout.Reason)
			p.lines[name] = progressLine(st)
			printed = true
		}
		for _, t := range st.Transient {
			if key := warnKey(&t); len(p.warned) < maxWarnings && !p.warned[key] {
				p.warned[key] = true
				fmt.Fprintf(p.w, "%s %s\n", stamp, warningLine(t.Ref(), t.Node, t.Reason))
			}
		}
		if line := progressLine(st); due && line != p.lines[name] {
			p.lines[name] = line
			fmt.Fprintf(p.w, "%s %s\n", stamp, line)
			printed = true
		}
	}
	if printed {
		p.last = now
	}
}

func (p *plainProgress) Stop() {}

// progressLine is a workload's one line: "deployment/web: 2/3 updated, 1/3 ready · 1 healthy,
// 1 progressing, 1 transient".
func progressLine(st *model.GateStatus) string {
	r := &st.Rollout
	line := fmt.Sprintf("%s: %d/%d updated, %d/%d ready · %s", st.Target, r.Updated, r.Desired, r.Ready, r.Desired, tui.BadgeCounts(st.Pods))
	if st.Old > 0 {
		line += fmt.Sprintf(" · %d old", st.Old)
	}
	return line
}
