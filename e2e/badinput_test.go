package e2e

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestBadInput: each way of pointing doomwatch at the wrong thing gives a one-line error on
// stderr and the exit code the help promises (2 for a usage error, 1 otherwise) within the
// request timeout, never a hang; the main package's TestBadInput has the cases that need no
// cluster. -v prints each case's exit code and line. The bound is enforced by
// the exec's context deadline (request timeout plus slack for process start-up under -race), not
// by measuring wall-clock time.
func TestBadInput(t *testing.T) {
	c := needCluster(t)
	dir := t.TempDir()
	const requestTimeout = 3 * time.Second
	const slack = 5 * time.Second

	malformed := filepath.Join(dir, "malformed")
	if err := os.WriteFile(malformed, []byte("apiVersion: v1\nclusters: [{{{ not yaml\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	silent := silentServer(t)
	admin, err := c.ca.issue(certSpec{commonName: "bad-input-admin", groups: []string{"system:masters"}})
	if err != nil {
		t.Fatal(err)
	}
	silentCfg := filepath.Join(dir, "silent")
	if err := WriteKubeconfig(silentCfg, "https://"+silent, c.ca.certPEM, admin.certPEM, admin.keyPEM, "silent"); err != nil {
		t.Fatal(err)
	}

	expired, err := c.ca.issue(certSpec{commonName: "expired", groups: []string{"system:masters"},
		notBefore: time.Now().Add(-48 * time.Hour), notAfter: time.Now().Add(-24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	expiredCfg := filepath.Join(dir, "expired")
	if err := WriteKubeconfig(expiredCfg, c.Host, c.ca.certPEM, expired.certPEM, expired.keyPEM, "expired"); err != nil {
		t.Fatal(err)
	}

	stranger, err := newAuthority("someone-else")
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := stranger.issue(certSpec{commonName: "foreign", groups: []string{"system:masters"}})
	if err != nil {
		t.Fatal(err)
	}
	foreignCfg := filepath.Join(dir, "foreign")
	if err := WriteKubeconfig(foreignCfg, c.Host, c.ca.certPEM, foreign.certPEM, foreign.keyPEM, "foreign"); err != nil {
		t.Fatal(err)
	}

	good := adminKubeconfig(t)
	// client-go renders a 401 as "the server has asked for the client to provide credentials";
	// doomwatch may add its own words.
	credentialWords := []string{"unauthorized", "credentials", "certificate"}
	missing := filepath.Join(dir, "nonexistent")
	cases := []struct {
		name string
		args []string
		env  []string
		// code is the exit code: 2 for a usage error, told before anything is reached.
		code int
		// mention lists words of which the one-line error must contain one, so the user knows
		// what to fix (nil: any one line).
		mention []string
	}{
		{"malformed kubeconfig", []string{"--kubeconfig", malformed}, nil, 1, []string{"kubeconfig"}},
		{"unknown context", []string{"--kubeconfig", good, "--context", "no-such-context"}, nil, 1, []string{"no-such-context"}},
		{"server that does not answer", []string{"--kubeconfig", silentCfg}, nil, 1, nil},
		{"expired client certificate", []string{"--kubeconfig", expiredCfg}, nil, 1, credentialWords},
		{"certificate from the wrong CA", []string{"--kubeconfig", foreignCfg}, nil, 1, credentialWords},
		// A namespace no cluster can have would show an empty list; a selector the API server
		// would refuse is the command line's fault: both are usage errors, before connecting.
		{"namespace that is not a DNS label", []string{"--kubeconfig", good, "-n", "Invalid_NS!"}, nil, 2, []string{`invalid -n/--namespace "Invalid_NS!"`}},
		{"selector that does not parse", []string{"--kubeconfig", good, "-l", "app in (("}, nil, 2, []string{`parsing -l "app in (("`}},
		{"--all-contexts and --context", []string{"--kubeconfig", good, "--all-contexts", "--context", "x"}, nil, 2, []string{"give one"}},
		{"KUBECONFIG naming no file", nil, []string{"KUBECONFIG=" + missing}, 1, []string{missing + " (from KUBECONFIG) does not exist"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--once", "-o", "json", "--request-timeout=" + requestTimeout.String()}, tc.args...)
			r := runDoomwatch(t, requestTimeout+slack, tc.env, args...)
			t.Logf("%s: exit %d  %s", tc.name, r.code, strings.TrimSpace(r.stderr))
			if r.timedOut {
				t.Fatalf("did not return within the request timeout (%s) plus %s: %s", requestTimeout, slack, r)
			}
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d: %s", r.code, tc.code, r)
			}
			assertOneLineError(t, r, tc.mention...)
		})
	}
}

// silentServer listens on loopback, accepts connections and never answers (a TLS handshake hangs),
// until the test ends; it returns the listener's address.
func silentServer(t *testing.T) string {
	t.Helper()
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	held.Add(1)
	go func() {
		defer held.Done()
		for {
			conn, err := silent.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, conn)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		silent.Close()
		held.Wait()
		mu.Lock()
		for _, conn := range conns {
			conn.Close()
		}
		mu.Unlock()
	})
	return silent.Addr().String()
}
