package model

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"doomwatch/classify"
	"doomwatch/contract"
)

// The runtime messages of the small clusters below, verbatim from the sources cited; the classify
// fixtures named beside them carry the same texts and judge them transient with exit 128.
const (
	// Docker's ContainerCannotRun 128: runc lost its child while starting it on a loaded node,
	// kubernetes/kubernetes#87735 (classify/testdata/cannotrun-128-node-b-1.yaml; the Krane
	// discussion's YAML has startedAt equal to finishedAt, as Docker reports it).
	dockerRuncEOF = `OCI runtime create failed: container_linux.go:345: starting container process caused "process_linux.go:303: getting the final child's pid from pipe caused \"EOF\"": unknown`
	// containerd's shim not answering in time: StartError 128, containerd/containerd#11033
	// (classify/testdata/start-failure-backoff-first.yaml; e2e/messages.go shim-io-timeout).
	shimIOTimeout = `failed to create containerd task: failed to create shim task: failed to start io pipe copy: unable to copy pipes: containerd-shim: opening w/o fifo "/run/containerd/io.containerd.grpc.v1.cri/containers/base/io/1363662740/base-stdout" failed: context deadline exceeded`
	// runc unable to join the sandbox's IPC namespace, the pause process gone: StartError 128,
	// opencontainers/runc#3601 (classify/testdata/rt-containerd-run-error-ns-lstat-enoent.yaml).
	runcNSLstat = "failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to create new parent process: namespace path: lstat /proc/4173144/ns/ipc: no such file or directory: unknown"
)

// runtimeOf is a node's container runtime, which decides how a failed start shows in the status.
type runtimeOf int

const (
	containerd runtimeOf = iota // StartError 128, startedAt the Unix epoch (podtest.Terminated128)
	docker                      // ContainerCannotRun 128 (dockershim, cri-dockerd), startedAt = finishedAt
	crio                        // CreateContainerError, waiting: CRI-O reports the runtime's failure at create
)

// planNode is one node of a small cluster.
type planNode struct {
	name    string
	ready   bool
	runtime runtimeOf
}

// planPod is one pod: the node it runs on, its workload (a Deployment rolled out now, or one
// whose pods have run for hours), and whether its start failed.
type planPod struct {
	node     int
	workload string
	old      bool // started three hours ago: no start within the window
	failed   bool
	// at is when the pod's container started (or failed to), before now.
	at time.Duration
	// shape picks how a failure shows: still terminated, recovered and running, or waiting out
	// the kubelet's first back-off.
	shape int
}

// clusterPlan is a small cluster during a rollout, the pods of which the model sees either as a
// snapshot (a fresh process: one batch, every start and failure dated by the runtime) or live
// (first scheduled and creating, then started or failed).
type clusterPlan struct {
	nodes []planNode
	pods  []planPod
}

// rollout is the Deployments being rolled out and their ReplicaSets, at revision 2.
func (c clusterPlan) workloads() ([]*appsv1.Deployment, []*appsv1.ReplicaSet) {
	seen := map[string]bool{}
	var ds []*appsv1.Deployment
	var rss []*appsv1.ReplicaSet
	for _, p := range c.pods {
		if seen[p.workload] {
			continue
		}
		seen[p.workload] = true
		n := int32(0)
		for _, q := range c.pods {
			if q.workload == p.workload {
				n++
			}
		}
		ds = append(ds, deployment("shop", p.workload, n, "2"))
		rss = append(rss, replicaSet("shop", p.workload+"-5d8f7c9b6d", p.workload, "2"))
	}
	return ds, rss
}

// objects builds the cluster's pods at now; creating gives the rollout's pods as they are before
// their containers start (scheduled, the sandbox up, the container creating).
func (c clusterPlan) objects(now time.Time, creating bool) []*corev1.Pod {
	out := make([]*corev1.Pod, 0, len(c.pods))
	for i, pp := range c.pods {
		name := fmt.Sprintf("%s-5d8f7c9b6d-%03d", pp.workload, i)
		uidOf := types.UID(fmt.Sprintf("7c1e%04d-5a2b-4c3d-9e8f-%012d", i, i))
		at := now.Add(-pp.at)
		n := c.nodes[pp.node]
		p := pod("shop", name, onNode(n.name), ownedBy("ReplicaSet", pp.workload+"-5d8f7c9b6d"), uid(string(uidOf)), created(now.Add(-2*time.Minute)))
		p.Labels = map[string]string{appsv1.DefaultDeploymentUniqueLabelKey: "5d8f7c9b6d"}
		cs := &p.Status.ContainerStatuses[0]
		switch {
		case pp.old:
			p.CreationTimestamp = metav1.NewTime(now.Add(-3 * time.Hour))
			cs.State.Running.StartedAt = metav1.NewTime(now.Add(-3 * time.Hour))
		case creating:
			p.Status.Phase = corev1.PodPending
			*cs = corev1.ContainerStatus{Name: "app", Image: cs.Image,
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}
		case !pp.failed:
			cs.State.Running.StartedAt = metav1.NewTime(at)
		default:
			failStart(p, n.runtime, pp.shape, at, i)
		}
		out = append(out, p)
	}
	return out
}

// failStart writes the failed start of pod p's container at at as the node's runtime and the
// kubelet report it.
func failStart(p *corev1.Pod, rt runtimeOf, shape int, at time.Time, i int) {
	cs := &p.Status.ContainerStatuses[0]
	cs.Ready, cs.State = false, corev1.ContainerState{}
	p.Status.Phase = corev1.PodPending
	if rt == crio {
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "CreateContainerError", Message: crioRuntimeMsg}
		return
	}
	msg := []string{runtimeMsg, shimIOTimeout, runcNSLstat}[i%3]
	term := terminated128(at, msg)
	if rt == docker {
		term = &corev1.ContainerStateTerminated{Reason: "ContainerCannotRun", ExitCode: 128, Message: dockerRuncEOF,
			StartedAt: metav1.NewTime(at), FinishedAt: metav1.NewTime(at)}
	}
	switch shape % 3 {
	case 0: // the failure is the current state, before the kubelet restarts the container
		cs.State.Terminated = term
	case 1: // started on the next try, seconds later (Krane's observation), the failure in lastState
		p.Status.Phase = corev1.PodRunning
		cs.Ready, cs.RestartCount = true, 1
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(at.Add(2 * time.Second))}
		cs.LastTerminationState.Terminated = term
	default: // the kubelet's first back-off after the failure: doBackOff's message (kubernetes
		// pkg/kubelet/kuberuntime/kuberuntime_manager.go, `back-off %s restarting failed
		// container=%s pod=%s`, the pod as name_namespace(uid), 10s the first step)
		cs.RestartCount = 1
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
			Message: fmt.Sprintf("back-off 10s restarting failed container=app pod=%s_%s(%s)", p.Name, p.Namespace, p.UID)}
		cs.LastTerminationState.Terminated = term
	}
}

// judgeAt feeds the plan to a new model, as a snapshot or live, and returns it with the moment of
// the last batch.
func (c clusterPlan) judgeAt(live bool) (*Model, time.Time) {
	m := New(DefaultConfig())
	now := t0
	nodes := make([]*corev1.Node, len(c.nodes))
	for i, n := range c.nodes {
		nodes[i] = withUID(node(n.name, n.ready, false), n.name+"-uid")
	}
	ds, rss := c.workloads()
	first := now
	if live {
		first = now.Add(-90 * time.Second)
	}
	m.Apply(&contract.Batch{Nodes: nodes, Workloads: append(contract.WorkloadsOf(ds), contract.WorkloadsOf(rss)...)}, first)
	if live {
		apply(m, first, c.objects(now, true)...)
	}
	apply(m, now, c.objects(now, false)...)
	return m, now
}

// nodePlan is a node's pods in a table of the regression test: how many pods, how many of them
// are the rollout's, how many of those failed to start.
type nodePlan struct {
	planNode
	pods, rollout, failed int
}

func planOf(rows []nodePlan) clusterPlan {
	var c clusterPlan
	k := 0
	for i, r := range rows {
		c.nodes = append(c.nodes, r.planNode)
		for j := range r.pods {
			pp := planPod{node: i, workload: "web", at: time.Duration(20+k%40) * time.Second, shape: k}
			switch {
			case j >= r.rollout:
				pp.workload, pp.old = fmt.Sprintf("steady-%d", k%4), true
			case j < r.failed:
				pp.failed = true
			}
			c.pods = append(c.pods, pp)
			k++
		}
	}
	return c
}

// TestFlakyNodesStandOutInASmallCluster is the cluster a new user tried with --once on a real API
// server: two nodes whose every pod of the rollout failed to start with exit 128 (runc and the
// containerd shim's messages, Docker's ContainerCannotRun), a calm node of 49 pods where 2 of the
// rollout's failed too, another calm node with one failure of its two pods, and a NotReady node.
// The flaky nodes are named, by the route that can name them, and no pod of the rollout is doomed:
// two flaky nodes and one failure elsewhere are three nodes, which must not make the rollout
// look not node-local. The same with one flaky node, and with a third flaky node of CRI-O (create
// errors) beside a calm CRI-O node. Each as a snapshot (--once, wait, a restart: every start and
// failure dated by the runtime) and live.
func TestFlakyNodesStandOutInASmallCluster(t *testing.T) {
	n := func(name string, rt runtimeOf, pods, rollout, failed int) nodePlan {
		return nodePlan{planNode{name, true, rt}, pods, rollout, failed}
	}
	base := []nodePlan{
		n("node-a", containerd, 6, 6, 6),
		n("node-b", docker, 5, 5, 5),
		n("calm-1", containerd, 49, 8, 2),
		n("calm-2", containerd, 2, 2, 1),
		{planNode{"not-ready", false, containerd}, 2, 0, 0},
	}
	oneFlaky := slices.Clone(base)
	oneFlaky[1].failed = 0
	crioToo := append(slices.Clone(base), n("crio-c", crio, 4, 4, 4), n("crio-calm", crio, 10, 3, 0))
	// The calm node's pods all started in the window: a rollout of everything.
	allNew := slices.Clone(base)
	allNew[2].rollout = 49
	tests := []struct {
		name string
		rows []nodePlan
		want []string
		// why is node-a's sentence.
		why string
	}{
		{"two flaky nodes", base, []string{"node-a", "node-b"},
			"6 of 6 pods that started here in the last 15m failed with exit 128; 3 of 10 on nodes not suspect (thin evidence: too few to compare)"},
		{"one flaky node", oneFlaky, []string{"node-a"},
			"6 of 6 pods that started here in the last 15m failed with exit 128; 3 of 15 elsewhere"},
		{"three flaky nodes, one of CRI-O", crioToo, []string{"crio-c", "node-a", "node-b"},
			"6 of 6 pods that started here in the last 15m failed with exit 128; 3 of 13 on nodes not suspect (thin evidence: too few to compare)"},
		{"two flaky nodes, the calm node's pods all new", allNew, []string{"node-a", "node-b"},
			"6 of 6 pods that started here in the last 15m failed with exit 128; 3 of 51 on nodes not suspect"},
	}
	for _, tc := range tests {
		for _, live := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/live=%v", tc.name, live), func(t *testing.T) {
				m, now := planOf(tc.rows).judgeAt(live)
				nodes := m.Nodes(now)
				if got := suspects(nodes); !slices.Equal(got, tc.want) {
					for _, nd := range nodes {
						t.Logf("%s: %d pods, %d failed, suspect %v %q", nd.Name, nd.Pods, nd.FailedPods, nd.Suspect, nd.Why)
					}
					t.Fatalf("suspects = %v, want %v", got, tc.want)
				}
				if a := findNode(t, nodes, "node-a"); a.Why != tc.why {
					t.Errorf("node-a's why = %q, want %q", a.Why, tc.why)
				}
				for _, p := range m.pods {
					if p.Verdict.Class == classify.Doomed {
						t.Errorf("%s doomed (%s %q): the rollout's pods fail on flaky nodes only", p.Key, p.Verdict.Rule, p.Verdict.Reason)
					}
				}
			})
		}
	}
}

// sweepSmall is one simulated small cluster's parameters.
type sweepSmall struct {
	nodes, bad  int
	lo, hi      int     // the rollout's pods per node, uniform in [lo, hi]
	rate, noise float64 // the bad nodes' share of failed starts, and every node's
	live        bool
	seed        uint64
}

// build draws the cluster: each node's runtime (a third CRI-O), its pods of the rollout (one of
// three Deployments each) and a few that have run for hours, and which starts failed.
func (s sweepSmall) build() (clusterPlan, []bool) {
	r := rand.New(rand.NewPCG(s.seed, uint64(s.nodes)<<40|uint64(s.bad)<<32|uint64(s.lo)<<24|uint64(s.hi)<<16|
		uint64(100*s.rate)<<8|uint64(100*s.noise)))
	var c clusterPlan
	bad := make([]bool, s.nodes)
	for _, i := range r.Perm(s.nodes)[:s.bad] {
		bad[i] = true
	}
	k := 0
	for i := range s.nodes {
		rt := containerd
		if r.IntN(3) == 0 {
			rt = crio
		}
		c.nodes = append(c.nodes, planNode{fmt.Sprintf("node-%02d", i), true, rt})
		p := s.noise
		if bad[i] {
			p = s.rate + s.noise - s.rate*s.noise
		}
		for range s.lo + r.IntN(s.hi-s.lo+1) {
			c.pods = append(c.pods, planPod{node: i, workload: []string{"web", "cart", "search"}[r.IntN(3)],
				failed: r.Float64() < p, at: time.Duration(5+r.IntN(80)) * time.Second, shape: k})
			k++
		}
		for range r.IntN(4) {
			c.pods = append(c.pods, planPod{node: i, workload: "steady", old: true, shape: k})
			k++
		}
	}
	return c, bad
}

// failedPerNode is the distinct pods whose start failed on each node.
func (c clusterPlan) failedPerNode() []int {
	out := make([]int, len(c.nodes))
	for _, p := range c.pods {
		if p.failed {
			out[p.node]++
		}
	}
	return out
}

// startedPerNode is the pods of the rollout on each node: the pods that started or tried to.
func (c clusterPlan) startedPerNode() []int {
	out := make([]int, len(c.nodes))
	for _, p := range c.pods {
		if !p.old {
			out[p.node]++
		}
	}
	return out
}

// medianRule is the rule the outlier rule (classify.JudgeSuspects) replaced (model/nodes.go
// before 5325b6b): a node is suspect when at least minPods distinct pods failed to start there
// and at least classify.SuspectRatio times the median of the other nodes' counts, every node
// counted (0 for a node without failures).
func medianRule(failed []int, minPods int) []bool {
	sorted := slices.Clone(failed)
	sort.Ints(sorted)
	out := make([]bool, len(failed))
	for i, d := range failed {
		if d < minPods {
			continue
		}
		rest := slices.Clone(sorted)
		j := sort.SearchInts(rest, d)
		rest = slices.Delete(rest, j, j+1)
		median := 0
		if len(rest) > 0 {
			median = rest[(len(rest)-1)/2]
		}
		out[i] = d >= classify.SuspectRatio*median
	}
	return out
}

// tally is named, missed and false suspects over populations.
type tally struct{ named, missed, falses, expected, optionalNamed, dooms, wideDooms int }

func (a *tally) add(b tally) {
	a.named += b.named
	a.missed += b.missed
	a.falses += b.falses
	a.expected += b.expected
	a.optionalNamed += b.optionalNamed
	a.dooms += b.dooms
	a.wideDooms += b.wideDooms
}

// score counts a population's calls: a bad node is expected to be named when at least
// SuspectPods of its pods failed, at least half of its starts did, and the bad nodes are at most
// half of the cluster (more, and the trouble may be the cluster's: named or not, it is neither a
// miss nor false); a good node named is false.
func score(named, bad []bool, failed, started []int) tally {
	var t tally
	nbad := 0
	for _, b := range bad {
		if b {
			nbad++
		}
	}
	for i := range bad {
		switch {
		case !bad[i]:
			if named[i] {
				t.falses++
			}
		case failed[i] >= DefaultConfig().SuspectPods && 2*failed[i] >= started[i] && 2*nbad <= len(bad):
			t.expected++
			if named[i] {
				t.named++
			} else {
				t.missed++
			}
		case named[i]:
			t.optionalNamed++
		}
	}
	return t
}

// TestSuspectSweepSmall runs the whole model (pods, escalation, the suspect rule) over simulated
// small clusters during a rollout: 3 to 10 nodes with 2 to 60 pods of the rollout each (of three
// Deployments, a third of the nodes on CRI-O), 0 to 3 bad nodes failing 50% to 100% of their
// starts, background failures on every node of 0 to 5% of starts, as a snapshot and live, and
// beside it the median rule on the same failures. The targets: no false suspect, no false doom
// where at most half of the nodes are bad (no workload is bad: every doom there is false; where
// more are, the trouble is the cluster's, and pods failing on three nodes of it are doomed as not
// node-local, counted apart), and at most 1% of the expected bad nodes missed (score). With -v it
// prints the table by cluster size, bad nodes and dating.
func TestSuspectSweepSmall(t *testing.T) {
	sizes := []int{3, 4, 5, 7, 10}
	profiles := [][2]int{{2, 6}, {5, 20}, {20, 60}}
	rates := []float64{0.5, 0.75, 1}
	noises := []float64{0, 0.02, 0.05}
	seeds := 2
	if testing.Short() {
		seeds = 1
	}
	type key struct {
		nodes, bad int
		live       bool
	}
	newRule, oldRule := map[key]*tally{}, map[key]*tally{}
	var all, allOld tally
	populations := 0
	for _, n := range sizes {
		for bad := 0; bad <= 3 && bad < n; bad++ {
			rs := rates
			if bad == 0 {
				rs = rates[:1]
			}
			for _, prof := range profiles {
				for _, rate := range rs {
					for _, noise := range noises {
						for _, live := range []bool{false, true} {
							for seed := range seeds {
								s := sweepSmall{nodes: n, bad: bad, lo: prof[0], hi: prof[1], rate: rate, noise: noise, live: live, seed: uint64(seed + 1)}
								plan, isBad := s.build()
								m, now := plan.judgeAt(live)
								named := make([]bool, n)
								for _, nd := range m.Nodes(now) {
									if nd.Suspect {
										named[slices.IndexFunc(plan.nodes, func(p planNode) bool { return p.name == nd.Name })] = true
									}
								}
								failed, started := plan.failedPerNode(), plan.startedPerNode()
								got := score(named, isBad, failed, started)
								for _, p := range m.pods {
									if p.Verdict.Class != classify.Doomed {
										continue
									}
									if 2*bad > n {
										got.wideDooms++
										continue
									}
									got.dooms++
									t.Errorf("%+v: %s doomed (%s %q)", s, p.Key, p.Verdict.Rule, p.Verdict.Reason)
								}
								if got.falses > 0 {
									t.Errorf("%+v: false suspect: failed %v of %v, bad %v, named %v", s, failed, started, isBad, named)
								}
								if got.missed > 0 {
									t.Logf("%+v: missed: failed %v of %v, bad %v, named %v", s, failed, started, isBad, named)
								}
								old := score(medianRule(failed, DefaultConfig().SuspectPods), isBad, failed, started)
								k := key{n, bad, live}
								if newRule[k] == nil {
									newRule[k], oldRule[k] = &tally{}, &tally{}
								}
								newRule[k].add(got)
								oldRule[k].add(old)
								all.add(got)
								allOld.add(old)
								populations++
							}
						}
					}
				}
			}
		}
	}
	// A bad node the failure-percentage route does not name is one whose failures are not unlikely
	// enough at the rest's rate on so few starts (3 of 3 against 5 of 27 on 7 nodes): at most 1%.
	if 100*all.missed > all.expected {
		t.Errorf("%d of %d expected bad nodes missed, want at most 1%%", all.missed, all.expected)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d populations. This rule: %d of %d expected bad nodes named, %d missed, %d false suspects, %d false dooms "+
		"(and %d bad nodes named that were not expected; %d dooms where more than half of the nodes are bad). "+
		"The median rule: %d named, %d missed, %d false.\n",
		populations, all.named, all.expected, all.missed, all.falses, all.dooms, all.optionalNamed, all.wideDooms,
		allOld.named, allOld.missed, allOld.falses)
	b.WriteString("| nodes | bad | dating | expected | named | missed | false | false dooms | median rule: named | missed | false |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, n := range sizes {
		for bad := 0; bad <= 3 && bad < n; bad++ {
			for _, live := range []bool{false, true} {
				a, o := newRule[key{n, bad, live}], oldRule[key{n, bad, live}]
				dating := "snapshot"
				if live {
					dating = "live"
				}
				fmt.Fprintf(&b, "| %d | %d | %s | %d | %d | %d | %d | %d | %d | %d | %d |\n", n, bad, dating,
					a.expected, a.named, a.missed, a.falses, a.dooms, o.named, o.missed, o.falses)
			}
		}
	}
	t.Log("\n" + b.String())
}

// TestFirstFailuresOfARollout: the first pods of a rollout fail on two flaky nodes and a calm one
// while the others are still being created, before any is ready: three nodes, none healthy yet.
// Escalation waits for the revision's pods to have had their try, so nothing is doomed, and the
// pods that then start make it the flaky nodes' trouble. A revision whose every pod fails on three
// nodes is escalated once they all have.
func TestFirstFailuresOfARollout(t *testing.T) {
	nodes := []planNode{{"flaky-a", true, containerd}, {"flaky-b", true, containerd}, {"calm-1", true, containerd},
		{"calm-2", true, containerd}, {"calm-3", true, containerd}}
	first := clusterPlan{nodes: nodes}
	for i := range 6 {
		first.pods = append(first.pods, planPod{node: i % 5, workload: "web", failed: i < 3, at: 20 * time.Second, shape: 0})
	}
	m := New(DefaultConfig())
	now := t0
	ns := make([]*corev1.Node, len(nodes))
	for i, n := range nodes {
		ns[i] = withUID(node(n.name, true, false), n.name+"-uid")
	}
	ds, rss := first.workloads()
	m.Apply(&contract.Batch{Nodes: ns, Workloads: append(contract.WorkloadsOf(ds), contract.WorkloadsOf(rss)...)}, now)
	pods := first.objects(now, false)
	creating := first.objects(now, true)
	// The three failed pods, and three still creating.
	apply(m, now, pods[0], pods[1], pods[2], creating[3], creating[4], creating[5])
	for _, p := range m.pods {
		if p.Verdict.Class == classify.Doomed {
			t.Errorf("%s doomed (%s %q) while the rollout's other pods are still creating", p.Key, p.Verdict.Rule, p.Verdict.Reason)
		}
	}
	// They start: the revision runs, and the failures are where it ran.
	apply(m, now.Add(10*time.Second), pods[3], pods[4], pods[5])
	for _, p := range m.pods {
		if p.Verdict.Class == classify.Doomed {
			t.Errorf("%s doomed (%s %q) once half the revision runs", p.Key, p.Verdict.Rule, p.Verdict.Reason)
		}
	}

	// A revision that cannot start: its pods fail wherever they land, once all have tried.
	bad := clusterPlan{nodes: nodes}
	for i := range 4 {
		bad.pods = append(bad.pods, planPod{node: i % 4, workload: "web", failed: true, at: 20 * time.Second})
	}
	m = New(DefaultConfig())
	ds, rss = bad.workloads()
	m.Apply(&contract.Batch{Nodes: ns, Workloads: append(contract.WorkloadsOf(ds), contract.WorkloadsOf(rss)...)}, now)
	pods, creating = bad.objects(now, false), bad.objects(now, true)
	apply(m, now, pods[0], pods[1], pods[2], creating[3])
	if v := m.Pod("shop/" + pods[0].Name).Verdict; v.Class == classify.Doomed {
		t.Errorf("doomed (%q) before the revision's last pod tried", v.Reason)
	}
	apply(m, now.Add(5*time.Second), pods[3])
	if v := m.Pod("shop/" + pods[0].Name).Verdict; v.Rule != classify.RuleEscalated || !strings.Contains(v.Reason, "on 4 nodes") {
		t.Errorf("verdict = %s %s %q, want escalated on 4 nodes once every pod failed", v.Class, v.Rule, v.Reason)
	}
}
