package kube

import (
	"slices"
	"strings"
	"testing"
)

const fleetKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}
users:
- name: u
  user: {token: secret}
contexts:
- {name: prod-us, context: {cluster: c, user: u}}
- {name: prod-eu, context: {cluster: c, user: u}}
- {name: staging, context: {cluster: c, user: u}}
- {name: kind-kind, context: {cluster: c, user: u}}
current-context: staging
`

// TestContexts resolves --context and --all-contexts as the README says: one name is kubectl's
// (unchecked here; Connect says if it is unknown), a list keeps its order, a glob matches the
// kubeconfig's contexts in sorted order, and every mistake is one line naming what exists.
func TestContexts(t *testing.T) {
	path := writeKubeconfig(t, fleetKubeconfig)
	tests := []struct {
		spec string
		all  bool
		want []string
		err  string
	}{
		{spec: "", want: []string{""}},
		{spec: "staging", want: []string{"staging"}},
		{spec: "nope", want: []string{"nope"}},
		{spec: "staging,prod-eu", want: []string{"staging", "prod-eu"}},
		{spec: "prod-*", want: []string{"prod-eu", "prod-us"}},
		{spec: "prod-us, prod-*", want: []string{"prod-us", "prod-eu"}},
		{spec: "prod-?s", want: []string{"prod-us"}},
		{all: true, want: []string{"kind-kind", "prod-eu", "prod-us", "staging"}},
		{spec: "dev-*", err: `--context: no context matches "dev-*" (the kubeconfig has kind-kind, prod-eu, prod-us, staging)`},
		{spec: "staging,nope", err: `--context: no context "nope" in the kubeconfig (it has kind-kind, prod-eu, prod-us, staging)`},
		{spec: "staging,,prod-eu", err: `--context "staging,,prod-eu": an empty name in the list`},
		{spec: "prod-[", err: `--context: bad pattern "prod-[": syntax error in pattern`},
		{spec: "staging", all: true, err: `--all-contexts and --context "staging": give one`},
	}
	for _, tt := range tests {
		f := configFlags(path, tt.spec, "")
		f.allContexts = tt.all
		got, err := f.Contexts()
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("--context %q all=%t: error %v, want %q", tt.spec, tt.all, err, tt.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("--context %q all=%t: %q, %v; want %q", tt.spec, tt.all, got, err, tt.want)
		}
	}

	empty := writeKubeconfig(t, "apiVersion: v1\nkind: Config\n")
	f := configFlags(empty, "", "")
	f.allContexts = true
	if _, err := f.Contexts(); err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("--all-contexts on a kubeconfig without contexts: %v, want one line", err)
	}
}
