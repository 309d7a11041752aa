package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDashboardSaysWhereItConnects: the dashboard pointed at an API server that never answers
// says where it connects at once, rather than a blank terminal for the whole --request-timeout,
// and then fails as it always did: exit code 1, the terminal restored, one line saying the server
// did not answer in time.
func TestDashboardSaysWhereItConnects(t *testing.T) {
	needCluster(t)
	const requestTimeout = 3 * time.Second
	server := "https://" + silentServer(t)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: silent
  cluster: {server: %q, insecure-skip-tls-verify: true}
users:
- name: u
  user: {token: secret}
contexts:
- name: silent-context
  context: {cluster: silent, user: u}
current-context: silent-context
`, server)), 0o600); err != nil {
		t.Fatal(err)
	}

	doomwatchBinary(t) // built before the clock starts
	started := time.Now()
	tty := startTerminal(t, "--kubeconfig", kubeconfig, "--request-timeout", requestTimeout.String())
	want := "connecting to " + server + " (context silent-context)…"
	// Well before the request timeout, when the check gives up.
	tty.waitScreen("where it connects", requestTimeout*2/3, func(s string) bool { return strings.Contains(s, want) })
	t.Logf("connecting screen after %s", time.Since(started).Round(time.Millisecond))

	select {
	case <-tty.exited:
	case <-time.After(requestTimeout + 10*time.Second):
		t.Fatalf("doomwatch did not exit after the request timeout; screen:\n%s", tty.screen())
	}
	var exit *exec.ExitError
	if !errors.As(tty.waitErr, &exit) || exit.ExitCode() != 1 {
		t.Errorf("exit: %v, want exit code 1", tty.waitErr)
	}
	<-tty.readEnd
	tty.mu.Lock()
	alt := tty.alt
	tty.mu.Unlock()
	if alt {
		t.Errorf("the terminal is still on the alternate screen after exit")
	}
	msg := "doomwatch: the API server at " + server + " did not answer within " + requestTimeout.String()
	if l := lineWith(tty.screen(), "doomwatch: "); !strings.HasPrefix(strings.TrimSpace(l), msg) {
		t.Errorf("the line after exit is %q, want it to start %q; screen:\n%s", l, msg, tty.screen())
	}
}
