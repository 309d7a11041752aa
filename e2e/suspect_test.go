package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"doomwatch/classify"
	"doomwatch/kube"
	"doomwatch/model"
)

// cgroupENOENT is a real containerd StartError 128 whose text carries an errno inside a cgroup path
// (kubernetes/kubernetes#119403): node trouble, not the workload's command, so it is transient
// node evidence although it says "no such file or directory".
const cgroupENOENT = "failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: " +
	"unable to start container process: error during container init: error setting cgroup config for procHooks process: " +
	"open /sys/fs/cgroup/memory/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pode849e27b_8c98_4309_9b4c_64e0fde3a760.slice/" +
	"cri-containerd-ea2bc2acf887fdb627838cf2dd78ff46d1a9571176fbf969f00569bb2cd6c195.scope/memory.memsw.limit_in_bytes: " +
	"no such file or directory: unknown"

// TestTwoFlakyNodesBothSuspect: two nodes each see three different pods fail to start with exit
// 128, and on a third node one pod fails five times in a row. Both flaky nodes are suspect, the
// node of the single repeating pod is not: evidence counts distinct pods, and no node needs a
// majority of the cluster's failures.
func TestTwoFlakyNodesBothSuspect(t *testing.T) {
	e := newEnv(t)
	flakyA, flakyB, repeat, calm := e.nodeName("flaky-a"), e.nodeName("flaky-b"), e.nodeName("repeat"), e.nodeName("calm")
	for _, n := range []string{flakyA, flakyB, repeat, calm} {
		e.node(n, true)
	}
	owners := make([]metav1.OwnerReference, 4)
	for i, name := range []string{"cart", "search", "login", "batch"} {
		_, owners[i] = e.deployment(name, 2, 1)
	}
	msgs := []string{runtimeHiccup, cgroupENOENT}
	var failing []string
	for ni, n := range []string{flakyA, flakyB} {
		for wi := 0; wi < 3; wi++ {
			name := []string{"a", "b"}[ni] + "-" + []string{"cart", "search", "login"}[wi]
			fail := term("StartError", 128, msgs[(ni+wi)%2], time.Duration(20+5*wi)*time.Second)
			e.pod(podSpec{name: name, node: n, owner: &owners[wi],
				status: podStatus(corev1.PodPending, terminatedStatus("app", 0, fail, nil))})
			failing = append(failing, name)
		}
	}
	// One pod on the repeat node: five exit-128 failures, each seen as the kubelet reports it
	// (state, then lastState after the restart).
	e.pod(podSpec{name: "r-batch", node: repeat, owner: &owners[3],
		status: podStatus(corev1.PodPending, terminatedStatus("app", 0, term("StartError", 128, runtimeHiccup, 90*time.Second), nil))})
	e.pod(podSpec{name: "c-batch", node: calm, owner: &owners[3], status: podStatus(corev1.PodRunning, running("app", true, 0, nil))})

	w := startWatcher(t, e.c.Admin, kube.Options{Namespace: e.ns})
	repeatFailures := func(n int) func(m *model.Model, now time.Time) bool {
		return func(m *model.Model, now time.Time) bool {
			r, ok := nodeOf(m, now, repeat)
			return synced(m) && ok && r.Failures >= n
		}
	}
	w.waitFor("the repeat node's first failure", waitTimeout, repeatFailures(1))
	for i := 1; i <= 4; i++ {
		// Each update is awaited before the next: batches coalesce, and a failure the model never
		// saw cannot count.
		prev := term("StartError", 128, runtimeHiccup, time.Duration(90-15*i)*time.Second)
		e.setStatus("r-batch", podStatus(corev1.PodPending, terminatedStatus("app", int32(i), prev, nil)))
		w.waitFor("the repeat node's next failure", waitTimeout, repeatFailures(i+1))
	}

	key := func(n string) string { return e.ns + "/" + n }
	w.waitFor("both flaky nodes suspect", waitTimeout, func(m *model.Model, now time.Time) bool {
		a, okA := nodeOf(m, now, flakyA)
		b, okB := nodeOf(m, now, flakyB)
		r, okR := nodeOf(m, now, repeat)
		return synced(m) && okA && okB && okR && a.Suspect && b.Suspect && r.Failures >= 5
	})
	w.read(func(m *model.Model, now time.Time) {
		for _, name := range failing {
			if v := m.Pod(key(name)).Verdict; v.Class != classify.Transient {
				t.Errorf("%s = %s %q, want transient (a cgroup errno is node trouble)", name, v.Class, v.Reason)
			}
		}
		for _, n := range []string{flakyA, flakyB} {
			nd, _ := nodeOf(m, now, n)
			if nd.FailedPods != 3 || !strings.Contains(nd.Why, "3 pods") {
				t.Errorf("node %s: failedPods=%d why=%q, want 3 pods named", n, nd.FailedPods, nd.Why)
			}
		}
		if r, _ := nodeOf(m, now, repeat); r.Suspect || r.FailedPods != 1 {
			t.Errorf("node %s: suspect=%v failedPods=%d failures=%d, want one pod and not suspect", repeat, r.Suspect, r.FailedPods, r.Failures)
		}
		if c, _ := nodeOf(m, now, calm); c.Suspect {
			t.Errorf("node %s suspect, want calm", calm)
		}
	})
	snap := onceJSON(t, "--kubeconfig", adminKubeconfig(t), "-n", e.ns)
	for _, n := range []string{flakyA, flakyB} {
		if nd, ok := snap.node(n); !ok || !nd.Suspect {
			t.Errorf("--once: node %s = %+v, want suspect", n, nd)
		}
	}
	if nd, ok := snap.node(repeat); !ok || nd.Suspect {
		t.Errorf("--once: node %s = %+v, want not suspect", repeat, nd)
	}
}

// Docker's ContainerCannotRun 128: runc lost its child while starting it on a loaded node,
// verbatim from kubernetes/kubernetes#87735 (fixture cannotrun-128-node-b-1).
const dockerRuncEOF = `OCI runtime create failed: container_linux.go:345: starting container process caused "process_linux.go:303: getting the final child's pid from pipe caused \"EOF\"": unknown`

// TestFlakyNodesStandOutInASmallCluster is the small cluster a new user tried with a fresh
// `--once -o json`, so all the evidence is what the pods' statuses say, dated by the runtime: a
// rollout of web whose every pod on two nodes failed to start with exit 128 in the last minute
// (containerd's StartError on one, Docker's ContainerCannotRun on the other), 2 of its 8 pods on a
// calm node of 49 pods, 1 of 2 on another calm node, and a NotReady node. The failures of web
// are on four nodes, two flaky: both are named, with their why, and no pod is doomed as not
// node-local. The model's fixture test of the same table is model.TestFlakyNodesStandOutInASmallCluster.
func TestFlakyNodesStandOutInASmallCluster(t *testing.T) {
	e := newEnv(t)
	a, b, calm, calm2, notReady := e.nodeName("a"), e.nodeName("b"), e.nodeName("calm"), e.nodeName("calm2"), e.nodeName("notready")
	for _, n := range []string{a, b, calm, calm2} {
		e.node(n, true)
	}
	e.node(notReady, false)
	_, web := e.deployment("web", 20, 7)
	_, steady := e.deployment("steady", 44, 44)
	msgs := []string{runtimeHiccup, cgroupENOENT, nodeMessages["shim-io-timeout"]}
	i := 0
	failed := func(n string, docker bool) {
		i++
		name := fmt.Sprintf("web-%02d", i)
		ago := time.Duration(10+3*i) * time.Second
		if docker {
			e.pod(podSpec{name: name, node: n, owner: &web, status: podStatus(corev1.PodPending,
				terminatedStatus("app", 0, term("ContainerCannotRun", 128, dockerRuncEOF, ago), nil))})
			return
		}
		// Recovered on the next try, seconds later, the failure in lastState; or still terminated.
		fail := term("StartError", 128, msgs[i%3], ago)
		fail.StartedAt = metav1.NewTime(time.Unix(0, 0)) // containerd's failed start (podtest.Terminated128)
		if i%2 == 0 {
			cs := running("app", true, 1, fail)
			cs.State.Running.StartedAt = metav1.NewTime(fail.FinishedAt.Add(2 * time.Second))
			e.pod(podSpec{name: name, node: n, owner: &web, status: podStatus(corev1.PodRunning, cs)})
			return
		}
		e.pod(podSpec{name: name, node: n, owner: &web, status: podStatus(corev1.PodPending, terminatedStatus("app", 0, fail, nil))})
	}
	started := func(n string) {
		i++
		e.pod(podSpec{name: fmt.Sprintf("web-%02d", i), node: n, owner: &web, status: podStatus(corev1.PodRunning, running("app", true, 0, nil))})
	}
	old := func(n string) {
		i++
		cs := running("app", true, 0, nil)
		cs.State.Running.StartedAt = metav1.NewTime(time.Now().Add(-3 * time.Hour).Truncate(time.Second))
		e.pod(podSpec{name: fmt.Sprintf("steady-%02d", i), node: n, owner: &steady, status: podStatus(corev1.PodRunning, cs)})
	}
	for range 6 {
		failed(a, false)
	}
	for range 5 {
		failed(b, true)
	}
	failed(calm, false)
	failed(calm, false)
	for range 6 {
		started(calm)
	}
	for range 41 {
		old(calm)
	}
	failed(calm2, false)
	old(calm2)
	old(notReady)
	old(notReady)

	snap := onceJSON(t, "--kubeconfig", adminKubeconfig(t), "-n", e.ns)
	want := map[string]bool{a: true, b: true, calm: false, calm2: false, notReady: false}
	for n, suspect := range want {
		nd, ok := snap.node(n)
		if !ok || nd.Suspect != suspect {
			t.Errorf("node %s = %+v, want suspect %v", n, nd, suspect)
		}
	}
	if nd, _ := snap.node(a); !strings.HasPrefix(nd.Why, "6 of 6 pods that started here in the last 15m failed with exit 128; 3 of ") {
		t.Errorf("node %s's why = %q, want the shares it compared", a, nd.Why)
	}
	for _, p := range snap.Pods {
		if p.Verdict == "doomed" {
			t.Errorf("pod %s doomed (%q): web fails on flaky nodes, not everywhere", p.Name, p.Reason)
		}
	}
}
