package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// doomwatch across several kubeconfig contexts (--context a,b,c, globs) against three real API
// servers: the suite's cluster is fleet-eu, and TestFleet starts two more, fleet-us and fleet-ap
// (etcd and kube-apiserver each, on loopback), once for all its subtests, and stops them at its
// end. As everywhere in the suite no controller-manager or kubelet runs: the tests write nodes,
// pods and rollout statuses as the kubelet and the controllers would (env, kubelet_test.go), for
// the same reasons, and each cluster gets the same namespace name so that one -n selects it in
// every context.

// fleetContexts are the three clusters' contexts, in the order the tests name them.
var fleetContexts = []string{"fleet-eu", "fleet-us", "fleet-ap"}

// fleetReader is the user of context reader-us: RBAC grants it nothing until a test binds it.
const fleetReader = "fleet-reader"

// fleetFixture is the three clusters and the credentials the fleet's kubeconfigs are made of.
type fleetFixture struct {
	clusters map[string]*Cluster // by context
	admins   map[string]leaf     // each context's system:masters certificate, from its cluster's CA
	reader   leaf                // fleetReader's certificate on fleet-us's cluster
}

// TestFleet runs the fleet's subtests on three clusters.
func TestFleet(t *testing.T) {
	f := startFleet(t, needCluster(t))
	t.Run("merged snapshot", f.testMergedSnapshot)
	t.Run("each context's namespace", f.testOwnNamespaces)
	t.Run("glob", f.testGlob)
	t.Run("suspects in two clusters", f.testSuspects)
	t.Run("wait", f.testWait)
	t.Run("rbac", f.testRBAC)
	t.Run("unreachable cluster", f.testUnreachable)
}

// startFleet starts fleet-us's and fleet-ap's servers side by side (each takes tens of seconds on
// two cores) and stops them when t ends.
func startFleet(t *testing.T, eu *Cluster) *fleetFixture {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*startupTimeout)
	defer cancel()
	started := time.Now()
	names := fleetContexts[1:]
	cs := make([]*Cluster, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		dir := filepath.Join(suiteDir, name)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			cs[i], errs[i] = StartCluster(ctx, os.Getenv("DOOMWATCH_K8S_BIN"), dir)
			if errs[i] != nil {
				errs[i] = fmt.Errorf("%s: %w", name, errs[i])
			}
		}()
	}
	wg.Wait()
	f := &fleetFixture{clusters: map[string]*Cluster{fleetContexts[0]: eu}, admins: map[string]leaf{}}
	for i, c := range cs {
		if c == nil {
			continue
		}
		f.clusters[names[i]] = c
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("%s's servers:\n%s", names[i], c.Logs(30))
			}
			c.Stop()
		})
	}
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("starting the fleet's clusters: %v", err)
	}
	t.Logf("fleet-us and fleet-ap ready in %s", time.Since(started).Round(time.Millisecond))
	for _, name := range fleetContexts {
		l, err := f.clusters[name].ca.issue(certSpec{commonName: "fleet-admin", groups: []string{"system:masters"}})
		if err != nil {
			t.Fatal(err)
		}
		f.admins[name] = l
	}
	l, err := f.clusters["fleet-us"].ca.issue(certSpec{commonName: fleetReader})
	if err != nil {
		t.Fatal(err)
	}
	f.reader = l
	return f
}

// kubeconfig writes a kubeconfig that holds every context of the fleet, each with namespace ns[its
// name] as its default (none when absent), and returns its path. Its contexts: fleet-eu, fleet-us
// and fleet-ap as system:masters; lab-eu, fleet-eu's cluster again under a name the globs
// must not pick; and reader-us, fleetReader on fleet-us's cluster. The current context is
// fleet-eu.
func (f *fleetFixture) kubeconfig(t *testing.T, ns map[string]string) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	add := func(name string, c *Cluster, l leaf) {
		kc.Clusters[name] = &clientcmdapi.Cluster{Server: c.Host, CertificateAuthorityData: c.ca.certPEM}
		kc.AuthInfos[name] = &clientcmdapi.AuthInfo{ClientCertificateData: l.certPEM, ClientKeyData: l.keyPEM}
		kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name, Namespace: ns[name]}
	}
	for _, name := range fleetContexts {
		add(name, f.clusters[name], f.admins[name])
	}
	add("lab-eu", f.clusters["fleet-eu"], f.admins["fleet-eu"])
	add("reader-us", f.clusters["fleet-us"], f.reader)
	kc.CurrentContext = fleetContexts[0]
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// fleetEnv is one test's namespace in each of the fleet's clusters, under one name.
type fleetEnv struct {
	ns string
	// in are the namespace's envs by context; fleet-eu's is the suite cluster's newEnv.
	in         map[string]*env
	kubeconfig string // f.kubeconfig with no default namespaces
}

func (f *fleetFixture) newEnv(t *testing.T) *fleetEnv {
	t.Helper()
	e := newEnv(t)
	fe := &fleetEnv{ns: e.ns, in: map[string]*env{fleetContexts[0]: e}, kubeconfig: f.kubeconfig(t, nil)}
	for _, name := range fleetContexts[1:] {
		fe.in[name] = envIn(t, e.ctx, f.clusters[name], e.ns)
	}
	return fe
}

// envIn creates namespace ns in cluster c and returns its env.
func envIn(t *testing.T, ctx context.Context, c *Cluster, ns string) *env {
	t.Helper()
	e := &env{t: t, c: c, ctx: ctx, ns: ns, client: c.AdminClient}
	if _, err := e.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s at %s: %v", ns, c.Host, err)
	}
	return e
}

// fleetSnap is `doomwatch --once -o json` across several contexts: the snapshot (snapshot_test.go)
// with each object's context, clusters[] and spreads[].
type fleetSnap struct {
	Context       string         `json:"context"`
	Pods          []fleetPod     `json:"pods"`
	Nodes         []fleetNode    `json:"nodes"`
	Rollouts      []fleetRollout `json:"rollouts"`
	SuspectsShare []string       `json:"suspectsShare"`
	Clusters      []fleetCluster `json:"clusters"`
	Spreads       []fleetSpread  `json:"spreads"`
}

type fleetPod struct {
	Context string `json:"context"`
	snapPod
}

type fleetNode struct {
	Context string `json:"context"`
	Known   bool   `json:"known"`
	snapNode
	NodeInfo struct {
		Runtime string `json:"containerRuntimeVersion"`
	} `json:"nodeInfo"`
}

type fleetRollout struct {
	Context string `json:"context"`
	snapRollout
}

type fleetCluster struct {
	Context   string   `json:"context"`
	Server    string   `json:"server"`
	Synced    bool     `json:"synced"`
	Error     string   `json:"error"`
	Forbidden []string `json:"forbidden"`
}

type fleetSpread struct {
	Workload string `json:"workload"`
	Verdicts []struct {
		Context string `json:"context"`
		Verdict string `json:"verdict"`
	} `json:"verdicts"`
	Line string `json:"line"`
}

// fleetOnce runs `doomwatch --once -o json` with args and decodes what it printed; the caller
// judges the exit code. A run that printed nothing has the zero snapshot.
func fleetOnce(t *testing.T, args ...string) (result, fleetSnap) {
	t.Helper()
	r := runDoomwatch(t, time.Minute, nil, append([]string{"--once", "-o", "json"}, args...)...)
	var s fleetSnap
	if strings.TrimSpace(r.stdout) == "" {
		return r, s
	}
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		t.Fatalf("decoding --once -o json: %v\n%s", err, r)
	}
	checkSchema(t, r.stdout)
	checkFleetSchema(t, r.stdout)
	return r, s
}

// The keys a snapshot across several contexts adds to the documented schema.
var (
	fleetSchemaCluster = []string{"context", "server", "synced", "error", "forbidden"}
	fleetSchemaSpread  = []string{"workload", "verdicts", "line"}
	fleetSchemaVerdict = []string{"context", "verdict"}
)

// checkFleetSchema fails when a pod, node or rollout does not name its context, or clusters[] or
// spreads[] lack a key.
func checkFleetSchema(t *testing.T, out string) {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("decoding --once -o json: %v", err)
	}
	has := func(where string, obj any, keys []string) map[string]any { return schemaObject(t, where, obj, keys) }
	for _, kind := range []string{"pods", "nodes", "rollouts"} {
		l, _ := doc[kind].([]any)
		for _, o := range l {
			if m, _ := o.(map[string]any); m["context"] == nil || m["context"] == "" {
				t.Errorf("%s %v has no context", kind, m["name"])
			}
		}
	}
	cs, ok := doc["clusters"].([]any)
	if !ok {
		t.Errorf("clusters is %T, want a list with several contexts", doc["clusters"])
	}
	for _, c := range cs {
		if m := has("cluster", c, fleetSchemaCluster); m != nil {
			if _, ok := m["forbidden"].([]any); !ok {
				t.Errorf("cluster %v: forbidden is %T, want a list", m["context"], m["forbidden"])
			}
		}
	}
	sps, _ := doc["spreads"].([]any)
	for _, sp := range sps {
		m := has("spread", sp, fleetSchemaSpread)
		vs, _ := m["verdicts"].([]any)
		for _, v := range vs {
			has("spread verdict", v, fleetSchemaVerdict)
		}
	}
}

func (s fleetSnap) pod(context, name string) (fleetPod, bool) {
	for _, p := range s.Pods {
		if p.Context == context && p.Name == name {
			return p, true
		}
	}
	return fleetPod{}, false
}

// nodes are the entries of the nodes named name, in the snapshot's order.
func (s fleetSnap) nodes(name string) []fleetNode {
	var out []fleetNode
	for _, n := range s.Nodes {
		if n.Name == name {
			out = append(out, n)
		}
	}
	return out
}

func (s fleetSnap) cluster(context string) (fleetCluster, bool) {
	for _, c := range s.Clusters {
		if c.Context == context {
			return c, true
		}
	}
	return fleetCluster{}, false
}

func (s fleetSnap) clusterContexts() []string {
	out := make([]string, len(s.Clusters))
	for i, c := range s.Clusters {
		out[i] = c.Context
	}
	return out
}

// podsOf are the names of the pods of one context, in the snapshot's order.
func (s fleetSnap) podsOf(context string) []string {
	var out []string
	for _, p := range s.Pods {
		if p.Context == context {
			out = append(out, p.Namespace+"/"+p.Name)
		}
	}
	return out
}

// testMergedSnapshot: three clusters hold pods, a node and a Deployment of the same names, each in
// a state of its own (fleet-us's web crash-loops). One --once across the three keeps each object
// with its cluster: no pod, node or rollout is merged with its namesake or given another's state.
func (f *fleetFixture) testMergedSnapshot(t *testing.T) {
	fe := f.newEnv(t)
	short := map[string]string{"fleet-eu": "eu", "fleet-us": "us", "fleet-ap": "ap"}
	node := fe.in["fleet-eu"].nodeName("n1") // the same name in every cluster
	for _, name := range fleetContexts {
		e := fe.in[name]
		e.node(node, true)
		doomed := name == "fleet-us"
		ready := int32(1)
		st := podStatus(corev1.PodRunning, running("app", true, 0, nil))
		if doomed {
			ready, st = 0, crashLooping("web-a", e.ns, 1)
		}
		_, rs := e.deployment("web", 1, ready)
		e.pod(podSpec{name: "web-a", node: node, owner: &rs, status: st})
		e.pod(podSpec{name: "only-" + short[name], node: node, status: podStatus(corev1.PodRunning, running("app", true, 0, nil))})
	}

	r, s := fleetOnce(t, "--kubeconfig", fe.kubeconfig, "--context", strings.Join(fleetContexts, ","), "-n", fe.ns, "--request-timeout=20s")
	if r.code != 0 {
		t.Fatalf("--once across three contexts: %s", r)
	}
	if want := strings.Join(fleetContexts, ","); s.Context != want {
		t.Errorf("context = %q, want %q", s.Context, want)
	}
	if got := s.clusterContexts(); !slices.Equal(got, fleetContexts) {
		t.Errorf("clusters[] = %q, want %q in that order", got, fleetContexts)
	}
	for _, name := range fleetContexts {
		c, _ := s.cluster(name)
		if c.Server != f.clusters[name].Host || !c.Synced || c.Error != "" || len(c.Forbidden) != 0 {
			t.Errorf("clusters[%s] = %+v, want server %s, synced, no error, nothing forbidden", name, c, f.clusters[name].Host)
		}
		want := []string{fe.ns + "/only-" + short[name], fe.ns + "/web-a"}
		if got := s.podsOf(name); !slices.Equal(got, want) {
			t.Errorf("%s's pods = %q, want %q", name, got, want)
		}
		wantVerdict := "healthy"
		if name == "fleet-us" {
			wantVerdict = "doomed"
		}
		if p, _ := s.pod(name, "web-a"); p.Verdict != wantVerdict || p.Node != node {
			t.Errorf("%s's web-a: verdict %q on node %q, want %s on %s", name, p.Verdict, p.Node, wantVerdict, node)
		}
	}
	if len(s.Pods) != 6 {
		t.Errorf("%d pods, want 6 (two per cluster): %+v", len(s.Pods), s.Pods)
	}

	// One node of that name per cluster, each with its own pods: fleet-us's has the doomed one.
	nodes := s.nodes(node)
	var ctxs []string
	for _, n := range nodes {
		ctxs = append(ctxs, n.Context)
		failing := 0
		if n.Context == "fleet-us" {
			failing = 1
		}
		if !n.Ready || n.Pods != 2 || n.FailingPods != failing {
			t.Errorf("node %s in %s: ready %v, %d pods, %d failing; want ready, 2 pods, %d failing", node, n.Context, n.Ready, n.Pods, n.FailingPods, failing)
		}
	}
	if !slices.Equal(ctxs, fleetContexts) {
		t.Errorf("node %s is in %q, want once in each of %q", node, ctxs, fleetContexts)
	}

	var rollouts []string
	for _, ro := range s.Rollouts {
		rollouts = append(rollouts, ro.Context+" "+ro.Namespace+"/"+ro.Kind+"/"+ro.Name+" "+ro.Verdict)
	}
	wantRollouts := []string{
		"fleet-eu " + fe.ns + "/Deployment/web complete",
		"fleet-us " + fe.ns + "/Deployment/web doomed",
		"fleet-ap " + fe.ns + "/Deployment/web complete",
	}
	if !slices.Equal(rollouts, wantRollouts) {
		t.Errorf("rollouts = %q, want %q", rollouts, wantRollouts)
	}
	// The Deployment in three clusters is one spread, its verdict per cluster in the fleet's order.
	wantLine := fe.ns + "/Deployment/web: doomed in fleet-us; complete in fleet-eu, fleet-ap"
	if len(s.Spreads) != 1 || s.Spreads[0].Workload != fe.ns+"/Deployment/web" || s.Spreads[0].Line != wantLine {
		t.Fatalf("spreads = %+v, want one for %s/Deployment/web with line %q", s.Spreads, fe.ns, wantLine)
	}
	var verdicts []string
	for _, v := range s.Spreads[0].Verdicts {
		verdicts = append(verdicts, v.Context+"="+v.Verdict)
	}
	if want := []string{"fleet-eu=complete", "fleet-us=doomed", "fleet-ap=complete"}; !slices.Equal(verdicts, want) {
		t.Errorf("spread verdicts = %q, want %q", verdicts, want)
	}
}

// testOwnNamespaces: without -n, each context watches the namespace its kubeconfig entry names,
// as kubectl would in that context: fleet-us's points elsewhere, and only that namespace's pod
// is shown for it.
func (f *fleetFixture) testOwnNamespaces(t *testing.T) {
	fe := f.newEnv(t)
	other := envIn(t, fe.in["fleet-us"].ctx, f.clusters["fleet-us"], fe.ns+"-b")
	for _, name := range fleetContexts {
		fe.in[name].pod(podSpec{name: "web-a", status: podStatus(corev1.PodRunning, running("app", true, 0, nil))})
	}
	other.pod(podSpec{name: "elsewhere", status: podStatus(corev1.PodRunning, running("app", true, 0, nil))})
	kc := f.kubeconfig(t, map[string]string{"fleet-eu": fe.ns, "fleet-us": other.ns, "fleet-ap": fe.ns})

	r, s := fleetOnce(t, "--kubeconfig", kc, "--context", strings.Join(fleetContexts, ","), "--request-timeout=20s")
	if r.code != 0 {
		t.Fatalf("--once: %s", r)
	}
	want := map[string][]string{
		"fleet-eu": {fe.ns + "/web-a"},
		"fleet-us": {other.ns + "/elsewhere"},
		"fleet-ap": {fe.ns + "/web-a"},
	}
	for _, name := range fleetContexts {
		if got := s.podsOf(name); !slices.Equal(got, want[name]) {
			t.Errorf("%s's pods = %q, want %q (its kubeconfig namespace's)", name, got, want[name])
		}
	}
}

// testGlob: a glob picks the kubeconfig's matching contexts in sorted order, a list keeps its
// order and names each context once, and a glob that matches nothing is a one-line error before
// any cluster is asked.
func (f *fleetFixture) testGlob(t *testing.T) {
	fe := f.newEnv(t)
	for _, name := range fleetContexts {
		fe.in[name].pod(podSpec{name: "web-a", status: podStatus(corev1.PodRunning, running("app", true, 0, nil))})
	}
	for _, tc := range []struct {
		spec string
		want []string
	}{
		// lab-eu and reader-us are in the kubeconfig too; the glob must not pick them.
		{"fleet-*", []string{"fleet-ap", "fleet-eu", "fleet-us"}},
		{"fleet-us,fleet-*", []string{"fleet-us", "fleet-ap", "fleet-eu"}},
		{"fleet-[ae]?", []string{"fleet-ap", "fleet-eu"}},
	} {
		r, s := fleetOnce(t, "--kubeconfig", fe.kubeconfig, "--context", tc.spec, "-n", fe.ns, "--request-timeout=20s")
		if r.code != 0 {
			t.Errorf("--context %q: %s", tc.spec, r)
			continue
		}
		if got := s.clusterContexts(); s.Context != strings.Join(tc.want, ",") || !slices.Equal(got, tc.want) {
			t.Errorf("--context %q: context %q, clusters %q; want %q", tc.spec, s.Context, got, tc.want)
		}
		var podCtxs []string
		for _, p := range s.Pods {
			podCtxs = append(podCtxs, p.Context)
		}
		if !slices.Equal(podCtxs, tc.want) {
			t.Errorf("--context %q: the pods' contexts are %q, want one web-a from each of %q", tc.spec, podCtxs, tc.want)
		}
		for _, c := range s.Clusters {
			if c.Server != f.clusters[c.Context].Host || !c.Synced {
				t.Errorf("--context %q: %+v, want synced at %s", tc.spec, c, f.clusters[c.Context].Host)
			}
		}
	}

	r := runDoomwatch(t, time.Minute, nil, "--once", "-o", "json", "--kubeconfig", fe.kubeconfig, "--context", "prod-*", "-n", fe.ns)
	if r.code != 1 || r.timedOut {
		t.Errorf("--context 'prod-*': want exit 1: %s", r)
	}
	assertOneLineError(t, r, `no context matches "prod-*" (the kubeconfig has fleet-ap, fleet-eu, fleet-us, lab-eu, reader-us)`)
	if r.stdout != "" {
		t.Errorf("--context 'prod-*': stdout should be empty, got %q", r.stdout)
	}
}

// testSuspects: in fleet-eu and fleet-us one node each, running containerd 2.2.0, sees three pods
// fail to start with exit 128 (each cluster with runtime messages of its own); their other nodes
// run 2.1.4, and fleet-ap, where nothing fails, has one 2.2.0 node among its 2.1.4 ones. Each
// cluster judges its own suspect, and the fleet-wide sentence comes first: both suspects run
// 2.2.0, which 1 of the fleet's other nodes (fleet-ap's) does.
func (f *fleetFixture) testSuspects(t *testing.T) {
	fe := f.newEnv(t)
	const bad, good = "containerd://2.2.0", "containerd://2.1.4"
	msgs := map[string][]string{
		"fleet-eu": {runtimeHiccup, cgroupENOENT, runtimeHiccup},
		"fleet-us": {nodeMessages["shim-io-timeout"], nodeMessages["ns-lstat-enoent"], nodeMessages["shim-timeout"]},
	}
	flaky := fe.in["fleet-eu"].nodeName("flaky")
	calmA, calmB := fe.in["fleet-eu"].nodeName("calm-a"), fe.in["fleet-eu"].nodeName("calm-b")
	for _, name := range fleetContexts {
		e := fe.in[name]
		_, owner := e.deployment("web", 4, 1)
		if name == "fleet-ap" {
			e.nodeWith(calmA, bad, "ap-southeast-1a")
			e.nodeWith(calmB, good, "ap-southeast-1b")
			e.pod(podSpec{name: "web-ok", node: calmA, owner: &owner, status: podStatus(corev1.PodRunning, running("app", true, 0, nil))})
			continue
		}
		e.nodeWith(flaky, bad, "eu-west-1a")
		e.nodeWith(calmA, good, "eu-west-1a")
		e.nodeWith(calmB, good, "eu-west-1b")
		for i, msg := range msgs[name] {
			fail := term("StartError", 128, msg, time.Duration(20+5*i)*time.Second)
			e.pod(podSpec{name: fmt.Sprintf("web-%d", i), node: flaky, owner: &owner,
				status: podStatus(corev1.PodPending, terminatedStatus("app", 0, fail, nil))})
		}
		e.pod(podSpec{name: "web-ok", node: calmA, owner: &owner, status: podStatus(corev1.PodRunning, running("app", true, 0, nil))})
	}

	r, s := fleetOnce(t, "--kubeconfig", fe.kubeconfig, "--context", strings.Join(fleetContexts, ","), "-n", fe.ns, "--request-timeout=20s")
	if r.code != 0 {
		t.Fatalf("--once: %s", r)
	}
	for _, name := range fleetContexts[:2] {
		for i := range msgs[name] {
			if p, ok := s.pod(name, fmt.Sprintf("web-%d", i)); !ok || p.Verdict != "transient" {
				t.Errorf("%s's web-%d = %+v, want transient (the runtime's trouble)", name, i, p)
			}
		}
	}
	var suspects []string
	others := 0 // the nodes not suspect whose runtime is known, across the fleet
	for _, n := range s.Nodes {
		switch {
		case n.Suspect:
			suspects = append(suspects, n.Context+"/"+n.Name)
		case n.Known && n.NodeInfo.Runtime != "":
			others++
		}
	}
	if want := []string{"fleet-eu/" + flaky, "fleet-us/" + flaky}; !slices.Equal(suspects, want) {
		t.Errorf("suspect nodes %q, want %q", suspects, want)
	}
	// The suite's cluster may hold other tests' nodes; those with a runtime count as others too.
	if others < 6 {
		t.Errorf("%d nodes not suspect with a runtime, want at least the test's 6", others)
	}
	want := fmt.Sprintf("the 2 suspect nodes of 2 clusters (fleet-eu, fleet-us) both run %s (1 of %d others does)", bad, others)
	if len(s.SuspectsShare) == 0 || s.SuspectsShare[0] != want {
		t.Errorf("suspectsShare = %q, want the fleet's sentence first: %q", s.SuspectsShare, want)
	}
	for _, name := range fleetContexts[:2] {
		own := name + ": " + flaky + " runs " + bad + " (0 of 2 others do)"
		if !slices.Contains(s.SuspectsShare, own) {
			t.Errorf("suspectsShare = %q, want %q among them", s.SuspectsShare, own)
		}
	}
	for _, l := range s.SuspectsShare {
		if strings.HasPrefix(l, "fleet-ap: ") {
			t.Errorf("suspectsShare has %q, but fleet-ap has no suspect", l)
		}
	}
}

// waitDocFleet is `doomwatch wait -o json` across several contexts: each workload's context, and
// the verdict per context.
type waitDocFleet struct {
	Verdict   string `json:"verdict"`
	ExitCode  int    `json:"exitCode"`
	Workloads []struct {
		Context string `json:"context"`
		waitWorkload
	} `json:"workloads"`
	Clusters []struct {
		Context string `json:"context"`
		Verdict string `json:"verdict"`
	} `json:"clusters"`
}

// testWait: `doomwatch wait` across three contexts exits 0 when the Deployment is complete in each,
// and 1 when it is doomed in one (naming that context) or missing from one.
func (f *fleetFixture) testWait(t *testing.T) {
	contexts := strings.Join(fleetContexts, ",")
	// setup writes Deployment web in each cluster, complete with one ready pod, except where
	// state says otherwise: "doomed" (its one pod crash-loops) or "missing".
	setup := func(t *testing.T, state map[string]string) *fleetEnv {
		fe := f.newEnv(t)
		for _, name := range fleetContexts {
			e := fe.in[name]
			node := e.nodeName("n1")
			e.node(node, true)
			switch state[name] {
			case "missing":
			case "doomed":
				_, rs := e.deployment("web", 1, 0)
				e.pod(podSpec{name: "web-a", node: node, owner: &rs, status: crashLooping("web-a", e.ns, 1)})
			default:
				_, rs := e.deployment("web", 1, 1)
				e.pod(podSpec{name: "web-a", node: node, owner: &rs, status: podStatus(corev1.PodRunning, running("app", true, 0, nil))})
			}
		}
		return fe
	}
	args := func(fe *fleetEnv, extra ...string) []string {
		return append([]string{"wait", "deploy/web", "--context", contexts, "-n", fe.ns, "--request-timeout=20s",
			"--timeout=40s", "--kubeconfig", fe.kubeconfig}, extra...)
	}

	t.Run("complete everywhere", func(t *testing.T) {
		fe := setup(t, nil)
		r := runDoomwatch(t, waitLimit, nil, args(fe)...)
		if r.code != 0 {
			t.Fatalf("want exit 0: %s", r)
		}
		for _, name := range fleetContexts {
			if want := "deployment/web in " + name + `: deployment "web" successfully rolled out`; !strings.Contains(r.stdout, want) {
				t.Errorf("stdout lacks %q:\n%s", want, r)
			}
		}
	})

	t.Run("doomed in one", func(t *testing.T) {
		fe := setup(t, map[string]string{"fleet-ap": "doomed"})
		r := runDoomwatch(t, waitLimit, nil, args(fe)...)
		if r.code != 1 || r.timedOut {
			t.Fatalf("want exit 1: %s", r)
		}
		for _, want := range []string{
			"deployment/web in fleet-ap is doomed: 1/1 new pods doomed: Crashing repeatedly (exit 1)\n",
			"\nweb-a/app in fleet-ap: Crashing repeatedly (exit 1)\n",
		} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("stdout lacks %q:\n%s", want, r)
			}
		}
		for _, name := range fleetContexts[:2] {
			if strings.Contains(r.stdout, "web in "+name+" is doomed") {
				t.Errorf("stdout calls %s's rollout doomed:\n%s", name, r)
			}
		}

		r = runDoomwatch(t, waitLimit, nil, args(fe, "-o", "json")...)
		var doc waitDocFleet
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
			t.Fatalf("decoding wait -o json: %v\n%s", err, r)
		}
		checkWaitSchema(t, r.stdout)
		if r.code != 1 || doc.Verdict != "doomed" || doc.ExitCode != 1 {
			t.Errorf("-o json: exit %d, verdict %q, exitCode %d; want 1, doomed, 1:\n%s", r.code, doc.Verdict, doc.ExitCode, r)
		}
		var workloads []string
		for _, w := range doc.Workloads {
			workloads = append(workloads, w.Context+" "+w.Name+" "+w.Verdict)
		}
		if want := []string{"fleet-eu web complete", "fleet-us web complete", "fleet-ap web doomed"}; !slices.Equal(workloads, want) {
			t.Errorf("-o json workloads = %q, want %q", workloads, want)
		}
		var clusters []string
		for _, c := range doc.Clusters {
			clusters = append(clusters, c.Context+"="+c.Verdict)
		}
		if want := []string{"fleet-eu=complete", "fleet-us=complete", "fleet-ap=doomed"}; !slices.Equal(clusters, want) {
			t.Errorf("-o json clusters = %q, want %q", clusters, want)
		}
	})

	t.Run("missing in one", func(t *testing.T) {
		fe := setup(t, map[string]string{"fleet-us": "missing"})
		r := runDoomwatch(t, waitLimit, nil, args(fe)...)
		if r.code != 1 || r.timedOut {
			t.Fatalf("want exit 1: %s", r)
		}
		assertOneLineError(t, r, "context fleet-us: deployment/web not found in namespace "+fe.ns)

		// -o json has every context, the ones after the missing one too.
		r = runDoomwatch(t, waitLimit, nil, args(fe, "-o", "json")...)
		var doc waitDocFleet
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
			t.Fatalf("decoding wait -o json: %v\n%s", err, r)
		}
		checkWaitSchema(t, r.stdout)
		var clusters []string
		for _, c := range doc.Clusters {
			clusters = append(clusters, c.Context+"="+c.Verdict)
		}
		if want := []string{"fleet-eu=complete", "fleet-us=missing", "fleet-ap=complete"}; r.code != 1 || !slices.Equal(clusters, want) {
			t.Errorf("-o json: exit %d, clusters %q; want 1, %q:\n%s", r.code, clusters, want, r)
		}
	})

	t.Run("missing in two", func(t *testing.T) {
		fe := setup(t, map[string]string{"fleet-us": "missing", "fleet-ap": "missing"})
		r := runDoomwatch(t, waitLimit, nil, args(fe)...)
		if r.code != 1 || r.timedOut {
			t.Fatalf("want exit 1: %s", r)
		}
		assertOneLineError(t, r, "context fleet-us: deployment/web not found in namespace "+fe.ns+
			"; context fleet-ap: deployment/web not found in namespace "+fe.ns)
	})
}

// testRBAC: reader-us's user may list and watch pods in one namespace only. With -n that namespace
// the fleet shows its pods beside fleet-eu's, and the kinds it may not read are forbidden in its
// cluster alone; in a namespace where it may read nothing, its cluster says pods are forbidden,
// and fleet-eu's part is whole.
func (f *fleetFixture) testRBAC(t *testing.T) {
	fe := f.newEnv(t)
	us := fe.in["fleet-us"]
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "pod-reader", Namespace: fe.ns},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list", "watch"}}},
	}
	if _, err := us.client.RbacV1().Roles(fe.ns).Create(us.ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bind := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "pod-reader", Namespace: fe.ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "pod-reader"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: fleetReader}},
	}
	if _, err := us.client.RbacV1().RoleBindings(fe.ns).Create(us.ctx, bind, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"fleet-eu", "fleet-us"} {
		fe.in[name].pod(podSpec{name: "web-a", status: podStatus(corev1.PodRunning, running("app", true, 0, nil))})
	}
	eu := fe.in["fleet-eu"]
	elsewhere := envIn(t, eu.ctx, f.clusters["fleet-eu"], fe.ns+"-b")
	envIn(t, us.ctx, f.clusters["fleet-us"], elsewhere.ns)
	elsewhere.pod(podSpec{name: "web-b", status: podStatus(corev1.PodRunning, running("app", true, 0, nil))})

	t.Run("its namespace", func(t *testing.T) {
		r, s := fleetOnce(t, "--kubeconfig", fe.kubeconfig, "--context", "fleet-eu,reader-us", "-n", fe.ns, "--request-timeout=20s")
		if r.code != 0 {
			t.Fatalf("--once: %s", r)
		}
		for _, name := range []string{"fleet-eu", "reader-us"} {
			if p, ok := s.pod(name, "web-a"); !ok || p.Verdict != "healthy" {
				t.Errorf("%s's web-a = %+v (found %v), want healthy", name, p, ok)
			}
		}
		rc, _ := s.cluster("reader-us")
		if !rc.Synced || slices.Contains(rc.Forbidden, "Pod") || !slices.Contains(rc.Forbidden, "Node") || !slices.Contains(rc.Forbidden, "Deployment") {
			t.Errorf("clusters[reader-us] = %+v, want synced with nodes and deployments forbidden, pods allowed", rc)
		}
		if ec, _ := s.cluster("fleet-eu"); !ec.Synced || len(ec.Forbidden) != 0 || ec.Error != "" {
			t.Errorf("clusters[fleet-eu] = %+v, want synced with nothing forbidden: reader-us's RBAC is its own", ec)
		}
		for _, n := range s.Nodes {
			if n.Context == "reader-us" && n.Known {
				t.Errorf("reader-us's node %s is known although nodes are forbidden there", n.Name)
			}
		}
	})

	t.Run("no rights", func(t *testing.T) {
		r, s := fleetOnce(t, "--kubeconfig", fe.kubeconfig, "--context", "fleet-eu,reader-us", "-n", elsewhere.ns, "--request-timeout=20s")
		rc, _ := s.cluster("reader-us")
		if !slices.Contains(rc.Forbidden, "Pod") {
			t.Errorf("clusters[reader-us] = %+v, want pods forbidden:\n%s", rc, r)
		}
		if got := s.podsOf("fleet-eu"); !slices.Equal(got, []string{elsewhere.ns + "/web-b"}) {
			t.Errorf("fleet-eu's pods = %q, want its web-b beside the forbidden cluster:\n%s", got, r)
		}
		if ec, _ := s.cluster("fleet-eu"); !ec.Synced || len(ec.Forbidden) != 0 {
			t.Errorf("clusters[fleet-eu] = %+v, want synced with nothing forbidden", ec)
		}
		t.Logf("exit %d; stderr %q", r.code, r.stderr)
	})
}

// clusterRow is the header's line for context: "  <context>  <state>  pods N …".
func clusterRow(screen, context string) string {
	for _, l := range strings.Split(screen, "\n") {
		if strings.HasPrefix(l, "  "+context+"  ") {
			return l
		}
	}
	return ""
}

// testUnreachable: the dashboard watches three contexts in a pty; fleet-ap's API server is killed.
// Its header line says unreachable within 8 s (the probe: GET /version every 2 s), the other
// clusters stay live with their pods on screen, --once meanwhile prints the two that answer and
// fails naming the third, and once the server is back the line is live again without a restart.
func (f *fleetFixture) testUnreachable(t *testing.T) {
	ap := f.clusters["fleet-ap"]
	t.Cleanup(func() {
		if err := ap.EnsureRunning(context.Background()); err != nil {
			t.Errorf("restoring fleet-ap for the tests after this one: %v", err)
		}
	})
	fe := f.newEnv(t)
	short := map[string]string{"fleet-eu": "eu", "fleet-us": "us", "fleet-ap": "ap"}
	for _, name := range fleetContexts {
		e := fe.in[name]
		node := e.nodeName("n1")
		e.node(node, true)
		e.pod(podSpec{name: "web-" + short[name], node: node, status: podStatus(corev1.PodRunning, running("app", true, 0, nil))})
	}
	contexts := strings.Join(fleetContexts, ",")
	tty := startTerminal(t, "--kubeconfig", fe.kubeconfig, "--context", contexts, "-n", fe.ns)
	allLive := func(s string) bool {
		for _, name := range fleetContexts {
			if !strings.Contains(clusterRow(s, name), " live ") {
				return false
			}
		}
		return strings.Contains(s, "contexts 3") && strings.Contains(s, "3 of 3 clusters live")
	}
	tty.waitScreen("three live clusters and their pods", 60*time.Second, func(s string) bool {
		if !allLive(s) {
			return false
		}
		for _, name := range fleetContexts {
			if !strings.Contains(lineWith(s, "web-"+short[name]), name) {
				return false
			}
		}
		return true
	})

	ap.StopAPIServer()
	stopped := time.Now()
	s := tty.waitScreen("fleet-ap named unreachable", 8*time.Second, func(s string) bool {
		return strings.Contains(clusterRow(s, "fleet-ap"), "unreachable for ")
	})
	t.Logf("API server killed → header names fleet-ap unreachable: %s", time.Since(stopped).Round(time.Millisecond))
	if l := clusterRow(s, "fleet-ap"); !strings.Contains(l, "retrying") {
		t.Errorf("fleet-ap's line %q does not say it is retrying", l)
	}
	for _, name := range fleetContexts[:2] {
		if l := clusterRow(s, name); !strings.Contains(l, " live ") {
			t.Errorf("%s's line is %q while fleet-ap is down, want live", name, l)
		}
		if l := lineWith(s, "web-"+short[name]); !strings.Contains(l, name) {
			t.Errorf("%s's pod web-%s left the screen while fleet-ap is down", name, short[name])
		}
	}
	if !strings.Contains(s, "2 of 3 clusters live") {
		t.Errorf("the header does not sum up 2 of 3 clusters live:\n%s", s)
	}

	// Meanwhile a snapshot prints the clusters that answer and fails for the one that does not.
	r, snap := fleetOnce(t, "--kubeconfig", fe.kubeconfig, "--context", contexts, "-n", fe.ns, "--request-timeout=5s")
	if r.code != 1 || !strings.Contains(r.stderr, "1 of 3 clusters did not sync (fleet-ap)") {
		t.Errorf("--once with fleet-ap down: want exit 1 naming it: %s", r)
	}
	for _, name := range fleetContexts[:2] {
		if _, ok := snap.pod(name, "web-"+short[name]); !ok {
			t.Errorf("--once with fleet-ap down: %s's pod missing: %s", name, r)
		}
	}
	if c, _ := snap.cluster("fleet-ap"); c.Synced || c.Error == "" {
		t.Errorf("--once with fleet-ap down: clusters[fleet-ap] = %+v, want not synced with an error", c)
	}

	ctx, cancel := context.WithTimeout(context.Background(), startupTimeout)
	defer cancel()
	if err := ap.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	// client-go's reflectors back off up to 30s between attempts; allow for that.
	tty.waitScreen("fleet-ap live again", 90*time.Second, allLive)
	t.Logf("API server ready again → header shows fleet-ap live: %s", time.Since(restarted).Round(time.Millisecond))
	tty.quit(t)
}
