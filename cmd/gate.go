package cmd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"doomwatch/classify"
	"doomwatch/contract"
	"doomwatch/kube"
	"doomwatch/manifest"
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
	// started is set once the wait proper began, at startAt on the cluster's clock: a workload
	// missing after that was deleted, and a workload's own timeout (GateStatus.Timeout) counts
	// from then.
	started bool
	startAt time.Time
	// ownTimeout is the message of the workload whose own timeout ended the wait.
	ownTimeout string
	// warnings are the transient failures seen while waiting, one per container (its latest
	// reason), in the order first seen, at most maxWarnings (moreWarnings counts the rest): a
	// transient pod usually recovers before the end, and its warning must not go with it.
	warnings     []model.GateProblem
	warned       map[string]int // warnKey → index in warnings, -1 when not kept
	moreWarnings int
	// suspects are the suspect nodes the targets' failures hit, by name, last word kept.
	suspects     map[string]model.Node
	suspectOrder []string
	// stable is --stable: how long each target must stay complete before the gate passes; 0
	// passes as soon as every target is complete. soak judges the targets under it (window).
	stable time.Duration
	soak   *model.Soak
	// from is, for wait -f, the manifest each target was read from; resources are the manifests'
	// objects of kinds doomwatch does not model, followed and judged with kstatus; notFound is a
	// line for each object that does not exist (or whose kind the cluster does not serve).
	from      map[model.Target]manifest.Source
	resources []*followed
	notFound  []string
	// spans says wait -f watches every namespace: its objects are in more than one.
	spans bool
	// parents are the ownerReferences of the objects between a followed object and the pods it
	// controls that the model does not hold (a Knative Revision), by UID, as one GET each found
	// them; unread is when a GET failed, to try again after ownerRetry. rt bounds each GET.
	parents map[types.UID][]metav1.OwnerReference
	unread  map[types.UID]time.Time
	rt      time.Duration
	// wake is poked when a followed object changed, or a controller whose GET failed is due again.
	wake chan<- struct{}
}

// ownerRetry is how long a controller whose GET failed (a timeout, RBAC without get on its kind)
// is left before it is read again: its pods do not explain their owner's verdict meanwhile.
const ownerRetry = 10 * time.Second

// followed is one object of wait -f's of a kind doomwatch does not model, judged as
// kube.Source.Follow last delivered it: once per change, not per look of the gate.
type followed struct {
	// kind, namespace and name are sanitised, for the document; ns is its namespace as the API
	// has it, "" for a cluster-scoped object.
	kind, namespace, name string
	ns                    string
	// crd is what its CRD's Krane annotations say: rollout conditions that judge it in place of
	// kstatus, and its timeout.
	crd kraneCRD
	mu  sync.Mutex
	// now is its verdict as of the latest state; refused is set once its list or watch was
	// refused, which no later state undoes. uid is the latest state's, "" once deleted.
	now     report.Workload
	refused bool
	uid     types.UID
	// owned is what the pods it controls said at the gate's latest look.
	owned model.Owned
	// timeout is its own timeout, as Krane gives a custom resource one: its timeout-override,
	// else its CRD's instance-timeout; 0 for none. timeoutFrom names the annotation.
	timeout     time.Duration
	timeoutFrom string
}

// kraneCRD is what a CustomResourceDefinition's Krane annotations say of its resources: conds
// (krane.shopify.io/instance-rollout-conditions), nil without it; timeout
// (krane.shopify.io/instance-timeout), 0 without it.
type kraneCRD struct {
	conds   *classify.KraneConditions
	timeout time.Duration
}

// newFollowed is the object found in state obj.
func newFollowed(kind, namespace, name string, crd kraneCRD, obj *unstructured.Unstructured) *followed {
	r := &followed{kind: sanitize.Text(kind), namespace: sanitize.Text(namespace), name: sanitize.Text(name), ns: namespace, crd: crd}
	r.set(obj)
	return r
}

// refuse records that the object's list or watch was refused: it cannot be judged.
func (r *followed) refuse(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refused = true
	r.now = r.workload(report.Unsupported, "cannot follow it: "+sanitize.Text(err.Error()))
}

// set judges the object's newest state, nil once deleted: with kstatus (classify.ResourceVerdict),
// or its CRD's Krane conditions (classify.KraneVerdict); and reads its timeout, as Krane does
// (CustomResource#timeout: its own timeout-override, else the CRD's instance-timeout).
func (r *followed) set(obj *unstructured.Unstructured) {
	var w report.Workload
	var uid types.UID
	timeout, from := r.crd.timeout, "its CRD's "+classify.KraneInstanceTimeout+" annotation"
	switch {
	case obj == nil:
		w = r.workload(report.Missing, strings.ToLower(r.kind)+"/"+r.name+" was deleted while waiting")
	case r.crd.conds != nil:
		v := classify.KraneVerdict(obj, r.crd.conds)
		w = r.workload(report.Verdict(v.Class), sanitize.Text(v.Reason))
	default:
		v := classify.ResourceVerdict(obj)
		w = r.workload(report.Verdict(v.Class), sanitize.Text(v.Reason))
	}
	if obj != nil {
		uid = obj.GetUID()
		if v, ok := obj.GetAnnotations()[contract.TimeoutAnnotation]; ok {
			d, err := classify.TimeoutOverride(v)
			if err != nil {
				w = r.workload(report.Unsupported, "annotation "+contract.TimeoutAnnotation+": "+sanitize.Text(err.Error()))
			}
			timeout, from = d, "its "+contract.TimeoutAnnotation+" annotation"
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.refused {
		r.now = w
	}
	r.uid, r.timeout, r.timeoutFrom = uid, timeout, from
}

// timedOut is the message of the object's own timeout once it has passed since the wait began at
// start, "" before that, or without one.
func (r *followed) timedOut(start, now time.Time) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.timeout <= 0 || now.Sub(start) < r.timeout {
		return ""
	}
	return fmt.Sprintf("%s/%s timed out after %s (%s)", strings.ToLower(r.kind), r.name, model.ShortDuration(r.timeout), r.timeoutFrom)
}

// workload is the object's document entry with verdict and reason.
func (r *followed) workload(verdict report.Verdict, reason string) report.Workload {
	return report.Workload{Kind: r.kind, Namespace: r.namespace, Name: r.name, Verdict: verdict, Reason: reason}
}

// current is the object's verdict now: its own, in the light of the pods it controls
// (classify.OwnedVerdict); a doomed object lists its doomed pods too.
func (r *followed) current() report.Workload {
	r.mu.Lock()
	defer r.mu.Unlock()
	w, o := r.now, &r.owned
	if w.Verdict != report.Progressing && w.Verdict != report.Doomed || len(o.Problems) == 0 && o.Doomed == "" {
		return w
	}
	pods := classify.OwnedPods{Total: o.Pods.Pods, Doomed: o.Pods.Doomed, Workload: o.Doomed}
	if len(o.Problems) > 0 {
		pods.Reason = o.Problems[0].Reason
	}
	v := classify.OwnedVerdict(classify.RolloutVerdict{Class: classify.RolloutClass(w.Verdict), Reason: w.Reason}, pods)
	w.Verdict, w.Reason = report.Verdict(v.Class), v.Reason
	w.Doomed = make([]report.Container, len(o.Problems))
	for i := range o.Problems {
		w.Doomed[i] = report.ContainerOf(&o.Problems[i])
	}
	return w
}

// lookOwned asks the model, for each followed object whose own verdict waits or dooms it, what the
// pods it controls say (model.Model.OwnedBy), and notes their transient failures and suspect nodes
// as the targets'; a complete object (a ConfigMap, a Service) is not looked at, as its pods would
// not change its verdict. The objects between it and its pods that the model does not hold are
// read with one GET each, once.
func (g *gate) lookOwned(ctx context.Context, now time.Time) {
	for _, r := range g.resources {
		r.mu.Lock()
		uid, v := r.uid, r.now.Verdict
		if v != report.Progressing && v != report.Doomed {
			r.owned = model.Owned{}
		}
		r.mu.Unlock()
		if uid == "" || v != report.Progressing && v != report.Doomed {
			continue
		}
		o := g.m.OwnedBy(r.ns, uid, g.parents, g.startAt, now)
		if len(o.Unknown) > 0 && g.readOwners(ctx, o.Unknown) {
			o = g.m.OwnedBy(r.ns, uid, g.parents, g.startAt, now)
		}
		g.noteProblems(o.Transient, o.Suspect)
		r.mu.Lock()
		r.owned = o
		r.mu.Unlock()
	}
}

// readOwners reads the ownerReferences of each of refs with one GET (kube.Source.Lookup, which
// maps its kind through discovery), into parents; it says whether it read any. An object that is
// gone, was replaced (another UID) or whose kind is no longer served has none: its pods belong to
// no one above it.
func (g *gate) readOwners(ctx context.Context, refs []model.OwnerRef) bool {
	if g.parents == nil {
		g.parents, g.unread = map[types.UID][]metav1.OwnerReference{}, map[types.UID]time.Time{}
	}
	read := false
	for _, ref := range refs {
		if at, ok := g.unread[ref.UID]; ok && time.Since(at) < ownerRetry {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, g.rt)
		f, err := g.src.Lookup(rctx, ref.APIVersion, ref.Kind, ref.Namespace, ref.Name)
		cancel()
		switch {
		case err != nil && !errors.Is(err, kube.ErrNotServed):
			g.unread[ref.UID] = time.Now()
			if g.wake != nil {
				// The gate looks again then, if nothing else made it look before.
				time.AfterFunc(ownerRetry, func() {
					select {
					case g.wake <- struct{}{}:
					default:
					}
				})
			}
			continue
		case err == nil && f.Exists && f.Object.GetUID() == ref.UID:
			g.parents[ref.UID] = f.Object.GetOwnerReferences()
		default:
			g.parents[ref.UID] = nil
		}
		delete(g.unread, ref.UID)
		read = true
	}
	return read
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
	if need[contract.KindDeployment] || need[contract.KindRollout] {
		need[contract.KindReplicaSet] = true // both roll out through their ReplicaSets
	}
	where := "in namespace " + sanitize.Text(g.ns)
	if g.spans {
		where = "at the cluster scope (the manifests span namespaces)"
	}
	for _, k := range refused {
		if need[k] {
			return &kindError{kind: kube.ErrForbidden,
				msg: fmt.Sprintf("not allowed to list and watch %s %s, which the gate needs", k.Resource(), where)}
		}
	}
	return nil
}

// decide is the gate's answer at now: failed as soon as one target is doomed (or was deleted while
// waited for), ended when all are complete (with --stable, when each has stayed complete for that
// long since it last became complete: model.Soak), or not yet. Under --stable a doomed new pod of a
// target in its window dooms it (model.Soak.Look), in statuses, so that the verdict and the
// progress say why.
func (g *gate) decide(statuses []model.GateStatus, now time.Time) (how report.End, done bool) {
	held := 0
	ownTimeout := ""
	for i := range statuses {
		st := &statuses[i]
		var look model.Soaked
		if st.Found && st.Unsupported == "" {
			look = g.window().Look(soakKey(st), &st.Rollout, now)
		}
		switch {
		case !st.Found, st.Unsupported != "":
			return report.Failed, true
		case st.Rollout.Verdict == classify.RolloutDoomed:
			return report.Failed, true
		case look.Complete:
			if look.Done {
				held++
			}
		case st.Timeout > 0 && g.started && now.Sub(g.startAt) >= st.Timeout:
			// Krane's timeout-override: this workload's own timeout, shorter or longer than
			// --timeout. A failure anywhere else still comes first, as in Krane.
			if ownTimeout == "" {
				ownTimeout = fmt.Sprintf("%s timed out after %s (its %s annotation)", st.Target, model.ShortDuration(st.Timeout), contract.TimeoutAnnotation)
			}
		}
	}
	complete := 0
	for _, r := range g.resources {
		switch r.current().Verdict {
		case report.Doomed, report.Missing, report.Unsupported:
			return report.Failed, true
		case report.Complete:
			complete++
		default:
			if msg := r.timedOut(g.startAt, now); g.started && ownTimeout == "" {
				ownTimeout = msg
			}
		}
	}
	if ownTimeout != "" {
		g.ownTimeout = ownTimeout
		return report.TimedOut, true
	}
	if held == len(statuses) && complete == len(g.resources) {
		return report.Ended, true
	}
	return 0, false
}

// window is the gate's --stable window over its targets.
func (g *gate) window() *model.Soak {
	if g.soak == nil {
		g.soak = model.NewSoak(g.stable)
		g.soak.Gate = true
	}
	return g.soak
}

// soakKey names a target in the window.
func soakKey(st *model.GateStatus) string { return st.Target.Namespace + "/" + st.Target.String() }

// resourceWorkloads are the resources' verdicts now, for the document.
func (g *gate) resourceWorkloads() []report.Workload {
	out := make([]report.Workload, len(g.resources))
	for i, r := range g.resources {
		out[i] = r.current()
	}
	return out
}

// shown is statuses as the progress shows them at now: with --stable, a complete target's reason
// says how long it has stayed complete ("complete, stable for 12s of 1m"). Without, statuses
// themselves.
func (g *gate) shown(statuses []model.GateStatus, now time.Time) []model.GateStatus {
	if g.stable == 0 && len(g.resources) == 0 {
		return statuses
	}
	out := slices.Clone(statuses)
	for i := range out {
		if reason, ok := g.window().Shown(soakKey(&out[i]), now); ok && out[i].Rollout.Verdict == classify.RolloutComplete {
			out[i].Rollout.Reason = reason
		}
	}
	// wait -f's other objects, after the targets, as their kstatus verdicts.
	for _, r := range g.resources {
		w := r.current()
		out = append(out, model.GateStatus{Target: model.Target{Kind: contract.Kind(w.Kind), Namespace: w.Namespace, Name: w.Name},
			Namespace: w.Namespace, Name: w.Name, Found: w.Verdict != report.Missing,
			Rollout: model.Rollout{Namespace: w.Namespace, Kind: w.Kind, Name: w.Name, Verdict: classify.RolloutClass(w.Verdict), Reason: w.Reason}})
	}
	return out
}

// timedOut is the timeout's message, naming the targets that were complete but had not yet stayed
// complete for --stable: their window would have ended after the timeout.
func (g *gate) timedOut(message string, statuses []model.GateStatus, now time.Time) string {
	var soaking []string
	for i := range statuses {
		if held, ok := g.window().HeldFor(soakKey(&statuses[i]), now); ok {
			soaking = append(soaking, fmt.Sprintf("%s (stable for %s)", statuses[i].Target, model.ShortDuration(held)))
		}
	}
	if len(soaking) == 0 {
		return message
	}
	return fmt.Sprintf("%s, before --stable %s had passed for %s", message, model.ShortDuration(g.stable), andList(soaking))
}

// note remembers the transient failures and suspect nodes seen, for the warnings.
func (g *gate) note(statuses []model.GateStatus) {
	for i := range statuses {
		g.noteProblems(statuses[i].Transient, statuses[i].Suspect)
	}
}

// noteProblems remembers transient failures and the suspect nodes they hit.
func (g *gate) noteProblems(transient []model.GateProblem, suspect []model.Node) {
	for _, p := range transient {
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
	for _, n := range suspect {
		g.noteSuspect(n)
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
	if how == report.TimedOut {
		message = g.timedOut(message, statuses, now)
	}
	rep := report.NewGate(&report.GateInput{End: how, Message: message, Window: g.m.Config().Window, Stable: g.stable,
		Statuses: statuses, StartFailures: startFailures, Started: g.started,
		Warnings: g.warnings, MoreWarnings: g.moreWarnings, Suspects: suspects, Resources: g.resourceWorkloads()})
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
