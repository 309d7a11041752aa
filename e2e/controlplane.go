package e2e

import (
	"context"
	"crypto/tls"
	"embed"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"
)

// ControlPlane is a Cluster with the rest of a control plane around it: kube-controller-manager
// (every controller: Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs, the node lifecycle
// and taint eviction), kube-scheduler, and kwok (sigs.k8s.io/kwok), which plays the kubelets of
// simulated nodes: it keeps the nodes' leases and statuses and moves their pods through the Stage
// objects of testdata/kwok. kwok stands in for the kubelets of the scenarios because a real kubelet
// needs a container runtime, root and a machine's worth of resources per node, and the scenarios
// need up to a hundred nodes; the Stages report the states a kubelet does, with the runtimes' own
// messages. One real kubelet can join beside them (StartRealNode, realnode.go). The scenarios (scenario.go) run on it. The snapshot tests keep
// the bare Cluster: there the tests write Node and pod statuses themselves, which a node lifecycle
// controller would mark Unknown and evict for want of a lease, and a ReplicaSet controller would
// replace.
type ControlPlane struct {
	*Cluster
	// AdminKubeconfig is a kubeconfig file for a system:masters user.
	AdminKubeconfig string
	// Dynamic and Mapper apply the scenarios' manifests and kwok's Stages.
	Dynamic dynamic.Interface
	Mapper  *restmapper.DeferredDiscoveryRESTMapper

	opts ControlPlaneOptions

	mu                   sync.Mutex
	kcm, scheduler, kwok *process
	// argo is the Argo Rollouts controller, when StartArgoRollouts has started it (argo.go).
	argo *process
}

// ControlPlaneOptions tunes the control plane for tests. The zero value is what the scenarios use.
type ControlPlaneOptions struct {
	Options
	// NodeMonitorGracePeriod is how long a node may go without renewing its lease before the node
	// lifecycle controller marks it Unknown (kube-controller-manager's default is 50s); 30s: three
	// of kwok's renewals (every 10s), so that two cores busy with a few hundred pods do not make
	// healthy nodes flap.
	NodeMonitorGracePeriod time.Duration
	// TolerationSeconds is how long a pod stays on a node that is not ready or unreachable before
	// the taint eviction controller deletes it: the DefaultTolerationSeconds admission plugin
	// gives every pod that toleration, 300s by default; 10s.
	TolerationSeconds int
}

// KwokNodeLabel marks the nodes kwok manages (its manageNodesWithLabelSelector). A node without it
// has no kubelet: nothing renews its lease.
const KwokNodeLabel = "type"

// kwokNodeValue is KwokNodeLabel's value.
const kwokNodeValue = "kwok"

//go:embed testdata/kwok/*.yaml
var kwokFiles embed.FS

// The Stages every scenario shares, applied before kwok starts: kwok's own node and pod
// lifecycles, and what a kubelet does with a failed start and with the images that misbehave.
var baseStages = []string{
	"node-initialize.yaml", "node-heartbeat-with-lease.yaml",
	"pod-create.yaml", "pod-ready.yaml", "pod-complete.yaml", "pod-delete.yaml",
	"kubelet-status.yaml", "kubelet-start-failure.yaml", "behaviour-crash.yaml", "behaviour-image.yaml",
}

var (
	crdGVR   = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	stageGVR = schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "stages"}
)

// ControlPlaneBinaries are the binaries StartControlPlane needs from hack/build-k8s.sh's
// directory, kubectl for the scenarios' `kubectl rollout status`.
var ControlPlaneBinaries = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok", "kubectl"}

// StartControlPlane starts etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok
// from binDir, all on loopback, keeping their files in dir. Stop stops them all.
func StartControlPlane(ctx context.Context, binDir, dir string, o ControlPlaneOptions) (*ControlPlane, error) {
	for _, b := range ControlPlaneBinaries {
		if _, err := os.Stat(filepath.Join(binDir, b)); err != nil {
			return nil, fmt.Errorf("missing %s in %s (run hack/build-k8s.sh): %w", b, binDir, err)
		}
	}
	if o.NodeMonitorGracePeriod == 0 {
		o.NodeMonitorGracePeriod = 30 * time.Second
	}
	if o.TolerationSeconds == 0 {
		o.TolerationSeconds = 10
	}
	o.APIServerArgs = append([]string{
		fmt.Sprintf("--default-not-ready-toleration-seconds=%d", o.TolerationSeconds),
		fmt.Sprintf("--default-unreachable-toleration-seconds=%d", o.TolerationSeconds),
	}, o.APIServerArgs...)
	c, err := StartClusterWith(ctx, binDir, dir, o.Options)
	if err != nil {
		return nil, err
	}
	cp := &ControlPlane{Cluster: c, opts: o}
	if err := cp.start(ctx); err != nil {
		cp.Stop()
		return nil, err
	}
	return cp, nil
}

func (cp *ControlPlane) start(ctx context.Context) error {
	admin, err := cp.NewUser("e2e-scenario-admin", "system:masters")
	if err != nil {
		return err
	}
	cp.AdminKubeconfig = admin.Kubeconfig
	if cp.Dynamic, err = dynamic.NewForConfig(cp.Admin); err != nil {
		return err
	}
	cp.Mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(cp.AdminClient.Discovery()))
	if err := cp.startControllerManager(ctx); err != nil {
		return err
	}
	if err := cp.startScheduler(ctx); err != nil {
		return err
	}
	if err := cp.installStages(ctx); err != nil {
		return err
	}
	return cp.startKwok(ctx)
}

// component writes the kubeconfig of a control-plane component. Each runs as system:masters: with
// --use-service-account-credentials=false the controller manager acts for all its controllers
// under one identity, which no bootstrap role covers whole.
func (cp *ControlPlane) component(name string) (string, error) {
	u, err := cp.NewUser("system:"+name, "system:masters")
	if err != nil {
		return "", err
	}
	return u.Kubeconfig, nil
}

func (cp *ControlPlane) startControllerManager(ctx context.Context) error {
	kc, err := cp.component("kube-controller-manager")
	if err != nil {
		return err
	}
	ports, err := freePorts(1)
	if err != nil {
		return err
	}
	p, err := startProcess("kube-controller-manager", cp.path("kube-controller-manager.log"), filepath.Join(cp.binDir, "kube-controller-manager"),
		"--kubeconfig="+kc,
		// No --authentication-kubeconfig or --authorization-kubeconfig: its port serves only
		// /healthz, which is open to anyone, for the readiness probe.
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", ports[0]),
		"--cert-dir="+cp.path("kube-controller-manager-certs"),
		"--controllers=*",
		"--leader-elect=false",
		"--use-service-account-credentials=false",
		"--service-account-private-key-file="+cp.path("sa.key"),
		"--root-ca-file="+cp.path("ca.crt"),
		"--node-monitor-grace-period="+cp.opts.NodeMonitorGracePeriod.String(),
		"--node-monitor-period=2s",
		// The scenarios create hundreds of pods at once; the default 20 QPS would make the
		// ReplicaSet controller, not the rollout, the bottleneck.
		"--kube-api-qps=200",
		"--kube-api-burst=400",
		"--profiling=false",
	)
	if err != nil {
		return err
	}
	cp.mu.Lock()
	cp.kcm = p
	cp.mu.Unlock()
	return waitReady(ctx, p, healthz(ports[0]))
}

func (cp *ControlPlane) startScheduler(ctx context.Context) error {
	kc, err := cp.component("kube-scheduler")
	if err != nil {
		return err
	}
	ports, err := freePorts(1)
	if err != nil {
		return err
	}
	cfg := fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
  qps: 200
  burst: 400
leaderElection:
  leaderElect: false
`, kc)
	cfgPath := cp.path("kube-scheduler.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		return err
	}
	p, err := startProcess("kube-scheduler", cp.path("kube-scheduler.log"), filepath.Join(cp.binDir, "kube-scheduler"),
		"--config="+cfgPath,
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", ports[0]),
		"--cert-dir="+cp.path("kube-scheduler-certs"),
		"--profiling=false",
	)
	if err != nil {
		return err
	}
	cp.mu.Lock()
	cp.scheduler = p
	cp.mu.Unlock()
	return waitReady(ctx, p, healthz(ports[0]))
}

// healthz probes a component's /healthz on its loopback port. The component serves it with a
// certificate it made itself, and /healthz is open to anyone (--authorization-always-allow-paths).
func healthz(port int) func(context.Context) bool {
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		//nolint:gosec // a throwaway component's self-signed certificate, on loopback
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
	}}
	return func(ctx context.Context) bool {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+loopback(port)+"/healthz", nil)
		resp, err := hc.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
}

// installStages applies kwok's Stage CRD, waits until the API serves it, and applies the shared
// Stages: kwok reads its Stages from the API (enableCRDs), so they must be there before it starts.
func (cp *ControlPlane) installStages(ctx context.Context) error {
	objs, err := kwokObjects("stage-crd.yaml")
	if err != nil {
		return err
	}
	for _, o := range objs {
		if _, err := cp.Dynamic.Resource(crdGVR).Apply(ctx, o.GetName(), o, applyOptions); err != nil {
			return fmt.Errorf("applying kwok's Stage CRD: %w", err)
		}
	}
	if err := cp.waitEstablished(ctx, "stages.kwok.x-k8s.io"); err != nil {
		return fmt.Errorf("kwok's Stage CRD: %w", err)
	}
	cp.Mapper.Reset()
	for _, f := range baseStages {
		objs, err := kwokObjects(f)
		if err != nil {
			return err
		}
		for _, o := range objs {
			if err := cp.ApplyStage(ctx, o); err != nil {
				return fmt.Errorf("%s: %w", f, err)
			}
		}
	}
	return nil
}

// waitEstablished waits for a CRD's Established condition.
func (cp *ControlPlane) waitEstablished(ctx context.Context, name string) error {
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		crd, err := cp.Dynamic.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == "Established" && m["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for CRD %s to be established: %w", name, err)
	}
	return nil
}

// ApplyStage creates or updates a kwok Stage.
func (cp *ControlPlane) ApplyStage(ctx context.Context, o *unstructured.Unstructured) error {
	if _, err := cp.Dynamic.Resource(stageGVR).Apply(ctx, o.GetName(), o, applyOptions); err != nil {
		return fmt.Errorf("applying stage %s: %w", o.GetName(), err)
	}
	return nil
}

// DeleteStage deletes a kwok Stage; one already gone is no error.
func (cp *ControlPlane) DeleteStage(ctx context.Context, name string) error {
	err := cp.Dynamic.Resource(stageGVR).Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting stage %s: %w", name, err)
	}
	return nil
}

var applyOptions = metav1.ApplyOptions{FieldManager: "doomwatch-e2e", Force: true}

// kwokObjects parses a multi-document YAML file of testdata/kwok.
func kwokObjects(name string) ([]*unstructured.Unstructured, error) {
	b, err := kwokFiles.ReadFile("testdata/kwok/" + name)
	if err != nil {
		return nil, err
	}
	return parseObjects(name, b)
}

// parseObjects splits YAML documents into objects, skipping empty ones.
func parseObjects(name string, b []byte) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for i, doc := range splitYAML(b) {
		var m map[string]any
		if err := yaml.Unmarshal(doc, &m); err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", name, i+1, err)
		}
		if len(m) == 0 {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
	return out, nil
}

// splitYAML splits a stream at its "---" document separators.
func splitYAML(b []byte) [][]byte {
	var docs [][]byte
	var cur []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.TrimRight(l, " ") == "---" {
			docs = append(docs, []byte(strings.Join(cur, "\n")))
			cur = nil
			continue
		}
		cur = append(cur, l)
	}
	return append(docs, []byte(strings.Join(cur, "\n")))
}

func (cp *ControlPlane) startKwok(ctx context.Context) error {
	kc, err := cp.component("kwok-controller")
	if err != nil {
		return err
	}
	// No nodePort or serverAddress: kwok then serves nothing (no logs or exec endpoints, which
	// would listen on every address); it only talks to the API server.
	cfg := fmt.Sprintf(`apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokConfiguration
options:
  manageNodesWithLabelSelector: %s=%s
  enableCRDs:
  - Stage
  # Pod IPs are strings in the status, never routed; a /16 holds every scenario's pods at once.
  cidr: 10.128.0.0/16
  nodeIP: 10.127.0.1
  # The kubelet's default lease (40s, renewed every 10s): the node lifecycle controller reads it.
  nodeLeaseDurationSeconds: 40
  nodeLeaseParallelism: 16
  podPlayStageParallelism: 16
  nodePlayStageParallelism: 8
  podsOnNodeSyncParallelism: 2
  enablePodsOnNodeSyncListPager: true
`, KwokNodeLabel, kwokNodeValue)
	cfgPath := cp.path("kwok.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		return err
	}
	p, err := startProcess("kwok", cp.path("kwok.log"), filepath.Join(cp.binDir, "kwok"), "--kubeconfig="+kc, "--config="+cfgPath)
	if err != nil {
		return err
	}
	cp.mu.Lock()
	cp.kwok = p
	cp.mu.Unlock()
	// kwok is ready when it manages a node: a probe node turns Ready through node-initialize.
	probe := "kwok-probe"
	if err := cp.CreateNode(ctx, NodeSpec{Name: probe}); err != nil {
		return err
	}
	defer func() {
		_ = cp.AdminClient.CoreV1().Nodes().Delete(context.Background(), probe, metav1.DeleteOptions{})
	}()
	return waitReady(ctx, p, func(ctx context.Context) bool {
		ready, _ := cp.nodeReady(ctx, probe)
		return ready
	})
}

// NodeSpec is a kwok node to create.
type NodeSpec struct {
	Name string
	// Labels are added to the kwok label and the node's hostname label.
	Labels map[string]string
	// CPU, Memory and Pods are its capacity, allocatable alike: 4, 32Gi and 110 by default.
	CPU, Memory, Pods string
}

// CreateNode creates a node kwok manages, with its capacity in its status: kwok's node-initialize
// Stage keeps a capacity it finds and reports the node Ready.
func (cp *ControlPlane) CreateNode(ctx context.Context, s NodeSpec) error {
	labels := map[string]string{KwokNodeLabel: kwokNodeValue, corev1.LabelHostname: s.Name, corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64"}
	for k, v := range s.Labels {
		labels[k] = v
	}
	res := corev1.ResourceList{}
	for name, q := range map[corev1.ResourceName]string{corev1.ResourceCPU: or(s.CPU, "4"), corev1.ResourceMemory: or(s.Memory, "32Gi"), corev1.ResourcePods: or(s.Pods, "110")} {
		v, err := resource.ParseQuantity(q)
		if err != nil {
			return fmt.Errorf("node %s: %s %q: %w", s.Name, name, q, err)
		}
		res[name] = v
	}
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Labels: labels, Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"}},
		Status:     corev1.NodeStatus{Capacity: res, Allocatable: res},
	}
	if _, err := cp.AdminClient.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating node %s: %w", s.Name, err)
	}
	return nil
}

func (cp *ControlPlane) nodeReady(ctx context.Context, name string) (bool, error) {
	n, err := cp.AdminClient.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue, nil
		}
	}
	return false, nil
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Stop kills kwok, the scheduler, the controller manager and the servers. It is safe to call more
// than once.
func (cp *ControlPlane) Stop() {
	cp.mu.Lock()
	ps := []*process{cp.argo, cp.kwok, cp.scheduler, cp.kcm}
	cp.mu.Unlock()
	for _, p := range ps {
		p.kill()
	}
	cp.Cluster.Stop()
}

// Logs returns the tail of every component's log, for a failure report.
func (cp *ControlPlane) Logs(lines int) string {
	var b strings.Builder
	b.WriteString(cp.Cluster.Logs(lines))
	for _, name := range []string{"kube-controller-manager.log", "kube-scheduler.log", "kwok.log", "rollouts-controller.log"} {
		if _, err := os.Stat(cp.path(name)); err != nil {
			continue // rollouts-controller runs only under StartArgoRollouts
		}
		fmt.Fprintf(&b, "----- %s (last %d lines of %s)\n%s\n", name, lines, cp.path(name), logTail(cp.path(name), lines))
	}
	return b.String()
}

// Exited names the components that have died, for a scenario run to stop early and say why.
func (cp *ControlPlane) Exited() error {
	cp.Cluster.mu.Lock()
	ps := []*process{cp.etcd, cp.api}
	cp.Cluster.mu.Unlock()
	cp.mu.Lock()
	ps = append(ps, cp.kcm, cp.scheduler, cp.kwok, cp.argo)
	cp.mu.Unlock()
	return exitedOf(ps...)
}
