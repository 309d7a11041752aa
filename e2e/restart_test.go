package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"doomwatch/classify"
	"doomwatch/kube"
	"doomwatch/model"
)

// TestServerRestartMidWatch kills the API server (and in the second case etcd too) under a running
// pipeline. doomwatch must show "reconnecting" (Health.WatchError), then catch up with every change
// made while it was cut off, counting no failure twice and losing nothing.
//
// doomwatch reaches the server through a Proxy that stays down until the changes are written, so
// they are certainly made while doomwatch cannot see the server, however fast the restart is.
func TestServerRestartMidWatch(t *testing.T) {
	for _, tc := range []struct {
		name     string
		killEtcd bool
	}{{"apiserver", false}, {"apiserver and etcd", true}} {
		t.Run(tc.name, func(t *testing.T) { testRestart(t, tc.killEtcd) })
	}
}

func testRestart(t *testing.T, killEtcd bool) {
	e := newEnv(t)
	c := e.c
	t.Cleanup(func() {
		if err := c.EnsureRunning(context.Background()); err != nil {
			t.Errorf("restoring the cluster for the next tests: %v", err)
		}
	})
	node := e.nodeName("n1")
	e.node(node, true)
	failA := term("StartError", 128, runtimeHiccup, 90*time.Second)
	failB := term("StartError", 128, runtimeHiccup, 80*time.Second)
	e.pod(podSpec{name: "a", node: node, status: podStatus(corev1.PodPending, terminatedStatus("app", 0, failA, nil))})
	e.pod(podSpec{name: "b", node: node, status: podStatus(corev1.PodPending, terminatedStatus("app", 0, failB, nil))})
	e.pod(podSpec{name: "c", node: node, status: podStatus(corev1.PodRunning, running("app", true, 0, nil))})
	e.pod(podSpec{name: "d", node: node, status: podStatus(corev1.PodRunning, running("app", true, 0, nil))})

	proxy, err := NewProxy(c.APIAddr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Close)
	cfg := rest.CopyConfig(c.Admin)
	cfg.Host = "https://" + proxy.Addr
	w := startWatcher(t, cfg, kube.Options{Namespace: e.ns})
	key := func(n string) string { return e.ns + "/" + n }
	w.waitFor("the initial state", waitTimeout, func(m *model.Model, now time.Time) bool {
		return synced(m) && verdictIs(key("a"), classify.Transient)(m) && verdictIs(key("b"), classify.Transient)(m) &&
			verdictIs(key("c"), classify.Healthy)(m) && verdictIs(key("d"), classify.Healthy)(m) &&
			len(failuresIn(m, now, e.ns)) == 2
	})

	proxy.Down()
	c.StopAPIServer()
	if killEtcd {
		c.StopEtcd()
	}
	w.expect(`"reconnecting" (a watch error in the health)`, 15*time.Second, func(m *model.Model, _ time.Time) bool {
		return m.Health().WatchError != ""
	})

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if killEtcd {
		if err := c.StartEtcd(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	// While doomwatch is cut off: a recovers (its failure reappears as lastState: the same failure,
	// not a new one), b fails again (a new failure), c starts crash-looping, d is deleted and a new
	// pod e appears.
	e.setStatus("a", podStatus(corev1.PodRunning, running("app", true, 1, failA)))
	failB2 := term("StartError", 128, runtimeHiccup, 5*time.Second)
	e.setStatus("b", podStatus(corev1.PodPending, terminatedStatus("app", 1, failB2, failB)))
	e.setStatus("c", podStatus(corev1.PodRunning,
		waiting("app", "CrashLoopBackOff", backOff("20s", "app", "c", e.ns), 2, term("Error", 1, "", 5*time.Second))))
	e.deletePod("d")
	e.pod(podSpec{name: "e", node: node, status: podStatus(corev1.PodRunning, running("app", true, 0, nil))})

	w.read(func(m *model.Model, _ time.Time) {
		if m.Pod(key("e")) != nil {
			t.Errorf("doomwatch saw the server while the proxy was down; the test proves nothing:\n%s", w.describe())
		}
	})

	if err := proxy.Up(); err != nil {
		t.Fatal(err)
	}
	// client-go's reflectors back off up to 30s between attempts; allow for that.
	w.waitFor("every change made while cut off, and a healthy connection", 90*time.Second, func(m *model.Model, now time.Time) bool {
		return m.Health().WatchError == "" && m.Health().Synced &&
			verdictIs(key("a"), classify.Healthy)(m) && verdictIs(key("b"), classify.Transient)(m) &&
			verdictIs(key("c"), classify.Doomed)(m) && m.Pod(key("d")) == nil && verdictIs(key("e"), classify.Healthy)(m)
	})
	w.read(func(m *model.Model, now time.Time) {
		got := failuresIn(m, now, e.ns)
		perPod := map[string]int{}
		for _, f := range got {
			perPod[f.Pod]++
		}
		if len(got) != 3 || perPod[key("a")] != 1 || perPod[key("b")] != 2 {
			t.Errorf("ledger after the restart: %d failures %v, want 3: a once (seen as state, then as lastState), b twice", len(got), perPod)
		}
		if c := m.Counts(); c.Pods != 4 {
			t.Errorf("counts %+v, want 4 pods (a, b, c, e)", c)
		}
	})
}

// failuresIn returns the ledger's failures of pods in namespace ns.
func failuresIn(m *model.Model, now time.Time, ns string) []model.Failure {
	var out []model.Failure
	for _, f := range m.Failures(now) {
		if strings.HasPrefix(f.Pod, ns+"/") {
			out = append(out, f)
		}
	}
	return out
}
