package e2e

import (
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
			if v := m.Pod(key(name)).Verdict; v.Kind != classify.Transient {
				t.Errorf("%s = %s %q, want transient (a cgroup errno is node trouble)", name, v.Kind, v.Reason)
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
