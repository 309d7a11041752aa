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
	"time"
)

// TestMain runs the tests without GITHUB_ACTIONS, which a GitHub runner sets: wait would add its
// annotations to the stderr the tests read exactly. The test of the annotations sets it itself.
func TestMain(m *testing.M) {
	os.Unsetenv("GITHUB_ACTIONS")
	os.Exit(m.Run())
}

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

// badInput is one way of giving doomwatch the wrong input, and what the user must be told: the
// exit code and words of the one line on stderr.
type badInput struct {
	args []string
	// env is set for the run (KEY=VALUE).
	env  []string
	code int
	// want are words the line must hold, not words it must not.
	want, not []string
}

// badInputBound is how long a case of TestBadInput may take: the slowest is a server that
// refuses the connection at once, under --request-timeout 1s.
const badInputBound = 20 * time.Second

// TestBadInput runs every way of getting doomwatch's input wrong that needs no real cluster
// (e2e's TestBadInput has those that do): each gives one line on stderr, "doomwatch: …", with
// the exit code the help promises: 2 for every usage error, with a pointer to the help of the
// command that was run, 1 for what is wrong with the kubeconfig or the cluster, with the hint that
// fits it, once. Nothing is printed on stdout. -v prints the table: command, exit code, line.
func TestBadInput(t *testing.T) {
	tmp := t.TempDir()
	full := filepath.Join(tmp, "full")
	if err := os.MkdirAll(full, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(full, "x"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	kubeconfig := writeKubeconfig(t, "https://127.0.0.1:1")
	// A port nothing listens on: the connection is refused at once.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	refuse := func(code int, reason, message string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","code":%d,"reason":%q,"message":%q}`, code, reason, message)
		}))
		t.Cleanup(srv.Close)
		return writeKubeconfig(t, srv.URL)
	}
	unauthorized := refuse(http.StatusUnauthorized, "Unauthorized", "Unauthorized")
	// As k8s.io/apiserver refuses a list in the context's namespace (default here): responsewriters
	// errors.go forbiddenMessage under apimachinery's NewForbidden; authentication.go's "Unauthorized".
	forbidden := refuse(http.StatusForbidden, "Forbidden",
		`pods is forbidden: User "nobody" cannot list resource "pods" in API group "" in the namespace "default"`)
	const badNS = "Invalid_NS!"
	nsWords := []string{`invalid -n/--namespace "Invalid_NS!"`, "RFC 1123 label"}
	usage := func(want ...string) []string { return append(want, "(see doomwatch --help)") }
	usageOf := func(command string, want ...string) []string {
		return append(want, "(see doomwatch "+command+" --help)")
	}
	noHint := []string{connectHint, authHint, rbacHint}

	cases := []badInput{
		// Flags and values of the root command.
		{args: []string{"--bogus"}, code: exitUsage, want: usage("unknown flag: --bogus")},
		{args: []string{"--suspect-share", "0.5"}, code: exitUsage, want: usage("--suspect-share was removed")},
		{args: []string{"--at", "90s"}, code: exitUsage, want: usage("--at needs --demo")},
		{args: []string{"--seed", "3"}, code: exitUsage, want: usage("--seed needs --demo")},
		{args: []string{"--fleet", "--once"}, code: exitUsage, want: usage("--fleet needs --demo")},
		{args: []string{"--once", "-o", "yaml"}, code: exitUsage, want: usage("must be table or json")},
		{args: []string{"-o", "json"}, code: exitUsage, want: usage("needs --once or --watch")},
		{args: []string{"--once", "--watch"}, code: exitUsage, want: usage("--once and --watch cannot be combined")},
		{args: []string{"--watch", "-o", "yaml"}, code: exitUsage, want: usage("must be table or json")},
		{args: []string{"--demo", "--speed", "0"}, code: exitUsage, want: usage("--speed must be positive")},
		{args: []string{"--demo", "--once", "--at", "-5s"}, code: exitUsage, want: usage("--at must not be negative")},
		{args: []string{"--suspect-pods", "0"}, code: exitUsage, want: usage("--suspect-pods must be at least 1")},
		{args: []string{"--window", "0s"}, code: exitUsage, want: usage("--window must be positive")},
		{args: []string{"--request-timeout", "soon"}, code: exitUsage, want: usage("invalid --request-timeout")},
		{args: []string{"pods"}, code: exitUsage, want: usage(`unexpected argument "pods"`)},
		{args: []string{"--timeout", "5s"}, code: exitUsage, want: usage("unknown flag: --timeout")},
		{args: []string{"--demo", "--once", "--record", filepath.Join(tmp, "r")}, code: exitUsage, want: usage("--record records beside the dashboard")},

		// A namespace that cannot be one: no cluster has it, so the view would be empty.
		{args: []string{"--demo", "--once", "-n", badNS}, code: exitUsage, want: usage(nsWords...)},
		{args: []string{"--demo", "-n", badNS}, code: exitUsage, want: usage(nsWords...)},
		{args: []string{"--demo", "--watch", "--namespace=" + badNS}, code: exitUsage, want: usage(nsWords...)},
		{args: []string{"--once", "--kubeconfig", kubeconfig, "-n", "Shop"}, code: exitUsage, want: usage(`invalid -n/--namespace "Shop"`)},
		{args: []string{"--once", "--kubeconfig", kubeconfig, "-n", "a.b"}, code: exitUsage, want: usage(`invalid -n/--namespace "a.b"`)},
		{args: []string{"wait", "--demo", "-n", badNS, "deployment/web"}, code: exitUsage, want: usageOf("wait", nsWords...)},
		{args: []string{"record", "-o", filepath.Join(tmp, "r"), "--demo", "-n", badNS}, code: exitUsage, want: usageOf("record", nsWords...)},

		// A selector that cannot be parsed, as kubectl's -l parses it.
		{args: []string{"-l", "app in (("}, code: exitUsage, want: usage(`parsing -l "app in (("`)},
		{args: []string{"--demo", "--once", "-l", "app in (("}, code: exitUsage, want: usage(`parsing -l "app in (("`)},
		{args: []string{"--once", "--kubeconfig", kubeconfig, "-l", "=web"}, code: exitUsage, want: usage(`parsing -l "=web"`)},
		{args: []string{"record", "-o", filepath.Join(tmp, "r"), "--demo", "-l", "a in (("}, code: exitUsage, want: usageOf("record", `parsing -l "a in (("`)},
		{args: []string{"wait", "-l", "app in (", "--demo"}, code: exitUsage, want: usageOf("wait", "parsing -l")},

		// --context and --all-contexts: a list of names and globs, one or the other; the demo has
		// no kubeconfig to pick contexts from.
		{args: []string{"--all-contexts", "--context", "x"}, code: exitUsage, want: usage(`--all-contexts and --context "x": give one`)},
		{args: []string{"--once", "--kubeconfig", kubeconfig, "--context", "dev,,prod"}, code: exitUsage, want: usage("an empty name in the list")},
		{args: []string{"--once", "--kubeconfig", kubeconfig, "--context", "prod-["}, code: exitUsage, want: usage(`bad pattern "prod-["`)},
		{args: []string{"--demo", "--fleet", "--context", "a", "--once"}, code: exitUsage,
			want: usage("--context picks kubeconfig contexts, which --demo does not read", "demo-eu, demo-us, demo-ap")},
		{args: []string{"--demo", "--context", "demo-eu", "--once"}, code: exitUsage, want: usage("--context picks kubeconfig contexts")},
		{args: []string{"--demo", "--fleet", "--all-contexts"}, code: exitUsage, want: usage("--all-contexts picks kubeconfig contexts")},
		{args: []string{"wait", "--demo", "--context", "demo-eu", "deployment/web"}, code: exitUsage, want: usageOf("wait", "--context picks kubeconfig contexts")},
		{args: []string{"--demo", "--stable", "-1s"}, code: exitUsage, want: usage("--stable -1s: a window cannot be negative")},
		{args: []string{"serve", "--demo", "--listen", "9090"}, code: exitUsage, want: usageOf("serve", `--listen "9090": address 9090: missing port in address`)},
		{args: []string{"serve", "--demo", "--fleet"}, code: exitUsage, want: usageOf("serve", "serve watches one cluster")},
		{args: []string{"serve", "extra"}, code: exitUsage, want: usageOf("serve", `unexpected argument "extra"`)},
		{args: []string{"--demo", "--once", "--stable", "1m"}, code: exitUsage, want: usage("--stable is the dashboard's (and wait's)")},

		// wait: its flags are its own, and so is its help.
		{args: []string{"wait"}, code: exitUsage, want: usageOf("wait", "wait needs workloads")},
		{args: []string{"wait", "web"}, code: exitUsage, want: usageOf("wait", `"web" is not TYPE/NAME`)},
		{args: []string{"wait", "c_m/nightly"}, code: exitUsage, want: usageOf("wait", `invalid resource type "c_m"`)},
		{args: []string{"wait", "deployment/Web_1"}, code: exitUsage, want: usageOf("wait", `invalid name "Web_1"`)},
		{args: []string{"wait", "deployment/"}, code: exitUsage, want: usageOf("wait", `invalid name ""`)},
		{args: []string{"wait", "/web"}, code: exitUsage, want: usageOf("wait", "must have a single resource and name")},
		{args: []string{"wait", "deployment"}, code: exitUsage, want: usageOf("wait", "name the deployment to wait for")},
		{args: []string{"wait", "deployment", "deploy/web"}, code: exitUsage, want: usageOf("wait", "no need to specify a resource type")},
		{args: []string{"wait", "-l", "app=web", "deployment/web"}, code: exitUsage, want: usageOf("wait", "not both")},
		{args: []string{"wait", "deployment/web", "-o", "table"}, code: exitUsage, want: usageOf("wait", "must be text, json or junit, not \"table\"")},
		{args: []string{"wait", "deployment/web", "--timeout", "0s"}, code: exitUsage, want: usageOf("wait", "--timeout must be positive")},
		{args: []string{"wait", "deployment/web", "--stable", "-5s"}, code: exitUsage, want: usageOf("wait", "--stable must not be negative, got -5s")},
		{args: []string{"wait", "deployment/web", "--once"}, code: exitUsage, want: usageOf("wait", "unknown flag: --once")},
		{args: []string{"wait", "deployment/web", "-A"}, code: exitUsage, want: usageOf("wait", "unknown shorthand flag: 'A'")},
		{args: []string{"wait", "deploy/x", "-A"}, code: exitUsage, want: usageOf("wait", "unknown shorthand flag: 'A'")},
		{args: []string{"wait", "deploy/x", "--at", "90s", "--demo"}, code: exitUsage, want: usageOf("wait", "unknown flag: --at")},
		{args: []string{"-n", "shop", "wait", "deployment/web", "--speed", "2"}, code: exitUsage, want: usageOf("wait", "--speed needs --demo")},

		// record and replay.
		{args: []string{"record", "--demo"}, code: exitUsage, want: usageOf("record", "record needs -o DIR")},
		{args: []string{"record", "-o", full, "--demo"}, code: exitUsage, want: usageOf("record", "not empty")},
		{args: []string{"record", "-o", filepath.Join(tmp, "r"), "--demo", "--max-size", "lots"}, code: exitUsage, want: usageOf("record", "--max-size")},
		{args: []string{"record", "-o", filepath.Join(tmp, "r"), "--once"}, code: exitUsage, want: usageOf("record", "unknown flag: --once")},
		{args: []string{"replay"}, code: exitUsage, want: usageOf("replay", "replay needs the recording's directory")},
		{args: []string{"replay", full, "--speed", "2"}, code: exitUsage, want: usageOf("replay", "unknown flag: --speed")},
		{args: []string{"replay", full, "-n", "shop"}, code: exitUsage, want: usageOf("replay", "unknown shorthand flag: 'n'")},
		{args: []string{"replay", full, "--at", "90s"}, code: exitUsage, want: usageOf("replay", "--at needs --once")},
		{args: []string{"replay", full, "--seek"}, code: exitUsage, want: usageOf("replay", "--seek needs --once")},
		{args: []string{"replay", full, "--once", "--at", "yesterday"}, code: exitUsage, want: usageOf("replay", "neither an offset")},
		{args: []string{"replay", full, "--once"}, code: exitError, want: []string{"holds no recording"}, not: []string{"--help"}},
		{args: []string{"replay", filepath.Join(tmp, "none"), "--once"}, code: exitError, want: []string{"no such recording"}, not: []string{"--help"}},

		// The kubeconfig: files that are not there are named, a context it does not have is an
		// error about the kubeconfig (exit 1, as kubectl's "context was not found"), with no hint.
		{args: []string{"--once"}, env: []string{"KUBECONFIG=" + filepath.Join(tmp, "nonexistent")}, code: exitError,
			want: []string{"no kubeconfig found: " + filepath.Join(tmp, "nonexistent") + " (from KUBECONFIG) does not exist"}, not: noHint},
		{args: []string{"--once"}, env: []string{"KUBECONFIG=" + filepath.Join(tmp, "a") + string(os.PathListSeparator) + filepath.Join(tmp, "b")},
			code: exitError, want: []string{filepath.Join(tmp, "a") + ", " + filepath.Join(tmp, "b") + " (from KUBECONFIG) do not exist"}, not: noHint},
		{args: []string{"--once", "--kubeconfig", filepath.Join(tmp, "nonexistent")}, code: exitError,
			want: []string{"loading kubeconfig", filepath.Join(tmp, "nonexistent")}, not: noHint},
		{args: []string{"--once", "--kubeconfig", kubeconfig, "--context", "prod"}, code: exitError, want: []string{`context "prod" does not exist`}, not: noHint},
		{args: []string{"--once", "--kubeconfig", kubeconfig, "--context", "prod", "--request-timeout", "5s"}, code: exitError,
			want: []string{`context "prod" does not exist`}, not: noHint},
		{args: []string{"--once", "--kubeconfig", kubeconfig, "--context", "prod-*"}, code: exitError,
			want: []string{`no context matches "prod-*" (the kubeconfig has dev)`}, not: noHint},

		// The cluster: unreachable, or refusing us, each with the hint that fits, once.
		{args: []string{"--once", "--kubeconfig", writeKubeconfig(t, "https://"+closed), "--request-timeout", "1s"}, code: exitError,
			want: []string{closed, connectHint}},
		{args: []string{"--once", "--kubeconfig", unauthorized, "--request-timeout", "5s"}, code: exitError,
			want: []string{"rejected our credentials", authHint}, not: []string{connectHint}},
		{args: []string{"--once", "--kubeconfig", forbidden, "--request-timeout", "5s"}, code: exitError,
			want: []string{"not allowed to list pods", rbacHint}, not: []string{connectHint}},
	}
	// The temporary directories are $TMP in the names and the log, so that the table reads the
	// same on every run.
	temp := strings.NewReplacer(filepath.Dir(tmp), "$TMP")
	for _, tc := range cases {
		cmdline := temp.Replace(commandLine(tc.env, tc.args))
		t.Run(cmdline, func(t *testing.T) {
			for _, kv := range tc.env {
				k, v, _ := strings.Cut(kv, "=")
				t.Setenv(k, v)
			}
			// A case that does not return is a hang: it fails, rather than holding the run until
			// go test's own timeout. (Its goroutine is left behind; the test has failed.)
			type result struct {
				code           int
				stdout, stderr string
			}
			done := make(chan result, 1)
			go func() {
				code, stdout, stderr := runCLI(tc.args...)
				done <- result{code, stdout, stderr}
			}()
			var r result
			select {
			case r = <-done:
			case <-time.After(badInputBound):
				t.Fatalf("no answer within %s: bad input must end the run", badInputBound)
			}
			code, stdout, stderr := r.code, r.stdout, r.stderr
			line := strings.TrimSuffix(oneErrorLine(t, stderr), "\n")
			t.Logf("%s  →  exit %d  %s", cmdline, code, temp.Replace(line))
			if code != tc.code {
				t.Errorf("exit code %d, want %d", code, tc.code)
			}
			for _, w := range tc.want {
				if !strings.Contains(line, w) {
					t.Errorf("stderr = %q, want it to say %q", line, w)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(line, w) {
					t.Errorf("stderr = %q, want it not to say %q", line, w)
				}
			}
			// A hint is added once, at the end, in main.
			for _, hint := range []string{connectHint, authHint, rbacHint, "--help)"} {
				if strings.Count(line, hint) > 1 {
					t.Errorf("stderr = %q: %q more than once", line, hint)
				}
			}
			if (code == exitUsage) != strings.HasSuffix(line, " --help)") {
				t.Errorf("stderr = %q: a usage error, and only one, ends by pointing to the help", line)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
		})
	}
}

// commandLine is how the test table prints a case: as a shell would take it.
func commandLine(env, args []string) string {
	words := make([]string, 0, len(env)+1+len(args))
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		words = append(words, k+"="+shellQuote(v))
	}
	words = append(words, "doomwatch")
	for _, a := range args {
		words = append(words, shellQuote(a))
	}
	return strings.Join(words, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func TestHelpListsOurFlagsAndKubectls(t *testing.T) {
	code, stdout, stderr := runCLI("--help")
	if code != exitOK || stderr != "" {
		t.Fatalf("--help: code %d, stderr %q", code, stderr)
	}
	for _, flag := range []string{"-A, --all-namespaces", "-l, --selector", "--once", "-o, --output", "--demo", "--at", "--suspect-pods",
		"--kubeconfig", "--context", "-n, --namespace", "--request-timeout", "Zero or unset: 10s.",
		"2 usage error: an unknown flag or argument, a value\nthat cannot be right (an invalid -n namespace or -l selector)"} {
		if !strings.Contains(stdout, flag) {
			t.Errorf("help does not mention %q", flag)
		}
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
