package e2e

import (
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
)

// TestTUILogsThroughTheAPIServer: `l` on a crash-looping pod in the dashboard (in a pty) shows its
// previous instance's log, fetched through the real API server's pods/log proxy from the node's
// kubelet endpoint (a fake one on loopback: no kubelet runs here), sanitised. Under the documented
// ClusterRole without pods/log, the pane says in one line that the log is not allowed, and the
// rest of the dashboard works.
func TestTUILogsThroughTheAPIServer(t *testing.T) {
	documented := documentedClusterRole(t)
	for _, tc := range []struct {
		name string
		role *rbacv1.ClusterRole
		logs bool
	}{
		{"documented", &documented, true},
		{"without pods/log", withoutResource(t, documented, "pods/log"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			user := e.clusterViewer(tc.role)
			kubelet := e.crashLoopWithLog()

			tty := startTerminal(t, "--kubeconfig", user.Kubeconfig, "-n", e.ns)
			tty.waitScreen("the doomed pod", 30*time.Second, func(s string) bool {
				l := lineWith(s, "web-a")
				return strings.Contains(l, "doomed") || strings.Contains(l, "✖")
			})
			if _, err := tty.ptmx.Write([]byte("l")); err != nil {
				t.Fatal(err)
			}
			if tc.logs {
				s := tty.waitScreen("the previous log", 15*time.Second, func(s string) bool {
					return strings.Contains(s, "missing required key database.url")
				})
				if !strings.Contains(s, "web-a/app · previous instance's log") {
					t.Errorf("the pane does not say which log:\n%s", s)
				}
				if reqs := kubelet.requests(); len(reqs) != 1 || reqs[0].Query().Get("previous") != "true" {
					t.Errorf("kubelet requests %v, want one for the previous instance", reqs)
				}
			} else {
				s := tty.waitScreen("the refusal", 15*time.Second, func(s string) bool {
					return strings.Contains(s, "cannot get the log: not allowed to get pods/log in "+e.ns)
				})
				if strings.Count(s, "cannot get the log") != 1 {
					t.Errorf("want the refusal once:\n%s", s)
				}
				if reqs := kubelet.requests(); len(reqs) != 0 {
					t.Errorf("the kubelet was asked though RBAC refused: %v", reqs)
				}
			}
			tty.mu.Lock()
			raw := tty.raw.String()
			tty.mu.Unlock()
			if strings.Contains(raw, "\x1b[31mFATAL") {
				t.Errorf("the log's escape sequence reached the terminal")
			}
			tty.quit(t)
		})
	}
}

// crashLoopWithLog is Deployment web with one pod, web-a, crash-looping on a node whose kubelet
// endpoint (a fake on loopback) serves its app's log.
func (e *env) crashLoopWithLog() *fakeKubelet {
	e.t.Helper()
	kubelet := newFakeKubelet(e.t)
	node := e.nodeName("n1")
	e.kubeletNode(node, kubelet)
	kubelet.setLog(e.ns, "web-a", "app", appLog...)
	_, rs := e.deployment("web", 1, 0)
	e.pod(podSpec{name: "web-a", node: node, owner: &rs, status: crashLooping("web-a", e.ns, 1)})
	return kubelet
}

// quit presses q and waits for doomwatch to exit.
func (tty *terminal) quit(t *testing.T) {
	t.Helper()
	if _, err := tty.ptmx.Write([]byte("q")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-tty.exited:
	case <-time.After(10 * time.Second):
		t.Fatalf("doomwatch did not exit after q:\n%s", tty.screen())
	}
}
