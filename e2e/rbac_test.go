package e2e

import (
	"context"
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
	"doomwatch/contract"
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
		return h.Synced && slices.Contains(h.Forbidden, contract.KindNode) &&
			verdictIs(e.ns+"/web", classify.Healthy)(m) && verdictIs(e.ns+"/loop", classify.Doomed)(m)
	})
	w.read(func(m *model.Model, now time.Time) {
		h := m.Health()
		if slices.Contains(h.Forbidden, contract.KindPod) || h.WatchError != "" {
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
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(raw, &role); err != nil {
		t.Fatalf("the README's ClusterRole: %v", err)
	}
	file := documentedClusterRole(t)
	if !equality.Semantic.DeepEqual(role, file) {
		t.Fatalf("the README's ClusterRole and testdata/clusterrole.yaml differ:\nREADME: %+v\nfile:   %+v", role, file)
	}
	user := e.clusterViewer(&role)

	node := e.nodeName("n1")
	e.node(node, true)
	_, rs := e.deployment("web", 1, 1)
	webA := e.pod(podSpec{name: "web-a", node: node, owner: &rs, status: podStatus(corev1.PodRunning, running("app", true, 0, nil))})
	e.postEvent(readinessEvent(webA, node), webA, 0)

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
	if p, ok := snap.podIn(e.ns, "web-a"); !ok {
		t.Errorf("--once -A: pod web-a missing")
	} else if len(p.Events) != 1 || p.Events[0].Reason != "Unhealthy" {
		t.Errorf("--once -A: web-a's events = %+v, want its Unhealthy event (events readable)", p.Events)
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

// readinessEvent is the kubelet's Warning for a failed readiness probe of p's container app
// (kubernetes pkg/kubelet/prober/prober.go runProbeWithRetries: "Readiness probe failed: %s", here
// with the HTTP prober's "HTTP probe failed with statuscode: %d").
func readinessEvent(p *corev1.Pod, node string) corev1.Event {
	at := metav1.NewTime(time.Now().Truncate(time.Second))
	return corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: p.Name + ".readiness"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: p.Name, APIVersion: "v1", FieldPath: "spec.containers{app}"},
		Reason:         "Unhealthy", Message: "Readiness probe failed: HTTP probe failed with statuscode: 503",
		Type: corev1.EventTypeWarning, Count: 3, FirstTimestamp: at, LastTimestamp: at,
		Source: corev1.EventSource{Component: "kubelet", Host: node}, ReportingController: "kubelet", ReportingInstance: node,
	}
}

// TestRBACEventsForbidden: under the documented ClusterRole without events, doomwatch runs (--once
// exits 0), shows the pods without their events, and says events are forbidden; a pod that only
// its events would doom is judged by its status.
func TestRBACEventsForbidden(t *testing.T) {
	documented := documentedClusterRole(t)
	noEvents := documented.DeepCopy()
	removed := 0
	noEvents.Rules = slices.DeleteFunc(noEvents.Rules, func(r rbacv1.PolicyRule) bool {
		if slices.Contains(r.Resources, "events") {
			removed++
			return true
		}
		return false
	})
	if removed == 0 {
		t.Fatal("testdata/clusterrole.yaml grants no events: doomwatch shows and judges by them")
	}
	e := newEnv(t)
	user := e.clusterViewer(noEvents)
	node := e.nodeName("n1")
	e.node(node, true)
	p := e.pod(podSpec{name: "stuck-a", node: node, status: waitingForSandbox()})
	mount := readinessEvent(p, node)
	// Verbatim from netbox-community/netbox-chart#256 (classify fixture ev-sandbox-after-mount).
	mount.Name, mount.Reason, mount.InvolvedObject.FieldPath = p.Name+".mount", "FailedMount", ""
	mount.Message = `MountVolume.SetUp failed for volume "secrets" : secret "abc-netbox-superuser" not found`
	e.postEvent(mount, p, 0)

	if admin := onceJSON(t, "--kubeconfig", adminKubeconfig(t), "-n", e.ns); len(admin.Pods) != 1 || admin.Pods[0].Verdict != "doomed" {
		t.Fatalf("--once as admin: %+v, want stuck-a doomed by its FailedMount", admin.Pods)
	}
	snap := onceJSON(t, "--kubeconfig", user.Kubeconfig, "-n", e.ns)
	if !slices.Contains(snap.Health.Forbidden, "Event") || slices.Contains(snap.Health.Forbidden, "Pod") || !snap.Health.Synced {
		t.Errorf("--once without events: health = %+v, want synced with Event forbidden", snap.Health)
	}
	sp, ok := snap.pod("stuck-a")
	if !ok || len(sp.Events) != 0 || sp.Verdict != "progressing" {
		t.Errorf("--once without events: stuck-a = %+v, want progressing (judged by its status) and no events", sp)
	}
	r := runDoomwatch(t, time.Minute, nil, "--once", "--request-timeout=20s", "--kubeconfig", user.Kubeconfig, "-n", e.ns)
	if r.code != 0 || !strings.Contains(r.stdout, "forbidden by RBAC (not shown): Event") {
		t.Errorf("--once (table) without events: want exit 0 and the forbidden line:\n%s", r)
	}
}

// clusterViewer creates a copy of role named after the test's namespace, binds a new user to it
// cluster-wide, and returns the user.
func (e *env) clusterViewer(role *rbacv1.ClusterRole) *User {
	e.t.Helper()
	role = role.DeepCopy()
	role.Name = e.ns + "-" + role.Name
	if _, err := e.client.RbacV1().ClusterRoles().Create(e.ctx, role, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	user, err := e.c.NewUser(e.ns + "-viewer")
	if err != nil {
		e.t.Fatal(err)
	}
	bind := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: user.Name}},
	}
	if _, err := e.client.RbacV1().ClusterRoleBindings().Create(e.ctx, bind, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		_ = e.client.RbacV1().ClusterRoleBindings().Delete(context.Background(), bind.Name, metav1.DeleteOptions{})
		_ = e.client.RbacV1().ClusterRoles().Delete(context.Background(), role.Name, metav1.DeleteOptions{})
	})
	return user
}

// documentedClusterRole reads testdata/clusterrole.yaml.
// withoutResource is role with resource taken out of its rules; the test fails when role does not
// grant it.
func withoutResource(t *testing.T, role rbacv1.ClusterRole, resource string) *rbacv1.ClusterRole {
	t.Helper()
	out := role.DeepCopy()
	removed := 0
	for i := range out.Rules {
		r := &out.Rules[i]
		kept := r.Resources[:0]
		for _, res := range r.Resources {
			if res == resource {
				removed++
				continue
			}
			kept = append(kept, res)
		}
		r.Resources = kept
	}
	out.Rules = slices.DeleteFunc(out.Rules, func(r rbacv1.PolicyRule) bool { return len(r.Resources) == 0 })
	if removed == 0 {
		t.Fatalf("testdata/clusterrole.yaml grants no %s: doomwatch needs it", resource)
	}
	return out
}

func documentedClusterRole(t *testing.T) rbacv1.ClusterRole {
	t.Helper()
	raw, err := os.ReadFile("testdata/clusterrole.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(raw, &role); err != nil {
		t.Fatalf("testdata/clusterrole.yaml: %v", err)
	}
	return role
}

// TestRBACWaitPodsLog: under the documented ClusterRole, `doomwatch wait` prints a crashed
// container's previous log, fetched through pods/log. Under a copy of it without pods/log, the
// gate still fails the doomed rollout with the reasons, and says in one line why there is no log;
// the kubelet is never asked.
func TestRBACWaitPodsLog(t *testing.T) {
	documented := documentedClusterRole(t)
	noLog := withoutResource(t, documented, "pods/log")
	for _, tc := range []struct {
		name string
		role *rbacv1.ClusterRole
		logs bool
	}{
		{"documented", &documented, true},
		{"without pods/log", noLog, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			user := e.clusterViewer(tc.role)
			kubelet := e.crashLoopWithLog()

			r := runDoomwatch(t, waitLimit, nil, "wait", "deployment/web", "-n", e.ns, "--request-timeout=10s", "--kubeconfig", user.Kubeconfig)
			if r.code != 1 || r.timedOut {
				t.Fatalf("want exit 1: %s", r)
			}
			lines := strings.Split(r.stdout, "\n")
			at := slices.IndexFunc(lines, func(l string) bool { return l == "web-a/app: Crashing repeatedly (exit 1)" })
			if !strings.Contains(r.stdout, "deployment/web is doomed: 1/1 new pods doomed: Crashing repeatedly (exit 1)\n") ||
				at < 0 || at+2 >= len(lines) {
				t.Fatalf("stdout lacks the doomed reasons:\n%s", r)
			}
			next := lines[at+1]
			reqs := kubelet.requests()
			if tc.logs {
				if next != "  last 3 lines of web-a/app's previous log:" || len(reqs) != 1 {
					t.Errorf("want the previous log under web-a/app, fetched once (%d requests):\n%s", len(reqs), r)
				}
				return
			}
			want := "  (no log: not allowed to get pods/log in " + e.ns + ": "
			if !strings.HasPrefix(next, want) || strings.HasPrefix(lines[at+2], "    ") {
				t.Errorf("want one line starting %q under web-a/app:\n%s", want, r)
			}
			if len(reqs) != 0 {
				t.Errorf("the kubelet was asked for logs the user may not read: %v", reqs)
			}
		})
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
