package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// TestExecCredentialOncePerContext: each context of a fleet has its own credentials, and an exec
// credential plugin (how EKS, GKE and AKS kubeconfigs authenticate) runs once per context for the
// whole run, not once per request: two contexts on the suite's API server, each with its own
// plugin invocation that logs its argument and hands back a client certificate
// (client.authentication.k8s.io/v1 ExecCredential status.clientCertificateData/clientKeyData).
// client-go caches the authenticator per exec configuration (plugin/pkg/client/auth/exec's
// cache), and doomwatch's clients of a context (informers, the probe, logs) share one.
func TestExecCredentialOncePerContext(t *testing.T) {
	if skipReason != "" {
		t.Skip(skipReason)
	}
	l, err := cluster.ca.issue(certSpec{commonName: "exec-user", groups: []string{"system:masters"}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	cred, err := json.Marshal(map[string]any{
		"apiVersion": "client.authentication.k8s.io/v1",
		"kind":       "ExecCredential",
		"status":     map[string]string{"clientCertificateData": string(l.certPEM), "clientKeyData": string(l.keyPEM)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cred.json"), cred, 0o600); err != nil {
		t.Fatal(err)
	}
	plugin := filepath.Join(dir, "plugin.sh")
	script := "#!/bin/sh\necho \"$1\" >> " + calls + "\ncat " + filepath.Join(dir, "cred.json") + "\n"
	if err := os.WriteFile(plugin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["suite"] = &clientcmdapi.Cluster{Server: cluster.Host, CertificateAuthorityData: cluster.ca.certPEM}
	for _, name := range []string{"exec-a", "exec-b"} {
		kc.AuthInfos[name] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
			APIVersion: "client.authentication.k8s.io/v1", Command: plugin, Args: []string{name},
			InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
		}}
		kc.Contexts[name] = &clientcmdapi.Context{Cluster: "suite", AuthInfo: name, Namespace: "default"}
	}
	kc.CurrentContext = "exec-a"
	path := filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}

	r := runDoomwatch(t, 60*time.Second, nil, "--kubeconfig", path, "--context", "exec-*", "--once", "-o", "json")
	if r.code != 0 {
		t.Fatalf("doomwatch --context exec-* --once: %s", r)
	}
	var snap struct {
		Clusters []struct {
			Context string `json:"context"`
			Synced  bool   `json:"synced"`
			Error   string `json:"error"`
		} `json:"clusters"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &snap); err != nil {
		t.Fatalf("decoding: %v\n%s", err, r.stdout)
	}
	if len(snap.Clusters) != 2 {
		t.Fatalf("clusters %+v, want exec-a and exec-b", snap.Clusters)
	}
	for _, c := range snap.Clusters {
		if !c.Synced || c.Error != "" {
			t.Errorf("cluster %+v did not sync with its exec credential", c)
		}
	}
	b, err := os.ReadFile(calls)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Fields(string(b))
	slices.Sort(got)
	if want := []string{"exec-a", "exec-b"}; !slices.Equal(got, want) {
		t.Errorf("the exec plugin ran for %q, want once per context %q", got, want)
	}
}
