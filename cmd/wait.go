package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"doomwatch/classify"
	"doomwatch/contract"
	"doomwatch/kube"
	"doomwatch/kube/demo"
	"doomwatch/manifest"
	"doomwatch/model"
	"doomwatch/report"
	"doomwatch/sanitize"
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
	kind contract.Kind
	name string
	// typ is a TYPE of a kind doomwatch does not model ("widgets", "services"), which discovery
	// maps once connected (gate.fromRefs); kind is then "".
	typ string
}

// resourceType is what a TYPE of TYPE/NAME may be: a resource or kind name, qualified by version
// and group with dots ("widgets.v1.example.com").
var resourceType = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?$`)

// parseWorkloads reads kubectl's two forms: TYPE/NAME arguments, and TYPE followed by names.
// Kinds are matched without regard to case, as kubectl does.
func parseWorkloads(args []string) ([]workloadRef, error) {
	var out []workloadRef
	var kind contract.Kind // the TYPE of the TYPE NAME... form
	for _, a := range args {
		typ, name, slash := strings.Cut(a, "/")
		if !slash {
			if k, ok := contract.ParseWaitable(a); ok && kind == "" && len(out) == 0 {
				kind = k
				continue
			}
			if kind == "" {
				return nil, fmt.Errorf("%q is not TYPE/NAME: name a deployment, statefulset, daemonset, job, cronjob, rollout, pod or any other kind the cluster serves, e.g. deployment/%s", a, a)
			}
			typ, name = "", a
		} else if typ == "" {
			return nil, fmt.Errorf("arguments in resource/name form must have a single resource and name, not %q", a)
		} else if kind != "" {
			return nil, fmt.Errorf("there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (%q)", a)
		}
		ref := workloadRef{kind: kind, name: name}
		if typ != "" {
			var ok bool
			if ref.kind, ok = contract.ParseWaitable(typ); !ok {
				// Any other kind the cluster serves, judged with kstatus; discovery says which once
				// connected.
				if !resourceType.MatchString(typ) {
					return nil, fmt.Errorf("invalid resource type %q", typ)
				}
				ref.typ = typ
			}
		}
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			return nil, fmt.Errorf("invalid name %q: %s", name, errs[0])
		}
		out = append(out, ref)
	}
	if kind != "" && len(out) == 0 {
		return nil, fmt.Errorf("name the %s to wait for", strings.ToLower(string(kind)))
	}
	return out, nil
}

// wait is `doomwatch wait`: a deploy gate.
type wait struct {
	*common
	selector string
	timeout  time.Duration
	stable   time.Duration
	output   string
	refs     []workloadRef
	// files and recursive are -f and -R; objs are the objects read from them (prepare).
	files     []string
	recursive bool
	objs      []manifest.Object
	// watch is the namespaces the manifests' objects need watched: one named namespace, or every
	// namespace when they span several (or name some and leave others to -n's).
	watch sourceOptions
}

func newWait() command { return &wait{} }

func (w *wait) name() string { return "wait" }

func (w *wait) addFlags(fs *pflag.FlagSet) *common {
	w.common = newCommon()
	fs.StringVarP(&w.selector, "selector", "l", "", "Wait for every Deployment whose labels match this selector, as kubectl's -l.")
	fs.StringSliceVarP(&w.files, "filename", "f", nil, "Wait for every object of these manifests (files, directories, - for stdin), as kubectl apply -f reads them; doomwatch never applies.")
	fs.BoolVarP(&w.recursive, "recursive", "R", false, "Read the directories of -f recursively.")
	fs.DurationVar(&w.timeout, "timeout", defaultWaitTimeout, "Give up (exit 70) when the rollouts have not completed in this long.")
	fs.DurationVar(&w.stable, "stable", 0, "Once a rollout is complete, keep judging it this long; a doom within it fails the wait (0: exit once complete).")
	fs.StringVarP(&w.output, "output", "o", "text", "Verdict format: "+report.GatePrinters.List()+" (the document is on stdout; progress goes to stderr).")
	w.demoFlags(fs, false)
	w.modelFlags(fs)
	w.programFlags(fs)
	return w.common
}

func (w *wait) usage(prog string) string {
	return fmt.Sprintf(`%[1]s wait: a deploy gate. Waits until each workload's rollout completes, and fails fast,
with the reasons, when one is doomed.

Usage:
  %[1]s wait deployment/NAME [statefulset/NAME daemonset/NAME job/NAME cronjob/NAME rollout/NAME pod/NAME ...] [-n NS] [--timeout 10m] [--stable 1m] [-o text|json|junit]
  %[1]s wait deployment NAME [NAME ...]    the names of one kind
  %[1]s wait widgets/NAME service/NAME      any other kind the cluster serves, judged with kstatus
  %[1]s wait -l SELECTOR                    every Deployment whose labels match
  %[1]s wait -f DIR|FILE|- [-R]             every object of the manifests (after kubectl apply -f)
  %[1]s wait --context eu,us deploy/web     in every context (a comma list, a glob, --all-contexts)

Names take kubectl's forms: deployment/web, deploy/web, deployments.apps/web; sts/ and ds/ too.
StatefulSets and DaemonSets follow kubectl rollout status's rules for them (RollingUpdate only).
A Job is complete on its Complete condition and doomed on its Failed one, or earlier when a pod
of it is doomed for a reason its retries cannot fix (an image that does not exist). An Argo
Rollout (rollout/, ro/) is complete when Healthy, doomed when Degraded or aborted, or earlier when
its canary's pods are doomed; paused at a step, it waits.
A CronJob (cronjob/, cj/) is judged by its latest Job; complete before it has made one, as Krane
judges it. A bare pod (pod/NAME) is judged as Krane judges one it deployed: complete once it has
Succeeded, doomed when its verdict is doomed or when it is being deleted. Any other TYPE/NAME the
cluster serves (services/web, widgets.example.com/blue) is judged with kstatus, as below.
Transient failures (a flaky node) are warnings, not failures. Progress goes to stderr: a live view
on a terminal, otherwise a plain line at most every 5s and one per change of verdict.

-f reads manifests as kubectl apply -f does (files, directories, - for stdin, -R to recurse; no
URLs, no kustomize) and never applies them. Each object is found in the cluster, in its
manifest's namespace or -n's: the kinds above are waited for as above; any other (a ConfigMap, a
Service, a custom resource) is judged with kstatus, as Helm 4 and Flux judge it: Current is
complete, Failed (a Stalled condition) doomed, anything else waits; while it waits, a doomed pod it
controls (through ownerReferences, at any depth) dooms it. A file that does not parse, an
object not found and a kind the cluster does not serve are a line each, and exit 1.

A workload annotated krane.shopify.io/timeout-override (Krane's: PT5M, 5M, 1h30m) times the wait
out (exit 70) when it is not complete that long after the wait began.

--stable D soaks: a complete workload must stay complete for D before the wait passes, and one
that turns doomed within it (its rollout, or one of its current pods) fails the wait. One that
falls back to progressing starts its D again when it completes again. --timeout bounds it all.

With several contexts each workload is waited for in each of them: 0 once it is complete in
every context, 1 as soon as it is doomed or missing in any (with that context's reasons), 70 at
the timeout with what is missing in each.

The verdict goes to stdout: text, a JSON document (-o json), or JUnit XML (-o junit: a testsuite
per context, a testcase per workload) for a CI's test report. Under GitHub Actions
(GITHUB_ACTIONS=true) each failed workload is also an ::error annotation on stderr, and each
suspect node and transient failure a ::warning.

Exit codes: 0 all rollouts completed (and, with --stable, stayed complete for it), 1 one is doomed
(or not found, or an error), 2 usage error, 70 timeout (what was still missing is printed), 130
interrupted.

Flags:
`, prog)
}

// validate checks wait's arguments and flags.
func (w *wait) validate(fs *pflag.FlagSet, args []string) error {
	if err := w.common.validate(fs); err != nil {
		return err
	}
	ways := 0
	for _, given := range []bool{len(args) > 0, w.selector != "", len(w.files) > 0} {
		if given {
			ways++
		}
	}
	switch {
	case ways > 1 && len(w.files) > 0:
		return errors.New("-f's manifests name the workloads: not with names or -l too")
	case ways > 1:
		return errors.New("name workloads or pass -l, not both (as kubectl rollout status)")
	}
	if ways == 0 {
		return errors.New("wait needs workloads to wait for: deployment/NAME ..., -l SELECTOR, or -f MANIFESTS")
	}
	if w.recursive && len(w.files) == 0 {
		return errors.New("-R reads the directories of -f: pass -f too")
	}
	if len(w.files) > 0 && w.demo {
		return errors.New("-f looks for the manifests' objects in a cluster; the demo has none of yours")
	}
	var err error
	if w.refs, err = parseWorkloads(args); err != nil {
		return err
	}
	if _, err := parseSelector(w.selector); err != nil {
		return err
	}
	if err := report.GatePrinters.Check(w.output); err != nil {
		return err
	}
	if w.timeout <= 0 {
		return fmt.Errorf("--timeout must be positive, got %s", w.timeout)
	}
	if w.stable < 0 {
		return fmt.Errorf("--stable must not be negative, got %s", w.stable)
	}
	return w.validateValues()
}

// prepare reads -f's manifests before wait connects: each file, document or object that cannot be
// read is a line of its own, and none is waited for (exit 1).
func (w *wait) prepare(p *Program) error {
	if len(w.files) == 0 {
		return nil
	}
	objs, err := manifest.Read(w.files, w.recursive, p.Stdin)
	if err != nil {
		var lines []string
		for _, e := range flatten(err) {
			lines = append(lines, e.Error())
		}
		return &LinesError{Lines: lines}
	}
	if len(objs) == 0 {
		return fmt.Errorf("no objects in %s", strings.Join(w.files, ", "))
	}
	// A namespace named in a manifest and another by -n is kubectl's error (cli-runtime
	// pkg/resource/visitor.go RequireNamespace, verbatim), since apply -f would have refused them too.
	var lines []string
	named := map[string]bool{}
	unnamed := false
	for _, o := range objs {
		ns := o.GetNamespace()
		switch {
		case clusterScoped[o.GroupVersionKind().GroupKind().String()]:
		case ns != "" && w.kube.Namespace() != "" && ns != w.kube.Namespace():
			lines = append(lines, o.Source.Line(fmt.Sprintf("the namespace from the provided object %q does not match the namespace %q. You must pass '--namespace=%s' to perform this operation.",
				ns, w.kube.Namespace(), ns)))
		case ns != "":
			named[ns] = true
		default:
			unnamed = true
		}
	}
	if len(lines) > 0 {
		return &LinesError{Lines: lines}
	}
	// The namespaces to watch: those named, and -n's or the kubeconfig's for the objects that name
	// none. One is watched alone (-n's, the default, needs no override); several need every
	// namespace watched.
	w.watch = sourceOptions{demoFrom: demo.Deployed}
	if unnamed && len(named) > 0 {
		if def, err := w.kube.DefaultNamespace(); err == nil && def != "" {
			named[def] = true
		} else {
			named[""] = true // unknown until connected: more than one
		}
	}
	switch {
	case len(named) > 1:
		w.watch.allNamespaces = true
	case len(named) == 1 && w.kube.Namespace() == "":
		for ns := range named {
			w.watch.namespace = ns
		}
	}
	w.objs = objs
	return nil
}

// clusterScoped are the built-in kinds without a namespace that manifests often hold beside their
// workloads (as GroupKind strings): they do not make the wait watch -n's namespace. Any other
// kind's scope is discovery's, once connected.
var clusterScoped = map[string]bool{
	"Namespace": true, "PersistentVolume": true, "ClusterRole.rbac.authorization.k8s.io": true,
	"ClusterRoleBinding.rbac.authorization.k8s.io": true, "StorageClass.storage.k8s.io": true,
	"CustomResourceDefinition.apiextensions.k8s.io": true, "PriorityClass.scheduling.k8s.io": true,
	"IngressClass.networking.k8s.io": true,
}

// flatten is the errors an errors.Join holds, or err alone.
func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// validateFleet: wait judges each context's rollouts with a gate of its own.
func (w *wait) validateFleet() error { return nil }

// source: wait's -l selects Deployments, not pods, so every pod of the namespace is watched; on
// the demo, the story starts once its rollouts have begun, as a gate runs after the deploy.
func (w *wait) source() sourceOptions {
	if len(w.objs) > 0 {
		return w.watch
	}
	return sourceOptions{demoFrom: demo.Deployed}
}

// run syncs (within the request timeout and --timeout), resolves the workloads, then applies
// batches until every rollout is complete, one is doomed or --timeout passes. Progress goes to
// stderr; the verdict to stdout. Across several contexts, each context has a gate of its own
// over its own model, and the wait ends as soon as one is doomed or missing, when all are
// complete, or at the timeout.
func (w *wait) run(ctx context.Context, e *env) error {
	start, began := time.Now(), e.src.Now() // began: on the cluster's clock, for the workloads' own timeouts
	github := os.Getenv("GITHUB_ACTIONS") == "true"
	timeoutAt := start.Add(w.timeout)
	// Allowed, as a watch for a doom after the rollout whose best end is the timeout. The window
	// is on the cluster's clock, which the demo's --speed runs faster.
	if w.stable > 0 && time.Duration(float64(w.stable)/w.speed) >= w.timeout {
		fmt.Fprintf(e.Stderr, "doomwatch: note: --stable %s is not shorter than --timeout %s: the wait cannot pass (exit 0), only fail (1) or time out (70)\n",
			model.ShortDuration(w.stable), model.ShortDuration(w.timeout))
	}
	syncCtx, cancelSync := context.WithDeadline(ctx, earliest(e.deadline, timeoutAt))
	err := e.settleAll(syncCtx)
	cancelSync()
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return ErrInterrupted
		case timeoutAt.Before(e.deadline) && !time.Now().Before(timeoutAt):
			return fmt.Errorf("%w after %s while the informers synced", ErrTimedOut, w.timeout)
		}
		return w.cluster(err)
	}
	clusters := e.m.Clusters()
	gates := make([]*gate, len(clusters))
	statuses := make([][]model.GateStatus, len(clusters))
	// Every context is looked at before the wait starts, so that one missing workload does not
	// hide another context's: the error names each context that cannot wait.
	var failed []error
	// The manifests' objects wait has no informer for are looked up once, each request bounded as
	// --request-timeout bounds kubectl's.
	rt, _ := w.kube.RequestTimeout() // validated
	// wake says one of those objects changed.
	wake := make(chan struct{}, 1)
	for i, c := range clusters {
		g, err := w.newGate(ctx, rt, e.src.Sources()[i], c.Model, began, wake)
		if err == nil {
			statuses[i] = c.Gate(g.targets, e.src.Now())
			err = g.check(statuses[i])
		}
		gates[i] = g
		if err != nil {
			if e.m.Multi() {
				err = contextError(c.Context, err)
			}
			failed = append(failed, err)
			continue
		}
		g.started = true
	}
	if len(failed) > 0 {
		err := failed[0]
		if lines := allLines(failed); lines != nil {
			err = lines // wait -f's: every context's lines, each named by its context
		} else if len(failed) > 1 {
			rest := make([]string, len(failed)-1)
			for i, f := range failed[1:] {
				rest[i] = f.Error()
			}
			// One line, and the first error's kind for main's hint.
			err = fmt.Errorf("%w; %s", failed[0], strings.Join(rest, "; "))
		}
		// The error is the line on stderr; -o json and junit still get their document, and GitHub
		// its annotations, when every context got as far as its workloads' statuses.
		if (w.output != "text" || github) && !slices.ContainsFunc(statuses, func(s []model.GateStatus) bool { return s == nil }) {
			rep := w.document(ctx, e, gates, statuses, report.Failed, "")
			if w.output != "text" {
				if perr := w.print(e, &rep, err, start); perr != nil {
					return perr
				}
			}
			if github {
				if perr := annotate(e, &rep); perr != nil {
					return perr
				}
			}
		}
		return err
	}

	var prog progress = &plainProgress{w: e.Stderr, soak: w.stable > 0}
	if f, ok := e.Stderr.(*os.File); ok && term.IsTerminal(f.Fd()) {
		prog = tui.StartProgress(ctx, f, w.noColor)
	}
	// end stops the progress while the verdict (and the doomed containers' logs) is made, then
	// prints it.
	end := func(how report.End, message string) error {
		rc := make(chan report.Gate, 1)
		go func() { rc <- w.document(ctx, e, gates, statuses, how, message) }()
		prog.Stop()
		rep := <-rc
		var result error
		if rep.Verdict != report.Complete {
			result = &GateError{Verdict: rep.Verdict}
		}
		if err := w.print(e, &rep, result, start); err != nil {
			return err
		}
		if github {
			if err := annotate(e, &rep); err != nil {
				return err
			}
		}
		return result
	}
	timeout := time.NewTimer(time.Until(timeoutAt))
	defer timeout.Stop()
	poll := time.NewTicker(waitPoll)
	defer poll.Stop()
	batches := e.src.Batches()
	// The gates are looked at again only when a model changed (a batch, or evidence expiring);
	// the progress is shown again on every poll too, for a plain status line that has come due.
	versions := make([]uint64, len(clusters))
	looked := false
	for {
		ended := 0
		for i, c := range clusters {
			if v := c.Version(); !looked || v != versions[i] {
				versions[i] = v
				statuses[i] = c.Gate(gates[i].targets, e.src.Now())
				gates[i].note(statuses[i])
				gates[i].lookOwned(ctx, e.src.Now())
			}
			switch how, done := gates[i].decide(statuses[i], e.src.Now()); {
			case done && how == report.Failed:
				prog.Update(w.shown(e, gates, statuses), time.Now())
				return end(report.Failed, "")
			case done && how == report.TimedOut:
				prog.Update(w.shown(e, gates, statuses), time.Now())
				return end(report.TimedOut, gates[i].ownTimeout)
			case done:
				ended++
			}
		}
		looked = true
		if ended == len(clusters) {
			prog.Update(w.shown(e, gates, statuses), time.Now())
			return end(report.Ended, "")
		}
		prog.Update(w.shown(e, gates, statuses), time.Now())
		select {
		case <-ctx.Done():
			prog.Stop()
			return ErrInterrupted
		case <-timeout.C:
			return end(report.TimedOut, fmt.Sprintf("timed out after %s", w.timeout))
		case <-poll.C:
			e.m.Expire(e.src.Now())
		case <-wake:
			looked = false // a followed object changed, perhaps its UID: its pods are looked at again
		case bs, ok := <-batches:
			if !ok {
				prog.Stop()
				if err := e.src.Err(); err != nil {
					return err
				}
				return ErrInterrupted
			}
			e.m.ApplyAll(bs, e.src.Now())
		}
	}
}

// newGate resolves the workloads in one cluster: in its namespace (-n, else its context's), the
// named ones or the Deployments -l selects.
func (w *wait) newGate(ctx context.Context, rt time.Duration, src *kube.Source, m *model.Model, began time.Time, wake chan<- struct{}) (*gate, error) {
	ns := src.Namespace()
	if ns == "" {
		ns = "default" // the demo without -n; a real cluster's namespace comes from the kubeconfig
	}
	g := &gate{src: src, m: m, ns: ns, warned: map[string]int{}, suspects: map[string]model.Node{}, stable: w.stable, rt: rt,
		startAt: began, wake: wake}
	if len(w.objs) > 0 {
		g.fromManifests(ctx, rt, w.objs, wake)
	} else if w.selector != "" {
		sel, _ := labels.Parse(w.selector) // validated
		g.targets = m.Resolve(contract.KindDeployment, ns, sel)
		for i := range g.targets {
			g.targets[i].Since = began
		}
	} else {
		seen := map[model.Target]bool{}
		for _, r := range w.refs {
			if t := (model.Target{Kind: r.kind, Namespace: ns, Name: r.name, Since: began}); !seen[t] && r.typ == "" {
				seen[t] = true
				g.targets = append(g.targets, t)
			}
		}
		g.fromRefs(ctx, rt, w.refs, ns, seen, wake)
	}
	// A kind RBAC refuses would read as "not found", or, for ReplicaSets, as a gate that never
	// sees the new pods: say so instead.
	if err := g.forbidden(m.Health().Forbidden, w.selector != ""); err != nil {
		return g, w.cluster(err)
	}
	if len(g.targets) == 0 && w.selector != "" {
		return g, fmt.Errorf("no deployments in namespace %s match -l %s", sanitize.Text(ns), sanitize.Text(w.selector))
	}
	return g, nil
}

// fromManifests makes wait -f's objects the gate's: the kinds it models are targets, in the
// manifest's namespace or -n's; any other object is looked up and followed (follow), each request
// bounded by rt, as --request-timeout bounds kubectl's.
func (g *gate) fromManifests(ctx context.Context, rt time.Duration, objs []manifest.Object, wake chan<- struct{}) {
	ns := g.src.DefaultNamespace()
	if ns == "" {
		ns = "default"
	}
	g.ns = ns
	g.spans = g.src.Namespace() == ""
	g.from = map[model.Target]manifest.Source{}
	seen := map[model.Target]bool{}
	fl := &follower{g: g, rt: rt, wake: wake, crds: map[schema.GroupVersionResource]kraneCRD{}}
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		ons := o.GetNamespace()
		if ons == "" {
			ons = ns
		}
		if k, ok := contract.WaitableKind(gvk.Group, gvk.Kind); ok {
			t := model.Target{Kind: k, Namespace: ons, Name: o.GetName(), Since: g.startAt}
			if !seen[t] {
				seen[t] = true
				g.targets = append(g.targets, t)
				g.from[t] = o.Source
			}
			continue
		}
		fl.follow(ctx, o.GetAPIVersion(), gvk.Kind, ons, o.GetName(), o.Source.Line)
	}
}

// fromRefs makes the TYPE/NAME arguments of kinds doomwatch does not model the gate's: each TYPE is
// mapped to its kind through discovery as kubectl maps it (kube.Source.KindFor), then the object
// is looked up and followed in namespace ns (follow); a kind doomwatch models, named by a TYPE
// only discovery knows ("deployments.v1.apps"), is a target.
//
// seen are the targets already named, which a TYPE only discovery knows does not add twice.
func (g *gate) fromRefs(ctx context.Context, rt time.Duration, refs []workloadRef, ns string, seen map[model.Target]bool, wake chan<- struct{}) {
	fl := &follower{g: g, rt: rt, wake: wake, crds: map[schema.GroupVersionResource]kraneCRD{}}
	asIs := func(line string) string { return line }
	for _, r := range refs {
		if r.typ == "" {
			continue
		}
		gvk, err := g.src.KindFor(r.typ)
		if err != nil {
			g.notFound = append(g.notFound, err.Error())
			continue
		}
		if k, ok := contract.WaitableKind(gvk.Group, gvk.Kind); ok {
			if t := (model.Target{Kind: k, Namespace: ns, Name: r.name, Since: g.startAt}); !seen[t] {
				seen[t] = true
				g.targets = append(g.targets, t)
			}
			continue
		}
		fl.follow(ctx, gvk.GroupVersion().String(), gvk.Kind, ns, r.name, asIs)
	}
}

// follower looks up and follows the objects of kinds doomwatch does not model for one gate: each
// request bounded by rt, each change sent on wake, each CRD's Krane annotations read once.
type follower struct {
	g    *gate
	rt   time.Duration
	wake chan<- struct{}
	crds map[schema.GroupVersionResource]kraneCRD
}

// follow looks object name of apiVersion and kind up in namespace ns and, when it exists, follows
// it until ctx ends, judged with kstatus or its CRD's Krane conditions (followed); a line (made by
// line, which names where it was read) says why it cannot be.
func (fl *follower) follow(ctx context.Context, apiVersion, kind, ns, name string, line func(string) string) {
	g := fl.g
	bounded := func(f func(context.Context)) {
		rctx, cancel := context.WithTimeout(ctx, fl.rt)
		defer cancel()
		f(rctx)
	}
	var f kube.Found
	var err error
	bounded(func(ctx context.Context) { f, err = g.src.Lookup(ctx, apiVersion, kind, ns, name) })
	if err != nil {
		g.notFound = append(g.notFound, line(err.Error()))
		return
	}
	if !f.Namespaced {
		ns = ""
	}
	if !f.Exists {
		g.notFound = append(g.notFound, line(sanitize.Text(strings.ToLower(kind)+"/"+name)+" not found"+inNamespace(ns)))
		return
	}
	// A Krane user's custom resources are judged as Krane judges them: by the rollout conditions
	// and the timeout on their CRD, read once per kind.
	crd, read := fl.crds[f.Resource]
	if !read {
		var a map[string]string
		bounded(func(ctx context.Context) { a, _ = g.src.CRDAnnotations(ctx, f.Resource) })
		if v, ok := a[classify.KraneAnnotation]; ok {
			var err error
			if crd.conds, err = classify.ParseKraneConditions(v, compileJSONPath); err != nil {
				g.notFound = append(g.notFound, line(fmt.Sprintf("annotation %s on %s is invalid: %s",
					classify.KraneAnnotation, sanitize.Text(f.Resource.GroupResource().String()), sanitize.Text(err.Error()))))
			}
		}
		if v, ok := a[classify.KraneInstanceTimeout]; ok {
			// Krane's to_i: whole seconds; a value it cannot parse is none, as its rescue makes it.
			d, _ := classify.KraneDuration(v)
			crd.timeout = d.Truncate(time.Second)
		}
		fl.crds[f.Resource] = crd
	}
	r := newFollowed(kind, ns, name, crd, f.Object)
	g.resources = append(g.resources, r)
	poke := func() {
		select {
		case fl.wake <- struct{}{}:
		default:
		}
	}
	g.src.Follow(ctx, f, ns, name, func(obj *unstructured.Unstructured) { r.set(obj); poke() },
		func(err error) { r.refuse(err); poke() })
}

// compileJSONPath is kube's JSONPath, as classify reads Krane's rollout conditions with it.
func compileJSONPath(expr string) (classify.JSONPath, error) {
	j, err := kube.CompileJSONPath(expr)
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return j, nil
}

// inNamespace is " in namespace NS", or "" for a cluster-scoped object.
func inNamespace(ns string) string {
	if ns == "" {
		return ""
	}
	return " in namespace " + sanitize.Text(ns)
}

// check is the error of statuses the gate cannot wait on: workloads not found, or without a
// rollout status.
func (g *gate) check(statuses []model.GateStatus) error {
	if g.from != nil {
		return g.checkManifests(statuses)
	}
	var missing []string
	var err error
	for _, st := range statuses {
		switch {
		case !st.Found:
			missing = append(missing, st.Target.String())
		case st.Unsupported != "" && len(missing) == 0:
			err = fmt.Errorf("cannot wait for %s: %s", st.Target, st.Unsupported)
		}
	}
	if len(missing) > 0 {
		err = fmt.Errorf("%s not found in namespace %s", strings.Join(missing, ", "), sanitize.Text(g.ns))
	}
	// TYPE/NAME arguments of other kinds: a line each, as wait -f's.
	if len(g.notFound) > 0 {
		lines := slices.Clone(g.notFound)
		if err != nil {
			lines = append(lines, err.Error())
		}
		return &LinesError{Lines: lines}
	}
	return err
}

// checkManifests is check for wait -f: a line for each object not found, of a kind the cluster
// does not serve, or without a rollout status, naming the manifest it was read from.
func (g *gate) checkManifests(statuses []model.GateStatus) error {
	lines := slices.Clone(g.notFound)
	for _, st := range statuses {
		switch {
		case !st.Found:
			lines = append(lines, g.from[st.Target].Line(st.Target.String()+" not found"+inNamespace(st.Target.Namespace)))
		case st.Unsupported != "":
			lines = append(lines, g.from[st.Target].Line("cannot wait for "+st.Target.String()+": "+st.Unsupported))
		}
	}
	if len(lines) > 0 {
		return &LinesError{Lines: lines}
	}
	return nil
}

// document is the verdict of the gates (one per context) of a wait that ended as how says.
func (w *wait) document(ctx context.Context, e *env, gates []*gate, statuses [][]model.GateStatus, how report.End, message string) report.Gate {
	if len(e.m.Clusters()) == 1 {
		return gates[0].document(ctx, statuses[0], how, message)
	}
	docs := make([]report.Gate, len(gates))
	contexts := make([]string, len(gates))
	for i, g := range gates {
		// Each context's document says how its own wait stood: complete in one while another's
		// doom ended the wait, or still progressing there.
		own := how
		if h, done := g.decide(statuses[i], e.src.Now()); done {
			own = h
		} else if how == report.Failed {
			own = report.Undecided
		}
		docs[i] = g.document(ctx, statuses[i], own, message)
		contexts[i] = e.m.Clusters()[i].Context
	}
	return report.FleetGate(contexts, docs)
}

// shown are the statuses the progress shows (gate.shown): one context's, or every context's with
// its workloads named "deployment/web@eu".
func (w *wait) shown(e *env, gates []*gate, statuses [][]model.GateStatus) []model.GateStatus {
	now := e.src.Now()
	if len(statuses) == 1 {
		return gates[0].shown(statuses[0], now)
	}
	var out []model.GateStatus
	for i, sts := range statuses {
		for _, st := range gates[i].shown(sts, now) {
			st.Target.Name += "@" + e.m.Clusters()[i].Context
			st.Name += "@" + e.m.Clusters()[i].Context
			out = append(out, st)
		}
	}
	return out
}

// allLines gathers the lines of the errors that are wait -f's LinesErrors, with the other errors
// as a line each, into one LinesError; nil when none is. A context's lines keep its name.
func allLines(errs []error) *LinesError {
	var out LinesError
	some := false
	for _, err := range errs {
		var le *LinesError
		if !errors.As(err, &le) {
			out.Lines = append(out.Lines, err.Error())
			continue
		}
		some = true
		prefix := ""
		var ce *contextLines
		if errors.As(err, &ce) {
			prefix = "context " + ce.context + ": "
		}
		for _, l := range le.Lines {
			out.Lines = append(out.Lines, prefix+l)
		}
	}
	if !some {
		return nil
	}
	return &out
}

// contextLines is a context's error, named so that its lines can be (allLines).
type contextLines struct {
	context string
	err     error
}

func (c *contextLines) Error() string { return "context " + c.context + ": " + c.err.Error() }
func (c *contextLines) Unwrap() error { return c.err }

// contextError names the context an error is from, keeping its kind for main's hint.
func contextError(context string, err error) error {
	return &contextLines{context: context, err: err}
}

// print prints the verdict rep of a wait that started at start and returns result, with result's
// exit code and how long it took.
func (w *wait) print(e *env, rep *report.Gate, result error, start time.Time) error {
	rep.ExitCode = e.ExitCode(result)
	rep.StartedAt = start.UTC().Truncate(time.Millisecond)
	rep.Seconds = time.Since(start).Round(time.Millisecond).Seconds()
	if err := report.GatePrinters.Print(e.Stdout, w.output, rep); err != nil {
		return fmt.Errorf("writing the verdict: %w", err)
	}
	return nil
}

// annotate writes the verdict rep as GitHub Actions annotations on stderr, beside the progress:
// stdout holds the document, and the runner reads workflow commands from both.
func annotate(e *env, rep *report.Gate) error {
	if err := rep.WriteGitHubAnnotations(e.Stderr); err != nil {
		return fmt.Errorf("writing the GitHub annotations: %w", err)
	}
	return nil
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// andList is "a, b and c".
func andList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}
