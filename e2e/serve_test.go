package e2e

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// serveAddr is the address serve says it serves at, on stderr.
var serveAddr = regexp.MustCompile(`at http://([0-9.:]+)/metrics`)

// TestServe: `doomwatch serve` against the real API server, with only a Deployment's pod status
// written as a kubelet would (e.pod: no kubelet runs on these nodes): /healthz answers, /readyz is
// ready once the informers have synced, and /metrics has the Deployment doomed, one-hot, with its
// doomed pod and its reason, and the namespace's pods counted. Any port: the test reads it back.
func TestServe(t *testing.T) {
	e := newEnv(t)
	node := e.nodeName("n1")
	e.node(node, true)
	_, rs := e.deployment("web", 1, 0)
	e.pod(podSpec{name: "web-a", node: node, owner: &rs, status: imageNotFound()})
	s := startDoomwatch(t, 2*time.Minute, "serve", "--listen", "127.0.0.1:0", "-n", e.ns, "--request-timeout=10s", "--kubeconfig", adminKubeconfig(t))
	get := serveAddress(t, s)
	if code, body := get("/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	s.awaitStderr("synced", time.Minute, func(stderr string) bool { return strings.Contains(stderr, "doomwatch: synced; ready\n") })
	if code, body := get("/readyz"); code != 200 {
		t.Errorf("/readyz once synced: %d %q", code, body)
	}
	want := []string{
		`doomwatch_workload_verdict{kind="Deployment",name="web",namespace="` + e.ns + `",verdict="doomed"} 1`,
		`doomwatch_workload_verdict{kind="Deployment",name="web",namespace="` + e.ns + `",verdict="complete"} 0`,
		`doomwatch_workload_doomed_pods{kind="Deployment",name="web",namespace="` + e.ns + `"} 1`,
		`doomwatch_pods{namespace="` + e.ns + `",verdict="doomed"} 1`,
		`doomwatch_synced 1`,
	}
	// The pod's status came before serve started: the first batch after the sync has it. Polled,
	// as Prometheus reads it: a scrape is the only way in.
	body := awaitMetrics(t, get, want...)
	if !strings.Contains(body, `doomwatch_workload_doomed_info{kind="Deployment",name="web",namespace="`+e.ns+`",reason="1/1 new pods doomed: Image not found`) {
		t.Errorf("no reason for web in /metrics")
	}
}

// awaitMetrics polls serve's /metrics, as Prometheus reads it, until it has every one of want
// (each a line or part of one), and returns that scrape's body; it fails the test after 30 s.
func awaitMetrics(t *testing.T, get func(path string) (int, string), want ...string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, body := get("/metrics")
		missing := ""
		for _, w := range want {
			if !strings.Contains(body, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return body
		}
		if time.Now().After(deadline) {
			t.Fatalf("/metrics lacks %q:\n%s", missing, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// serveAddress waits for serve to say where it serves, and returns a GET of a path there: its
// status and body.
func serveAddress(t *testing.T, s *waitRun) func(path string) (int, string) {
	t.Helper()
	var addr string
	s.awaitStderr("the address", 30*time.Second, func(stderr string) bool {
		if m := serveAddr.FindStringSubmatch(stderr); m != nil {
			addr = m[1]
			return true
		}
		return false
	})
	return func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(b)
	}
}

// TestServeEventsForbidden: serve under the documented ClusterRole without events degrades as the
// dashboard does. It is ready, and /readyz says what RBAC forbids; /metrics says it too
// (doomwatch_forbidden) and still judges the Deployment by its pod's status.
func TestServeEventsForbidden(t *testing.T) {
	e := newEnv(t)
	user := e.clusterViewer(withoutResource(t, documentedClusterRole(t), "events"))
	node := e.nodeName("n1")
	e.node(node, true)
	_, rs := e.deployment("web", 1, 0)
	e.pod(podSpec{name: "web-a", node: node, owner: &rs, status: imageNotFound()})
	s := startDoomwatch(t, 2*time.Minute, "serve", "--listen", "127.0.0.1:0", "-n", e.ns, "--request-timeout=10s", "--kubeconfig", user.Kubeconfig)
	get := serveAddress(t, s)
	s.awaitStderr("synced", time.Minute, func(stderr string) bool { return strings.Contains(stderr, "doomwatch: synced; ready\n") })
	// The forbidden list comes back from the reflector's first list: polled, as a probe reads it.
	want := "ok, degraded: RBAC forbids listing or watching events; the verdicts go on without them\n"
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body := get("/readyz")
		if code == 200 && body == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz without events: %d %q, want 200 %q", code, body, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
	body := awaitMetrics(t, get,
		`doomwatch_forbidden{resource="events"} 1`,
		`doomwatch_workload_verdict{kind="Deployment",name="web",namespace="`+e.ns+`",verdict="doomed"} 1`,
		`doomwatch_synced 1`)
	if strings.Contains(body, `doomwatch_forbidden{resource="pods"}`) {
		t.Error("pods reported forbidden")
	}
}
