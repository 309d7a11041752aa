package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const kubeconfigTmpl = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: %s
    insecure-skip-tls-verify: true
users:
- name: u
  user:
    token: secret
contexts:
- name: dev
  context: {cluster: c, user: u, namespace: team-a}
current-context: dev
`

func writeKubeconfig(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func configFlags(kubeconfig, kubeContext, timeout string) *Flags {
	return newFlags(kubeconfig, kubeContext, timeout)
}

// connectErr runs Connect and returns its error message, failing the test when it succeeds, when
// the message spans several lines or when the error is not of the kind wanted (none: not one of
// ErrUnreachable, ErrUnauthorized, ErrForbidden).
func connectErr(t *testing.T, flags *Flags, opts Options, kind error) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	src, err := Connect(ctx, flags, time.Time{}, opts)
	if err == nil {
		cancel()
		for range src.Batches() {
		}
		t.Fatal("Connect succeeded, want an error")
	}
	msg := err.Error()
	t.Logf("error: %s", msg)
	if strings.ContainsAny(msg, "\r\n") {
		t.Errorf("error spans several lines: %q", msg)
	}
	for _, k := range []error{ErrUnreachable, ErrUnauthorized, ErrForbidden} {
		if errors.Is(err, k) != (k == kind) {
			t.Errorf("errors.Is(err, %q) = %v, want %v", k, errors.Is(err, k), k == kind)
		}
	}
	return msg
}

func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestConnectUnreachableServer(t *testing.T) {
	addr := closedPort(t)
	path := writeKubeconfig(t, fmt.Sprintf(kubeconfigTmpl, "https://"+addr))
	msg := connectErr(t, configFlags(path, "", "1s"), Options{}, ErrUnreachable)
	if !strings.Contains(msg, "cannot reach the API server at https://"+addr) {
		t.Errorf("error = %q, want it to name the unreachable server", msg)
	}
}

// TestConnectSilentServer accepts connections and never answers: Connect must give up after the
// request timeout instead of hanging.
func TestConnectSilentServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { // hold it open, say nothing
				<-done
				c.Close()
			}()
		}
	}()
	path := writeKubeconfig(t, fmt.Sprintf(kubeconfigTmpl, "https://"+l.Addr().String()))
	msg := connectErr(t, configFlags(path, "", "1s"), Options{}, ErrUnreachable)
	if !strings.Contains(msg, "did not answer within 1s") {
		t.Errorf("error = %q, want a timeout naming the request timeout", msg)
	}
}

func TestConnectUnknownContext(t *testing.T) {
	path := writeKubeconfig(t, fmt.Sprintf(kubeconfigTmpl, "https://"+closedPort(t)))
	msg := connectErr(t, configFlags(path, "nope", "1s"), Options{}, nil)
	if !strings.Contains(msg, "nope") || !strings.Contains(msg, "kubeconfig") {
		t.Errorf("error = %q, want it to name the unknown context", msg)
	}
}

func TestConnectMalformedKubeconfig(t *testing.T) {
	path := writeKubeconfig(t, "apiVersion: v1\nclusters: [this is: not: yaml\n\tcontexts:\n")
	msg := connectErr(t, configFlags(path, "", "1s"), Options{}, nil)
	if !strings.HasPrefix(msg, "loading kubeconfig: ") {
		t.Errorf("error = %q, want a kubeconfig loading error", msg)
	}
}

// fakeAPIServer answers the pod list with status and records what the client asked for.
func fakeAPIServer(t *testing.T, status int, body any, seen chan<- *http.Request) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case seen <- r:
		default:
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestConnectForbiddenPods(t *testing.T) {
	// The API server's refusal as k8s.io/apiserver formats it (pkg/endpoints/handlers/responsewriters
	// errors.go forbiddenMessage `User %q cannot %s resource %q in API group %q in the namespace %q`,
	// wrapped by apimachinery's NewForbidden `%s is forbidden: %v`), RBAC giving no reason.
	forbidden := metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden,
		Message: `pods is forbidden: User "nobody" cannot list resource "pods" in API group "" in the namespace "team-a"`,
	}
	seen := make(chan *http.Request, 1)
	srv := fakeAPIServer(t, http.StatusForbidden, forbidden, seen)
	path := writeKubeconfig(t, fmt.Sprintf(kubeconfigTmpl, srv.URL))
	msg := connectErr(t, configFlags(path, "", "1s"), Options{}, ErrForbidden)
	if !strings.Contains(msg, "not allowed to list pods in namespace team-a") || !strings.Contains(msg, `User "nobody"`) {
		t.Errorf("error = %q, want the RBAC refusal for the context's namespace", msg)
	}
	r := <-seen
	if r.URL.Path != "/api/v1/namespaces/team-a/pods" {
		t.Errorf("checked %s, want the pods of the context's namespace", r.URL.Path)
	}
	if got := r.Header.Get("Accept"); !strings.HasPrefix(got, "application/vnd.kubernetes.protobuf") {
		t.Errorf("Accept = %q, want protobuf first", got)
	}
	if r.Method != http.MethodGet {
		t.Errorf("method %s: doomwatch must only read", r.Method)
	}
}

func TestConnectUnauthorized(t *testing.T) {
	// k8s.io/apiserver pkg/endpoints/filters/authentication.go: NewUnauthorized("Unauthorized").
	unauthorized := metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Code: http.StatusUnauthorized, Reason: metav1.StatusReasonUnauthorized,
		Message: "Unauthorized",
	}
	srv := fakeAPIServer(t, http.StatusUnauthorized, unauthorized, nil)
	path := writeKubeconfig(t, fmt.Sprintf(kubeconfigTmpl, srv.URL))
	flags := configFlags(path, "", "1s")
	flags.overrides.Context.Namespace = "explicit"
	msg := connectErr(t, flags, Options{}, ErrUnauthorized)
	if !strings.Contains(msg, "rejected our credentials") {
		t.Errorf("error = %q, want a credentials error", msg)
	}
}

func TestConnectWithoutAnyKubeconfig(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBECONFIG", "")
	t.Setenv("HOME", t.TempDir())
	msg := connectErr(t, newFlags("", "", ""), Options{}, nil)
	if !strings.Contains(msg, "no kubeconfig found") {
		t.Errorf("error = %q, want a missing-kubeconfig error rather than a localhost:8080 fallback", msg)
	}
}

// TestTarget: where Connect would connect is read from the kubeconfig without a request: the
// current context, or the one --context names, and its server; a context the kubeconfig lacks
// keeps its name and has no server (Connect then says what is wrong).
func TestTarget(t *testing.T) {
	addr := "https://" + closedPort(t)
	path := writeKubeconfig(t, fmt.Sprintf(kubeconfigTmpl, addr))
	if ctx, server := configFlags(path, "", "").Target(""); ctx != "dev" || server != addr {
		t.Errorf("current context: Target = %q, %q, want dev, %s", ctx, server, addr)
	}
	if ctx, server := configFlags(path, "dev", "").Target("dev"); ctx != "dev" || server != addr {
		t.Errorf("--context dev: Target = %q, %q, want dev, %s", ctx, server, addr)
	}
	if ctx, server := configFlags(path, "nope", "").Target("nope"); ctx != "nope" || server != "" {
		t.Errorf("--context nope: Target = %q, %q, want nope and no server", ctx, server)
	}
}
