package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"doomwatch/classify"
	"doomwatch/kube"
	"doomwatch/model"
)

// A containerd StartError 128 that says nothing about the container's own configuration: runc
// could not freeze the cgroup, the node's runtime had a bad moment (the case in Krane's exit-128
// discussion). classify calls it transient. Verbatim from kubernetes/kubernetes#131087 (fixture
// rt-containerd-procHooks-unable-to-freeze).
const runtimeHiccup = "failed to create containerd task: failed to create shim task: OCI runtime create failed: " +
	"runc create failed: unable to start container process: error during container init: " +
	"error setting cgroup config for procHooks process: unable to freeze: unknown"

// containerd's StartError for a command that is not on $PATH: deterministic, retrying will not fix
// it. Verbatim from kubesphere-sigs/ks-devops-helm-chart#141 (fixture
// starterror-128-executable-not-found).
const missingExecutable = `failed to create containerd task: failed to create shim task: OCI runtime create failed: ` +
	`runc create failed: unable to start container process: exec: "devops-tool": executable file not found in $PATH: unknown`

const waitTimeout = 20 * time.Second

// TestExit128Story is the mission's first story: three pods on one node fail to start with
// StartError 128 and then run. They are transient while failing and healthy after; the
// node is suspect with its "why" sentence and the other nodes are not; each failure counts once.
func TestExit128Story(t *testing.T) {
	e := newEnv(t)
	flaky, calm1, calm2 := e.nodeName("flaky"), e.nodeName("calm1"), e.nodeName("calm2")
	for _, n := range []string{flaky, calm1, calm2} {
		e.node(n, true)
	}
	_, checkout := e.deployment("checkout", 5, 2)
	_, search := e.deployment("search", 1, 0)

	failing := []string{"checkout-a", "checkout-b", "search-a"}
	owners := []podSpec{{owner: &checkout}, {owner: &checkout}, {owner: &search}}
	fails := map[string]corev1.ContainerStatus{}
	for i, name := range failing {
		// As the kubelet reports it right after the failed start: state terminated, no restart yet.
		fail := term("StartError", 128, runtimeHiccup, time.Duration(30+10*i)*time.Second)
		fails[name] = terminatedStatus("app", 0, fail, nil)
		e.pod(podSpec{name: name, node: flaky, owner: owners[i].owner,
			status: podStatus(corev1.PodPending, fails[name])})
	}
	e.pod(podSpec{name: "checkout-c", node: calm1, owner: &checkout, status: podStatus(corev1.PodRunning, running("app", true, 0, nil))})
	e.pod(podSpec{name: "checkout-d", node: calm2, owner: &checkout, status: podStatus(corev1.PodRunning, running("app", true, 0, nil))})

	w := startWatcher(t, e.c.Admin, kube.Options{Namespace: e.ns})
	key := func(n string) string { return e.ns + "/" + n }
	w.waitFor("three transient pods on the flaky node and a suspect node", waitTimeout, func(m *model.Model, now time.Time) bool {
		for _, n := range failing {
			if !verdictIs(key(n), classify.Transient)(m) {
				return false
			}
		}
		n, ok := nodeOf(m, now, flaky)
		return synced(m) && verdictIs(key("checkout-c"), classify.Healthy)(m) && ok && n.Suspect
	})
	w.read(func(m *model.Model, now time.Time) {
		for _, n := range failing {
			if r := m.Pod(key(n)).Verdict.Reason; !strings.Contains(r, "unable to freeze") {
				t.Errorf("pod %s transient reason %q does not carry the runtime message", n, r)
			}
		}
		assertNodes(t, m, now, flaky, calm1, calm2)
	})

	snap := onceJSON(t, "--kubeconfig", adminKubeconfig(t), "-n", e.ns)
	for _, n := range failing {
		p, ok := snap.pod(n)
		if !ok || p.Verdict != "transient" {
			t.Errorf("--once: pod %s = %+v, want verdict transient", n, p)
		}
	}
	if p, _ := snap.pod("checkout-a"); p.Owner != "Deployment/checkout" || p.Node != flaky {
		t.Errorf("--once: checkout-a owner %q node %q, want Deployment/checkout on %s", p.Owner, p.Node, flaky)
	}
	assertSnapNodes(t, snap, flaky, calm1, calm2)

	// A few seconds later the same pods run: the kubelet reports the failure as lastState and
	// bumps the restart count. They are healthy; the node stays suspect on the same three
	// failures, each counted once although it was seen twice (as state, then as lastState).
	for _, n := range failing {
		last := fails[n].State.Terminated
		e.setStatus(n, podStatus(corev1.PodRunning, running("app", true, 1, last)))
	}
	w.waitFor("the three pods healthy after they ran", waitTimeout, func(m *model.Model, now time.Time) bool {
		for _, n := range failing {
			if !verdictIs(key(n), classify.Healthy)(m) {
				return false
			}
		}
		return true
	})
	w.read(func(m *model.Model, now time.Time) { assertNodes(t, m, now, flaky, calm1, calm2) })

	snap = onceJSON(t, "--kubeconfig", adminKubeconfig(t), "-n", e.ns)
	for _, n := range failing {
		if p, _ := snap.pod(n); p.Verdict != "healthy" || p.Restarts == "" || !strings.HasPrefix(p.Restarts, "1") {
			t.Errorf("--once after recovery: pod %s verdict %q restarts %q, want healthy with 1 restart", n, p.Verdict, p.Restarts)
		}
	}
	assertSnapNodes(t, snap, flaky, calm1, calm2)
}

// assertNodes checks the model's nodes: flaky suspect on exactly three failures of three
// pods and two workloads, with a why sentence; the calm nodes not suspect.
func assertNodes(t *testing.T, m *model.Model, now time.Time, flaky string, calm ...string) {
	t.Helper()
	n, ok := nodeOf(m, now, flaky)
	if !ok {
		t.Fatalf("node %s missing from the model", flaky)
	}
	if !n.Suspect || n.Failures != 3 || n.FailedPods != 3 || n.Workloads != 2 {
		t.Errorf("node %s: suspect=%v failures=%d failedPods=%d workloads=%d, want suspect on 3 failures of 3 pods, 2 workloads",
			flaky, n.Suspect, n.Failures, n.FailedPods, n.Workloads)
	}
	if !strings.Contains(n.Why, "3 pods") || !strings.Contains(n.Why, "exit 128") {
		t.Errorf("node %s why = %q, want a sentence naming 3 pods and exit 128", flaky, n.Why)
	}
	for _, c := range calm {
		if n, ok := nodeOf(m, now, c); !ok || n.Suspect || n.Why != "" {
			t.Errorf("node %s = %+v (found %v), want a known node that is not suspect", c, n, ok)
		}
	}
}

func assertSnapNodes(t *testing.T, s snapshot, flaky string, calm ...string) {
	t.Helper()
	n, ok := s.node(flaky)
	if !ok || !n.Suspect || n.StartFailures128 != 3 || !strings.Contains(n.Why, "exit 128") {
		t.Errorf("--once: node %s = %+v, want suspect with 3 start failures and a why sentence", flaky, n)
	}
	for _, c := range calm {
		if n, ok := s.node(c); !ok || n.Suspect || !n.Ready {
			t.Errorf("--once: node %s = %+v (found %v), want ready and not suspect", c, n, ok)
		}
	}
}

// TestExit128Doomed covers the two exit-128 cases that are not node trouble: a CrashLoopBackOff
// whose last termination was a 128 (Krane: check state before lastState, but show the
// start-failure message, not CrashLoopBackOff's empty one), and containerd's StartError 128 for a
// missing executable.
func TestExit128Doomed(t *testing.T) {
	e := newEnv(t)
	node := e.nodeName("n1")
	e.node(node, true)
	e.pod(podSpec{name: "loop", node: node, status: podStatus(corev1.PodRunning,
		waiting("app", "CrashLoopBackOff", backOff("2m40s", "app", "loop", e.ns), 5,
			term("StartError", 128, runtimeHiccup, 20*time.Second)))})
	e.pod(podSpec{name: "noexec", node: node, status: podStatus(corev1.PodPending,
		terminatedStatus("app", 0, term("StartError", 128, missingExecutable, 10*time.Second), nil))})
	e.pod(podSpec{name: "fine", node: node, status: podStatus(corev1.PodRunning, running("app", true, 0, nil))})

	w := startWatcher(t, e.c.Admin, kube.Options{Namespace: e.ns})
	key := func(n string) string { return e.ns + "/" + n }
	w.waitFor("loop and noexec doomed", waitTimeout, all(synced,
		verdictIs(key("loop"), classify.Doomed), verdictIs(key("noexec"), classify.Doomed), verdictIs(key("fine"), classify.Healthy)))
	w.read(func(m *model.Model, now time.Time) {
		if r := m.Pod(key("loop")).Verdict.Reason; !strings.Contains(r, "unable to freeze") {
			t.Errorf("loop reason %q does not show the start-failure message", r)
		}
		if r := m.Pod(key("noexec")).Verdict.Reason; !strings.Contains(r, "executable file not found") {
			t.Errorf("noexec reason %q does not show the missing executable", r)
		}
		if n, ok := nodeOf(m, now, node); !ok || n.Suspect {
			t.Errorf("node %s = %+v, want not suspect (doomed start failures are not node evidence)", node, n)
		}
	})

	snap := onceJSON(t, "--kubeconfig", adminKubeconfig(t), "-n", e.ns)
	want := map[string]string{"loop": "unable to freeze", "noexec": "executable file not found"}
	for name, msg := range want {
		p, ok := snap.pod(name)
		if !ok || p.Verdict != "doomed" || !strings.Contains(p.Reason, msg) {
			t.Errorf("--once: pod %s verdict %q reason %q, want doomed mentioning %q", name, p.Verdict, p.Reason, msg)
		}
	}
	loop, _ := snap.pod("loop")
	if len(loop.Containers) != 1 || loop.Containers[0].LastState == nil ||
		loop.Containers[0].LastState.ExitCode == nil || *loop.Containers[0].LastState.ExitCode != 128 ||
		loop.Containers[0].State.Kind != "waiting" || loop.Containers[0].State.Reason != "CrashLoopBackOff" {
		t.Errorf("--once: loop containers = %s, want waiting CrashLoopBackOff with lastState exit 128", fmt.Sprintf("%+v", loop.Containers))
	}
	if snap.Summary.Doomed != 2 || snap.Summary.Healthy != 1 || snap.Summary.Pods != 3 {
		t.Errorf("--once summary = %+v, want 3 pods: 2 doomed, 1 healthy", snap.Summary)
	}
}
