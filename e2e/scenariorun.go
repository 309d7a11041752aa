package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
)

// RunConfig says how scenarios run.
type RunConfig struct {
	// Doomwatch and Kubectl are the binaries.
	Doomwatch, Kubectl string
	// NoKubectl skips `kubectl rollout status` (it waits out a doomed Deployment's progress
	// deadline, 10 minutes by default): `make test`'s subset judges doomwatch alone.
	NoKubectl bool
	// Capacity bounds the scenarios running at once by their size (pods and nodes, Scenario.size);
	// a scenario larger than it runs alone.
	Capacity int
	// Settle is how long the verdict stream is watched after the last tool has exited, for a late
	// false doom or a flip (default 30s).
	Settle time.Duration
	// Log reports progress; nil discards it.
	Log func(format string, args ...any)
	// StreamDir, when set, keeps each scenario's verdict stream there as <name>.jsonl.
	StreamDir string
}

func (c *RunConfig) logf(format string, args ...any) {
	if c.Log != nil {
		c.Log(format, args...)
	}
}

// Result is one scenario's run: what each tool said and when, and what the API showed.
type Result struct {
	Scenario *Scenario
	// Err is set when the harness itself failed (a server died, a manifest was refused); the
	// tools' results are then incomplete.
	Err error
	// Trigger is when the rollout was applied; FirstDoomedPod when the first pod showed one of
	// Expect.DoomedWhen, as a watch on the API delivered it (zero if none did).
	Trigger, FirstDoomedPod time.Time
	// FirstDoomedWhat says which pod and state that was.
	FirstDoomedWhat string
	Stream          StreamResult
	Wait, Kubectl   ToolResult
	// Took is the scenario's wall time, nodes to cleanup.
	Took time.Duration
}

// ToolResult is one run of `doomwatch wait` or kubectl.
type ToolResult struct {
	Ran bool
	// Outcome is complete, doomed, timeout or error.
	Outcome string
	// At is when it exited.
	At   time.Time
	Code int
	// Output is the end of its stdout and stderr, for the report of a disagreement.
	Output string
	// How is the command, for the report.
	How string
}

// RunScenarios runs scenarios on cp, several at once within cfg.Capacity, and returns their
// results in the order given.
func RunScenarios(ctx context.Context, cp *ControlPlane, scenarios []*Scenario, cfg RunConfig) []*Result {
	if cfg.Settle == 0 {
		cfg.Settle = 30 * time.Second
	}
	if cfg.Capacity <= 0 {
		cfg.Capacity = 1000
	}
	// The scenarios whose kubectl waits out a progress deadline start first, the biggest next:
	// the run ends when its longest scenario does.
	order := slices.Clone(scenarios)
	sort.SliceStable(order, func(i, j int) bool {
		li, lj := order[i].longRunning(cfg), order[j].longRunning(cfg)
		if li != lj {
			return li
		}
		return order[i].size() > order[j].size()
	})
	results := make(map[*Scenario]*Result, len(scenarios))
	var (
		mu   sync.Mutex
		cond = sync.NewCond(&mu)
		used int
		wg   sync.WaitGroup
	)
	for _, s := range order {
		need := min(s.size(), cfg.Capacity)
		mu.Lock()
		for used+need > cfg.Capacity {
			cond.Wait()
		}
		used += need
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			held := need
			// Once the gate has exited, a scenario that waits for kubectl only watches a stuck
			// rollout: it keeps a fifth of its share.
			release := func() {
				mu.Lock()
				if keep := need / 5; held > keep {
					used -= held - keep
					held = keep
					cond.Broadcast()
				}
				mu.Unlock()
			}
			r := runScenario(ctx, cp, s, cfg, release)
			mu.Lock()
			results[s] = r
			used -= held
			cond.Broadcast()
			mu.Unlock()
		}()
	}
	wg.Wait()
	out := make([]*Result, len(scenarios))
	for i, s := range scenarios {
		out[i] = results[s]
	}
	return out
}

// longRunning says whether kubectl will wait out a progress deadline: a doomed Deployment.
func (s *Scenario) longRunning(cfg RunConfig) bool {
	kind, _, _ := s.target()
	return !cfg.NoKubectl && s.Expect.Verdict == "doomed" && kind == "deployment"
}

// run is one scenario's state while it runs.
type run struct {
	cp  *ControlPlane
	s   *Scenario
	cfg RunConfig
	r   *Result
	ns  string
	// gateDone is called once `doomwatch wait` has exited.
	gateDone func()

	mu      sync.Mutex
	stages  []string                     // Stage names created, to delete at the end
	cluster []*unstructured.Unstructured // cluster-scoped objects applied, to delete at the end
}

func runScenario(ctx context.Context, cp *ControlPlane, s *Scenario, cfg RunConfig, gateDone func()) *Result {
	start := time.Now()
	ru := &run{cp: cp, s: s, cfg: cfg, r: &Result{Scenario: s}, ns: s.Namespace(), gateDone: gateDone}
	// Bounded in time whatever happens: the tools' own timeouts, the settle time, setup and
	// cleanup.
	ctx, cancel := context.WithTimeout(ctx, s.Timeout.Duration+cfg.Settle+10*time.Minute)
	defer cancel()
	defer func() { ru.cleanup(); ru.r.Took = time.Since(start) }()
	if err := ru.play(ctx); err != nil {
		if dead := cp.Exited(); dead != nil {
			err = fmt.Errorf("%w (%w)", err, dead)
		}
		ru.r.Err = err
		cfg.logf("[%s] failed: %v", s.Name, err)
	}
	return ru.r
}

func (ru *run) play(ctx context.Context) error {
	s, cfg := ru.s, ru.cfg
	client := ru.cp.AdminClient
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ru.ns}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating namespace %s: %w", ru.ns, err)
	}
	for _, n := range s.nodeSpecs() {
		if err := ru.cp.CreateNode(ctx, n); err != nil {
			return err
		}
	}
	if err := ru.nodesReady(ctx); err != nil {
		return err
	}
	setup, err := s.manifests(s.Setup)
	if err != nil {
		return err
	}
	for _, o := range setup {
		if err := ru.apply(ctx, o); err != nil {
			return err
		}
	}
	for _, o := range setup {
		if err := ru.rolledOut(ctx, o); err != nil {
			return err
		}
	}
	rollout, err := s.manifests(s.Rollout)
	if err != nil {
		return err
	}
	cfg.logf("[%s] %d nodes ready, setup rolled out", s.Name, len(s.nodeNames()))

	truth, err := watchTruth(ctx, ru.cp, s)
	if err != nil {
		return err
	}
	stream, err := startStream(ctx, cfg.Doomwatch, ru.cp.AdminKubeconfig, ru.ns)
	if err != nil {
		return err
	}
	defer func() {
		lines := stream.stop()
		ru.r.Stream = analyseStream(lines, s, ru.r.Trigger, stream.err)
		if cfg.StreamDir != "" {
			keepStream(filepath.Join(cfg.StreamDir, s.Name+".jsonl"), lines, ru.r.Trigger)
		}
	}()
	if err := stream.synced(time.Minute); err != nil {
		return err
	}

	// Behaviours that start with the rollout are in place before it: its first pods are
	// created within milliseconds of the apply.
	behaviours := make(chan error, len(s.Behaviours)+len(s.Actions))
	var pending sync.WaitGroup
	bctx, bcancel := context.WithCancel(ctx)
	defer func() { bcancel(); pending.Wait() }()
	behave := func(trigger time.Time) error {
		ctx := bctx
		for i, b := range s.Behaviours {
			// A behaviour that starts with the rollout is applied here, before the rollout, so
			// that kwok has its Stages before the rollout's first pod is created; only its end
			// waits on a goroutine.
			var put func() ([]*unstructured.Unstructured, error)
			if b.From.Duration <= 0 {
				var end time.Time
				if b.For.Duration > 0 {
					end = trigger.Add(b.For.Duration)
				}
				window, err := ru.putBehaviour(ctx, i, end)
				if err != nil {
					return err
				}
				put = func() ([]*unstructured.Unstructured, error) { return window, nil }
			}
			pending.Add(1)
			go func() {
				defer pending.Done()
				if err := ru.behaviour(ctx, i, trigger.Add(b.From.Duration), put); err != nil {
					behaviours <- err
				}
			}()
		}
		for _, a := range s.Actions {
			pending.Add(1)
			go func() {
				defer pending.Done()
				if err := ru.action(ctx, a, trigger.Add(a.At.Duration)); err != nil {
					behaviours <- err
				}
			}()
		}
		return nil
	}
	trigger := time.Now()
	if err := behave(trigger); err != nil {
		return err
	}
	ru.r.Trigger = time.Now()
	for _, o := range rollout {
		if err := ru.apply(ctx, o); err != nil {
			return err
		}
	}
	cfg.logf("[%s] rollout applied", s.Name)
	tools := ru.startTools(ctx)
	for i, t := range tools {
		select {
		case <-t.done:
		case err := <-behaviours:
			return err
		case <-ctx.Done():
			return fmt.Errorf("the tools had not exited by the scenario's deadline: %w", ctx.Err())
		}
		if i == 0 {
			ru.gateDone()
		}
	}
	// With neither tool to wait for (a Job, kubectl skipped), the scenario lasts until the Job
	// has finished as the API says, or its timeout.
	if !tools[0].ran && !tools[1].ran {
		select {
		case <-truth.finished:
		case <-time.After(time.Until(ru.r.Trigger.Add(s.Timeout.Duration))):
		case err := <-behaviours:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	ru.r.Wait, ru.r.Kubectl = tools[0].result(), tools[1].result()
	select {
	case <-time.After(cfg.Settle):
	case err := <-behaviours:
		return err
	case <-ctx.Done():
	}
	ru.r.FirstDoomedPod, ru.r.FirstDoomedWhat = truth.first()
	cfg.logf("[%s] done: wait %s, kubectl %s", s.Name, ru.r.Wait.Outcome, ru.r.Kubectl.Outcome)
	return nil
}

// nodesReady waits until kwok reports every node of the scenario Ready.
func (ru *run) nodesReady(ctx context.Context) error {
	want := len(ru.s.nodeNames())
	return wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		nodes, err := ru.cp.AdminClient.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: ScenarioLabel + "=" + ru.s.Name})
		if err != nil {
			return false, nil
		}
		ready := 0
		for _, n := range nodes.Items {
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		return ready == want, nil
	})
}

// apply server-side applies a scenario object: in the scenario's namespace unless the kind is
// cluster-scoped.
func (ru *run) apply(ctx context.Context, o *unstructured.Unstructured) error {
	gvk := o.GroupVersionKind()
	m, err := ru.cp.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return fmt.Errorf("%s %s: %w", gvk.Kind, o.GetName(), err)
	}
	res := ru.cp.Dynamic.Resource(m.Resource)
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		o.SetNamespace(ru.ns)
		_, err = res.Namespace(ru.ns).Apply(ctx, o.GetName(), o, applyOptions)
	} else {
		ru.mu.Lock()
		ru.cluster = append(ru.cluster, o)
		ru.mu.Unlock()
		_, err = res.Apply(ctx, o.GetName(), o, applyOptions)
	}
	if err != nil {
		return fmt.Errorf("applying %s %s: %w", gvk.Kind, o.GetName(), err)
	}
	return nil
}

// rolledOut waits for a setup workload's rollout, as `kubectl rollout status` judges it.
func (ru *run) rolledOut(ctx context.Context, o *unstructured.Unstructured) error {
	switch o.GetKind() {
	case "Deployment", "StatefulSet", "DaemonSet":
	case "Rollout":
		return ru.argoHealthy(ctx, o.GetName())
	default:
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 7*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, ru.cfg.Kubectl, "rollout", "status", strings.ToLower(o.GetKind())+"/"+o.GetName(),
		"-n", ru.ns, "--kubeconfig", ru.cp.AdminKubeconfig, "--timeout=6m")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("setup %s/%s did not roll out in 6m: %v: %s", o.GetKind(), o.GetName(), err, tail(string(out), 1))
	}
	return nil
}

// argoHealthy waits for a setup Argo Rollout to be Healthy at its generation, as `kubectl argo
// rollouts status` judges it (utils/rollout/rolloututil.go GetRolloutPhase: the controller's
// status.phase, once status.observedGeneration, a string, is the generation).
func (ru *run) argoHealthy(ctx context.Context, name string) error {
	res := ru.cp.Dynamic.Resource(RolloutGVR).Namespace(ru.ns)
	phase := ""
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 6*time.Minute, true, func(ctx context.Context) (bool, error) {
		r, err := res.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		observed, _, _ := unstructured.NestedString(r.Object, "status", "observedGeneration")
		phase, _, _ = unstructured.NestedString(r.Object, "status", "phase")
		return observed == strconv.FormatInt(r.GetGeneration(), 10) && phase == "Healthy", nil
	})
	if err != nil {
		return fmt.Errorf("setup rollout/%s was not Healthy in 6m (phase %q): %w", name, phase, err)
	}
	return nil
}

// putBehaviour applies behaviour i's Stages, ending at end (zero: never), and returns those to
// delete when it ends.
func (ru *run) putBehaviour(ctx context.Context, i int, end time.Time) ([]*unstructured.Unstructured, error) {
	b := ru.s.Behaviours[i]
	window, lasting, err := ru.s.stageObjects(i, end)
	if err != nil {
		return nil, err
	}
	for _, o := range append(slices.Clone(lasting), window...) {
		ru.mu.Lock()
		ru.stages = append(ru.stages, o.GetName())
		ru.mu.Unlock()
		if err := ru.cp.ApplyStage(ctx, o); err != nil {
			return nil, err
		}
	}
	ru.cfg.logf("[%s] behaviour %s on %v", ru.s.Name, b.Stage, b.Nodes)
	return window, nil
}

// behaviour puts behaviour i on its nodes at from, and takes it off when it ends. Its Stages are
// applied first (put), unless put is nil: then they are in place already (startBehaviour).
func (ru *run) behaviour(ctx context.Context, i int, from time.Time, put func() ([]*unstructured.Unstructured, error)) error {
	b := ru.s.Behaviours[i]
	var end time.Time
	if b.For.Duration > 0 {
		end = from.Add(b.For.Duration)
	}
	if !sleepUntil(ctx, from) {
		return nil
	}
	if put == nil {
		put = func() ([]*unstructured.Unstructured, error) { return ru.putBehaviour(ctx, i, end) }
	}
	window, err := put()
	if err != nil {
		return err
	}
	nudge := b.Stage == "node-sandbox-failure"
	if end.IsZero() {
		if nudge {
			ru.nudge(ctx, b, time.Time{})
		}
		return nil
	}
	if nudge {
		ru.nudge(ctx, b, end)
	} else if !sleepUntil(ctx, end) {
		return nil
	}
	for _, o := range window {
		if err := ru.cp.DeleteStage(context.WithoutCancel(ctx), o.GetName()); err != nil {
			return err
		}
	}
	if nudge {
		// Once more, now that the failure is gone: kwok's pod-create gives the waiting pods
		// their sandbox.
		ru.touchWaiting(ctx, b)
	}
	ru.cfg.logf("[%s] behaviour %s over", ru.s.Name, b.Stage)
	return nil
}

// nudge touches the pods waiting for a sandbox on the behaviour's nodes every 5s until end (or
// the scenario's end), as the kubelet's pod worker retries them: kwok plays a Stage only when its
// pod changes, and each play is another failed attempt and event.
func (ru *run) nudge(ctx context.Context, b Behaviour, end time.Time) {
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			if !end.IsZero() && !now.Before(end) {
				return
			}
			ru.touchWaiting(ctx, b)
		}
	}
}

// touchWaiting annotates each pod of the behaviour's nodes that has no IP yet.
func (ru *run) touchWaiting(ctx context.Context, b Behaviour) {
	nodes := b.Nodes
	if len(nodes) == 0 {
		nodes = ru.s.nodeNames()
	}
	pods, err := ru.cp.AdminClient.CoreV1().Pods(ru.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{"doomwatch.test/kubelet-retry":%q}}}`, time.Now().UTC().Format(time.RFC3339Nano))
	for _, p := range pods.Items {
		if p.Status.PodIP != "" || p.DeletionTimestamp != nil || !slices.ContainsFunc(nodes, func(n string) bool { return ru.s.NodeName(n) == p.Spec.NodeName }) {
			continue
		}
		_, _ = ru.cp.AdminClient.CoreV1().Pods(ru.ns).Patch(ctx, p.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	}
}

// action does a at its time.
func (ru *run) action(ctx context.Context, a Action, at time.Time) error {
	if !sleepUntil(ctx, at) {
		return nil
	}
	node := ru.s.NodeName(a.LoseNode)
	patch := fmt.Appendf(nil, `{"metadata":{"labels":{%q:null}}}`, KwokNodeLabel)
	if _, err := ru.cp.AdminClient.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("losing node %s: %w", node, err)
	}
	ru.cfg.logf("[%s] node %s lost (kwok no longer renews its lease)", ru.s.Name, node)
	return nil
}

// sleepUntil waits until t; false if ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	select {
	case <-time.After(d):
		return true
	case <-ctx.Done():
		return false
	}
}

// cleanup removes what the scenario created, bounded in time, whatever state it is in.
func (ru *run) cleanup() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ru.mu.Lock()
	stages, cluster := ru.stages, ru.cluster
	ru.mu.Unlock()
	for _, name := range stages {
		_ = ru.cp.DeleteStage(ctx, name)
	}
	client := ru.cp.AdminClient
	// Pods go at once: a graceful delete would wait for kwok's pod-delete, up to each pod's grace
	// period.
	_ = client.CoreV1().Pods(ru.ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}, metav1.ListOptions{})
	_ = client.CoreV1().Namespaces().Delete(ctx, ru.ns, metav1.DeleteOptions{})
	for _, o := range cluster {
		gvk := o.GroupVersionKind()
		if m, err := ru.cp.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
			_ = ru.cp.Dynamic.Resource(m.Resource).Delete(ctx, o.GetName(), metav1.DeleteOptions{})
		}
	}
	_ = wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := client.CoreV1().Namespaces().Get(ctx, ru.ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	_ = client.CoreV1().Nodes().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: ScenarioLabel + "=" + ru.s.Name})
}

// keepStream writes a scenario's verdict stream as it was printed, with a trigger line first.
func keepStream(path string, lines []StreamLine, trigger time.Time) {
	var b strings.Builder
	fmt.Fprintf(&b, "{\"trigger\":%q}\n", trigger.UTC().Format(time.RFC3339Nano))
	for _, l := range lines {
		b.WriteString(l.Raw)
		b.WriteByte('\n')
	}
	_ = os.WriteFile(path, []byte(b.String()), 0o644)
}
