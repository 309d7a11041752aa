package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jstemmer/go-junit-report/v2/junit"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

// `doomwatch wait`, the deploy gate, against the real API server: each test plays the control
// plane and the kubelets around one rollout while the built binary waits for it, and checks the
// exit code, the verdict on stdout and the progress on stderr as a CI job would see them.

// waitLimit bounds one wait run: the longest (the timeout row) takes its --timeout plus start-up.
const waitLimit = time.Minute

// doomedWithin is how soon after the last new pod's doomed status the gate must have exited:
// the "within 5 s of the verdict", logs included (cmd/wait.go's logTimeout is 3s).
const doomedWithin = 5 * time.Second

// stream is a process's output as it arrives, safe to read while the process writes it.
type stream struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{} // closed and replaced after every write
}

func newStream() *stream { return &stream{changed: make(chan struct{})} }

func (s *stream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf.Write(p)
	close(s.changed)
	s.changed = make(chan struct{})
	return len(p), nil
}

// read returns the output so far and a channel closed at the next write.
func (s *stream) read() (string, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String(), s.changed
}

// waitRun is one `doomwatch wait` started in the background, so that the test can change the
// rollout while it waits.
type waitRun struct {
	t              *testing.T
	args           []string
	stdout, stderr *stream
	start          time.Time
	exited         chan struct{} // closed when the process has exited; end and err are set then
	end            time.Time
	err            error
}

// startWait starts `doomwatch wait args...` with its output on pipes, as in a CI job, bounded by
// waitLimit.
func startWait(t *testing.T, args ...string) *waitRun {
	t.Helper()
	return startWaitWithin(t, waitLimit, args...)
}

// startWaitWithin is startWait bounded by limit: a wait that outlives it hangs.
func startWaitWithin(t *testing.T, limit time.Duration, args ...string) *waitRun {
	t.Helper()
	return startDoomwatch(t, limit, append([]string{"wait"}, args...)...)
}

// startDoomwatch starts `doomwatch args...` in the background with its output on pipes, bounded by
// limit; the test's cleanup stops it.
func startDoomwatch(t *testing.T, limit time.Duration, args ...string) *waitRun {
	t.Helper()
	bin := doomwatchBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = doomwatchEnv()
	w := &waitRun{t: t, args: args, stdout: newStream(), stderr: newStream(), exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = w.stdout, w.stderr
	w.start = time.Now()
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("starting doomwatch %q: %v", args, err)
	}
	go func() {
		w.err = cmd.Wait()
		w.end = time.Now()
		close(w.exited)
	}()
	t.Cleanup(func() {
		cancel()
		<-w.exited
	})
	return w
}

// waitArgs are the arguments of a wait for targets in e's namespace as the admin.
func waitArgs(t *testing.T, e *env, targets ...string) []string {
	return append(targets, "-n", e.ns, "--request-timeout=10s", "--kubeconfig", adminKubeconfig(t))
}

// awaitStderr waits until cond holds on stderr, re-checking after every write. It fails the test
// when the process exits first or timeout passes.
func (w *waitRun) awaitStderr(what string, timeout time.Duration, cond func(stderr string) bool) {
	w.t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s, changed := w.stderr.read()
		if cond(s) {
			return
		}
		select {
		case <-changed:
		case <-w.exited:
			if s, _ := w.stderr.read(); cond(s) {
				return
			}
			w.t.Fatalf("doomwatch exited before %s: %s", what, w.result())
		case <-deadline.C:
			w.t.Fatalf("waiting %s for %s; stderr so far:\n%s", timeout, what, s)
		}
	}
}

// progressing waits for the plain progress's first line for target: the gate has synced and
// judged the rollout not done, so that what the test writes next is a change it sees happen.
func (w *waitRun) progressing(target string) {
	w.t.Helper()
	w.awaitStderr(target+" progressing", 30*time.Second, func(s string) bool {
		return strings.Contains(s, " "+target+": progressing: ")
	})
}

// wait waits for the process to exit, at most limit, and returns how it ended.
func (w *waitRun) wait(limit time.Duration) result {
	w.t.Helper()
	select {
	case <-w.exited:
	case <-time.After(limit):
		w.t.Fatalf("doomwatch %q still running after %s; stderr so far:\n%s", w.args, limit, w.stderrNow())
	}
	return w.result()
}

func (w *waitRun) stderrNow() string {
	s, _ := w.stderr.read()
	return s
}

// result is the finished run; took is from start to exit.
func (w *waitRun) result() result {
	<-w.exited
	out, _ := w.stdout.read()
	errOut, _ := w.stderr.read()
	r := result{stdout: out, stderr: errOut, took: w.end.Sub(w.start)}
	var ee *exec.ExitError
	switch {
	case errors.As(w.err, &ee):
		r.code = ee.ExitCode()
		r.timedOut = r.code == -1 // killed by the context's deadline
	case w.err != nil:
		w.t.Fatalf("running doomwatch %q: %v", w.args, w.err)
	}
	return r
}

// fakeKubelet answers the API server's pods/log requests as a node's kubelet does: the API server
// proxies GET pods/log to https://<node address>:<kubeletEndpoint port>/containerLogs/NS/POD/
// CONTAINER with the log options as query parameters (kubernetes pkg/registry/core/pod
// strategy.go LogLocation) and streams the answer back.
type fakeKubelet struct {
	srv  *httptest.Server
	port int32

	mu   sync.Mutex
	logs map[string][]string // "ns/pod/container" → the container's (previous instance's) log
	reqs []*url.URL
}

func newFakeKubelet(t *testing.T) *fakeKubelet {
	t.Helper()
	k := &fakeKubelet{logs: map[string][]string{}}
	k.srv = httptest.NewTLSServer(http.HandlerFunc(k.serve))
	t.Cleanup(k.srv.Close)
	u, err := url.Parse(k.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	k.port = int32(port)
	return k
}

// setLog makes the kubelet answer for ns/pod/container with lines.
func (k *fakeKubelet) setLog(ns, pod, container string, lines ...string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.logs[ns+"/"+pod+"/"+container] = lines
}

func (k *fakeKubelet) serve(w http.ResponseWriter, r *http.Request) {
	k.mu.Lock()
	k.reqs = append(k.reqs, r.URL)
	key, ok := strings.CutPrefix(r.URL.Path, "/containerLogs/")
	lines, found := k.logs[key]
	k.mu.Unlock()
	if !ok || !found {
		http.NotFound(w, r)
		return
	}
	if n, err := strconv.Atoi(r.URL.Query().Get("tailLines")); err == nil && n < len(lines) {
		lines = lines[len(lines)-n:]
	}
	w.Header().Set("Content-Type", "text/plain")
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}

// requests returns the requests the kubelet has answered.
func (k *fakeKubelet) requests() []*url.URL {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]*url.URL(nil), k.reqs...)
}

// kubeletNode creates a Ready node whose kubelet is k, on loopback: its status carries the
// address and the kubelet's port as a real kubelet reports them (status.addresses,
// status.daemonEndpoints.kubeletEndpoint).
func (e *env) kubeletNode(name string, k *fakeKubelet) {
	e.t.Helper()
	e.node(name, true)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := e.client.CoreV1().Nodes().Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}}
		n.Status.DaemonEndpoints.KubeletEndpoint.Port = k.port
		_, err = e.client.CoreV1().Nodes().UpdateStatus(e.ctx, n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		e.t.Fatalf("pointing node %s at its kubelet: %v", name, err)
	}
}

// rolledOut writes what the deployment controller writes as the pods of Deployment name's
// ReplicaSet rs become ready: the ReplicaSet's and the Deployment's ready and available counts.
// With ready equal to the replicas, `kubectl rollout status` calls the rollout complete.
func (e *env) rolledOut(name, rs string, ready int32) {
	e.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		r, err := e.client.AppsV1().ReplicaSets(e.ns).Get(e.ctx, rs, metav1.GetOptions{})
		if err != nil {
			return err
		}
		r.Status.ReadyReplicas, r.Status.AvailableReplicas = ready, ready
		_, err = e.client.AppsV1().ReplicaSets(e.ns).UpdateStatus(e.ctx, r, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		e.t.Fatalf("updating replicaset %s status: %v", rs, err)
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d, err := e.client.AppsV1().Deployments(e.ns).Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		d.Status.ReadyReplicas, d.Status.AvailableReplicas = ready, ready
		d.Status.UnavailableReplicas = *d.Spec.Replicas - ready
		_, err = e.client.AppsV1().Deployments(e.ns).UpdateStatus(e.ctx, d, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		e.t.Fatalf("updating deployment %s status: %v", name, err)
	}
}

// lineStarting returns the first line of out that starts with prefix, "" when none does.
func lineStarting(out, prefix string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// The states the tests write, each as a kubelet reports it.

// crashLooping is a container in CrashLoopBackOff after exiting code times (backOff: the
// kubelet's message).
func crashLooping(pod, ns string, code int32) corev1.PodStatus {
	return podStatus(corev1.PodRunning,
		waiting("app", "CrashLoopBackOff", backOff("40s", "app", pod, ns), 3, term("Error", code, "", 20*time.Second)))
}

// creating is a container the runtime has not created yet: the kubelet's default waiting state
// (pkg/kubelet/kubelet_pods.go, v1.37: reason ContainerCreating, no message).
func creating(image string) corev1.PodStatus {
	cs := waiting("app", "ContainerCreating", "", 0, nil)
	cs.Image = image
	return podStatus(corev1.PodPending, cs)
}

// missingImage is the image of the classify fixture errimagepull-not-found.
const missingImage = "registry.example.com/shop/web:v43"

// imageNotFound is containerd 1.7's ErrImagePull for an image that was never pushed, verbatim
// from the classify fixture errimagepull-not-found (substratusai/runbooks#42; containerd
// pkg/cri/server/image_pull.go, release/1.7).
func imageNotFound() corev1.PodStatus {
	cs := waiting("app", "ErrImagePull", `rpc error: code = NotFound desc = failed to pull and unpack image "`+missingImage+
		`": failed to resolve reference "`+missingImage+`": `+missingImage+`: not found`, 0, nil)
	cs.Image = missingImage
	return podStatus(corev1.PodPending, cs)
}

// appLog is what the crashing app wrote before it exited: plain lines as an app writes them, one
// with a colour escape that must not reach the report unsanitised.
var appLog = []string{
	"2026/03/01 11:57:58 web v43 starting on :8080",
	"2026/03/01 11:57:58 loading config from /etc/web/config.yaml",
	"2026/03/01 11:57:59 \x1b[31mFATAL\x1b[0m config: missing required key database.url",
}

// TestWaitRolloutCompletes (issue row 1): a Deployment starts rolling out, its new pods running but
// not ready; then they become ready and the controller reports the rollout complete. The gate
// exits 0 with kubectl's sentence, and not before the Deployment's status says so.
func TestWaitRolloutCompletes(t *testing.T) {
	e := newEnv(t)
	node := e.nodeName("n1")
	e.node(node, true)
	_, rs := e.deployment("web", 2, 0)
	for _, p := range []string{"web-a", "web-b"} {
		e.pod(podSpec{name: p, node: node, owner: &rs, status: podStatus(corev1.PodRunning, running("app", false, 0, nil))})
	}

	w := startWait(t, waitArgs(t, e, "deployment/web")...)
	w.progressing("deployment/web")
	for _, p := range []string{"web-a", "web-b"} {
		e.setStatus(p, podStatus(corev1.PodRunning, running("app", true, 0, nil)))
	}
	// Ready pods alone do not complete a rollout: kubectl waits for the Deployment's counts. The
	// gate's next status line (within 5s) shows it has seen them, and it is still waiting.
	w.awaitStderr("a status line with both pods healthy", 20*time.Second, func(s string) bool {
		return strings.Contains(s, " deployment/web: 2 desired, 2 updated, 0 ready · 2 healthy\n")
	})
	written := time.Now()
	e.rolledOut("web", rs.Name, 2)
	r := w.wait(30 * time.Second)
	if r.code != 0 {
		t.Fatalf("want exit 0: %s", r)
	}
	if want := `deployment/web: deployment "web" successfully rolled out`; !strings.Contains(r.stdout, want) {
		t.Errorf("stdout lacks %q:\n%s", want, r)
	}
	t.Logf("complete status written → exit: %s", w.end.Sub(written).Round(time.Millisecond))
}

// TestWaitCrashLoopDoomed (row 2): the new pods crash-loop. While one of two is doomed the rollout
// goes on (a Deployment is doomed when all its new pods are, Krane's rule); the second one's
// CrashLoopBackOff ends the gate with exit 1 within doomedWithin, printing each pod's reason and
// the crashed instance's log, fetched through the API server from the node's kubelet.
func TestWaitCrashLoopDoomed(t *testing.T) {
	e := newEnv(t)
	kubelet := newFakeKubelet(t)
	node := e.nodeName("n1")
	e.kubeletNode(node, kubelet)
	kubelet.setLog(e.ns, "web-a", "app", appLog...)
	_, rs := e.deployment("web", 2, 0)
	e.pod(podSpec{name: "web-a", node: node, owner: &rs, status: crashLooping("web-a", e.ns, 1)})
	e.pod(podSpec{name: "web-b", node: node, owner: &rs, status: podStatus(corev1.PodRunning, running("app", false, 0, nil))})

	w := startWait(t, waitArgs(t, e, "deployment/web")...)
	// Synced and judged with web-a doomed: one doomed new pod of two does not doom the rollout.
	w.progressing("deployment/web")
	written := time.Now()
	e.setStatus("web-b", crashLooping("web-b", e.ns, 1))
	r := w.wait(30 * time.Second)
	latency := w.end.Sub(written)
	t.Logf("last doomed status written → exit: %s", latency.Round(time.Millisecond))
	if r.code != 1 {
		t.Fatalf("want exit 1: %s", r)
	}
	if latency > doomedWithin {
		t.Errorf("exited %s after the last new pod's CrashLoopBackOff, want within %s", latency.Round(time.Millisecond), doomedWithin)
	}
	out := r.stdout
	for _, want := range []string{
		"deployment/web is doomed: 2/2 new pods doomed: Crashing repeatedly (exit 1)",
		"\nweb-a/app: Crashing repeatedly (exit 1)",
		"\nweb-b/app: Crashing repeatedly (exit 1)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r)
		}
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("stdout carries an escape sequence from the log: %q", out)
	}
	// The log goes under the first container of its reason, as the previous instance's, sanitised;
	// the second container of the same reason gets none.
	lines := strings.Split(out, "\n")
	at := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "web-a/app: ") })
	want := []string{"  last 3 lines of web-a/app's previous log:"}
	for _, l := range appLog {
		want = append(want, "    "+strings.ReplaceAll(strings.ReplaceAll(l, "\x1b[31m", ""), "\x1b[0m", ""))
	}
	if at < 0 || len(lines) < at+1+len(want) || strings.Join(lines[at+1:at+1+len(want)], "\n") != strings.Join(want, "\n") {
		t.Errorf("want under web-a/app's line:\n%s\ngot stdout:\n%s", strings.Join(want, "\n"), out)
	}
	if b := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "web-b/app: ") }); b >= 0 && b+1 < len(lines) &&
		strings.HasPrefix(lines[b+1], "  ") {
		t.Errorf("web-b/app has the same reason as web-a/app, so no log of its own:\n%s", out)
	}
	reqs := kubelet.requests()
	if len(reqs) != 1 {
		t.Fatalf("the kubelet got %d log requests, want 1 (one per distinct reason): %v", len(reqs), reqs)
	}
	q := reqs[0].Query()
	if reqs[0].Path != "/containerLogs/"+e.ns+"/web-a/app" || q.Get("previous") != "true" || q.Get("tailLines") == "" {
		t.Errorf("the kubelet was asked for %s, want /containerLogs/%s/web-a/app?previous=true&tailLines=N", reqs[0], e.ns)
	}
}

// TestWaitTransientNodeRecovers (row 3): three new pods fail to start with exit 128 on one node
// (the runtime's hiccup), then run. Transient failures are warnings, not failures: the gate exits 0
// naming the node for each, and the node, where three distinct pods failed, as suspect.
func TestWaitTransientNodeRecovers(t *testing.T) {
	e := newEnv(t)
	n1, n2, n3 := e.nodeName("n1"), e.nodeName("n2"), e.nodeName("n3")
	for _, n := range []string{n1, n2, n3} {
		e.node(n, true)
	}
	_, rs := e.deployment("web", 5, 2)
	e.pod(podSpec{name: "web-a", node: n1, owner: &rs, status: podStatus(corev1.PodRunning, running("app", true, 0, nil))})
	e.pod(podSpec{name: "web-b", node: n2, owner: &rs, status: podStatus(corev1.PodRunning, running("app", true, 0, nil))})
	flaky := []string{"web-c", "web-d", "web-e"}
	for _, p := range flaky {
		e.pod(podSpec{name: p, node: n3, owner: &rs, status: creating("registry.example/app:v1")})
	}

	w := startWait(t, waitArgs(t, e, "deployment/web")...)
	w.progressing("deployment/web")
	fails := map[string]*corev1.ContainerStateTerminated{}
	for i, p := range flaky {
		// As the kubelet reports it right after the failed start: state terminated, no restart yet.
		fails[p] = term("StartError", 128, runtimeHiccup, time.Duration(3-i)*time.Second)
		e.setStatus(p, podStatus(corev1.PodPending, terminatedStatus("app", 0, fails[p], nil)))
	}
	w.awaitStderr("a warning per flaky pod", 20*time.Second, func(s string) bool {
		for _, p := range flaky {
			if !strings.Contains(s, " warning: "+p+"/app (transient, on node "+n3+"): ") {
				return false
			}
		}
		return true
	})
	// The restart works: each pod runs, its failed start now its last state.
	for _, p := range flaky {
		cs := running("app", true, 1, fails[p])
		cs.State.Running.StartedAt = metav1.NewTime(time.Now().Truncate(time.Second))
		e.setStatus(p, podStatus(corev1.PodRunning, cs))
	}
	e.rolledOut("web", rs.Name, 5)
	r := w.wait(30 * time.Second)
	if r.code != 0 {
		t.Fatalf("want exit 0 (transient failures are warnings): %s", r)
	}
	for _, s := range []string{
		`deployment/web: deployment "web" successfully rolled out`,
		"\nwarning: " + n3 + " is suspect: 3 of 3 pods that started here in the last 15m failed with exit 128; ",
	} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("stdout lacks %q:\n%s", s, r)
		}
	}
	for _, p := range flaky {
		l := lineStarting(r.stdout, "warning: "+p+"/app (transient, on node "+n3+"): Failed to start")
		if !strings.Contains(l, "(exit 128)") || !strings.HasSuffix(l, runtimeHiccup) {
			t.Errorf("no warning for %s naming node %s, exit 128 and the runtime's message:\n%s", p, n3, r.stdout)
		}
	}
	for _, calm := range []string{n1, n2} {
		if strings.Contains(r.stdout, calm+" ") || strings.Contains(r.stdout, calm+")") {
			t.Errorf("stdout names the calm node %s:\n%s", calm, r.stdout)
		}
	}
}

// TestWaitImageNotFound (row 4): every new pod's image is missing from the registry. The gate
// exits 1 naming the image; a container that never ran has no log, and none is asked for.
func TestWaitImageNotFound(t *testing.T) {
	e := newEnv(t)
	kubelet := newFakeKubelet(t)
	node := e.nodeName("n1")
	e.kubeletNode(node, kubelet)
	_, rs := e.deployment("web", 2, 0)
	for _, p := range []string{"web-a", "web-b"} {
		e.pod(podSpec{name: p, node: node, owner: &rs, status: creating(missingImage)})
	}

	w := startWait(t, waitArgs(t, e, "deployment/web")...)
	w.progressing("deployment/web")
	written := time.Now()
	for _, p := range []string{"web-a", "web-b"} {
		e.setStatus(p, imageNotFound())
	}
	r := w.wait(30 * time.Second)
	t.Logf("last ErrImagePull written → exit: %s", w.end.Sub(written).Round(time.Millisecond))
	if r.code != 1 {
		t.Fatalf("want exit 1: %s", r)
	}
	for _, want := range []string{
		"deployment/web is doomed: 2/2 new pods doomed: Image not found: " + missingImage,
		"\nweb-a/app: Image not found: " + missingImage,
		"\nweb-b/app: Image not found: " + missingImage,
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r)
		}
	}
	if strings.Contains(r.stdout, "(no log") || strings.Contains(r.stdout, " log:") {
		t.Errorf("a container that never ran has no log to show:\n%s", r.stdout)
	}
	if reqs := kubelet.requests(); len(reqs) != 0 {
		t.Errorf("the kubelet was asked for logs of containers that never ran: %v", reqs)
	}
}

// TestWaitNeverReadyTimesOut (row 5): the new pods run but their readiness probe never passes.
// At --timeout the gate gives up with exit 70, no later than it should, saying what it still
// waited for: the probe, from the pods' spec.
func TestWaitNeverReadyTimesOut(t *testing.T) {
	e := newEnv(t)
	node := e.nodeName("n1")
	e.node(node, true)
	_, rs := e.deployment("web", 2, 0)
	probe := &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}},
		PeriodSeconds: 10, FailureThreshold: 3,
	}
	for _, p := range []string{"web-a", "web-b"} {
		e.pod(podSpec{name: p, node: node, owner: &rs,
			containers: []corev1.Container{{Name: "app", Image: "registry.example/app:v1", ReadinessProbe: probe}},
			status:     podStatus(corev1.PodRunning, running("app", false, 0, nil))})
	}

	const timeout = 8 * time.Second
	w := startWait(t, waitArgs(t, e, "deployment/web", "--timeout", timeout.String())...)
	r := w.wait(timeout + 20*time.Second)
	t.Logf("--timeout %s: exited after %s", timeout, r.took.Round(time.Millisecond))
	if r.code != 70 {
		t.Fatalf("want exit 70: %s", r)
	}
	// The timeout runs from the end of the sync, which takes well under a second here.
	if r.took < timeout || r.took > timeout+3*time.Second {
		t.Errorf("exited after %s, want about --timeout %s", r.took.Round(time.Millisecond), timeout)
	}
	for _, want := range []string{
		"timed out after 8s; still waiting for:\n",
		"\ndeployment/web: Waiting for deployment \"web\" rollout to finish: 0 of 2 updated replicas are available...\n",
		"\n  2 pods: Readiness probe must respond at /healthz (port 8080) (e.g. web-a/app)\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r)
		}
	}
}

// TestWaitNameTypo (row 6): a name that does not exist fails at once with exit 1 and one line,
// within the request timeout, rather than waiting for --timeout.
func TestWaitNameTypo(t *testing.T) {
	e := newEnv(t)
	node := e.nodeName("n1")
	e.node(node, true)
	_, rs := e.deployment("web", 1, 1)
	e.pod(podSpec{name: "web-a", node: node, owner: &rs, status: podStatus(corev1.PodRunning, running("app", true, 0, nil))})

	r := runDoomwatch(t, waitLimit, nil, append([]string{"wait"}, waitArgs(t, e, "deployment/wbe")...)...)
	if r.code != 1 || r.timedOut {
		t.Fatalf("want exit 1: %s", r)
	}
	if r.took >= 10*time.Second {
		t.Errorf("took %s, want within the request timeout (10s)", r.took.Round(time.Millisecond))
	}
	assertOneLineError(t, r, "deployment/wbe not found in namespace "+e.ns)
	if r.stdout != "" {
		t.Errorf("stdout should be empty: %q", r.stdout)
	}
}

// statefulSet creates a StatefulSet with the update strategy typ, and writes the status the
// controller would mid-rollout from revision current to update: every pod recreated at the update
// revision, none ready yet.
func (e *env) statefulSet(name string, replicas int32, typ appsv1.StatefulSetUpdateStrategyType, current, update string) *appsv1.StatefulSet {
	e.t.Helper()
	labels := map[string]string{"app": name}
	s, err := e.client.AppsV1().StatefulSets(e.ns).Create(e.ctx, &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
		Spec: appsv1.StatefulSetSpec{
			Replicas:       ptr.To(replicas),
			ServiceName:    name,
			Selector:       &metav1.LabelSelector{MatchLabels: labels},
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: typ},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/" + name + ":v2"}}},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatalf("creating statefulset %s: %v", name, err)
	}
	e.statefulSetStatus(name, func(st *appsv1.StatefulSetStatus) {
		*st = appsv1.StatefulSetStatus{ObservedGeneration: s.Generation, Replicas: replicas, UpdatedReplicas: replicas,
			CurrentRevision: current, UpdateRevision: update}
		if current == update {
			st.CurrentReplicas = replicas
		}
	})
	return s
}

func (e *env) statefulSetStatus(name string, f func(*appsv1.StatefulSetStatus)) {
	e.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, err := e.client.AppsV1().StatefulSets(e.ns).Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		f(&s.Status)
		_, err = e.client.AppsV1().StatefulSets(e.ns).UpdateStatus(e.ctx, s, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		e.t.Fatalf("updating statefulset %s status: %v", name, err)
	}
}

// controllerRef is the owner reference a controller puts on the pods it creates.
func controllerRef(kind, name string, uid types.UID) *metav1.OwnerReference {
	return &metav1.OwnerReference{APIVersion: "apps/v1", Kind: kind, Name: name, UID: uid,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
}

// TestWaitStatefulSetCompletes (row 7): a RollingUpdate StatefulSet rolls its pods to the update
// revision and the controller reports them ready; the gate exits 0 with kubectl's sentence.
func TestWaitStatefulSetCompletes(t *testing.T) {
	e := newEnv(t)
	node := e.nodeName("n1")
	e.node(node, true)
	const oldRev, newRev = "db-5b7c9d8f6", "db-6c8d7f9b4"
	// Without rollingUpdate (so without a partition), kubectl's rollout is complete when the
	// current revision has caught up with the update revision.
	s := e.statefulSet("db", 2, appsv1.RollingUpdateStatefulSetStrategyType, oldRev, newRev)
	owner := controllerRef("StatefulSet", s.Name, s.UID)
	for _, p := range []string{"db-0", "db-1"} {
		e.pod(podSpec{name: p, node: node, owner: owner, labels: map[string]string{"app": "db", "controller-revision-hash": newRev},
			status: podStatus(corev1.PodRunning, running("app", false, 0, nil))})
	}

	w := startWait(t, waitArgs(t, e, "statefulset/db")...)
	w.progressing("statefulset/db")
	for _, p := range []string{"db-0", "db-1"} {
		e.setStatus(p, podStatus(corev1.PodRunning, running("app", true, 0, nil)))
	}
	e.statefulSetStatus("db", func(st *appsv1.StatefulSetStatus) {
		// The update done, the controller makes the update revision the current one.
		st.ReadyReplicas, st.AvailableReplicas, st.CurrentReplicas = 2, 2, 2
		st.CurrentRevision = newRev
	})
	r := w.wait(30 * time.Second)
	if r.code != 0 {
		t.Fatalf("want exit 0: %s", r)
	}
	if want := "statefulset/db: statefulset rolling update complete 2 pods at revision " + newRev + "..."; !strings.Contains(r.stdout, want) {
		t.Errorf("stdout lacks %q:\n%s", want, r)
	}
}

// TestWaitStatefulSetOnDelete (row 7): kubectl has no rollout status for the OnDelete strategy, and
// neither has the gate: exit 1 with kubectl's words, at once.
func TestWaitStatefulSetOnDelete(t *testing.T) {
	e := newEnv(t)
	e.statefulSet("legacy", 1, appsv1.OnDeleteStatefulSetStrategyType, "legacy-5b7c9d8f6", "legacy-5b7c9d8f6")
	r := runDoomwatch(t, waitLimit, nil, append([]string{"wait"}, waitArgs(t, e, "sts/legacy")...)...)
	if r.code != 1 || r.timedOut {
		t.Fatalf("want exit 1: %s", r)
	}
	assertOneLineError(t, r, "statefulset/legacy: rollout status is only available for RollingUpdate strategy type")
}

// TestWaitDaemonSetCurrentGeneration (row 7): a DaemonSet mid-update has an old pod (the previous
// template generation) crash-looping on one node and a new one starting on another. The old pod
// alone does not doom the rollout (the update replaces it); when the current generation's pod
// crash-loops, the gate exits 1. Which generation is current is the DaemonSet's
// deprecated.daemonset.template.generation annotation, which the API server bumps on a template
// change; the pods carry theirs as the pod-template-generation label.
func TestWaitDaemonSetCurrentGeneration(t *testing.T) {
	e := newEnv(t)
	n1, n2 := e.nodeName("n1"), e.nodeName("n2")
	e.node(n1, true)
	e.node(n2, true)
	labels := map[string]string{"app": "agent"}
	ds, err := e.client.AppsV1().DaemonSets(e.ns).Create(e.ctx, &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: e.ns},
		Spec: appsv1.DaemonSetSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: labels},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/agent:v1"}}},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	oldGen := ds.Annotations[appsv1.DeprecatedTemplateGeneration]
	// The update: a new image, a new template generation.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d, err := e.client.AppsV1().DaemonSets(e.ns).Get(e.ctx, "agent", metav1.GetOptions{})
		if err != nil {
			return err
		}
		d.Spec.Template.Spec.Containers[0].Image = "registry.example/agent:v2"
		ds, err = e.client.AppsV1().DaemonSets(e.ns).Update(e.ctx, d, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	newGen := ds.Annotations[appsv1.DeprecatedTemplateGeneration]
	if oldGen == "" || newGen == "" || oldGen == newGen {
		t.Fatalf("template generation annotation %q before the update and %q after: the API server should set and bump it", oldGen, newGen)
	}
	ds.Status = appsv1.DaemonSetStatus{ObservedGeneration: ds.Generation, DesiredNumberScheduled: 2, CurrentNumberScheduled: 2,
		UpdatedNumberScheduled: 1, NumberReady: 0, NumberAvailable: 0, NumberUnavailable: 2}
	if _, err := e.client.AppsV1().DaemonSets(e.ns).UpdateStatus(e.ctx, ds, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	owner := controllerRef("DaemonSet", ds.Name, ds.UID)
	podLabels := func(gen string) map[string]string {
		return map[string]string{"app": "agent", "pod-template-generation": gen, "controller-revision-hash": "agent-" + gen}
	}
	e.pod(podSpec{name: "agent-old", node: n1, owner: owner, labels: podLabels(oldGen), status: crashLooping("agent-old", e.ns, 2)})
	e.pod(podSpec{name: "agent-new", node: n2, owner: owner, labels: podLabels(newGen),
		status: podStatus(corev1.PodRunning, running("app", false, 0, nil))})

	w := startWait(t, waitArgs(t, e, "ds/agent")...)
	// Synced with the old generation's pod doomed, and still progressing.
	w.progressing("daemonset/agent")
	written := time.Now()
	e.setStatus("agent-new", crashLooping("agent-new", e.ns, 1))
	r := w.wait(30 * time.Second)
	t.Logf("current generation's CrashLoopBackOff written → exit: %s", w.end.Sub(written).Round(time.Millisecond))
	if r.code != 1 {
		t.Fatalf("want exit 1: %s", r)
	}
	for _, want := range []string{
		"daemonset/agent is doomed: 1/1 new pods doomed: Crashing repeatedly (exit 1)",
		"\nagent-new/app: Crashing repeatedly (exit 1)",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r)
		}
	}
	if strings.Contains(r.stdout, "agent-old") {
		t.Errorf("the old generation's pod is reported, but the rollout replaces it:\n%s", r.stdout)
	}
}

// waitDoc is `doomwatch wait -o json` as the README documents it. Fields may be added, never
// renamed: checkWaitSchema checks that every documented key is present.
type waitDoc struct {
	Verdict      string          `json:"verdict"`
	ExitCode     int             `json:"exitCode"`
	Message      string          `json:"message"`
	Workloads    []waitWorkload  `json:"workloads"`
	Warnings     []waitContainer `json:"warnings"`
	SuspectNodes []waitNode      `json:"suspectNodes"`
}

type waitWorkload struct {
	Kind      string          `json:"kind"`
	Namespace string          `json:"namespace"`
	Name      string          `json:"name"`
	Verdict   string          `json:"verdict"`
	Reason    string          `json:"reason"`
	Desired   int             `json:"desired"`
	Updated   int             `json:"updated"`
	Ready     int             `json:"ready"`
	Available int             `json:"available"`
	Doomed    []waitContainer `json:"doomed"`
	Pending   []waitPending   `json:"pending"`
}

type waitContainer struct {
	Namespace   string   `json:"namespace"`
	Pod         string   `json:"pod"`
	Container   string   `json:"container"`
	Node        string   `json:"node"`
	Reason      string   `json:"reason"`
	ExitCode    *int     `json:"exitCode"`
	Log         []string `json:"log"`
	LogPrevious bool     `json:"logPrevious"`
	LogError    string   `json:"logError"`
}

type waitPending struct {
	Reason  string `json:"reason"`
	Pods    int    `json:"pods"`
	Example string `json:"example"`
}

type waitNode struct {
	Name string `json:"name"`
	Why  string `json:"why"`
}

// The documented keys of the wait -o json schema, per object.
var (
	waitSchemaTop       = []string{"verdict", "exitCode", "message", "workloads", "warnings", "suspectNodes"}
	waitSchemaWorkload  = []string{"kind", "namespace", "name", "verdict", "reason", "desired", "updated", "ready", "available", "doomed", "pending"}
	waitSchemaContainer = []string{"namespace", "pod", "container", "node", "reason", "exitCode", "log", "logPrevious", "logError"}
	waitSchemaPending   = []string{"reason", "pods", "example"}
	waitSchemaNode      = []string{"name", "why"}
)

// checkWaitSchema fails when a documented key is missing from any object of the document, or
// has the wrong JSON type: lists are lists (never null), exitCode is null or a number.
func checkWaitSchema(t *testing.T, out string) {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("decoding wait -o json: %v\n%s", err, out)
	}
	has := func(where string, obj any, keys []string) map[string]any { return schemaObject(t, where, obj, keys) }
	list := func(where string, m map[string]any, key string) []any {
		t.Helper()
		l, ok := m[key].([]any)
		if !ok && m != nil {
			t.Errorf("%s.%s is %T, want a list (empty, not null, when there is nothing)", where, key, m[key])
		}
		return l
	}
	typed := func(where string, m map[string]any, want string, keys ...string) {
		t.Helper()
		for _, k := range keys {
			var ok bool
			switch want {
			case "string":
				_, ok = m[k].(string)
			case "number":
				_, ok = m[k].(float64)
			case "bool":
				_, ok = m[k].(bool)
			}
			if !ok {
				t.Errorf("%s.%s is %T, want a %s", where, k, m[k], want)
			}
		}
	}
	container := func(where string, c any) {
		t.Helper()
		m := has(where, c, waitSchemaContainer)
		if m == nil {
			return
		}
		typed(where, m, "string", "namespace", "pod", "container", "node", "reason", "logError")
		typed(where, m, "bool", "logPrevious")
		if code := m["exitCode"]; code != nil {
			typed(where, m, "number", "exitCode")
		}
		for _, l := range list(where, m, "log") {
			if _, ok := l.(string); !ok {
				t.Errorf("%s.log holds %T, want strings", where, l)
			}
		}
	}
	top := has("wait document", doc, waitSchemaTop)
	typed("wait document", top, "string", "verdict", "message")
	typed("wait document", top, "number", "exitCode")
	for _, w := range list("wait document", top, "workloads") {
		m := has("workload", w, waitSchemaWorkload)
		if m == nil {
			continue
		}
		typed("workload", m, "string", "kind", "namespace", "name", "verdict", "reason")
		typed("workload", m, "number", "desired", "updated", "ready", "available")
		for _, c := range list("workload", m, "doomed") {
			container("doomed container", c)
		}
		for _, p := range list("workload", m, "pending") {
			if pm := has("pending", p, waitSchemaPending); pm != nil {
				typed("pending", pm, "string", "reason", "example")
				typed("pending", pm, "number", "pods")
			}
		}
	}
	for _, c := range list("wait document", top, "warnings") {
		container("warning", c)
	}
	for _, n := range list("wait document", top, "suspectNodes") {
		if nm := has("suspect node", n, waitSchemaNode); nm != nil {
			typed("suspect node", nm, "string", "name", "why")
		}
	}
}

// waitJSON runs `doomwatch wait -o json` to completion and decodes its document.
func waitJSON(t *testing.T, e *env, target string) (result, waitDoc) {
	t.Helper()
	r := runDoomwatch(t, waitLimit, nil, append([]string{"wait", "-o", "json"}, waitArgs(t, e, target)...)...)
	checkWaitSchema(t, r.stdout)
	var doc waitDoc
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("decoding wait -o json: %v\n%s", err, r)
	}
	return r, doc
}

// TestWaitJSON: -o json puts the documented document on stdout, for a doomed rollout (a crash
// with its previous log, and a missing image, which has no exit code and no log) and for a
// complete one.
func TestWaitJSON(t *testing.T) {
	t.Run("doomed", func(t *testing.T) {
		e := newEnv(t)
		kubelet := newFakeKubelet(t)
		node := e.nodeName("n1")
		e.kubeletNode(node, kubelet)
		kubelet.setLog(e.ns, "web-a", "app", appLog...)
		_, rs := e.deployment("web", 2, 0)
		e.pod(podSpec{name: "web-a", node: node, owner: &rs, status: crashLooping("web-a", e.ns, 2)})
		e.pod(podSpec{name: "web-b", node: node, owner: &rs, status: imageNotFound()})

		r, doc := waitJSON(t, e, "deployment/web")
		if r.code != 1 || doc.Verdict != "doomed" || doc.ExitCode != 1 || doc.Message != "" {
			t.Fatalf("want exit 1 and verdict doomed: verdict %q exitCode %d message %q; %s", doc.Verdict, doc.ExitCode, doc.Message, r)
		}
		if len(doc.Workloads) != 1 {
			t.Fatalf("want one workload: %s", r.stdout)
		}
		wl := doc.Workloads[0]
		if wl.Kind != "Deployment" || wl.Namespace != e.ns || wl.Name != "web" || wl.Verdict != "doomed" ||
			wl.Desired != 2 || wl.Updated != 2 || wl.Ready != 0 || wl.Available != 0 ||
			!strings.HasPrefix(wl.Reason, "2/2 new pods doomed: ") {
			t.Errorf("workload = %+v", wl)
		}
		if len(wl.Doomed) != 2 {
			t.Fatalf("want two doomed containers: %s", r.stdout)
		}
		crash, pull := wl.Doomed[0], wl.Doomed[1]
		if crash.Pod != "web-a" || crash.Container != "app" || crash.Node != node || crash.Namespace != e.ns ||
			crash.ExitCode == nil || *crash.ExitCode != 2 || crash.Reason != "Crashing repeatedly (exit 2)" {
			t.Errorf("crashing container = %+v", crash)
		}
		if len(crash.Log) != len(appLog) || !crash.LogPrevious || crash.LogError != "" ||
			crash.Log[2] != "2026/03/01 11:57:59 FATAL config: missing required key database.url" {
			t.Errorf("crashing container's log = %q previous %v error %q, want the previous log, sanitised", crash.Log, crash.LogPrevious, crash.LogError)
		}
		if pull.Pod != "web-b" || pull.ExitCode != nil || len(pull.Log) != 0 || pull.LogPrevious || pull.LogError != "" ||
			pull.Reason != "Image not found: "+missingImage {
			t.Errorf("missing image's container = %+v, want no exit code and no log", pull)
		}
		if len(doc.Warnings) != 0 || len(doc.SuspectNodes) != 0 {
			t.Errorf("warnings %+v suspect nodes %+v, want none", doc.Warnings, doc.SuspectNodes)
		}
	})
	t.Run("complete", func(t *testing.T) {
		e := newEnv(t)
		node := e.nodeName("n1")
		e.node(node, true)
		_, rs := e.deployment("web", 2, 2)
		for _, p := range []string{"web-a", "web-b"} {
			e.pod(podSpec{name: p, node: node, owner: &rs, status: podStatus(corev1.PodRunning, running("app", true, 0, nil))})
		}
		r, doc := waitJSON(t, e, "deployment/web")
		if r.code != 0 || doc.Verdict != "complete" || doc.ExitCode != 0 {
			t.Fatalf("want exit 0 and verdict complete: %s", r)
		}
		if len(doc.Workloads) != 1 {
			t.Fatalf("want one workload: %s", r.stdout)
		}
		wl := doc.Workloads[0]
		if wl.Verdict != "complete" || wl.Reason != `deployment "web" successfully rolled out` || wl.Ready != 2 || wl.Available != 2 ||
			len(wl.Doomed) != 0 || len(wl.Pending) != 0 {
			t.Errorf("workload = %+v", wl)
		}
	})
}

// TestWaitJUnit: -o junit puts a JUnit report on stdout for a doomed rollout, the workload a
// failure whose message is its reason and whose body has each doomed container with its node,
// its exit code and its previous log, sanitised; under GitHub Actions stderr has the failure as
// an annotation too.
func TestWaitJUnit(t *testing.T) {
	e := newEnv(t)
	kubelet := newFakeKubelet(t)
	node := e.nodeName("n1")
	e.kubeletNode(node, kubelet)
	kubelet.setLog(e.ns, "web-a", "app", appLog...)
	_, rs := e.deployment("web", 2, 0)
	e.pod(podSpec{name: "web-a", node: node, owner: &rs, status: crashLooping("web-a", e.ns, 2)})
	e.pod(podSpec{name: "web-b", node: node, owner: &rs, status: imageNotFound()})

	r := runDoomwatch(t, waitLimit, []string{"GITHUB_ACTIONS=true"}, append([]string{"wait", "-o", "junit"}, waitArgs(t, e, "deployment/web")...)...)
	if r.code != 1 {
		t.Fatalf("want exit 1: %s", r)
	}
	var suites junit.Testsuites
	if err := xml.Unmarshal([]byte(r.stdout), &suites); err != nil {
		t.Fatalf("parsing wait -o junit: %v\n%s", err, r)
	}
	if len(suites.Suites) != 1 || len(suites.Suites[0].Testcases) != 1 || suites.Tests != 1 || suites.Failures != 1 {
		t.Fatalf("want one suite with one failed testcase: %s", r)
	}
	tc := suites.Suites[0].Testcases[0]
	if tc.Name != "deployment/web" || tc.Classname != e.ns || tc.Failure == nil || tc.Failure.Type != "doomed" ||
		!strings.HasPrefix(tc.Failure.Message, "2/2 new pods doomed: ") {
		t.Fatalf("testcase %+v, want deployment/web failed: doomed", tc)
	}
	for _, want := range []string{
		"web-a/app: Crashing repeatedly (exit 2)\n  node " + node + ", exit code 2\n" +
			fmt.Sprintf("  last %d lines of web-a/app's previous log:\n", len(appLog)),
		"    2026/03/01 11:57:59 FATAL config: missing required key database.url\n",
		"web-b/app: Image not found: " + missingImage + "\n  node " + node + "\n",
	} {
		if !strings.Contains(tc.Failure.Data, want) {
			t.Errorf("the failure's body has no %q:\n%s", want, tc.Failure.Data)
		}
	}
	if want := "::error title=doomwatch%3A deployment/web doomed::" + tc.Failure.Message + "%0Aweb-a/app: Crashing repeatedly (exit 2) (node " + node + ")"; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr has no %q: %s", want, r)
	}
}

// progressStamp is the plain progress's line start: the time, UTC, to the second.
var progressStamp = regexp.MustCompile(`^(\d\d):(\d\d):(\d\d) (.*)$`)

// TestWaitPlainProgress: with stderr a pipe (CI), progress is plain timestamped lines, with no
// escape sequence: one when the verdict changes, and the workload's status line when it changed,
// at most every 5s however often the pods change.
func TestWaitPlainProgress(t *testing.T) {
	e := newEnv(t)
	node := e.nodeName("n1")
	e.node(node, true)
	_, rs := e.deployment("web", 3, 0)
	pods := []string{"web-a", "web-b", "web-c"}
	for _, p := range pods {
		e.pod(podSpec{name: p, node: node, owner: &rs, status: podStatus(corev1.PodRunning, running("app", false, 0, nil))})
	}

	w := startWait(t, waitArgs(t, e, "deployment/web", "--timeout", "50s")...)
	w.progressing("deployment/web")
	// web-a flips between ready and not several times a second, each flip a new status line: the
	// plain progress must hold them to one per 5s. The flips go on until one status line has been
	// printed and for 2.5s after it, a window in which an unpaced progress would print several.
	ready := false
	flip := func() {
		ready = !ready
		e.setStatus("web-a", podStatus(corev1.PodRunning, running("app", ready, 0, nil)))
	}
	statusLine := regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d deployment/web: 3 desired, \d+ updated, `)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	limit := time.After(20 * time.Second)
	var printed time.Time
	for printed.IsZero() || time.Since(printed) < 2500*time.Millisecond {
		select {
		case <-tick.C:
		case <-limit:
			t.Fatalf("no status line within 20s of flips; stderr:\n%s", w.stderrNow())
		}
		flip()
		if printed.IsZero() && statusLine.MatchString(w.stderrNow()) {
			printed = time.Now()
		}
	}
	for _, p := range pods {
		e.setStatus(p, podStatus(corev1.PodRunning, running("app", true, 0, nil)))
	}
	e.rolledOut("web", rs.Name, 3)
	r := w.wait(30 * time.Second)
	if r.code != 0 {
		t.Fatalf("want exit 0: %s", r)
	}
	if strings.Contains(r.stderr, "\x1b") {
		t.Errorf("plain progress carries escape sequences: %q", r.stderr)
	}
	prev := -1 // the stamp of the last status line
	var statuses int
	sawProgressing, sawComplete := false, false
	for _, l := range strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n") {
		m := progressStamp.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("stderr line %q is not HH:MM:SS-stamped", l)
			continue
		}
		h, _ := strconv.Atoi(m[1])
		mi, _ := strconv.Atoi(m[2])
		s, _ := strconv.Atoi(m[3])
		at, text := h*3600+mi*60+s, m[4]
		switch {
		case strings.HasPrefix(text, "deployment/web: progressing: "):
			sawProgressing = true
		case text == `deployment/web: complete: deployment "web" successfully rolled out`:
			sawComplete = true
		case strings.HasPrefix(text, "deployment/web: 3 desired, "):
			statuses++
			// The stamps are whole seconds of the program's clock: lines at least 5s apart are
			// stamped at least 5 apart (midnight aside).
			if gap := (at - prev + 86400) % 86400; prev >= 0 && gap < 5 {
				t.Errorf("status line %q only %ds after the previous one, want at most one per 5s", l, gap)
			}
			prev = at
		case strings.HasPrefix(text, "warning: "):
		default:
			t.Errorf("unexpected progress line %q", l)
		}
	}
	if !sawProgressing || !sawComplete || statuses == 0 {
		t.Errorf("want a progressing line, at least one status line and the complete line; got %d status lines:\n%s", statuses, r.stderr)
	}
	t.Logf("%d status lines over %s of flips", statuses, r.took.Round(time.Second))
}

// TestWaitLiveViewInPseudoTerminal: on a terminal the progress is a live view drawn inline (no
// alternate screen, so the verdict and the scrollback stay), with the workload's line, and the
// gate still exits 0 when the rollout completes.
func TestWaitLiveViewInPseudoTerminal(t *testing.T) {
	e := newEnv(t)
	node := e.nodeName("n1")
	e.node(node, true)
	_, rs := e.deployment("web", 2, 0)
	for _, p := range []string{"web-a", "web-b"} {
		e.pod(podSpec{name: p, node: node, owner: &rs, status: podStatus(corev1.PodRunning, running("app", false, 0, nil))})
	}
	tty := startTerminal(t, append([]string{"wait"}, waitArgs(t, e, "deployment/web")...)...)
	tty.waitScreen("the workload's live line", 30*time.Second, func(s string) bool {
		l := lineWith(s, "deployment/web")
		return strings.Contains(l, "2 desired, 0 updated") || strings.Contains(l, "2 desired, 2 updated")
	})
	for _, p := range []string{"web-a", "web-b"} {
		e.setStatus(p, podStatus(corev1.PodRunning, running("app", true, 0, nil)))
	}
	e.rolledOut("web", rs.Name, 2)
	select {
	case <-tty.exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("wait did not exit within 30s of the rollout completing; screen:\n%s", tty.screen())
	}
	if tty.waitErr != nil {
		t.Errorf("exit: %v, want exit code 0", tty.waitErr)
	}
	<-tty.readEnd
	tty.mu.Lock()
	raw, alt := tty.raw.String(), tty.alt
	tty.mu.Unlock()
	if strings.Contains(raw, "\x1b[?1049h") || alt {
		t.Errorf("the live view entered the alternate screen")
	}
	if s := tty.screen(); !strings.Contains(s, `deployment "web" successfully rolled out`) {
		t.Errorf("the verdict is not on the screen after exit:\n%s", s)
	}
}

// TestPluginWait: `kubectl doomwatch wait` gates a rollout the same way.
func TestPluginWait(t *testing.T) {
	e := newEnv(t)
	node := e.nodeName("n1")
	e.node(node, true)
	_, rs := e.deployment("web", 1, 1)
	e.pod(podSpec{name: "web-a", node: node, owner: &rs, status: podStatus(corev1.PodRunning, running("app", true, 0, nil))})
	r := runKubectl(t, waitLimit, adminKubeconfig(t), "doomwatch", "wait", "deployment/web", "-n", e.ns, "--timeout", "20s")
	if r.code != 0 {
		t.Fatalf("kubectl doomwatch wait: want exit 0: %s", r)
	}
	if want := `deployment/web: deployment "web" successfully rolled out`; !strings.Contains(r.stdout, want) {
		t.Errorf("stdout lacks %q:\n%s", want, r)
	}
}

// schemaObject is obj as a JSON object, with an error for each of keys it lacks: the README's
// schema says each is always there.
func schemaObject(t *testing.T, where string, obj any, keys []string) map[string]any {
	t.Helper()
	m, ok := obj.(map[string]any)
	if !ok {
		t.Errorf("%s is %T, not an object", where, obj)
		return nil
	}
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			t.Errorf("%s has no %q: the documented schema says it must", where, k)
		}
	}
	return m
}

// TestWaitOwnTimeout: a Deployment annotated with Krane's timeout-override times the wait out at
// its own timeout, well before --timeout, with the timeout's message: the annotation survives the
// informer's trim, against a real API server.
func TestWaitOwnTimeout(t *testing.T) {
	e := newEnv(t)
	node := e.nodeName("n1")
	e.node(node, true)
	d, rs := e.deployment("web", 1, 0)
	e.pod(podSpec{name: "web-a", node: node, owner: &rs, status: podStatus(corev1.PodRunning, running("app", false, 0, nil))})
	d.Annotations = map[string]string{"krane.shopify.io/timeout-override": "3S"}
	if _, err := e.client.AppsV1().Deployments(e.ns).Update(e.ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	r := runDoomwatch(t, waitLimit, nil, append([]string{"wait", "--timeout", "2m"}, waitArgs(t, e, "deployment/web")...)...)
	if r.code != 70 || r.timedOut || !strings.Contains(r.stdout, "deployment/web timed out after 3s (its krane.shopify.io/timeout-override annotation)") {
		t.Fatalf("want exit 70 with the workload's own timeout: %s", r)
	}
	if r.took > time.Minute {
		t.Errorf("took %s: the 3s timeout did not end it", r.took.Round(time.Millisecond))
	}
}
