package main

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func runCLI(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// oneErrorLine asserts stderr is exactly one "doomwatch: …" line.
func oneErrorLine(t *testing.T, stderr string) string {
	t.Helper()
	if !strings.HasPrefix(stderr, "doomwatch: ") || strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") {
		t.Errorf("stderr = %q, want one line starting with \"doomwatch: \"", stderr)
	}
	return stderr
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--bogus"}, "unknown flag: --bogus"},
		{[]string{"--suspect-share", "0.5"}, "--suspect-share was removed"},
		{[]string{"--at", "90s"}, "--at needs --demo"},
		{[]string{"--seed", "3"}, "--seed needs --demo"},
		{[]string{"--once", "-o", "yaml"}, "must be table or json"},
		{[]string{"-o", "json"}, "needs --once or --watch"},
		{[]string{"--once", "--watch"}, "--once and --watch cannot be combined"},
		{[]string{"--watch", "-o", "yaml"}, "must be table or json"},
		{[]string{"--demo", "--speed", "0"}, "--speed must be positive"},
		{[]string{"--suspect-pods", "0"}, "--suspect-pods must be at least 1"},
		{[]string{"--window", "0s"}, "--window must be positive"},
		{[]string{"--request-timeout", "soon"}, "invalid --request-timeout"},
		{[]string{"pods"}, `unexpected argument "pods"`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(tc.args...)
			if code != exitUsage {
				t.Errorf("exit code %d, want %d", code, exitUsage)
			}
			if !strings.Contains(oneErrorLine(t, stderr), tc.want) {
				t.Errorf("stderr = %q, want it to mention %q", stderr, tc.want)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
		})
	}
}

func TestHelpListsOurFlagsAndKubectls(t *testing.T) {
	code, stdout, stderr := runCLI("--help")
	if code != exitOK || stderr != "" {
		t.Fatalf("--help: code %d, stderr %q", code, stderr)
	}
	for _, flag := range []string{"-A, --all-namespaces", "-l, --selector", "--once", "-o, --output", "--demo", "--at", "--suspect-pods",
		"--kubeconfig", "--context", "-n, --namespace", "--request-timeout", `(default "10s")`} {
		if !strings.Contains(stdout, flag) {
			t.Errorf("help does not mention %q", flag)
		}
	}
}

func TestUnreachableClusterExitsOneWithHint(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	kubeconfig := writeKubeconfig(t, "https://"+addr)
	code, stdout, stderr := runCLI("--once", "--kubeconfig", kubeconfig, "--request-timeout", "1s")
	if code != exitError {
		t.Errorf("exit code %d, want %d", code, exitError)
	}
	line := oneErrorLine(t, stderr)
	if !strings.Contains(line, addr) || !strings.Contains(line, connectHint) {
		t.Errorf("stderr = %q, want the server address and the hint", line)
	}
	if strings.Count(line, connectHint) != 1 {
		t.Errorf("hint repeated: %q", line)
	}
	if stdout != "" {
		t.Errorf("stdout = %q, want nothing", stdout)
	}
}

func TestUnknownContextExitsOne(t *testing.T) {
	kubeconfig := writeKubeconfig(t, "https://127.0.0.1:1")
	code, _, stderr := runCLI("--once", "--kubeconfig", kubeconfig, "--context", "prod")
	if code != exitError || !strings.Contains(oneErrorLine(t, stderr), `context "prod" does not exist`) {
		t.Errorf("code %d, stderr %q; want exit 1 naming the unknown context", code, stderr)
	}
}

// TestRefusalsGetTheirOwnHint: a server that answers with 401 or 403 is reachable, so those errors
// get a hint about credentials or RBAC, not "is the cluster reachable?"; a kubeconfig naming an
// unknown context gets none (its message says what to fix).
func TestRefusalsGetTheirOwnHint(t *testing.T) {
	refuse := func(code int, reason, message string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","code":%d,"reason":%q,"message":%q}`, code, reason, message)
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	for _, tc := range []struct {
		name, server, context, want, hint string
	}{
		{"unauthorized", refuse(http.StatusUnauthorized, "Unauthorized", "Unauthorized"), "", "rejected our credentials", authHint},
		// As k8s.io/apiserver refuses a list in the context's namespace (default here): responsewriters
		// errors.go forbiddenMessage under apimachinery's NewForbidden; authentication.go's "Unauthorized".
		{"forbidden", refuse(http.StatusForbidden, "Forbidden",
			`pods is forbidden: User "nobody" cannot list resource "pods" in API group "" in the namespace "default"`), "", "not allowed to list pods", rbacHint},
		{"unknown context", "https://127.0.0.1:1", "prod", `context "prod" does not exist`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kubeconfig := writeKubeconfig(t, tc.server)
			args := []string{"--once", "--kubeconfig", kubeconfig, "--request-timeout", "5s"}
			if tc.context != "" {
				args = append(args, "--context", tc.context)
			}
			code, _, stderr := runCLI(args...)
			line := oneErrorLine(t, stderr)
			if code != exitError || !strings.Contains(line, tc.want) {
				t.Errorf("code %d, stderr %q; want exit 1 saying %q", code, line, tc.want)
			}
			if strings.Contains(line, connectHint) {
				t.Errorf("stderr = %q: the server answered, so it is reachable", line)
			}
			if tc.hint != "" && !strings.Contains(line, tc.hint) {
				t.Errorf("stderr = %q, want the hint %q", line, tc.hint)
			}
			if tc.hint == "" && strings.HasSuffix(strings.TrimSpace(line), ")") {
				t.Errorf("stderr = %q, want no hint", line)
			}
		})
	}
}

// writeKubeconfig writes a kubeconfig whose current context "dev" points at server with a token.
func writeKubeconfig(t *testing.T, server string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config")
	content := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: dev, context: {cluster: c, user: u}}]
current-context: dev
`, server)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestBinaryDoesNotLinkPlugin: a binary that links the standard library's plugin package (for
// instance through k8s.io/cli-runtime's resource builder and kustomize) makes the Go linker export
// every symbol and keep every exported method: doomwatch grew from 50 MB to 143 MB and its resident
// memory by 50 MiB (kube/flags.go). The package list is the one `go build` links.
func TestBinaryDoesNotLinkPlugin(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "plugin" || strings.HasPrefix(pkg, "sigs.k8s.io/kustomize/") {
			t.Errorf("doomwatch links %s", pkg)
		}
	}
}
