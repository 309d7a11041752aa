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
				return nil, fmt.Errorf("%q is not TYPE/NAME: name a deployment, statefulset or daemonset, e.g. deployment/%s", a, a)
			}
			typ, name = "", a
		} else if kind != "" {
			return nil, fmt.Errorf("there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (%q)", a)
		}
		k := kind
		if typ != "" {
			var ok bool
			if k, ok = workloadKinds[strings.ToLower(typ)]; !ok {
				return nil, fmt.Errorf("cannot wait for %q: wait knows deployments, statefulsets and daemonsets", typ)
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

// gate is one run of wait: the model, its source, and what has been seen so far.
type gate struct {
	src     *kube.Source
	m       *model.Model
	targets []model.Target
	// warnings are the transient failures seen while waiting, in the order first seen, each once:
	// a transient pod usually recovers before the end, and its warning must not go with it.
	warnings []model.GateProblem
	warned   map[string]struct{}
	// suspects are the suspect nodes the targets' failures hit, by name, last word kept.
	suspects     map[string]model.Node
	suspectOrder []string
}

// runWait is `doomwatch wait`: it syncs (within the request timeout), resolves the workloads,
// then applies batches until every rollout is complete (0), one is doomed (1) or --timeout passes
// (70). Progress goes to stderr; the verdict to stdout.
func runWait(ctx context.Context, src *kube.Source, m *model.Model, o *options, kf *kube.Flags, deadline time.Time, stdout, stderr io.Writer) int {
	start := time.Now()
	syncCtx, cancelSync := context.WithDeadline(ctx, deadline)
	err := src.Settle(syncCtx, func(b model.Batch) { m.Apply(&b, src.Now()) })
	cancelSync()
	if err != nil {
		if ctx.Err() != nil {
			return interrupted(stderr)
		}
		return fail(stderr, err, clusterHint(err, o.demo))
	}
	ns := src.Namespace()
	if ns == "" {
		ns = "default" // the demo without -n; a real cluster's namespace comes from the kubeconfig
	}
	g := &gate{src: src, m: m, warned: map[string]struct{}{}, suspects: map[string]model.Node{}}
	if o.selector != "" {
		sel, _ := labels.Parse(o.selector) // validated
		g.targets = m.Resolve(model.KindDeployment, ns, sel)
		if len(g.targets) == 0 {
			return fail(stderr, fmt.Errorf("no deployments in namespace %s match -l %s", ns, o.selector), "")
		}
	} else {
		refs, _ := parseWorkloads(o.args) // validated
		for _, r := range refs {
			g.targets = append(g.targets, model.Target{Kind: r.kind, Namespace: ns, Name: r.name})
		}
	}
	statuses := m.Gate(g.targets, src.Now())
	var missing []string
	for _, st := range statuses {
		switch {
		case !st.Found:
			missing = append(missing, st.Target.String())
		case st.Unsupported != "":
			return fail(stderr, fmt.Errorf("cannot wait for %s: %s", st.Target, st.Unsupported), "")
		}
	}
	if len(missing) > 0 {
		return fail(stderr, fmt.Errorf("%s not found in namespace %s", strings.Join(missing, ", "), model.Sanitize(ns)), "")
	}

	var prog progress = &plainProgress{w: stderr}
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(f.Fd()) {
		prog = tui.StartProgress(ctx, f, o.noColor)
	}
	timeout := time.NewTimer(time.Until(start.Add(o.timeout)))
	defer timeout.Stop()
	poll := time.NewTicker(waitPoll)
	defer poll.Stop()
	batches := src.Batches()
	for {
		now := src.Now()
		statuses = m.Gate(g.targets, now)
		g.note(statuses)
		prog.Update(statuses, time.Now())
		if code, done := g.decide(statuses); done {
			prog.Stop()
			rep := g.report(ctx, statuses, code, "")
			return g.finish(rep, o, stdout, stderr)
		}
		select {
		case <-ctx.Done():
			prog.Stop()
			return interrupted(stderr)
		case <-timeout.C:
			prog.Stop()
			rep := g.report(ctx, statuses, exitTimeout, fmt.Sprintf("timed out after %s", o.timeout))
			return g.finish(rep, o, stdout, stderr)
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

func interrupted(stderr io.Writer) int {
	fmt.Fprintln(stderr, "doomwatch: interrupted")
	return exitInterrupted
}

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
			key := p.Namespace + "/" + p.Ref() + "\x00" + p.Reason
			if _, ok := g.warned[key]; !ok {
				g.warned[key] = struct{}{}
				g.warnings = append(g.warnings, p)
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
			lines, err := g.src.TailLog(ctx, c.Namespace, c.Pod, c.Container, c.previous)
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
	warned   map[string]struct{}
	last     time.Time
}

// plainEvery is the plain progress's pace.
const plainEvery = 5 * time.Second

func (p *plainProgress) Update(statuses []model.GateStatus, now time.Time) {
	if p.verdicts == nil {
		p.verdicts, p.lines, p.warned = map[string]model.RolloutVerdict{}, map[string]string{}, map[string]struct{}{}
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
			key := t.Namespace + "/" + t.Ref() + "\x00" + t.Reason
			if _, ok := p.warned[key]; !ok {
				p.warned[key] = struct{}{}
				fmt.Fprintf(p.w, "%s warning: %s\n", stamp, warningLine(&t))
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
	return fmt.Sprintf("%s: %d/%d updated, %d/%d ready · %s", st.Target, r.Updated, r.Desired, r.Ready, r.Desired, tui.BadgeCounts(st.Pods))
}

// warningLine is a transient failure as a warning that names the node.
func warningLine(p *model.GateProblem) string {
	where := "on an unscheduled pod"
	if p.Node != "" {
		where = "on node " + p.Node
	}
	return fmt.Sprintf("%s (transient, %s): %s", p.Ref(), where, p.Reason)
}
