package model

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"doomwatch/classify"
	"doomwatch/contract"
	"doomwatch/model/podtest"
)

func notReadyWithProbe() podOpt {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
			HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}}}
		p.Status.ContainerStatuses[0].Ready = false
	}
}

func terminating() podOpt {
	return func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: t0} }
}

// TestGateDeployment: the gate sees the Deployment's rollout as the rollouts view does, the new
// ReplicaSet's pods as current, their doomed containers with whether a previous instance exists,
// what the rollout still waits for (readiness, old pods terminating), and a missing Deployment as
// not found.
func TestGateDeployment(t *testing.T) {
	m := New(DefaultConfig())
	d := deployment("shop", "pay", 3, "3", func(d *appsv1.Deployment) { d.Status.UpdatedReplicas, d.Status.AvailableReplicas = 3, 1 })
	m.Apply(&contract.Batch{
		Workloads: contract.Workloads(d, replicaSet("shop", "pay-old", "pay", "2"), replicaSet("shop", "pay-new", "pay", "3")),
	}, t0)
	newPod := func(name string, opts ...podOpt) *corev1.Pod {
		return pod("shop", name, append([]podOpt{ownedBy("ReplicaSet", "pay-new"), onNode("node-1")}, opts...)...)
	}
	apply(m, t0,
		newPod("pay-new-1", crashLoop()),
		newPod("pay-new-2", notReadyWithProbe()),
		newPod("pay-new-3", notReadyWithProbe()),
		pod("shop", "pay-old-1", ownedBy("ReplicaSet", "pay-old"), terminating()),
		pod("shop", "other-1", crashLoop())) // not the Deployment's: unmanaged

	got := m.Gate([]Target{{Kind: contract.KindDeployment, Namespace: "shop", Name: "pay"}, {Kind: contract.KindDeployment, Namespace: "shop", Name: "pya"}}, t0)
	st, typo := got[0], got[1]
	if typo.Found || typo.Target.String() != "deployment/pya" {
		t.Errorf("a typo is found: %+v", typo)
	}
	if !st.Found || st.Rollout.Kind != "Deployment" || st.Rollout.Verdict != classify.RolloutProgressing {
		t.Fatalf("rollout: %+v", st.Rollout)
	}
	if st.Pods.Pods != 3 || st.Pods.Doomed != 1 || st.Pods.Progressing != 2 || st.Old != 1 {
		t.Errorf("pods %+v, old %d; want 3 current (1 doomed, 2 progressing) and 1 old", st.Pods, st.Old)
	}
	if len(st.Doomed) != 1 {
		t.Fatalf("doomed: %+v", st.Doomed)
	}
	p := st.Doomed[0]
	if p.Ref() != "pay-new-1/app" || p.Node != "node-1" || !p.Previous || !strings.HasPrefix(p.Reason, "Crashing repeatedly (exit 137)") {
		t.Errorf("doomed container: %+v", p)
	}
	want := []GatePending{
		{Reason: "Readiness probe must respond at /healthz (port 8080)", Pods: 2, Example: "pay-new-2/app"},
		{Reason: "old pods still terminating", Pods: 1, Example: "pay-old-1"},
	}
	if len(st.Pending) != len(want) {
		t.Fatalf("pending %+v, want %+v", st.Pending, want)
	}
	for i := range want {
		if st.Pending[i] != want[i] {
			t.Errorf("pending[%d] = %+v, want %+v", i, st.Pending[i], want[i])
		}
	}
}

// TestGateNamesTheSuspectNode: transient exit-128 failures of the workload's pods on one node make
// that node suspect, and the gate hands it over with its reason.
func TestGateNamesTheSuspectNode(t *testing.T) {
	m := New(DefaultConfig())
	m.Apply(&contract.Batch{
		Nodes:     []*corev1.Node{node("node-1", true, false), node("node-3", true, false)},
		Workloads: contract.Workloads(deployment("shop", "web", 3, "1"), replicaSet("shop", "web-1", "web", "1")),
	}, t0)
	var pods []*corev1.Pod
	for _, name := range []string{"web-1-a", "web-1-b", "web-1-c"} {
		pods = append(pods, pod("shop", name, ownedBy("ReplicaSet", "web-1"), onNode("node-3"), startFailed128(t0.Add(-time.Minute), 1)))
	}
	apply(m, t0, pods...)
	st := m.Gate([]Target{{Kind: contract.KindDeployment, Namespace: "shop", Name: "web"}}, t0)[0]
	if len(st.Transient) != 3 || st.Transient[0].Node != "node-3" {
		t.Fatalf("transient: %+v", st.Transient)
	}
	if len(st.Suspect) != 1 || st.Suspect[0].Name != "node-3" || !strings.HasPrefix(st.Suspect[0].Why, "3 of 3 pods") {
		t.Errorf("suspect: %+v", st.Suspect)
	}
}

// TestGateStatefulSetAndDaemonSet: current pods by revision label; OnDelete has no rollout status.
func TestGateStatefulSetAndDaemonSet(t *testing.T) {
	m := New(DefaultConfig())
	rolling := appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType}
	s := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db", Generation: 1},
		Spec:   appsv1.StatefulSetSpec{Replicas: new(int32(2)), UpdateStrategy: rolling},
		Status: appsv1.StatefulSetStatus{ObservedGeneration: 1, UpdateRevision: "db-2", CurrentRevision: "db-1"}}
	onDelete := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "agent", Generation: 1},
		Spec: appsv1.DaemonSetSpec{UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}}}
	m.Apply(&contract.Batch{Workloads: contract.Workloads(s, onDelete)}, t0)
	apply(m, t0,
		pod("shop", "db-0", ownedBy("StatefulSet", "db"), labelled(revisionHashLabel, "db-1")),
		pod("shop", "db-1", ownedBy("StatefulSet", "db"), labelled(revisionHashLabel, "db-2"), notReadyWithProbe()))
	got := m.Gate([]Target{{Kind: contract.KindStatefulSet, Namespace: "shop", Name: "db"}, {Kind: contract.KindDaemonSet, Namespace: "shop", Name: "agent"}}, t0)
	if st := got[0]; st.Pods.Pods != 1 || st.Old != 1 || st.Rollout.Verdict != classify.RolloutProgressing || st.Target.String() != "statefulset/db" {
		t.Errorf("statefulset: %+v", st)
	}
	if st := got[1]; !st.Found || st.Unsupported != "rollout status is only available for RollingUpdate strategy type" {
		t.Errorf("OnDelete daemonset: %+v", st)
	}
}

// TestResolveSelectsDeploymentsByLabel: -l picks Deployments by their labels, in one namespace.
func TestResolveSelectsDeploymentsByLabel(t *testing.T) {
	m := New(DefaultConfig())
	withLabels := func(d *appsv1.Deployment, l map[string]string) *appsv1.Deployment { d.Labels = l; return d }
	m.Apply(&contract.Batch{Workloads: contract.Workloads(withLabels(deployment("shop", "web", 1, "1"), map[string]string{"team": "shop", "tier": "web"}),
		withLabels(deployment("shop", "api", 1, "1"), map[string]string{"team": "shop"}),
		withLabels(deployment("shop", "db-proxy", 1, "1"), map[string]string{"team": "data"}),
		withLabels(deployment("other", "web", 1, "1"), map[string]string{"team": "shop"}))}, t0)
	sel, err := labels.Parse("team=shop")
	if err != nil {
		t.Fatal(err)
	}
	got := m.Resolve(contract.KindDeployment, "shop", sel)
	if len(got) != 2 || got[0].Name != "api" || got[1].Name != "web" || got[0].Namespace != "shop" {
		t.Errorf("Resolve = %+v, want shop's api and web", got)
	}
}

// TestGateBarePod: a bare pod is complete once it has Succeeded, doomed when doomed or when it is
// being deleted (Krane's rule for an unmanaged pod, where the dashboard says "Terminating",
// progressing), and progressing otherwise, even when running and ready.
func TestGateBarePod(t *testing.T) {
	succeeded := func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodSucceeded
		p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"}}
	}
	for _, tc := range []struct {
		name    string
		opts    []podOpt
		verdict classify.RolloutClass
		reason  string
	}{
		{"running and ready", nil, classify.RolloutProgressing, "a bare pod completes when it has succeeded; phase Running"},
		{"succeeded", []podOpt{succeeded}, classify.RolloutComplete, "pod migrate succeeded"},
		{"being deleted", []podOpt{terminating()}, classify.RolloutDoomed, "Pod status: Terminating: a bare pod waited for is being deleted"},
		{"crash-looping", []podOpt{crashLoop()}, classify.RolloutDoomed, "Crashing repeatedly (exit 137)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := New(DefaultConfig())
			apply(m, t0, pod("shop", "migrate", append([]podOpt{onNode("node-1")}, tc.opts...)...))
			st := m.Gate([]Target{{Kind: contract.KindPod, Namespace: "shop", Name: "migrate"}, {Kind: contract.KindPod, Namespace: "shop", Name: "gone"}}, t0)
			if st[1].Found {
				t.Errorf("a missing pod is found")
			}
			r := st[0].Rollout
			if !st[0].Found || r.Kind != "Pod" || r.Verdict != tc.verdict || !strings.HasPrefix(r.Reason, tc.reason) {
				t.Errorf("got %s %q, want %s %q", r.Verdict, r.Reason, tc.verdict, tc.reason)
			}
			if tc.verdict == classify.RolloutDoomed && (len(st[0].Doomed) != 1 || st[0].Doomed[0].Pod != "migrate") {
				t.Errorf("doomed problems: %+v", st[0].Doomed)
			}
		})
	}
}

// TestGateFollowsPodsAfterTheFirstLook: once the gate has looked, the pods it reads are kept as
// they come, change controller and go, and a new ReplicaSet's pods are found when it becomes new.
func TestGateFollowsPodsAfterTheFirstLook(t *testing.T) {
	m := New(DefaultConfig())
	m.Apply(&contract.Batch{
		Workloads: contract.Workloads(deployment("shop", "web", 2, "1"), replicaSet("shop", "web-1", "web", "1")),
	}, t0)
	apply(m, t0, pod("shop", "web-1-a", ownedBy("ReplicaSet", "web-1")))
	targets := []Target{{Kind: contract.KindDeployment, Namespace: "shop", Name: "web"}}
	count := func() int { return m.Gate(targets, t0)[0].Pods.Pods }
	if n := count(); n != 1 {
		t.Fatalf("first look: %d pods", n)
	}
	apply(m, t0, pod("shop", "web-1-b", ownedBy("ReplicaSet", "web-1")), pod("shop", "other", ownedBy("ReplicaSet", "api-1")))
	if n := count(); n != 2 {
		t.Errorf("after a pod came: %d pods, want 2", n)
	}
	m.Apply(&contract.Batch{Deletes: []contract.Ref{{Kind: contract.KindPod, Namespace: "shop", Name: "web-1-a"}}}, t0)
	if n := count(); n != 1 {
		t.Errorf("after a pod went: %d pods, want 1", n)
	}
	apply(m, t0, pod("shop", "web-1-b", ownedBy("ReplicaSet", "api-1"))) // adopted elsewhere
	if n := count(); n != 0 {
		t.Errorf("after the pod changed controller: %d pods, want 0", n)
	}
	// A new revision: its ReplicaSet, then its pods.
	m.Apply(&contract.Batch{
		Workloads: contract.Workloads(deployment("shop", "web", 2, "2"), replicaSet("shop", "web-2", "web", "2")),
	}, t0)
	apply(m, t0, pod("shop", "web-2-a", ownedBy("ReplicaSet", "web-2")), pod("shop", "web-2-b", ownedBy("ReplicaSet", "web-2")))
	if st := m.Gate(targets, t0)[0]; st.Pods.Pods != 2 || st.Old != 0 {
		t.Errorf("new revision: %d current, %d old; want 2 and 0", st.Pods.Pods, st.Old)
	}
}

// TestGateJob: a Job is found by its name, its pods are its current ones, and its verdict is
// classify.JobVerdict's: a failed attempt with retries left is transient and keeps it
// progressing, a pod whose image does not exist dooms it before the Job controller gives up, and
// the controller's conditions decide once written.
func TestGateJob(t *testing.T) {
	m := New(DefaultConfig())
	targets := []Target{{Kind: contract.KindJob, Namespace: "batch", Name: "migrate"}, {Kind: contract.KindJob, Namespace: "batch", Name: "nothing"}}
	m.Apply(&contract.Batch{Workloads: contract.Workloads(job("batch", "migrate", 6, 1)), Pods: records(failedJobPod("migrate-a"))}, t0)
	sts := m.Gate(targets, t0)
	st := sts[0]
	if !st.Found || st.Rollout.Verdict != classify.RolloutProgressing || st.Pods.Transient != 1 || len(st.Transient) != 1 {
		t.Fatalf("a Job retrying: %+v", st)
	}
	if sts[1].Found {
		t.Error("a Job that does not exist is found")
	}
	apply(m, t0, pod("batch", "migrate-b", onNode("node-1"), ownedBy("Job", "migrate"), imageNotFound()))
	st = m.Gate(targets, t0)[0]
	if st.Rollout.Verdict != classify.RolloutDoomed || !strings.HasPrefix(st.Rollout.Reason, "1/2 pods doomed: Image not found") ||
		len(st.Doomed) != 1 || st.Doomed[0].Pod != "migrate-b" {
		t.Fatalf("a Job with a pod whose image does not exist: %s %q, doomed %+v", st.Rollout.Verdict, st.Rollout.Reason, st.Doomed)
	}
	failed := batchv1.JobCondition{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded",
		Message: "Job has reached the specified backoff limit"}
	m.Apply(&contract.Batch{Workloads: contract.Workloads(job("batch", "migrate", 6, 7, failed))}, t0)
	st = m.Gate(targets, t0)[0]
	if st.Rollout.Verdict != classify.RolloutDoomed || st.Rollout.Reason != "Job failed (BackoffLimitExceeded): Job has reached the specified backoff limit" {
		t.Fatalf("a failed Job: %s %q", st.Rollout.Verdict, st.Rollout.Reason)
	}
	if len(m.Rollouts()) != 0 {
		t.Errorf("a Job shows as a rollout: %+v", m.Rollouts())
	}
	m.Apply(&contract.Batch{Deletes: []contract.Ref{{Kind: contract.KindJob, Namespace: "batch", Name: "migrate"}}}, t0)
	if st = m.Gate(targets, t0)[0]; st.Found {
		t.Error("a deleted Job is still found")
	}
}

// TestGateTimeoutOverride: a workload's Krane timeout-override reaches the gate as its own
// timeout; one Krane would refuse makes it a workload the gate cannot wait for, saying why.
func TestGateTimeoutOverride(t *testing.T) {
	m := New(DefaultConfig())
	withTimeout := func(v string) func(*appsv1.Deployment) {
		return func(d *appsv1.Deployment) { d.Annotations = map[string]string{contract.TimeoutAnnotation: v} }
	}
	m.Apply(&contract.Batch{Workloads: contract.Workloads(
		deployment("shop", "web", 3, "1", withTimeout("90S")),
		deployment("shop", "api", 3, "1", withTimeout("PT25H")),
		deployment("shop", "cart", 3, "1"),
	)}, t0)
	sts := m.Gate([]Target{{Kind: contract.KindDeployment, Namespace: "shop", Name: "web"}, {Kind: contract.KindDeployment, Namespace: "shop", Name: "api"}, {Kind: contract.KindDeployment, Namespace: "shop", Name: "cart"}}, t0)
	if sts[0].Timeout != 90*time.Second || sts[0].Unsupported != "" {
		t.Errorf("web: timeout %s, unsupported %q; want 90s", sts[0].Timeout, sts[0].Unsupported)
	}
	if want := `annotation krane.shopify.io/timeout-override: "PT25H": Value must be less than 24h`; sts[1].Unsupported != want {
		t.Errorf("api: unsupported %q, want %q", sts[1].Unsupported, want)
	}
	if sts[2].Timeout != 0 || sts[2].Unsupported != "" {
		t.Errorf("cart: timeout %s, unsupported %q; want none", sts[2].Timeout, sts[2].Unsupported)
	}
}

// TestGateRequiredRollout: a Deployment's Krane required-rollout reaches the gate as the doomed
// pods it tolerates; one Krane would refuse makes it a workload the gate cannot wait for, with
// Krane's message.
func TestGateRequiredRollout(t *testing.T) {
	m := New(DefaultConfig())
	withRequired := func(v string) func(*appsv1.Deployment) {
		return func(d *appsv1.Deployment) { d.Annotations[contract.RequiredRolloutAnnotation] = v }
	}
	m.Apply(&contract.Batch{Workloads: contract.Workloads(
		deployment("shop", "web", 10, "1", withRequired("80%")),
		deployment("shop", "api", 3, "1", withRequired("Full")),
		deployment("shop", "cart", 3, "1"),
	)}, t0)
	sts := m.Gate([]Target{{Kind: contract.KindDeployment, Namespace: "shop", Name: "web"}, {Kind: contract.KindDeployment, Namespace: "shop", Name: "api"}, {Kind: contract.KindDeployment, Namespace: "shop", Name: "cart"}}, t0)
	if sts[0].Rollout.Tolerates != 2 || sts[0].Unsupported != "" {
		t.Errorf("web: tolerates %d, unsupported %q; want 2", sts[0].Rollout.Tolerates, sts[0].Unsupported)
	}
	if want := `annotation krane.shopify.io/required-rollout: 'krane.shopify.io/required-rollout: Full' is invalid. Acceptable values: maxUnavailable, full, none`; sts[1].Unsupported != want {
		t.Errorf("api: unsupported %q, want %q", sts[1].Unsupported, want)
	}
	if sts[2].Rollout.Tolerates != 0 || sts[2].Unsupported != "" {
		t.Errorf("cart: tolerates %d, unsupported %q; want none", sts[2].Rollout.Tolerates, sts[2].Unsupported)
	}
}

// TestGateCronJob: a CronJob is waited for through its latest Job, the newest it controls (not a
// Job of another CronJob of its name, another UID) that had not finished when the wait began:
// judged as that Job. Without one it is complete, as Krane passes a CronJob that exists.
func TestGateCronJob(t *testing.T) {
	m := New(DefaultConfig())
	cron := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "batch", Name: "nightly", UID: "CronJob-nightly"},
		Spec: batchv1.CronJobSpec{Schedule: "0 3 * * *"}}
	targets := []Target{{Kind: contract.KindCronJob, Namespace: "batch", Name: "nightly"}}
	m.Apply(&contract.Batch{Workloads: contract.Workloads(cron)}, t0)
	st := m.Gate(targets, t0)[0]
	if !st.Found || st.Rollout.Verdict != classify.RolloutComplete ||
		st.Rollout.Reason != `cronjob "nightly" has no Job running or made since the wait began (schedule "0 3 * * *"): complete as it exists, as Krane judges a CronJob` {
		t.Fatalf("no Job yet: %+v", st)
	}
	run := func(name string, created time.Duration, uid types.UID, conds ...batchv1.JobCondition) *batchv1.Job {
		j := job("batch", name, 0, 0, conds...)
		j.UID, j.CreationTimestamp = types.UID("Job-"+name), metav1.NewTime(t0.Add(created))
		j.OwnerReferences = []metav1.OwnerReference{podtest.ControllerRef("CronJob", "nightly")}
		j.OwnerReferences[0].UID = uid
		return j
	}
	failed := batchv1.JobCondition{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded",
		Message: "Job has reached the specified backoff limit"}
	complete := batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: "CompletionsReached",
		Message: "Reached expected number of succeeded pods"}
	m.Apply(&contract.Batch{Workloads: contract.Workloads(
		run("nightly-100", 0, "CronJob-nightly", complete),
		run("nightly-200", time.Hour, "CronJob-nightly", failed),
		run("nightly-300", 2*time.Hour, "CronJob-nightly-before", complete),
	)}, t0)
	st = m.Gate(targets, t0)[0]
	if st.Rollout.Verdict != classify.RolloutDoomed ||
		st.Rollout.Reason != "job/nightly-200: Job failed (BackoffLimitExceeded): Job has reached the specified backoff limit" {
		t.Fatalf("latest Job failed: %s %q", st.Rollout.Verdict, st.Rollout.Reason)
	}
	m.Apply(&contract.Batch{Workloads: contract.Workloads(run("nightly-400", 3*time.Hour, "CronJob-nightly", complete))}, t0)
	if st = m.Gate(targets, t0)[0]; st.Rollout.Verdict != classify.RolloutComplete || !strings.HasPrefix(st.Rollout.Reason, "job/nightly-400: ") {
		t.Fatalf("a newer Job complete: %s %q", st.Rollout.Verdict, st.Rollout.Reason)
	}

	// A wait that began after those runs finished judges none of them; a run still going when it
	// began is its to judge.
	failedEarlier := failed
	failedEarlier.LastTransitionTime = metav1.NewTime(t0.Add(time.Hour))
	m.Apply(&contract.Batch{Workloads: contract.Workloads(run("nightly-400", 3*time.Hour, "CronJob-nightly", failedEarlier))}, t0)
	later := []Target{{Kind: contract.KindCronJob, Namespace: "batch", Name: "nightly", Since: t0.Add(4 * time.Hour)}}
	if st = m.Gate(later, t0)[0]; st.Rollout.Verdict != classify.RolloutComplete || !strings.Contains(st.Rollout.Reason, "no Job running or made since the wait began") {
		t.Fatalf("runs finished before the wait: %s %q", st.Rollout.Verdict, st.Rollout.Reason)
	}
	m.Apply(&contract.Batch{Workloads: contract.Workloads(run("nightly-500", 4*time.Hour-time.Minute, "CronJob-nightly"))}, t0)
	if st = m.Gate(later, t0)[0]; !strings.HasPrefix(st.Rollout.Reason, "job/nightly-500: ") {
		t.Fatalf("a run going when the wait began: %s %q", st.Rollout.Verdict, st.Rollout.Reason)
	}
}
