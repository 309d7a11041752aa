package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// The kubernetes-mixin rules doomwatch's alerts are measured against (kubernetes-monitoring/
// kubernetes-mixin alerts/apps_alerts.libsonnet), with the `for:` each waits once its expression
// holds. kube-state-metrics, whose series they read, is not on the Go module proxy, so the test
// cannot run it: the mixin's firing time is derived from the pod statuses the real kubelet wrote,
// as the earliest moment its expression could hold, plus its `for:`. A real kube-state-metrics
// scraped every 30s adds up to a scrape to that.
const (
	// KubePodCrashLooping: max_over_time(kube_pod_container_status_waiting_reason{reason=
	// "CrashLoopBackOff"}[5m]) >= 1, for: 15m. It holds from the first scrape that sees a container
	// waiting in CrashLoopBackOff.
	mixinCrashLoopingFor = 15 * time.Minute
	// KubeDeploymentRolloutStuck: kube_deployment_status_condition{condition="Progressing",
	// status="false"} != 0, for: 15m. It holds once the Deployment controller marks the rollout
	// ProgressDeadlineExceeded, progressDeadlineSeconds (600 by default) after its last progress.
	mixinRolloutStuckFor    = 15 * time.Minute
	defaultProgressDeadline = 600 * time.Second
)

// TestServeInCluster is doomwatch serve as it is deployed: its image built by hack/image and
// pushed to the node's registry, deploy/ applied with kubectl (its ServiceAccount and read-only
// ClusterRole, nothing more), running as a pod on the real node (kubelet, containerd, runc), and
// the real Prometheus scraping it through its Service's endpoints and evaluating
// deploy/prometheus/rules.yaml. A Deployment that crash-loops fires DoomwatchRolloutDoomed and a
// node where pods fail to start (the runtime handler that fails a container's first create) fires
// DoomwatchNodeSuspect: each is timed from its first failure on the node, beside the
// kubernetes-mixin rule's time. Healthy Deployments and kwok's nodes never alert. Then serve's pod
// is deleted: its successor names the node again, and neither alert resolves meanwhile.
func TestServeInCluster(t *testing.T) {
	promBin := os.Getenv("DOOMWATCH_PROMETHEUS_BIN")
	if promBin == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("DOOMWATCH_PROMETHEUS_BIN is not set (hack/build-prometheus.sh prints it; `make test` sets it)")
		}
		t.Skip("DOOMWATCH_PROMETHEUS_BIN is not set (hack/build-prometheus.sh prints it)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	// The ServiceAccount admission plugin mounts serve's token, as in any cluster.
	cp, n := startRealNodeWith(t, ctx, ControlPlaneOptions{Options: Options{ServiceAccounts: true}})
	c := cp.AdminClient
	// kwok's nodes, where pods start without fail: the baseline the real node stands out from.
	kwokNodes := []string{"kwok-a", "kwok-b", "kwok-c"}
	for _, name := range kwokNodes {
		if err := cp.CreateNode(ctx, NodeSpec{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.NodeV1().RuntimeClasses().Create(ctx, &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: FlakyRuntimeClass}, Handler: FlakyRuntimeClass}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// The image, as a user builds it.
	start := time.Now()
	image := exec.CommandContext(ctx, "go", "run", "./hack/image", "--push", n.RegistryOnHost+"/doomwatch:e2e", "--insecure")
	image.Dir = ".."
	if out, err := image.CombinedOutput(); err != nil {
		t.Fatalf("go run ./hack/image: %v\n%s", err, out)
	}
	t.Logf("image built and pushed in %s", time.Since(start).Round(time.Millisecond))

	// deploy/, with what this machine needs: the node's registry, and the host's network with the
	// API server's address in it, as there is no kube-proxy here to route the kubernetes Service
	// (clusters that replace kube-proxy set KUBERNETES_SERVICE_HOST the same way).
	overlay := t.TempDir()
	deployDir, err := filepath.Abs("../deploy")
	if err != nil {
		t.Fatal(err)
	}
	base, err := filepath.Rel(overlay, deployDir)
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := strings.Cut(n.APIServerInNode(), ":")
	kustomization := fmt.Sprintf(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- %s
images:
- name: doomwatch
  newName: %s/doomwatch
  newTag: e2e
patches:
# The host's network is more than the restricted Pod Security level allows.
- target:
    kind: Namespace
    name: doomwatch
  patch: |-
    - op: replace
      path: /metadata/labels/pod-security.kubernetes.io~1enforce
      value: privileged
    - op: replace
      path: /metadata/labels/pod-security.kubernetes.io~1warn
      value: privileged
- target:
    kind: Deployment
    name: doomwatch
  patch: |-
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: doomwatch
    spec:
      template:
        spec:
          hostNetwork: true
          dnsPolicy: ClusterFirstWithHostNet
          nodeSelector:
            kubernetes.io/hostname: %s
          containers:
          - name: doomwatch
            env:
            - name: KUBERNETES_SERVICE_HOST
              value: %q
            - name: KUBERNETES_SERVICE_PORT
              value: %q
`, base, n.Registry, n.Name, host, port)
	if err := os.WriteFile(filepath.Join(overlay, "kustomization.yaml"), []byte(kustomization), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runKubectl(t, time.Minute, cp.AdminKubeconfig, "apply", "-k", overlay); r.code != 0 {
		t.Fatalf("kubectl apply -k deploy/:\n%s", r)
	}
	serveReady := time.Now()
	servePod := waitServeReady(t, ctx, cp, "")
	t.Logf("serve's pod %s Ready in %s", servePod, time.Since(serveReady).Round(time.Millisecond))

	prom := startPrometheus(t, ctx, promBin, cp.AdminKubeconfig, deployDir)

	// The workloads: one that crash-loops and one that flakes on the real node, one healthy on
	// kwok's nodes.
	const ns = "shop"
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	watch := watchFailures(t, ctx, cp, ns)
	app := func(args ...string) corev1.Container {
		return corev1.Container{Name: "app", Image: n.Registry + "/" + TestImage, Args: args}
	}
	onReal := func(s corev1.PodSpec) corev1.PodSpec { n.PodOnNode(&s); return s }
	flaky := app("pause")
	flaky.Env = []corev1.EnvVar{{Name: FlakyFailsEnv, Value: "1"}}
	for _, d := range []struct {
		name     string
		replicas int32
		spec     corev1.PodSpec
	}{
		{"checkout", 1, onReal(corev1.PodSpec{Containers: []corev1.Container{app("crash")}})},
		{"catalog", 5, onReal(corev1.PodSpec{Containers: []corev1.Container{flaky}, RuntimeClassName: ptr.To(FlakyRuntimeClass)})},
		{"search", 8, corev1.PodSpec{Containers: []corev1.Container{app("pause")}, NodeSelector: map[string]string{KwokNodeLabel: kwokNodeValue}}},
	} {
		labels := map[string]string{"app": d.name}
		dep := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: d.name, Namespace: ns},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To(d.replicas),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: d.spec},
			},
		}
		if _, err := c.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	created := time.Now()

	doomed := alertKey{name: "DoomwatchRolloutDoomed", label: "name", value: "checkout"}
	suspect := alertKey{name: "DoomwatchNodeSuspect", label: "node", value: n.Name}
	// Nothing else may alert: not the Deployments that start (catalog's pods start at the second
	// try), not kwok's nodes, not serve's own Deployment.
	alertOK := func(a promAlert) error {
		if a.Labels["alertname"] == doomed.name && a.Labels["name"] != "checkout" {
			return fmt.Errorf("a healthy rollout alerted: %v", a.Labels)
		}
		if a.Labels["alertname"] == suspect.name && a.Labels["node"] != n.Name {
			return fmt.Errorf("a node without failures alerted: %v", a.Labels)
		}
		return nil
	}
	fired := prom.awaitFiring(t, ctx, 5*time.Minute, []alertKey{doomed, suspect}, alertOK)
	crash, clbo, startFail := watch.first()
	if crash.IsZero() || clbo.IsZero() || startFail.IsZero() {
		t.Fatalf("the kubelet's statuses: first crash %v, first CrashLoopBackOff %v, first start failure %v", crash, clbo, startFail)
	}
	t.Logf("DoomwatchRolloutDoomed fired %s after checkout's first crash (%s its first CrashLoopBackOff); "+
		"kubernetes-mixin's KubePodCrashLooping would fire %s after that crash (the first CrashLoopBackOff + for: 15m), "+
		"KubeDeploymentRolloutStuck %s after (the 600s progress deadline from the Deployment's creation + for: 15m)",
		fired[doomed].Sub(crash).Round(100*time.Millisecond), relative(fired[doomed].Sub(clbo)),
		clbo.Add(mixinCrashLoopingFor).Sub(crash).Round(time.Second),
		created.Add(defaultProgressDeadline+mixinRolloutStuckFor).Sub(crash).Round(time.Second))
	t.Logf("DoomwatchNodeSuspect fired %s after the first start failure on %s (its for: 1m included); kubernetes-mixin has no rule that names a node by its pods' start failures",
		fired[suspect].Sub(startFail).Round(100*time.Millisecond), n.Name)
	if out := os.Getenv("DOOMWATCH_ALERTS_OUT"); out != "" {
		// The alerts as Prometheus's API gives them, for the README (its UI is not built: the
		// module has no web assets).
		b, err := json.MarshalIndent(prom.alerts(t), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Not slower than the mixin would be: the point of serve.
	if late := fired[doomed].Sub(clbo); late > time.Minute {
		t.Errorf("DoomwatchRolloutDoomed fired %s after the first CrashLoopBackOff", late)
	}

	// Restart safety: serve's pod replaced, both alerts stay firing (keep_firing_for bridges the
	// scrapes the new pod misses) and the new serve names the node again from the pods' statuses.
	before := prom.alerts(t)
	if err := c.CoreV1().Pods("doomwatch").Delete(ctx, servePod, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	next := waitServeReady(t, ctx, cp, servePod)
	ready := time.Now()
	t.Logf("serve's pod replaced by %s, Ready %s after the delete", next, ready.Sub(deleted).Round(time.Millisecond))
	renamed := prom.awaitSeries(t, ctx, 2*time.Minute, fmt.Sprintf(`doomwatch_node_suspect{node=%q,pod=%q} == 1`, n.Name, next))
	t.Logf("the new serve's series named %s suspect %s after its pod was Ready (Prometheus scraping every second)", n.Name, renamed.Sub(ready).Round(100*time.Millisecond))
	// The new serve dooms checkout again by itself: keep_firing_for alone would keep the alert.
	redoomed := prom.awaitSeries(t, ctx, 2*time.Minute, fmt.Sprintf(`doomwatch_workload_verdict{namespace=%q,name="checkout",verdict="doomed",pod=%q} == 1`, ns, next))
	t.Logf("the new serve's series called checkout doomed %s after its pod was Ready", redoomed.Sub(ready).Round(100*time.Millisecond))
	after := prom.alerts(t)
	for _, a := range after {
		if err := alertOK(a); err != nil {
			t.Errorf("after serve's restart: %v", err)
		}
	}
	for _, k := range []alertKey{doomed, suspect} {
		b, a := before.find(k), after.find(k)
		if b == nil || a == nil || a.State != "firing" || !a.ActiveAt.Equal(b.ActiveAt) {
			t.Errorf("%s across serve's restart: before %+v, after %+v: want firing throughout, active since the same time", k.name, b, a)
		}
	}
	if err := prom.falseAlarm(); err != nil {
		t.Error(err)
	}
}

// waitServeReady waits for a Ready pod of deploy/'s Deployment other than old, and returns its
// name. It fails with the pods' states and serve's log when none is.
func waitServeReady(t *testing.T, ctx context.Context, cp *ControlPlane, old string) string {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		pods, err := cp.AdminClient.CoreV1().Pods("doomwatch").List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=doomwatch"})
		if err != nil {
			t.Fatal(err)
		}
		var states []string
		for _, p := range pods.Items {
			if p.Name != old && p.DeletionTimestamp == nil && podReady(&p) {
				return p.Name
			}
			states = append(states, fmt.Sprintf("%s %s %+v", p.Name, p.Status.Phase, p.Status.ContainerStatuses))
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			logs := ""
			for _, p := range pods.Items {
				b, _ := cp.AdminClient.CoreV1().Pods("doomwatch").GetLogs(p.Name, &corev1.PodLogOptions{}).DoRaw(context.Background())
				logs += fmt.Sprintf("\n%s's log:\n%s", p.Name, b)
			}
			t.Fatalf("serve's pod not Ready: %s%s", strings.Join(states, "; "), logs)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// relative says d as "12s after" or "3s before".
func relative(d time.Duration) string {
	if d < 0 {
		return (-d).Round(100*time.Millisecond).String() + " before"
	}
	return d.Round(100*time.Millisecond).String() + " after"
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// failureWatch records when the kubelet's statuses first showed each kind of failure, as the
// test's own informer sees them.
type failureWatch struct {
	mu                     sync.Mutex
	crash, clbo, startFail time.Time
}

func (w *failureWatch) first() (crash, clbo, startFail time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.crash, w.clbo, w.startFail
}

// watchFailures watches ns's pods: a container that exited with an error after it started (a
// crash), one waiting in CrashLoopBackOff, and a start failure (exit 128, the runtime's
// StartError, or a create that failed).
func watchFailures(t *testing.T, ctx context.Context, cp *ControlPlane, ns string) *failureWatch {
	w := &failureWatch{}
	observe := func(o any) {
		p := o.(*corev1.Pod)
		now := time.Now()
		w.mu.Lock()
		defer w.mu.Unlock()
		set := func(at *time.Time) {
			if at.IsZero() {
				*at = now
			}
		}
		for _, cs := range p.Status.ContainerStatuses {
			for _, term := range []*corev1.ContainerStateTerminated{cs.State.Terminated, cs.LastTerminationState.Terminated} {
				switch {
				case term == nil || term.ExitCode == 0:
				case term.ExitCode == 128 || term.Reason == "StartError":
					set(&w.startFail)
				default:
					set(&w.crash)
				}
			}
			if wt := cs.State.Waiting; wt != nil {
				switch wt.Reason {
				case "CrashLoopBackOff":
					set(&w.clbo)
				case "CreateContainerError", "RunContainerError":
					set(&w.startFail)
				}
			}
		}
	}
	factory := informers.NewSharedInformerFactoryWithOptions(cp.AdminClient, 0, informers.WithNamespace(ns))
	inf := factory.Core().V1().Pods().Informer()
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: observe, UpdateFunc: func(_, o any) { observe(o) }})
	stop := make(chan struct{})
	factory.Start(stop)
	t.Cleanup(func() { close(stop); factory.Shutdown() })
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("the test's pod informer did not sync")
	}
	return w
}

// prometheus is the real Prometheus server, on the host, scraping serve and evaluating the rules.
type prometheus struct {
	url string
	p   *process
	log string

	mu      sync.Mutex
	refused error // the first alert that should not have fired
}

// startPrometheus starts Prometheus with deploy/prometheus/rules.yaml, scraping serve through the
// doomwatch Service's EndpointSlices (Kubernetes service discovery, as a ServiceMonitor does),
// every second and evaluating every second: the test's times are short by what a 30s scrape and
// a 30s evaluation add in production, at most a minute.
func startPrometheus(t *testing.T, ctx context.Context, bin, kubeconfig, deployDir string) *prometheus {
	t.Helper()
	dir := t.TempDir()
	ports, err := freePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	addr := loopback(ports[0])
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
  external_labels:
    cluster: e2e
rule_files:
- %s
scrape_configs:
- job_name: doomwatch
  # serve's series carry their own namespace label (rules.yaml).
  honor_labels: true
  kubernetes_sd_configs:
  - role: endpointslice
    kubeconfig_file: %s
    namespaces:
      names: [doomwatch]
  relabel_configs:
  - source_labels: [__meta_kubernetes_service_name, __meta_kubernetes_endpointslice_port_name]
    regex: doomwatch;metrics
    action: keep
  - source_labels: [__meta_kubernetes_pod_name]
    target_label: pod
`, filepath.Join(deployDir, "prometheus", "rules.yaml"), kubeconfig)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "prometheus.log")
	p, err := startProcess("prometheus", log, filepath.Join(bin, "prometheus"),
		"--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.kill)
	prom := &prometheus{url: "http://" + addr, p: p, log: log}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("prometheus's log:\n%s", logTail(log, 40))
		}
	})
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := http.Get(prom.url + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return prom
			}
		}
		if p.exited() || time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("prometheus not ready: %v\n%s", err, logTail(log, 40))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// promAlert is one alert of Prometheus's /api/v1/alerts.
type promAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	State       string            `json:"state"`
	ActiveAt    time.Time         `json:"activeAt"`
}

type promAlerts []promAlert

// alertKey names an alert by its name and one label.
type alertKey struct{ name, label, value string }

func (as promAlerts) find(k alertKey) *promAlert {
	for i := range as {
		if as[i].Labels["alertname"] == k.name && as[i].Labels[k.label] == k.value {
			return &as[i]
		}
	}
	return nil
}

func (p *prometheus) get(t *testing.T, path string, into any) {
	t.Helper()
	resp, err := http.Get(p.url + path)
	if err != nil {
		t.Fatalf("prometheus %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var env struct {
		Status string          `json:"status"`
		Data   json.RawMessage `json:"data"`
		Error  string          `json:"error"`
	}
	if err := json.Unmarshal(b, &env); err != nil || env.Status != "success" {
		t.Fatalf("prometheus %s: %v %s %s", path, err, env.Error, b)
	}
	if err := json.Unmarshal(env.Data, into); err != nil {
		t.Fatalf("prometheus %s: %v: %s", path, err, env.Data)
	}
}

func (p *prometheus) alerts(t *testing.T) promAlerts {
	t.Helper()
	var data struct {
		Alerts promAlerts `json:"alerts"`
	}
	p.get(t, "/api/v1/alerts", &data)
	return data.Alerts
}

// awaitFiring polls the alerts until every one of want fires, and returns when the test first saw
// each firing. Every alert seen meanwhile, pending or firing, is checked by ok; the first it
// refuses is kept for falseAlarm.
func (p *prometheus) awaitFiring(t *testing.T, ctx context.Context, limit time.Duration, want []alertKey, ok func(promAlert) error) map[alertKey]time.Time {
	t.Helper()
	fired := map[alertKey]time.Time{}
	deadline := time.Now().Add(limit)
	for {
		as := p.alerts(t)
		now := time.Now()
		for _, a := range as {
			if err := ok(a); err != nil {
				p.mu.Lock()
				if p.refused == nil {
					p.refused = err
				}
				p.mu.Unlock()
			}
		}
		for _, k := range want {
			if a := as.find(k); a != nil && a.State == "firing" {
				if _, seen := fired[k]; !seen {
					fired[k] = now
					t.Logf("%s fired: %s", k.name, a.Annotations["description"])
				}
			}
		}
		if len(fired) == len(want) {
			return fired
		}
		if now.After(deadline) || ctx.Err() != nil {
			b, _ := json.MarshalIndent(as, "", "  ")
			t.Fatalf("not every alert of %v fired within %s; the alerts:\n%s", want, limit, b)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// falseAlarm is the first alert that fired and should not have, if any.
func (p *prometheus) falseAlarm() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refused
}

// awaitSeries polls an instant query until it has a result, and returns when it first did.
func (p *prometheus) awaitSeries(t *testing.T, ctx context.Context, limit time.Duration, query string) time.Time {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		var data struct {
			Result []json.RawMessage `json:"result"`
		}
		p.get(t, "/api/v1/query?query="+url.QueryEscape(query), &data)
		if len(data.Result) > 0 {
			return time.Now()
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("no result for %s within %s", query, limit)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
