package e2e

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

var updateArgo = flag.Bool("update-argo", false, "rewrite e2e/testdata/argo from the statuses the real Argo Rollouts controller writes")

// argoNamespace holds the Rollouts of TestArgoRolloutsController.
const argoNamespace = "argo-rollouts-e2e"

// startArgo starts a control plane (kwok's nodes under the real kube-controller-manager and
// kube-scheduler) with the real Argo Rollouts controller beside it. Under CI a missing binary fails
// the test, as the other binaries do; elsewhere the test skips with the reason.
func startArgo(t *testing.T, ctx context.Context) *ControlPlane {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
	ci := os.Getenv("CI") == "true"
	k8sBin, argoBin := os.Getenv("DOOMWATCH_K8S_BIN"), os.Getenv("DOOMWATCH_ARGO_BIN")
	err := CheckArgo(argoBin)
	for _, b := range ControlPlaneBinaries {
		if _, serr := os.Stat(filepath.Join(k8sBin, b)); serr != nil && err == nil {
			err = fmt.Errorf("%s not in DOOMWATCH_K8S_BIN=%s (hack/build-k8s.sh builds it)", b, k8sBin)
		}
	}
	if err != nil {
		if ci {
			t.Fatalf("the Argo Rollouts controller cannot run (CI=true: failing): %v", err)
		}
		t.Skipf("the Argo Rollouts controller cannot run: %v", err)
	}
	dir := filepath.Join(suiteDir, "argo-rollouts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cp, err := StartControlPlane(ctx, k8sBin, dir, ControlPlaneOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The logs stay in dir, which TestMain keeps when the run fails.
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the control plane's and the Argo Rollouts controller's logs:\n%s", cp.Logs(30))
		}
		cp.Stop()
	})
	start := time.Now()
	if err := cp.StartArgoRollouts(ctx, argoBin); err != nil {
		t.Fatal(err)
	}
	t.Logf("Argo Rollouts controller (%s) running in %s", argoVersion(argoBin), time.Since(start).Round(time.Millisecond))
	return cp
}

// argoVersion is what the controller says its version is.
func argoVersion(argoBin string) string {
	out, err := exec.Command(filepath.Join(argoBin, ArgoBinary), "--version").Output()
	if err != nil {
		return "version unknown: " + err.Error()
	}
	return strings.TrimSpace(string(out))
}

// argoRollout is a canary Rollout of two replicas with the given steps (YAML flow), its pods
// running image and carrying annotations (the kwok behaviours of testdata/kwok read them).
func argoRollout(name, image string, steps string, annotations map[string]string, spec map[string]any) (*unstructured.Unstructured, error) {
	var stepList []any
	if err := json.Unmarshal([]byte(steps), &stepList); err != nil {
		return nil, fmt.Errorf("steps %s: %w", steps, err)
	}
	ann := map[string]any{}
	for k, v := range annotations {
		ann[k] = v
	}
	s := map[string]any{
		"replicas": int64(2),
		"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
		"template": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"app": name}, "annotations": ann},
			"spec": map[string]any{"containers": []any{
				map[string]any{"name": "app", "image": image},
			}},
		},
		"strategy": map[string]any{"canary": map[string]any{"steps": stepList}},
	}
	for k, v := range spec {
		s[k] = v
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1",
		"kind":       "Rollout",
		"metadata":   map[string]any{"name": name, "namespace": argoNamespace},
		"spec":       s,
	}}, nil
}

// argoCase is one Rollout of TestArgoRolloutsController: created, left to become Healthy (a first
// deploy skips the steps, rollout/canary.go), then updated to the next template.
type argoCase struct {
	name  string
	steps string
	// spec adds fields to the Rollout's spec.
	spec map[string]any
	// next is the update's pod template annotations (the kwok behaviour).
	next map[string]string
	// check waits for what the controller must write after the update, and asserts it.
	check func(t *testing.T, ctx context.Context, r *RolloutRecorder, from int)
	// header says what the fixture shows.
	header []string
	// wait is what `doomwatch wait rollout/NAME`, started as the update is applied, must end with.
	wait argoWait
}

// argoWait is the outcome doomwatch's gate must reach on a case's update: its exit code and
// verdict within timeout (wait's --timeout), and for a doom, before the controller's Degraded.
type argoWait struct {
	timeout time.Duration
	code    int
	verdict string
	// reason is a prefix of the Rollout's reason in wait -o json.
	reason string
}

// TestArgoRolloutsController runs the real Argo Rollouts controller (v1.10.1, the module's own
// build) over kwok's nodes and records the statuses it writes for canary updates that complete,
// pause indefinitely and crash-loop past the progress deadline. With -update-argo it writes them
// to testdata/argo, the fixtures of doomwatch's Argo Rollout verdicts.
func TestArgoRolloutsController(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	// Not deferred: the parallel subtests run after this function returns, before its cleanups.
	t.Cleanup(cancel)
	cp := startArgo(t, ctx)
	argoBin := os.Getenv("DOOMWATCH_ARGO_BIN")
	if _, err := cp.AdminClient.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: argoNamespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"argo-n1", "argo-n2", "argo-n3"} {
		if err := cp.CreateNode(ctx, NodeSpec{Name: n}); err != nil {
			t.Fatal(err)
		}
	}
	// The crash behaviour of testdata/kwok/behaviour-crash.yaml, as e2e/scenarios/crashloop.yaml
	// uses it: each instance runs 2s, never ready, and exits 1; kwok's Stages then play the
	// kubelet's restart and CrashLoopBackOff.
	crash := map[string]string{
		"doomwatch.test/behaviour": "crash", "doomwatch.test/exit-code": "1",
		"doomwatch.test/exit-reason": "Error", "doomwatch.test/run-seconds": "2",
	}
	cases := []argoCase{
		{
			name:  "healthy",
			steps: `[{"setWeight": 50}, {"pause": {"duration": "5s"}}]`,
			check: checkArgoHealthy,
			wait:  argoWait{timeout: 3 * time.Minute, code: 0, verdict: "complete", reason: `rollout "healthy" is Healthy`},
			header: []string{
				"healthy: canary steps [setWeight 50, pause {duration: 5s}]; the image changed once the",
				"first deploy was Healthy, and the update went through both steps to Healthy.",
			},
		},
		{
			name:  "paused",
			steps: `[{"setWeight": 20}, {"pause": {}}]`,
			check: checkArgoPaused,
			// Paused at a step is progressing, never doomed: wait runs out its timeout (Krane's 70).
			wait: argoWait{timeout: 30 * time.Second, code: 70, verdict: "timeout", reason: "Paused: CanaryPauseStep"},
			header: []string{
				"paused: canary steps [setWeight 20, pause {}]; the image changed once the first deploy was",
				"Healthy, and the update stopped at the indefinite pause (Paused, CanaryPauseStep) and stayed there:",
				"no other status came in the 20 s the test watched after it.",
			},
		},
		{
			name:  "crashloop",
			steps: `[{"setWeight": 50}, {"pause": {}}]`,
			spec:  map[string]any{"progressDeadlineSeconds": int64(30)},
			next:  crash,
			check: checkArgoDeadline(false),
			wait:  argoWait{timeout: 2 * time.Minute, code: 1, verdict: "doomed", reason: "1/1 new pods doomed: "},
			header: []string{
				"crashloop: canary steps [setWeight 50, pause {}], progressDeadlineSeconds 30; the update's pods",
				"crash-loop (kwok's behaviour-crash Stages: exit 1 after 2s, never ready, CrashLoopBackOff),",
				"and the Rollout went Degraded at the progress deadline.",
			},
		},
		{
			name:  "crashloop-abort",
			steps: `[{"setWeight": 50}, {"pause": {}}]`,
			spec:  map[string]any{"progressDeadlineSeconds": int64(30), "progressDeadlineAbort": true},
			next:  crash,
			check: checkArgoDeadline(true),
			wait:  argoWait{timeout: 2 * time.Minute, code: 1, verdict: "doomed", reason: "1/1 new pods doomed: "},
			header: []string{
				"crashloop-abort: as crashloop, with progressDeadlineAbort: true: at the deadline the controller",
				"aborted the update (status.abort, abortedAt) and scaled the stable ReplicaSet back up.",
			},
		},
	}
	version := argoVersion(argoBin)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			runArgoCase(t, ctx, cp, c, version)
		})
	}
	// wait -f on a manifest set that holds a Rollout among the other kinds, on the same cluster.
	t.Run("wait-f", func(t *testing.T) {
		t.Parallel()
		testWaitManifests(t, ctx, cp)
	})
}

func runArgoCase(t *testing.T, ctx context.Context, cp *ControlPlane, c argoCase, version string) {
	rec := cp.RecordRollout(ctx, argoNamespace, c.name)
	ro, err := argoRollout(c.name, "registry.example.com/shop/"+c.name+":v1", c.steps, nil, c.spec)
	if err != nil {
		t.Fatal(err)
	}
	res := cp.Dynamic.Resource(RolloutGVR).Namespace(argoNamespace)
	if _, err := res.Create(ctx, ro, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	first, i, err := rec.WaitFor(wctx, 0, "Healthy first deploy", func(s RolloutSnapshot) bool {
		return s.Observed() && s.Status.Phase == "Healthy"
	})
	if err != nil {
		t.Fatal(err)
	}
	// A first deploy skips the steps and is promoted at once (rollout/canary.go): the stable
	// ReplicaSet is the current one.
	if first.Status.StableRS != first.Status.CurrentPodHash || first.Status.StableRS == "" {
		t.Errorf("first deploy Healthy with stableRS %q, currentPodHash %q; want equal", first.Status.StableRS, first.Status.CurrentPodHash)
	}
	// The update: a new image, and the pods' behaviour in the template's annotations.
	ann := map[string]any{}
	for k, v := range c.next {
		ann[k] = v
	}
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"template": map[string]any{
		"metadata": map[string]any{"annotations": ann},
		"spec": map[string]any{"containers": []any{
			map[string]any{"name": "app", "image": "registry.example.com/shop/" + c.name + ":v2"},
		}},
	}}})
	update := time.Now()
	if _, err := res.Patch(ctx, c.name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waited := startArgoWait(t, cp, c)
	// The timeline is logged however the checks end: it is what a failure needs explained.
	defer func() {
		for _, s := range rec.Snapshots() {
			t.Logf("%+6.1fs %s", s.At.Sub(update).Seconds(), s)
		}
	}()
	c.check(t, ctx, rec, i+1)
	checkArgoWait(t, c, waited, update, rec.Snapshots())
	snaps := rec.Snapshots()
	// observedGeneration is written as a string (types.go RolloutStatus.ObservedGeneration); a
	// reader that expects Deployment's integer would miss it.
	last := snaps[len(snaps)-1]
	og := last.Object.Object["status"].(map[string]any)["observedGeneration"]
	if s, ok := og.(string); !ok || s != fmt.Sprint(last.Generation) {
		t.Errorf("status.observedGeneration = %#v at generation %d, want the generation as a string", og, last.Generation)
	}
	if !*updateArgo || t.Failed() {
		return
	}
	header := append([]string{
		fmt.Sprintf("Written by TestArgoRolloutsController/%s (e2e/argo_test.go; go test ./e2e -run TestArgoRolloutsController -update-argo).", c.name),
		"Every distinct status the real Argo Rollouts controller wrote, as a watch delivered them, each",
		"document headed by its time relative to the update and a summary. The controller is",
		"github.com/argoproj/argo-rollouts v1.10.1, built from the module proxy by hack/build-argo-rollouts.sh",
		fmt.Sprintf("(`rollouts-controller --version`: %s; the module zip carries no git commit), run with", version),
		"--leader-elect=false over every namespace; around it kube-apiserver, kube-controller-manager and",
		"kube-scheduler v1.37.2 and kwok v0.8.0's nodes (e2e/controlplane.go). metadata.uid and",
		"resourceVersion are left out; every other field is as the API server returned it.",
		"",
	}, c.header...)
	b, err := WriteRolloutTimeline(header, update, snaps)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll("testdata/argo", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdata/argo", c.name+".yaml"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// observedUpdate is a snapshot of the updated template (image v2) whose generation the
// controller has seen.
func observedUpdate(s RolloutSnapshot) bool {
	cs, _, _ := unstructured.NestedSlice(s.Object.Object, "spec", "template", "spec", "containers")
	if len(cs) != 1 {
		return false
	}
	image, _ := cs[0].(map[string]any)["image"].(string)
	return strings.HasSuffix(image, ":v2") && s.Observed()
}

// checkArgoHealthy: the update goes through setWeight 50 and the 5s pause to Healthy, the new
// ReplicaSet promoted to stable.
func checkArgoHealthy(t *testing.T, ctx context.Context, r *RolloutRecorder, from int) {
	wctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	// The timed pause is a pause condition too while it lasts (rollout/pause.go,
	// rollout/canary.go completedCurrentCanaryStep): Paused, CanaryPauseStep.
	paused, i, err := r.WaitFor(wctx, from, "Paused at the timed pause", func(s RolloutSnapshot) bool {
		return observedUpdate(s) && s.Status.Phase == "Paused"
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(paused.Status.PauseConditions) != 1 || paused.Status.PauseConditions[0].Reason != "CanaryPauseStep" || paused.Status.Message != "CanaryPauseStep" {
		t.Errorf("timed pause: %s, pause conditions %+v; want one CanaryPauseStep", paused, paused.Status.PauseConditions)
	}
	done, _, err := r.WaitFor(wctx, i, "Healthy update", func(s RolloutSnapshot) bool {
		return observedUpdate(s) && s.Status.Phase == "Healthy"
	})
	if err != nil {
		t.Fatal(err)
	}
	if done.Status.StableRS != done.Status.CurrentPodHash {
		t.Errorf("Healthy with stableRS %q != currentPodHash %q", done.Status.StableRS, done.Status.CurrentPodHash)
	}
	if c := done.Status.Condition("Completed"); c == nil || c.Status != "True" || c.Reason != "RolloutCompleted" {
		t.Errorf("Healthy without Completed=True/RolloutCompleted: %+v", done.Status.Conditions)
	}
	if c := done.Status.Condition("Progressing"); c == nil || c.Status != "True" || c.Reason != "NewReplicaSetAvailable" {
		t.Errorf("Healthy without Progressing=True/NewReplicaSetAvailable: %+v", done.Status.Conditions)
	}
}

// checkArgoPaused: the update stops at the indefinite pause and stays there.
func checkArgoPaused(t *testing.T, ctx context.Context, r *RolloutRecorder, from int) {
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	paused, i, err := r.WaitFor(wctx, from, "Paused", func(s RolloutSnapshot) bool {
		return observedUpdate(s) && s.Status.Phase == "Paused"
	})
	if err != nil {
		t.Fatal(err)
	}
	st := paused.Status
	if len(st.PauseConditions) != 1 || st.PauseConditions[0].Reason != "CanaryPauseStep" || st.Message != "CanaryPauseStep" || !st.ControllerPause {
		t.Errorf("Paused: %s, pause conditions %+v, controllerPause %v; want one CanaryPauseStep, the message CanaryPauseStep, controllerPause", paused, st.PauseConditions, st.ControllerPause)
	}
	if st.CurrentStepIndex == nil || *st.CurrentStepIndex != 1 {
		t.Errorf("Paused at step %v, want 1 (the pause)", st.CurrentStepIndex)
	}
	if st.StableRS == st.CurrentPodHash {
		t.Errorf("Paused with stableRS = currentPodHash %q: the update was promoted", st.StableRS)
	}
	// An indefinite pause does not count against the progress deadline (rollout/sync.go
	// isIndefiniteStep): it stays Paused. 20s is long enough for a resync of the Progressing
	// condition and short enough for the suite.
	hold, cancelHold := context.WithTimeout(ctx, 20*time.Second)
	defer cancelHold()
	if left, _, err := r.WaitFor(hold, i, "change of phase", func(s RolloutSnapshot) bool {
		return s.Status.Phase != "Paused"
	}); err == nil {
		t.Errorf("left Paused: %s", left)
	}
}

// checkArgoDeadline: the crash-looping canary never becomes available; at the 30s progress
// deadline the controller marks the Rollout Degraded, and with progressDeadlineAbort also aborts it.
func checkArgoDeadline(abort bool) func(t *testing.T, ctx context.Context, r *RolloutRecorder, from int) {
	return func(t *testing.T, ctx context.Context, r *RolloutRecorder, from int) {
		// Two minutes or Degraded, whichever first: the deadline is 30s after the last progress.
		wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		deg, i, err := r.WaitFor(wctx, from, "Degraded", func(s RolloutSnapshot) bool {
			return observedUpdate(s) && s.Status.Phase == "Degraded"
		})
		if err != nil {
			t.Fatal(err)
		}
		st := deg.Status
		prog := st.Condition("Progressing")
		if prog == nil || prog.Status != "False" {
			t.Fatalf("Degraded without Progressing=False: %+v", st.Conditions)
		}
		rsName := r.name + "-" + st.CurrentPodHash
		// rollout/sync.go calculateRolloutConditions: ReplicaSetTimeOutMessage, and with an abort
		// RolloutAbortedMessage before it; utils/rollout/rolloututil.go CalculateRolloutPhase
		// prefixes the reason.
		timedOut := fmt.Sprintf("ReplicaSet %q has timed out progressing.", rsName)
		if !abort {
			if prog.Reason != "ProgressDeadlineExceeded" || prog.Message != timedOut {
				t.Errorf("Progressing: %+v; want ProgressDeadlineExceeded, %q", prog, timedOut)
			}
			if want := "ProgressDeadlineExceeded: " + timedOut; st.Message != want {
				t.Errorf("message %q, want %q", st.Message, want)
			}
			if st.Abort {
				t.Errorf("aborted without progressDeadlineAbort: %s", deg)
			}
			checkCrashLooping(t, ctx, r, st.CurrentPodHash)
			return
		}
		want := "Rollout aborted update to revision 2: " + timedOut
		if prog.Reason != "RolloutAborted" || prog.Message != want {
			t.Errorf("Progressing: %+v; want RolloutAborted, %q", prog, want)
		}
		if st.Message != "RolloutAborted: "+want {
			t.Errorf("message %q, want %q", st.Message, "RolloutAborted: "+want)
		}
		if !st.Abort || st.AbortedAt == "" {
			t.Errorf("abort %v, abortedAt %q; want both set", st.Abort, st.AbortedAt)
		}
		// After the abort the canary is scaled away and the stable ReplicaSet back to the spec's
		// replicas (rollout/canary.go reconcileCanaryStableReplicaSet): record until then.
		hctx, cancelH := context.WithTimeout(ctx, time.Minute)
		defer cancelH()
		if _, _, err := r.WaitFor(hctx, i, "stable ReplicaSet back at 2 available", func(s RolloutSnapshot) bool {
			return s.Status.AvailableReplicas == 2 && s.Status.Replicas == 2
		}); err != nil {
			t.Error(err)
		}
	}
}

// checkCrashLooping: the canary ReplicaSet is named after the Rollout and its pod template hash,
// carries that hash in the rollouts-pod-template-hash label (pkg/apis/rollouts/v1alpha1/types.go
// DefaultRolloutUniqueLabelKey), and its pods did crash-loop: the Degraded is the deadline's, not
// pods that never started.
func checkCrashLooping(t *testing.T, ctx context.Context, r *RolloutRecorder, hash string) {
	t.Helper()
	client := r.cp.AdminClient
	rs, err := client.AppsV1().ReplicaSets(r.ns).Get(ctx, r.name+"-"+hash, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the canary ReplicaSet: %v", err)
	}
	if got := rs.Labels["rollouts-pod-template-hash"]; got != hash {
		t.Errorf("ReplicaSet %s labelled rollouts-pod-template-hash=%q, want %q", rs.Name, got, hash)
	}
	pods, err := client.CoreV1().Pods(r.ns).List(ctx, metav1.ListOptions{LabelSelector: "rollouts-pod-template-hash=" + hash})
	if err != nil {
		t.Fatal(err)
	}
	restarts := 0
	for _, p := range pods.Items {
		for _, cs := range p.Status.ContainerStatuses {
			if cs.LastTerminationState.Terminated != nil && cs.LastTerminationState.Terminated.ExitCode == 1 {
				restarts += int(cs.RestartCount)
			}
		}
	}
	if len(pods.Items) == 0 || restarts == 0 {
		t.Errorf("%d canary pods, %d restarts after exit 1; want a crash loop", len(pods.Items), restarts)
	}
}

// startArgoWait starts `doomwatch wait rollout/NAME -o json` against the control plane as the
// update is applied, as a CI job runs it after kubectl apply.
func startArgoWait(t *testing.T, cp *ControlPlane, c argoCase) *waitRun {
	t.Helper()
	// The limit is the timeout and a margin: a wait that outlives its own --timeout hangs.
	return startWaitWithin(t, c.wait.timeout+30*time.Second, "rollout/"+c.name, "-o", "json", "-n", argoNamespace,
		"--timeout", c.wait.timeout.String(), "--request-timeout=10s", "--kubeconfig", cp.AdminKubeconfig)
}

// checkArgoWait holds doomwatch's gate to the case's outcome, and a doom to coming before the
// controller's Degraded: Argo marks a crash-looping canary only at its progress deadline.
func checkArgoWait(t *testing.T, c argoCase, w *waitRun, update time.Time, snaps []RolloutSnapshot) {
	t.Helper()
	r := w.wait(c.wait.timeout + 30*time.Second)
	var doc waitDoc
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("doomwatch wait: decoding wait -o json: %v\n%s", err, r)
	}
	if r.timedOut || r.code != c.wait.code || doc.Verdict != c.wait.verdict {
		t.Fatalf("doomwatch wait rollout/%s: verdict %q, want exit %d and %q: %s", c.name, doc.Verdict, c.wait.code, c.wait.verdict, r)
	}
	if len(doc.Workloads) != 1 {
		t.Fatalf("want one workload in wait's document: %s", r.stdout)
	}
	wl := doc.Workloads[0]
	if wl.Kind != "Rollout" || wl.Name != c.name || wl.Namespace != argoNamespace || !strings.HasPrefix(wl.Reason, c.wait.reason) {
		t.Errorf("workload %+v, want Rollout %s/%s with a reason starting %q", wl, argoNamespace, c.name, c.wait.reason)
	}
	at := w.end.Sub(update)
	t.Logf("doomwatch wait rollout/%s: %s at %+.1fs: %s", c.name, doc.Verdict, at.Seconds(), wl.Reason)
	if c.wait.verdict != "doomed" {
		return
	}
	if len(wl.Doomed) == 0 || !strings.Contains(wl.Doomed[0].Reason, "Crash") {
		t.Errorf("doomed containers %+v, want the canary's crash loop", wl.Doomed)
	}
	for _, s := range snaps {
		if observedUpdate(s) && s.Status.Phase == "Degraded" {
			deg := s.At.Sub(update)
			t.Logf("Argo Rollouts: Degraded at %+.1fs; doomwatch %.1fs earlier", deg.Seconds(), (deg - at).Seconds())
			if at >= deg {
				t.Errorf("doomwatch's doom at %+.1fs came after the controller's Degraded at %+.1fs", at.Seconds(), deg.Seconds())
			}
			return
		}
	}
	t.Errorf("no Degraded snapshot to compare with")
}
