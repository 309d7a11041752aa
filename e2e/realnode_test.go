package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"doomwatch/classify"
)

// startRealNode starts a control plane with the real node beside kwok's. Under CI=true a machine
// that cannot run it fails the test with the reason; elsewhere the test skips with it.
func startRealNode(t *testing.T, ctx context.Context) (*ControlPlane, *RealNode) {
	t.Helper()
	return startRealNodeWith(t, ctx, ControlPlaneOptions{})
}

// startRealNodeWith is startRealNode on a control plane started with opts.
func startRealNodeWith(t *testing.T, ctx context.Context, opts ControlPlaneOptions) (*ControlPlane, *RealNode) {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
	ci := os.Getenv("CI") == "true"
	o := RealNodeOptions{K8sBin: os.Getenv("DOOMWATCH_K8S_BIN"), NodeBin: os.Getenv("DOOMWATCH_NODE_BIN"), Log: t.Logf}
	err := CheckRealNode(o)
	if o.NodeBin == "" {
		err = errors.New("DOOMWATCH_NODE_BIN is not set (hack/build-node.sh prints it; `make test` sets it)")
	}
	if err != nil {
		if ci {
			t.Fatalf("the real node cannot run (CI=true: failing): %v", err)
		}
		t.Skipf("the real node cannot run: %v", err)
	}
	// A directory per test: each starts its own control plane and node, whose files (and the link
	// to the node's runtime directory) a failed run keeps.
	dir := filepath.Join(suiteDir, "real-node", t.Name())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cp, err := StartControlPlane(ctx, o.K8sBin, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cp.Stop)
	start := time.Now()
	n, err := StartRealNode(ctx, cp, dir, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Stop)
	t.Logf("real node %s (%s) Ready at %s in %s", n.Name, n.Versions, n.IP, time.Since(start).Round(time.Millisecond))
	return cp, n
}

// realCase is one pod on the real node: what it runs, when its recording is complete, and what
// doomwatch must say about it.
type realCase struct {
	name string
	pod  func(n *RealNode) corev1.PodSpec
	// done says the pod has shown what it is there for.
	done func(p *corev1.Pod) bool
	// verdict is doomwatch's last word on the pod, in its --watch stream.
	verdict string
	// transient cases must never be called doomed, at any moment.
	transient bool
}

// realNamespace holds the real node's pods.
const realNamespace = "real"

func realCases() []realCase {
	app := func(args ...string) corev1.Container {
		return corev1.Container{Name: "app", Image: "", Args: args, ImagePullPolicy: corev1.PullIfNotPresent}
	}
	spec := func(cs ...corev1.Container) corev1.PodSpec {
		return corev1.PodSpec{Containers: cs, TerminationGracePeriodSeconds: ptr.To[int64](1)}
	}
	// After its first back-off the kubelet writes CrashLoopBackOff only as a back-off ends, just
	// before the restart: until then the container reads terminated (kubectl's STATUS "Error").
	// A crash loop is done when it has restarted n times, whatever it reads.
	restarted := func(n int32) func(*corev1.Pod) bool {
		return func(p *corev1.Pod) bool {
			for _, cs := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
				if cs.RestartCount >= n {
					return true
				}
			}
			return false
		}
	}
	waiting := func(reason string) func(*corev1.Pod) bool {
		return func(p *corev1.Pod) bool {
			for _, cs := range p.Status.ContainerStatuses {
				if cs.State.Waiting != nil && cs.State.Waiting.Reason == reason {
					return true
				}
			}
			return false
		}
	}
	envFrom := func(kind string) corev1.EnvVar {
		sel := corev1.LocalObjectReference{Name: "settings"}
		ev := corev1.EnvVar{Name: "SETTING"}
		if kind == "secret" {
			ev.ValueFrom = &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: sel, Key: "missing-key"}}
		} else {
			ev.ValueFrom = &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: sel, Key: "missing-key"}}
		}
		return ev
	}
	// flaky runs a healthy container under the runtime handler that fails its first n creates.
	flaky := func(n int) func(*RealNode) corev1.PodSpec {
		return func(*RealNode) corev1.PodSpec {
			c := app("pause")
			c.Env = []corev1.EnvVar{{Name: FlakyFailsEnv, Value: strconv.Itoa(n)}}
			s := spec(c)
			s.RuntimeClassName = ptr.To(FlakyRuntimeClass)
			return s
		}
	}
	return []realCase{
		{name: "missing-executable", verdict: "doomed", done: restarted(3), pod: func(n *RealNode) corev1.PodSpec {
			c := app()
			c.Command = []string{"/no-such-binary"}
			return spec(c)
		}},
		{name: "crash-loop", verdict: "doomed", done: restarted(3), pod: func(n *RealNode) corev1.PodSpec {
			return spec(app("crash"))
		}},
		{name: "oom-killed", verdict: "doomed", done: restarted(3), pod: func(n *RealNode) corev1.PodSpec {
			c := app("oom")
			c.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("32Mi")}
			return spec(c)
		}},
		{name: "missing-secret-key", verdict: "doomed", done: waiting("CreateContainerConfigError"), pod: func(n *RealNode) corev1.PodSpec {
			c := app("pause")
			c.Env = []corev1.EnvVar{envFrom("secret")}
			return spec(c)
		}},
		{name: "missing-configmap-key", verdict: "doomed", done: waiting("CreateContainerConfigError"), pod: func(n *RealNode) corev1.PodSpec {
			c := app("pause")
			c.Env = []corev1.EnvVar{envFrom("configmap")}
			return spec(c)
		}},
		{name: "image-not-found", verdict: "doomed", done: waiting("ImagePullBackOff"), pod: func(n *RealNode) corev1.PodSpec {
			c := app()
			c.Image = n.Registry + "/doomwatch/no-such-image:1"
			return spec(c)
		}},
		{name: "image-access-denied", verdict: "doomed", done: waiting("ImagePullBackOff"), pod: func(n *RealNode) corev1.PodSpec {
			c := app()
			c.Image = n.Registry + "/" + PrivateImage
			return spec(c)
		}},
		{name: "readiness-never", verdict: "progressing", transient: true, done: func(p *corev1.Pod) bool {
			return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Running != nil &&
				time.Since(p.Status.ContainerStatuses[0].State.Running.StartedAt.Time) > 12*time.Second
		}, pod: func(n *RealNode) corev1.PodSpec {
			c := app("pause")
			c.ReadinessProbe = &corev1.Probe{
				ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}},
				PeriodSeconds: 2, FailureThreshold: 1,
			}
			return spec(c)
		}},
		{name: "sidecar-crash-loop", verdict: "doomed", done: restarted(3), pod: func(n *RealNode) corev1.PodSpec {
			side := app("crash")
			side.Name = "sidecar"
			side.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
			s := spec(app("pause"))
			s.InitContainers = []corev1.Container{side}
			return s
		}},
		// The runtime fails the first start, as a node's runtime does in a hiccup; the kubelet's
		// immediate retry starts it.
		{name: "start-failure-once", verdict: "healthy", transient: true, done: podReady, pod: flaky(1)},
		// Two failed starts: the immediate retry fails too, the kubelet backs off 10s (the trap of
		// Krane's snapshot: a CrashLoopBackOff after a flake), and the next start succeeds.
		{name: "start-failure-twice", verdict: "healthy", transient: true, done: podReady, pod: flaky(2)},
	}
}

// frame is one distinct status of a pod, as a watch delivered it.
type frame struct {
	at      time.Duration // since the pod was created
	seen    time.Time
	summary string
	pod     *corev1.Pod
	verdict classify.Verdict
}

// recorder keeps every distinct status of the namespace's pods.
type recorder struct {
	mu      sync.Mutex
	created map[string]time.Time
	frames  map[string][]frame
}

func (r *recorder) observe(p *corev1.Pod) {
	now := time.Now()
	s := statusSummary(p)
	r.mu.Lock()
	defer r.mu.Unlock()
	fs := r.frames[p.Name]
	if len(fs) > 0 && fs[len(fs)-1].summary == s {
		return
	}
	start, ok := r.created[p.Name]
	if !ok {
		start = p.CreationTimestamp.Time
	}
	r.frames[p.Name] = append(fs, frame{at: now.Sub(start), seen: now, summary: s, pod: p.DeepCopy(), verdict: classify.Pod(p, now)})
}

func (r *recorder) last(name string) *corev1.Pod {
	r.mu.Lock()
	defer r.mu.Unlock()
	fs := r.frames[name]
	if len(fs) == 0 {
		return nil
	}
	return fs[len(fs)-1].pod
}

// statusSummary is one line per container: state, last state, restarts, readiness; and the pod's
// phase and Ready condition. Two statuses with the same summary are the same frame.
func statusSummary(p *corev1.Pod) string {
	var b strings.Builder
	fmt.Fprintf(&b, "phase=%s", p.Status.Phase)
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			fmt.Fprintf(&b, " ready=%s", c.Status)
		}
	}
	line := func(kind string, cs corev1.ContainerStatus) {
		fmt.Fprintf(&b, "\n  %s %s: state=%s last=%s restarts=%d ready=%v", kind, cs.Name, stateText(cs.State), stateText(cs.LastTerminationState), cs.RestartCount, cs.Ready)
	}
	for _, cs := range p.Status.InitContainerStatuses {
		line("init", cs)
	}
	for _, cs := range p.Status.ContainerStatuses {
		line("container", cs)
	}
	return b.String()
}

func stateText(s corev1.ContainerState) string {
	switch {
	case s.Waiting != nil:
		return fmt.Sprintf("waiting(%s: %q)", s.Waiting.Reason, s.Waiting.Message)
	case s.Running != nil:
		return "running"
	case s.Terminated != nil:
		return fmt.Sprintf("terminated(%s, exit %d: %q)", s.Terminated.Reason, s.Terminated.ExitCode, s.Terminated.Message)
	}
	return "-"
}

// TestRealNode runs real failures on the real node (kubelet, containerd, runc) and holds
// doomwatch's verdicts on the statuses the kubelet wrote to each case's expectation: doomed ones
// doomed and never flipped back, transient ones never doomed at any moment. It logs every
// distinct status each pod went through, and with DOOMWATCH_RECORD=dir writes them there as
// YAML (the source of classify/testdata's real-* fixtures). Then `kubectl get pods` and
// doomwatch must print the same STATUS, READY and RESTARTS for every pod.
func TestRealNode(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	cp, n := startRealNode(t, ctx)
	c := cp.AdminClient
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: realNamespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.NodeV1().RuntimeClasses().Create(ctx, &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: FlakyRuntimeClass}, Handler: FlakyRuntimeClass}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The Secret and ConfigMap exist; the key the pods ask for does not.
	if _, err := c.CoreV1().Secrets(realNamespace).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "settings"}, StringData: map[string]string{"present": "1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().ConfigMaps(realNamespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"present": "1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	stream, err := startStream(ctx, doomwatchBinary(t), cp.AdminKubeconfig, realNamespace)
	if err != nil {
		t.Fatal(err)
	}
	// The stream prints the node once synced; the pods come after.
	if err := stream.synced(time.Minute); err != nil {
		t.Fatal(err)
	}

	rec := &recorder{created: map[string]time.Time{}, frames: map[string][]frame{}}
	factory := informers.NewSharedInformerFactoryWithOptions(c, 0, informers.WithNamespace(realNamespace))
	inf := factory.Core().V1().Pods().Informer()
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { rec.observe(o.(*corev1.Pod)) },
		UpdateFunc: func(_, o any) { rec.observe(o.(*corev1.Pod)) },
	})
	stopInformer := make(chan struct{})
	factory.Start(stopInformer)
	stopRecording := sync.OnceFunc(func() { close(stopInformer); factory.Shutdown() })
	defer stopRecording()

	cases := realCases()
	for _, rc := range cases {
		spec := rc.pod(n)
		n.PodOnNode(&spec)
		for i := range spec.Containers {
			if spec.Containers[i].Image == "" {
				spec.Containers[i].Image = n.Registry + "/" + TestImage
			}
		}
		for i := range spec.InitContainers {
			if spec.InitContainers[i].Image == "" {
				spec.InitContainers[i].Image = n.Registry + "/" + TestImage
			}
		}
		rec.mu.Lock()
		rec.created[rc.name] = time.Now()
		rec.mu.Unlock()
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: rc.name, Labels: map[string]string{"case": rc.name}}, Spec: spec}
		if _, err := c.CoreV1().Pods(realNamespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// Wait until every case has shown what it is there for.
	deadline := time.Now().Add(3 * time.Minute)
	pending := map[string]bool{}
	for _, rc := range cases {
		pending[rc.name] = true
	}
	for len(pending) > 0 && time.Now().Before(deadline) {
		if err := errors.Join(n.Exited(), cp.Exited()); err != nil {
			t.Fatalf("%v\n%s", err, n.Logs(40))
		}
		for _, rc := range cases {
			if p := rec.last(rc.name); pending[rc.name] && p != nil && rc.done(p) {
				delete(pending, rc.name)
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	for name := range pending {
		t.Errorf("%s: not done after 3 minutes; last status:\n%s", name, statusSummary(rec.last(name)))
	}

	realParity(t, cp)

	// A last verdict line may trail the status that caused it.
	time.Sleep(3 * time.Second)
	lines := stream.stop()
	stopRecording()
	byPod := map[string][]StreamLine{}
	for _, l := range lines {
		if l.ParseErr != "" {
			t.Errorf("unparsable stream line %q: %s", l.Raw, l.ParseErr)
		}
		if l.Type == "pod" && l.Namespace == realNamespace {
			byPod[l.Name] = append(byPod[l.Name], l)
		}
	}

	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, rc := range cases {
		t.Run(rc.name, func(t *testing.T) {
			fs := rec.frames[rc.name]
			var log strings.Builder
			for i, f := range fs {
				fmt.Fprintf(&log, "%2d +%5.1fs %s [%s %s]\n", i, f.at.Seconds(), f.summary, f.verdict.Class, f.verdict.Rule)
			}
			t.Logf("statuses the kubelet wrote:\n%s", log.String())
			if dir := os.Getenv("DOOMWATCH_RECORD"); dir != "" {
				if err := recordFrames(dir, rc.name, n.Versions, fs); err != nil {
					t.Error(err)
				}
			}
			created := rec.created[rc.name]
			var verdicts strings.Builder
			last, doomedAt, flips := "", time.Duration(-1), 0
			for _, l := range byPod[rc.name] {
				at := l.Time.Sub(created)
				fmt.Fprintf(&verdicts, "  +%5.1fs %s: %s\n", at.Seconds(), l.Verdict, l.Reason)
				if l.Verdict == "doomed" && doomedAt < 0 {
					doomedAt = at
				}
				if last == "doomed" && l.Verdict != "doomed" {
					flips++
				}
				last = l.Verdict
			}
			t.Logf("doomwatch --watch:\n%s", verdicts.String())
			if last != rc.verdict {
				t.Errorf("doomwatch's last verdict %q, want %q", last, rc.verdict)
			}
			if rc.transient && doomedAt >= 0 {
				t.Errorf("called doomed at +%.1fs; the pod is %s", doomedAt.Seconds(), rc.verdict)
			}
			if flips > 0 {
				t.Errorf("flipped back from doomed %d times", flips)
			}
			if doomedAt >= 0 {
				t.Logf("doomed at +%.1fs after the pod was created", doomedAt.Seconds())
			}
		})
	}
}

// realParity compares `kubectl get pods` with doomwatch --once for every pod on the real node.
// Statuses move while the two run, so it takes kubectl's table before and after doomwatch's and
// compares only when the two tables agree (a crash loop's back-off gives such a window).
func realParity(t *testing.T, cp *ControlPlane) {
	t.Helper()
	get := func() map[string][3]string {
		r := runKubectl(t, time.Minute, cp.AdminKubeconfig, "get", "pods", "-n", realNamespace, "--no-headers")
		if r.code != 0 {
			t.Fatalf("kubectl get pods: %s", r)
		}
		rows := map[string][3]string{}
		for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
			// NAME READY STATUS RESTARTS AGE, where RESTARTS may read "3 (12s ago)".
			f := strings.Fields(l)
			if len(f) < 5 {
				t.Fatalf("kubectl get pods: unexpected row %q", l)
			}
			rows[f[0]] = [3]string{f[1], f[2], f[3]}
		}
		return rows
	}
	for attempt := 1; ; attempt++ {
		before := get()
		snap := onceJSON(t, "--kubeconfig", cp.AdminKubeconfig, "-n", realNamespace)
		after := get()
		if fmt.Sprint(before) != fmt.Sprint(after) {
			if attempt == 10 {
				t.Errorf("kubectl's table changed under every one of %d attempts", attempt)
				return
			}
			continue
		}
		names := make([]string, 0, len(before))
		for name := range before {
			names = append(names, name)
		}
		sort.Strings(names)
		var table strings.Builder
		for _, name := range names {
			want := before[name]
			p, ok := snap.pod(name)
			if !ok {
				t.Errorf("--once: pod %s missing", name)
				continue
			}
			got := [3]string{p.Ready, p.Status, restartCount(p.Restarts)}
			fmt.Fprintf(&table, "  %-22s kubectl %-8s %-28s %-4s doomwatch %-8s %-28s %s\n", name, want[0], want[1], want[2], got[0], got[1], got[2])
			if got != want {
				t.Errorf("pod %s: doomwatch READY/STATUS/RESTARTS %q, kubectl %q", name, got, want)
			}
		}
		t.Logf("kubectl get pods and doomwatch --once, attempt %d:\n%s", attempt, table.String())
		// The crash loop is in a back-off now (its third restart was the last case to finish, and
		// the next waits 40s): the parity covers the state kubectl shows as Error.
		if st := before["crash-loop"][1]; st != "Error" && st != "CrashLoopBackOff" {
			t.Errorf("crash-loop reads %q, not a back-off state (Error or CrashLoopBackOff)", st)
		}
		return
	}
}

// recordFrames writes each frame's pod as YAML, with what the frame shows on top, for turning
// into fixtures.
func recordFrames(dir, name string, v NodeVersions, fs []frame) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i, f := range fs {
		p := f.pod.DeepCopy()
		p.ManagedFields = nil
		b, err := yaml.Marshal(p)
		if err != nil {
			return err
		}
		head := fmt.Sprintf("# Recorded from %s: %s, frame %d at +%.1fs (%s).\n# %s\n# classify: %s %s %q\n",
			v, name, i, f.at.Seconds(), f.seen.UTC().Format(time.RFC3339Nano), strings.ReplaceAll(f.summary, "\n", "\n# "), f.verdict.Class, f.verdict.Rule, f.verdict.Reason)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%02d.yaml", name, i)), append([]byte(head), b...), 0o644); err != nil {
			return err
		}
	}
	return nil
}
