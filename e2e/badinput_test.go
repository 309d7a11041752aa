package e2e

import (
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestBadInput: each way of pointing doomwatch at the wrong thing gives a one-line error on
// stderr and a non-zero exit within the request timeout, never a hang. The bound is enforced by
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

	// A server that accepts connections and never answers: TLS handshakes hang.
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
	admin, err := c.ca.issue(certSpec{commonName: "bad-input-admin", groups: []string{"system:masters"}})
	if err != nil {
		t.Fatal(err)
	}
	silentCfg := filepath.Join(dir, "silent")
	if err := WriteKubeconfig(silentCfg, "https://"+silent.Addr().String(), c.ca.certPEM, admin.certPEM, admin.keyPEM, "silent"); err != nil {
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
	cases := []struct {
		name string
		args []string
		// mention lists words of which the one-line error must contain one, so the user knows
		// what to fix (nil: any one line).
		mention []string
	}{
		{"malformed kubeconfig", []string{"--kubeconfig", malformed}, []string{"kubeconfig"}},
		{"unknown context", []string{"--kubeconfig", good, "--context", "no-such-context"}, []string{"no-such-context"}},
		{"server that does not answer", []string{"--kubeconfig", silentCfg}, nil},
		{"expired client certificate", []string{"--kubeconfig", expiredCfg}, credentialWords},
		{"certificate from the wrong CA", []string{"--kubeconfig", foreignCfg}, credentialWords},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--once", "-o", "json", "--request-timeout=" + requestTimeout.String()}, tc.args...)
			r := runDoomwatch(t, requestTimeout+slack, nil, args...)
			if r.timedOut {
				t.Fatalf("did not return within the request timeout (%s) plus %s: %s", requestTimeout, slack, r)
			}
			if r.code == 0 {
				t.Fatalf("exit 0, want non-zero: %s", r)
			}
			assertOneLineError(t, r, tc.mention...)
		})
	}
}
