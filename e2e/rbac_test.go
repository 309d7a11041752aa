package e2e

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"doomwatch/classify"
	"doomwatch/kube"
	"doomwatch/model"
)

// TestRBACPodsInOneNamespace: a user who may only list and watch pods in one namespace sees that
// namespace's pods; nodes (and the workload kinds) are marked forbidden and nothing crashes.
func TestRBACPodsInOneNamespace(t *testing.T) {
	e := newEnv(t)
	node := e.nodeName("n1")
	e.node(node, true)
	e.pod(podSpec{name: "web", node: node, status: podStatus(corev1.PodRunning, running("app", true, 0, nil))})
	e.pod(podSpec{name: "loop", node: node, status: podStatus(corev1.PodRunning,
		waiting("app", "CrashLoopBackOff", backOff("40s", "app", "loop", e.ns), 3, term("Error", 1, "", time.Minute)))})

	user, err := e.c.NewUser(e.ns + "-pod-reader")
	if err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "pod-reader", Namespace: e.ns},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list", "watch"}}},
	}
	if _, err := e.client.RbacV1().Roles(e.ns).Create(e.ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bind := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "pod-reader", Namespace: e.ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "pod-reader"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: user.Name}},
	}
	if _, err := e.client.RbacV1().RoleBindings(e.ns).Create(e.ctx, bind, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	w := startWatcher(t, user.Config, kube.Options{Namespace: e.ns})
	w.waitFor("pods synced with nodes forbidden", waitTimeout, func(m *model.Model, _ time.Time) bool {
		h := m.Health()
		return h.Synced && slices.Contains(h.Forbidden, model.KindNode) &&
			verdictIs(e.ns+"/web", classify.Healthy)(m) && verdictIs(e.ns+"/loop", classify.Doomed)(m)
	})
	w.read(func(m *model.Model, now time.Time) {
		h := m.Health()
		if slices.Contains(h.Forbidden, model.KindPod) || h.WatchError != "" {
			t.Errorf("health = %+v: pods must not be forbidden and a forbidden kind is not a broken watch", h)
		}
		if n, ok := nodeOf(m, now, node); ok && n.Known {
			t.Errorf("node %s is known although nodes are forbidden: %+v", node, n)
		}
	})

	snap := onceJSON(t, "--kubeconfig", user.Kubeconfig, "-n", e.ns)
	if len(snap.Pods) != 2 || snap.Summary.Doomed != 1 || snap.Summary.Healthy != 1 {
		t.Errorf("--once as %s: %d pods, summary %+v; want web healthy and loop doomed", user.Name, len(snap.Pods), snap.Summary)
	}
}

// TestRBACNoRights: a user with no bindings gets a clear one-line error and exit code 1.
func TestRBACNoRights(t *testing.T) {
	e := newEnv(t)
	user, err := e.c.NewUser(e.ns + "-nobody")
	if err != nil {
		t.Fatal(err)
	}
	r := runDoomwatch(t, time.Minute, nil, "--once", "-o", "json", "--request-timeout=10s", "--kubeconfig", user.Kubeconfig, "-n", e.ns)
	if r.code != 1 || r.timedOut {
		t.Fatalf("want exit 1; got %s", r)
	}
	assertOneLineError(t, r, "forbidden")
	if strings.TrimSpace(r.stdout) != "" {
		t.Errorf("stdout should be empty on error, got %q", r.stdout)
	}
}

// TestRBACDocumentedClusterRole applies the read-only ClusterRole exactly as the README documents
// it (its yaml block, which must equal testdata/clusterrole.yaml) and checks doomwatch runs fully
// under it: nothing forbidden, nodes and rollouts present, across all namespaces.
func TestRBACDocumentedClusterRole(t *testing.T) {
	e := newEnv(t)
	raw := readmeClusterRole(t)
	var role, file rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(raw, &role); err != nil {
		t.Fatalf("the README's ClusterRole: %v", err)
	}
	fileRaw, err := os.ReadFile("testdata/clusterrole.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(fileRaw, &file); err != nil {
		t.Fatalf("testdata/clusterrole.yaml: %v", err)
	}
	if !equality.Semantic.DeepEqual(role, file) {
		t.Fatalf("the README's ClusterRole and testdata/clusterrole.yaml differ:\nREADME: %+v\nfile:   %+v", role, file)
	}
	role.Name = e.ns + "-" + role.Name
	if _, err := e.client.RbacV1().ClusterRoles().Create(e.ctx, &role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	user, err := e.c.NewUser(e.ns + "-viewer")
	if err != nil {
		t.Fatal(err)
	}
	bind := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: user.Name}},
	}
	if _, err := e.client.RbacV1().ClusterRoleBindings().Create(e.ctx, bind, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.client.RbacV1().ClusterRoleBindings().Delete(e.ctx, bind.Name, metav1.DeleteOptions{})
		_ = e.client.RbacV1().ClusterRoles().Delete(e.ctx, role.Name, metav1.DeleteOptions{})
	})

	node := e.nodeName("n1")
	e.node(node, true)
	_, rs := e.deployment("web", 1, 1)
	e.pod(podSpec{name: "web-a", node: node, owner: &rs, status: podStatus(corev1.PodRunning, running("app", true, 0, nil))})

	w := startWatcher(t, user.Config, kube.Options{AllNamespaces: true})
	w.waitFor("everything synced, nothing forbidden", waitTimeout, func(m *model.Model, now time.Time) bool {
		h := m.Health()
		n, ok := nodeOf(m, now, node)
		return h.Synced && len(h.Forbidden) == 0 && ok && n.Known && n.Ready && verdictIs(e.ns+"/web-a", classify.Healthy)(m)
	})
	w.read(func(m *model.Model, _ time.Time) {
		if p := m.Pod(e.ns + "/web-a"); p.Owner != "Deployment/web" {
			t.Errorf("web-a owner = %q, want Deployment/web (ReplicaSets and Deployments readable)", p.Owner)
		}
	})

	snap := onceJSON(t, "--kubeconfig", user.Kubeconfig, "-A")
	if _, ok := snap.pod("web-a"); !ok {
		t.Errorf("--once -A: pod web-a missing")
	}
	if n, ok := snap.node(node); !ok || !n.Ready {
		t.Errorf("--once -A: node %s = %+v (found %v), want ready", node, n, ok)
	}
	found := false
	for _, r := range snap.Rollouts {
		found = found || (r.Namespace == e.ns && r.Name == "web" && r.Kind == "Deployment")
	}
	if !found {
		t.Errorf("--once -A: rollout %s/web missing from %+v", e.ns, snap.Rollouts)
	}
}

// assertOneLineError checks stderr is exactly one non-empty line mentioning one of want
// (case-insensitive; none given: anything): no klog noise, no stack, no usage dump.
func assertOneLineError(t *testing.T, r result, want ...string) {
	t.Helper()
	msg := strings.TrimRight(r.stderr, "\n")
	if msg == "" || strings.Contains(msg, "\n") {
		t.Errorf("stderr is not one line:\n%s", r)
		return
	}
	if len(want) == 0 {
		return
	}
	for _, w := range want {
		if strings.Contains(strings.ToLower(msg), strings.ToLower(w)) {
			return
		}
	}
	t.Errorf("stderr %q mentions none of %q", msg, want)
}

// readmeClusterRole returns the ```yaml block of ../README.md that holds the ClusterRole.
func readmeClusterRole(t *testing.T) []byte {
	t.Helper()
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range strings.Split(string(readme), "```yaml\n")[1:] {
		body, _, ok := strings.Cut(block, "```")
		if ok && strings.Contains(body, "kind: ClusterRole\n") {
			return []byte(body)
		}
	}
	t.Fatal("README.md has no ```yaml block with the ClusterRole")
	return nil
}
