package model

import (
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"doomwatch/classify"
	"doomwatch/contract"
)

func rolloutOf(t *testing.T, m *Model, name string) Rollout {
	t.Helper()
	for _, r := range m.Rollouts() {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("rollout %q missing", name)
	return Rollout{}
}

func TestRolloutVerdicts(t *testing.T) {
	tests := []struct {
		name    string
		d       *appsv1.Deployment
		verdict classify.RolloutClass
		reason  string
	}{
		{"complete", deployment("shop", "web", 3, "2"), classify.RolloutComplete,
			`deployment "web" successfully rolled out`},
		{"generation not observed comes first", deployment("shop", "web", 3, "2", func(d *appsv1.Deployment) {
			d.Generation = 3
			d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Reason: "ProgressDeadlineExceeded"}}
		}), classify.RolloutProgressing, "Waiting for deployment spec update to be observed..."},
		{"updated < desired", deployment("shop", "web", 3, "2", func(d *appsv1.Deployment) { d.Status.UpdatedReplicas = 1 }),
			classify.RolloutProgressing, `Waiting for deployment "web" rollout to finish: 1 out of 3 new replicas have been updated...`},
		{"old replicas pending termination", deployment("shop", "web", 3, "2", func(d *appsv1.Deployment) { d.Status.Replicas = 5 }),
			classify.RolloutProgressing, `Waiting for deployment "web" rollout to finish: 2 old replicas are pending termination...`},
		{"available < updated", deployment("shop", "web", 3, "2", func(d *appsv1.Deployment) { d.Status.AvailableReplicas = 2 }),
			classify.RolloutProgressing, `Waiting for deployment "web" rollout to finish: 2 of 3 updated replicas are available...`},
		{"progress deadline exceeded", deployment("shop", "web", 3, "2", func(d *appsv1.Deployment) {
			d.Status.UpdatedReplicas = 1
			d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"}}
		}), classify.RolloutDoomed, `deployment "web" exceeded its progress deadline`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := New(DefaultConfig())
			m.Apply(&contract.Batch{Workloads: contract.Workloads(tc.d)}, t0)
			r := rolloutOf(t, m, "web")
			if r.Verdict != tc.verdict || r.Reason != tc.reason {
				t.Errorf("got %s %q, want %s %q", r.Verdict, r.Reason, tc.verdict, tc.reason)
			}
		})
	}
}

func TestRolloutDoomedWhenEveryNewPodIsDoomed(t *testing.T) {
	m := New(DefaultConfig())
	d := deployment("shop", "pay", 2, "3", func(d *appsv1.Deployment) { d.Status.UpdatedReplicas, d.Status.AvailableReplicas = 2, 0 })
	m.Apply(&contract.Batch{
		Workloads: contract.Workloads(d, replicaSet("shop", "pay-old", "pay", "2"), replicaSet("shop", "pay-new", "pay", "3")),
	}, t0)
	newPod := func(name string, opts ...podOpt) *corev1.Pod {
		return pod("shop", name, append([]podOpt{ownedBy("ReplicaSet", "pay-new"), image("registry.example/app:v9")}, opts...)...)
	}
	apply(m, t0,
		newPod("pay-new-1", imageNotFound()),
		newPod("pay-new-2"), // still running: not every new pod is doomed
		pod("shop", "pay-old-1", ownedBy("ReplicaSet", "pay-old"), crashLoop()))
	r := rolloutOf(t, m, "pay")
	if r.Verdict != classify.RolloutProgressing || r.NewReplicaSet != "pay-new" || len(r.OldReplicaSets) != 1 || r.OldReplicaSets[0] != "pay-old" {
		t.Fatalf("one new pod healthy: got %+v", r)
	}
	if m.Pod("shop/pay-new-1").Owner != "Deployment/pay" {
		t.Errorf("owner = %q", m.Pod("shop/pay-new-1").Owner)
	}

	apply(m, t0, newPod("pay-new-2", imageBackOff())) // never saw "not found": transient
	if r = rolloutOf(t, m, "pay"); r.Verdict == classify.RolloutDoomed {
		t.Fatalf("a transient new pod keeps the rollout alive: %+v", r)
	}
	apply(m, t0, newPod("pay-new-2", imageNotFound()))
	r = rolloutOf(t, m, "pay")
	want := `2/2 new pods doomed: Image not found: registry.example/app:v9`
	if r.Verdict != classify.RolloutDoomed || r.Reason != want {
		t.Errorf("got %s %q, want doomed %q", r.Verdict, r.Reason, want)
	}
	if rs := m.Rollouts(); rs[0].Name != "pay" {
		t.Errorf("doomed rollouts first")
	}
}

// TestEvictedPodsDoNotKeepADoomedRolloutAlive: an evicted pod of the new ReplicaSet, replaced by it
// and left in the API, is not one of the pods the all-doomed rule waits for.
func TestEvictedPodsDoNotKeepADoomedRolloutAlive(t *testing.T) {
	m := New(DefaultConfig())
	d := deployment("shop", "pay", 2, "3", func(d *appsv1.Deployment) { d.Status.UpdatedReplicas, d.Status.AvailableReplicas = 2, 0 })
	m.Apply(&contract.Batch{Workloads: contract.Workloads(d, replicaSet("shop", "pay-new", "pay", "3"))}, t0)
	newPod := func(name string, opts ...podOpt) *corev1.Pod {
		return pod("shop", name, append([]podOpt{ownedBy("ReplicaSet", "pay-new"), image("registry.example/app:v9")}, opts...)...)
	}
	evicted := newPod("pay-new-0")
	// The kubelet's eviction as classify/testdata/evicted-managed.yaml has it (kubernetes
	// pkg/kubelet/eviction/helpers.go evictionMessage).
	evicted.Status = corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted",
		Message: "The node was low on resource: memory. Threshold quantity: 100Mi, available: 51200Ki. " +
			"Container app was using 1200Mi, request is 0, has larger consumption of memory. "}
	apply(m, t0, evicted, newPod("pay-new-1", imageNotFound()), newPod("pay-new-2", imageNotFound()))
	if v := m.Pod("shop/pay-new-0").Verdict; v.Rule != classify.RulePodEvicted {
		t.Fatalf("the evicted pod is %s, want pod-evicted; the test proves nothing", v.Rule)
	}
	r := rolloutOf(t, m, "pay")
	want := `2/2 new pods doomed: Image not found: registry.example/app:v9`
	if r.Verdict != classify.RolloutDoomed || r.Reason != want {
		t.Errorf("got %s %q, want doomed %q", r.Verdict, r.Reason, want)
	}
	// Deleting it changes nothing; the counts stay right.
	m.Apply(&contract.Batch{Deletes: []contract.Ref{{Kind: contract.KindPod, Namespace: "shop", Name: "pay-new-0"}}}, t0)
	if r := rolloutOf(t, m, "pay"); r.Verdict != classify.RolloutDoomed || r.Reason != want {
		t.Errorf("after the evicted pod is deleted: %s %q, want doomed %q", r.Verdict, r.Reason, want)
	}
}

func TestNewReplicaSetByTemplateWithoutRevisions(t *testing.T) {
	tmpl := func(img, hash string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web", "pod-template-hash": hash}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: img}}},
		}
	}
	d := deployment("shop", "web", 1, "")
	delete(d.Annotations, contract.RevisionAnnotation)
	d.Spec.Template = tmpl("app:v2", "")
	delete(d.Spec.Template.Labels, "pod-template-hash")
	old, cur := replicaSet("shop", "web-aaa", "web", ""), replicaSet("shop", "web-bbb", "web", "")
	old.Spec.Template, cur.Spec.Template = tmpl("app:v1", "aaa"), tmpl("app:v2", "bbb")
	m := New(DefaultConfig())
	m.Apply(&contract.Batch{Workloads: contract.Workloads(d, old, cur)}, t0)
	if r := rolloutOf(t, m, "web"); r.NewReplicaSet != "web-bbb" {
		t.Errorf("new RS = %q, want web-bbb", r.NewReplicaSet)
	}
}

func TestOwnerResolution(t *testing.T) {
	m := New(DefaultConfig())
	// The pod arrives before its ReplicaSet: grouped under the ReplicaSet until it is known.
	apply(m, t0, pod("shop", "web-1", onNode("node-1"), ownedBy("ReplicaSet", "web-7d9f"), startFailed128(t0, 1)))
	if o := m.Pod("shop/web-1").Owner; o != "ReplicaSet/web-7d9f" {
		t.Fatalf("owner before RS known = %q", o)
	}
	m.Apply(&contract.Batch{Workloads: contract.Workloads(replicaSet("shop", "web-7d9f", "web", "1"))}, t0)
	if o := m.Pod("shop/web-1").Owner; o != "Deployment/web" {
		t.Fatalf("owner after RS known = %q", o)
	}
	if fs := m.Failures(t0); len(fs) != 1 || fs[0].Workload != "shop/Deployment/web" {
		t.Errorf("ledger workload not regrouped: %+v", fs)
	}

	yes := true
	job := &batchv1.Job{}
	job.Namespace, job.Name = "shop", "nightly-123"
	job.OwnerReferences = []metav1.OwnerReference{{Kind: "CronJob", Name: "nightly", Controller: &yes}}
	m.Apply(&contract.Batch{Workloads: contract.Workloads(job)}, t0)
	apply(m, t0,
		pod("shop", "nightly-123-x", ownedBy("Job", "nightly-123")),
		pod("shop", "db-0", ownedBy("StatefulSet", "db")),
		pod("shop", "loner"))
	for key, want := range map[string]string{"shop/nightly-123-x": "CronJob/nightly", "shop/db-0": "StatefulSet/db", "shop/loner": ""} {
		if o := m.Pod(key).Owner; o != want {
			t.Errorf("%s owner = %q, want %q", key, o, want)
		}
	}
}

// TestOwnerCacheForgetsControllersWithoutPods: a long session sees a new ReplicaSet every rollout;
// the owner cache keeps the controllers of the pods it has, no more. A pod still terminating keeps
// its Deployment after the ReplicaSet is deleted.
func TestOwnerCacheForgetsControllersWithoutPods(t *testing.T) {
	m := New(DefaultConfig())
	for i := range 50 {
		rs := fmt.Sprintf("web-%04d", i)
		m.Apply(&contract.Batch{Workloads: contract.Workloads(replicaSet("shop", rs, "web", "1"))}, t0)
		apply(m, t0, pod("shop", rs+"-a", ownedBy("ReplicaSet", rs)), pod("shop", rs+"-b", ownedBy("ReplicaSet", rs)))
		m.Apply(&contract.Batch{Deletes: []contract.Ref{{Kind: contract.KindPod, Namespace: "shop", Name: rs + "-a"}, {Kind: contract.KindPod, Namespace: "shop", Name: rs + "-b"},
			{Kind: contract.KindReplicaSet, Namespace: "shop", Name: rs}}}, t0)
	}
	if n := len(m.owners); n != 0 {
		t.Errorf("%d controllers cached with no pod left", n)
	}
	m.Apply(&contract.Batch{Workloads: contract.Workloads(replicaSet("shop", "web-last", "web", "1"))}, t0)
	apply(m, t0, pod("shop", "web-last-a", ownedBy("ReplicaSet", "web-last")))
	m.Apply(&contract.Batch{Deletes: []contract.Ref{{Kind: contract.KindReplicaSet, Namespace: "shop", Name: "web-last"}}}, t0)
	apply(m, t0, pod("shop", "web-last-a", ownedBy("ReplicaSet", "web-last"), crashLoop()))
	if p := m.Pod("shop/web-last-a"); p.Owner != "Deployment/web" || p.workload != "shop/Deployment/web" {
		t.Errorf("a pod of a deleted ReplicaSet lost its Deployment: owner %q, workload %q", p.Owner, p.workload)
	}
	if n := len(m.owners); n != 1 {
		t.Errorf("%d controllers cached for one pod", n)
	}
}

// A rollout past its progress deadline names the doom of its new pods, even when some of them are
// not doomed (Krane's every-pod rule has not fired), so the reason says why it is stuck.
func TestRolloutDeadlineExceededListsNewPodsDoomReasons(t *testing.T) {
	m := New(DefaultConfig())
	d := deployment("shop", "pay", 3, "3", func(d *appsv1.Deployment) {
		d.Status.UpdatedReplicas, d.Status.AvailableReplicas = 3, 1
		d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing,
			Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"}}
	})
	m.Apply(&contract.Batch{
		Workloads: contract.Workloads(d, replicaSet("shop", "pay-old", "pay", "2"), replicaSet("shop", "pay-new", "pay", "3")),
	}, t0)
	newPod := func(name string, opts ...podOpt) *corev1.Pod {
		return pod("shop", name, append([]podOpt{ownedBy("ReplicaSet", "pay-new"), image("registry.example/app:v9")}, opts...)...)
	}
	apply(m, t0,
		newPod("pay-new-1", imageNotFound()),
		newPod("pay-new-2", imageNotFound()),
		newPod("pay-new-3"),
		pod("shop", "pay-old-1", ownedBy("ReplicaSet", "pay-old"), crashLoop())) // old pods do not count
	r := rolloutOf(t, m, "pay")
	want := `deployment "pay" exceeded its progress deadline; 2/3 new pods doomed: Image not found: registry.example/app:v9`
	if r.Verdict != classify.RolloutDoomed || r.Reason != want {
		t.Errorf("got %s %q, want doomed %q", r.Verdict, r.Reason, want)
	}

	apply(m, t0, newPod("pay-new-2", crashLoop()))
	r = rolloutOf(t, m, "pay")
	if !strings.HasPrefix(r.Reason, `deployment "pay" exceeded its progress deadline; 2/3 new pods doomed: `) ||
		!strings.Contains(r.Reason, "Image not found") || !strings.Contains(r.Reason, "Crashing repeatedly") {
		t.Errorf("distinct reasons of both doomed pods expected: %q", r.Reason)
	}

	apply(m, t0, newPod("pay-new-1"), newPod("pay-new-2"))
	if r = rolloutOf(t, m, "pay"); r.Reason != `deployment "pay" exceeded its progress deadline` {
		t.Errorf("no doomed new pods: reason = %q", r.Reason)
	}
}

// Krane's every-new-pod-doomed rule waits for the controllers to observe the latest spec: until
// then the status and the new ReplicaSet may be the previous rollout's (Krane's replica_set.rb refuses a stale status).
func TestRolloutNotDoomedBeforeStatusIsCurrent(t *testing.T) {
	tests := []struct {
		name    string
		deploy  func(*appsv1.Deployment)
		rs      func(*appsv1.ReplicaSet)
		verdict classify.RolloutClass
		reason  string
	}{
		{"current", nil, nil, classify.RolloutDoomed, "1/1 new pods doomed: Image not found: registry.example/app:v9"},
		{"deployment generation not observed", func(d *appsv1.Deployment) { d.Generation = 3 }, nil,
			classify.RolloutProgressing, "Waiting for deployment spec update to be observed..."},
		{"new ReplicaSet generation not observed", nil, func(rs *appsv1.ReplicaSet) { rs.Generation, rs.Status.ObservedGeneration = 2, 1 },
			classify.RolloutProgressing, `Waiting for deployment "pay" rollout to finish: 0 of 1 updated replicas are available...`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := deployment("shop", "pay", 1, "3", func(d *appsv1.Deployment) { d.Status.AvailableReplicas = 0 })
			if tc.deploy != nil {
				tc.deploy(d)
			}
			rs := replicaSet("shop", "pay-new", "pay", "3")
			if tc.rs != nil {
				tc.rs(rs)
			}
			m := New(DefaultConfig())
			m.Apply(&contract.Batch{Workloads: contract.Workloads(d, rs)}, t0)
			apply(m, t0, pod("shop", "pay-new-1", ownedBy("ReplicaSet", "pay-new"), image("registry.example/app:v9"), imageNotFound()))
			if r := rolloutOf(t, m, "pay"); r.Verdict != tc.verdict || r.Reason != tc.reason {
				t.Errorf("got %s %q, want %s %q", r.Verdict, r.Reason, tc.verdict, tc.reason)
			}
		})
	}
}

func labelled(k, v string) podOpt {
	return func(p *corev1.Pod) {
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		p.Labels[k] = v
	}
}

// TestStatefulSetRollout: kubectl's answer until a pod of the update revision is doomed (Krane's
// StatefulSet rule: any such pod), and a doomed pod of the old revision says nothing about this
// rollout. OnDelete has no rollout, as kubectl has no status for it.
func TestStatefulSetRollout(t *testing.T) {
	m := New(DefaultConfig())
	s := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db", Generation: 2},
		Spec: appsv1.StatefulSetSpec{Replicas: new(int32(3)), UpdateStrategy: appsv1.StatefulSetUpdateStrategy{
			Type: appsv1.RollingUpdateStatefulSetStrategyType}},
		Status: appsv1.StatefulSetStatus{ObservedGeneration: 2, Replicas: 3, ReadyReplicas: 2, UpdatedReplicas: 1,
			CurrentRevision: "db-5d4b", UpdateRevision: "db-7c9f"},
	}
	m.Apply(&contract.Batch{Workloads: contract.Workloads(s)}, t0)
	apply(m, t0, pod("shop", "db-0", ownedBy("StatefulSet", "db"), labelled(revisionHashLabel, "db-5d4b"), crashLoop()))
	r := rolloutOf(t, m, "db")
	if r.Kind != "StatefulSet" || r.Verdict != classify.RolloutProgressing || r.Reason != "Waiting for 1 pods to be ready..." ||
		r.Desired != 3 || r.Updated != 1 || r.Ready != 2 {
		t.Fatalf("old revision's pod crashing: %+v", r)
	}
	apply(m, t0, pod("shop", "db-2", ownedBy("StatefulSet", "db"), labelled(revisionHashLabel, "db-7c9f"), crashLoop()))
	if r = rolloutOf(t, m, "db"); r.Verdict != classify.RolloutDoomed || !strings.HasPrefix(r.Reason, "1/1 new pods doomed: ") {
		t.Fatalf("update revision's pod crashing: %+v", r)
	}
	s2 := s.DeepCopy()
	s2.Generation = 3 // a new spec the controller has not seen: the old pods say nothing
	m.Apply(&contract.Batch{Workloads: contract.Workloads(s2)}, t0)
	if r = rolloutOf(t, m, "db"); r.Verdict != classify.RolloutProgressing || r.Reason != "Waiting for statefulset spec update to be observed..." {
		t.Fatalf("unobserved spec: %+v", r)
	}
	s3 := s.DeepCopy()
	s3.Spec.UpdateStrategy.Type = appsv1.OnDeleteStatefulSetStrategyType
	m.Apply(&contract.Batch{Workloads: contract.Workloads(s3)}, t0)
	for _, r := range m.Rollouts() {
		if r.Name == "db" {
			t.Errorf("OnDelete StatefulSet has a rollout: %+v", r)
		}
	}
}

// TestDaemonSetRollout: the pods of the current template generation decide doom; kubectl's answer
// otherwise; deleting the DaemonSet drops its rollout.
func TestDaemonSetRollout(t *testing.T) {
	m := New(DefaultConfig())
	d := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "agent", Generation: 4,
			Annotations: map[string]string{appsv1.DeprecatedTemplateGeneration: "4"}},
		Spec: appsv1.DaemonSetSpec{UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType}},
		Status: appsv1.DaemonSetStatus{ObservedGeneration: 4, DesiredNumberScheduled: 3, UpdatedNumberScheduled: 3,
			NumberReady: 2, NumberAvailable: 2},
	}
	m.Apply(&contract.Batch{Workloads: contract.Workloads(d)}, t0)
	apply(m, t0, pod("kube-system", "agent-a", ownedBy("DaemonSet", "agent"), labelled(templateGenerationLabel, "3"), crashLoop()))
	r := rolloutOf(t, m, "agent")
	if r.Verdict != classify.RolloutProgressing || r.Reason != `Waiting for daemon set "agent" rollout to finish: 2 of 3 updated pods are available...` ||
		r.Desired != 3 || r.Ready != 2 {
		t.Fatalf("old generation's pod crashing: %+v", r)
	}
	apply(m, t0, pod("kube-system", "agent-b", ownedBy("DaemonSet", "agent"), labelled(templateGenerationLabel, "4"), imageNotFound()))
	if r = rolloutOf(t, m, "agent"); r.Verdict != classify.RolloutDoomed {
		t.Fatalf("current generation's pod doomed: %+v", r)
	}
	m.Apply(&contract.Batch{Deletes: []contract.Ref{{Kind: contract.KindPod, Namespace: "kube-system", Name: "agent-b"}}}, t0)
	if r = rolloutOf(t, m, "agent"); r.Verdict != classify.RolloutProgressing {
		t.Fatalf("the doomed pod deleted: %+v", r)
	}
	m.Apply(&contract.Batch{Deletes: []contract.Ref{{Kind: contract.KindDaemonSet, Namespace: "kube-system", Name: "agent"}}}, t0)
	if len(m.Rollouts()) != 0 {
		t.Errorf("deleted DaemonSet keeps its rollout: %+v", m.Rollouts())
	}
}

// TestLargeRolloutDoomedBeforeEveryNewPodFails: the proportional rule. Three crash-looping new
// pods, the rest still starting and none healthy, doom the rollout; one healthy new pod leaves the
// call to Krane's every-new-pod rule.
func TestLargeRolloutDoomedBeforeEveryNewPodFails(t *testing.T) {
	m := New(DefaultConfig())
	d := deployment("shop", "web", 40, "3", func(d *appsv1.Deployment) { d.Status.UpdatedReplicas, d.Status.AvailableReplicas = 10, 0 })
	m.Apply(&contract.Batch{
		Workloads: contract.Workloads(d, replicaSet("shop", "web-old", "web", "2"), replicaSet("shop", "web-new", "web", "3")),
	}, t0)
	newPod := func(i int, opts ...podOpt) *corev1.Pod {
		return pod("shop", fmt.Sprintf("web-new-%d", i), append([]podOpt{ownedBy("ReplicaSet", "web-new")}, opts...)...)
	}
	var pods []*corev1.Pod
	for i := range 10 {
		opt := waiting("ContainerCreating", "")
		if i < 2 {
			opt = crashLoop()
		}
		pods = append(pods, newPod(i, opt))
	}
	apply(m, t0, pods...)
	if r := rolloutOf(t, m, "web"); r.Verdict != classify.RolloutProgressing {
		t.Fatalf("two of ten doomed: %s %q, want progressing", r.Verdict, r.Reason)
	}
	apply(m, t0, newPod(2, crashLoop()))
	r := rolloutOf(t, m, "web")
	if want := "3/10 new pods doomed: Crashing repeatedly (exit 137): OOMKilled, none healthy"; r.Verdict != classify.RolloutDoomed || r.Reason != want {
		t.Fatalf("three of ten doomed: %s %q, want doomed %q", r.Verdict, r.Reason, want)
	}
	apply(m, t0, newPod(3))
	if r := rolloutOf(t, m, "web"); r.Verdict != classify.RolloutProgressing {
		t.Errorf("one healthy new pod: %s %q, want progressing", r.Verdict, r.Reason)
	}
}
