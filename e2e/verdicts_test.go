package e2e

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"doomwatch/classify"
	"doomwatch/kube"
	"doomwatch/model"
)

// TestNodeUnknownPodsLeaveHealthy plays the node lifecycle controller: a node's kubelet stops
// posting status, so the controller sets the node's Ready condition to Unknown and each of its
// pods' Ready condition to False (pkg/controller/util/node MarkPodsNotReady). The containers stay
// ready and the phase Running. The pods must leave "healthy" and name the node.
func TestNodeUnknownPodsLeaveHealthy(t *testing.T) {
	e := newEnv(t)
	lost, calm := e.nodeName("lost"), e.nodeName("calm")
	e.node(lost, true)
	e.node(calm, true)
	_, web := e.deployment("web", 3, 3)
	for i, n := range []string{lost, lost, calm} {
		e.pod(podSpec{name: "web-" + string(rune('a'+i)), node: n, owner: &web,
			status: podStatus(corev1.PodRunning, running("app", true, 0, nil))})
	}
	w := startWatcher(t, e.c.Admin, kube.Options{Namespace: e.ns})
	key := func(n string) string { return e.ns + "/" + n }
	w.waitFor("three healthy pods", waitTimeout, func(m *model.Model, _ time.Time) bool {
		return synced(m) && verdictIs(key("web-a"), classify.Healthy)(m) &&
			verdictIs(key("web-b"), classify.Healthy)(m) && verdictIs(key("web-c"), classify.Healthy)(m)
	})

	// The controller's writes: the node's Ready condition, with its reason and message
	// (pkg/controller/nodelifecycle/node_lifecycle_controller.go tryUpdateNodeHealth), then the
	// pods' Ready condition.
	went := time.Now().Add(-4 * time.Minute).Truncate(time.Second)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := e.client.CoreV1().Nodes().Get(e.ctx, lost, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for i := range n.Status.Conditions {
			if c := &n.Status.Conditions[i]; c.Type == corev1.NodeReady {
				c.Status, c.Reason, c.Message = corev1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status."
				c.LastTransitionTime = metav1.NewTime(went)
			}
		}
		_, err = e.client.CoreV1().Nodes().UpdateStatus(e.ctx, n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("marking node %s Unknown: %v", lost, err)
	}
	for _, name := range []string{"web-a", "web-b"} {
		st := podStatus(corev1.PodRunning, running("app", true, 0, nil))
		for i := range st.Conditions {
			if st.Conditions[i].Type == corev1.PodReady {
				st.Conditions[i].Status = corev1.ConditionFalse
				st.Conditions[i].LastTransitionTime = metav1.Now()
			}
		}
		e.setStatus(name, st)
	}

	w.waitFor("the lost node's pods to leave healthy", waitTimeout, func(m *model.Model, _ time.Time) bool {
		return verdictIs(key("web-a"), classify.Transient)(m) && verdictIs(key("web-b"), classify.Transient)(m)
	})
	w.read(func(m *model.Model, now time.Time) {
		for _, name := range []string{"web-a", "web-b"} {
			v := m.Pod(key(name)).Verdict
			want := "node " + lost + " NotReady for 4m"
			if v.Rule != classify.RuleNodeNotReady || !strings.HasPrefix(v.Reason, want) {
				t.Errorf("%s: %s %q, want node-not-ready starting %q", name, v.Rule, v.Reason, want)
			}
		}
		if v := m.Pod(key("web-c")).Verdict; v.Class != classify.Healthy {
			t.Errorf("web-c on the calm node = %s %q, want healthy", v.Class, v.Reason)
		}
	})
	snap := onceJSON(t, "--kubeconfig", adminKubeconfig(t), "-n", e.ns)
	for _, name := range []string{"web-a", "web-b"} {
		if p, ok := snap.pod(name); !ok || p.Verdict != "transient" || !strings.Contains(p.Reason, lost+" NotReady") {
			t.Errorf("--once: %s = %+v, want transient naming %s", name, p, lost)
		}
	}
}

// TestJobWithRetriesLeftNotDoomed plays the Job controller: one attempt of a Job failed (exit 1,
// restartPolicy Never) and the Job, with backoffLimit 6, counts one failure and runs another
// attempt. The failed attempt is transient with the retries left; when the Job then reaches its
// backoff limit, the same pod is doomed by the Job's Failed condition.
func TestJobWithRetriesLeftNotDoomed(t *testing.T) {
	e := newEnv(t)
	n := e.nodeName("batch")
	e.node(n, true)
	labels := map[string]string{"job-name": "migrate"}
	job, err := e.client.BatchV1().Jobs(e.ns).Create(e.ctx, &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "migrate", Namespace: e.ns},
		Spec: batchv1.JobSpec{
			BackoffLimit:   ptr.To[int32](6),
			ManualSelector: ptr.To(true),
			Selector:       &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:v1"}}},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating job: %v", err)
	}
	// startTime is immutable once set on an unsuspended Job: every status write carries the same.
	start := metav1.NewTime(time.Now().Add(-5 * time.Minute).Truncate(time.Second))
	setJob := func(failed int32, conds ...batchv1.JobCondition) {
		t.Helper()
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			j, err := e.client.BatchV1().Jobs(e.ns).Get(e.ctx, job.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			j.Status = batchv1.JobStatus{StartTime: &start, Failed: failed, Active: 1, Conditions: conds}
			if len(conds) > 0 {
				j.Status.Active = 0
			}
			_, err = e.client.BatchV1().Jobs(e.ns).UpdateStatus(e.ctx, j, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatalf("updating job status: %v", err)
		}
	}
	setJob(1)
	owner := metav1.OwnerReference{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
	fail := term("Error", 1, "", time.Minute)
	st := podStatus(corev1.PodFailed, terminatedStatus("app", 0, fail, nil))
	e.pod(podSpec{name: "migrate-a", node: n, owner: &owner, labels: labels, restartPolicy: corev1.RestartPolicyNever, status: st})
	e.pod(podSpec{name: "migrate-b", node: n, owner: &owner, labels: labels, restartPolicy: corev1.RestartPolicyNever,
		status: podStatus(corev1.PodRunning, running("app", true, 0, nil))})

	w := startWatcher(t, e.c.Admin, kube.Options{Namespace: e.ns})
	key := e.ns + "/migrate-a"
	w.waitFor("the failed attempt to be transient", waitTimeout, func(m *model.Model, _ time.Time) bool {
		return synced(m) && verdictIs(key, classify.Transient)(m)
	})
	w.read(func(m *model.Model, _ time.Time) {
		if v := m.Pod(key).Verdict; v.Rule != classify.RuleJobRetrying || !strings.HasPrefix(v.Reason, "Job has 5 of 6 retries left") {
			t.Errorf("failed attempt = %s %q, want job-retrying with 5 of 6 left", v.Rule, v.Reason)
		}
	})
	snap := onceJSON(t, "--kubeconfig", adminKubeconfig(t), "-n", e.ns)
	if p, ok := snap.pod("migrate-a"); !ok || p.Verdict != "transient" {
		t.Errorf("--once: migrate-a = %+v, want transient", p)
	}

	// The Job gives up (job_controller.go: reason BackoffLimitExceeded, "Job has reached the
	// specified backoff limit"): now the attempt is doomed.
	now := metav1.Now()
	setJob(7,
		batchv1.JobCondition{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded",
			Message: "Job has reached the specified backoff limit", LastProbeTime: now, LastTransitionTime: now},
		batchv1.JobCondition{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded",
			Message: "Job has reached the specified backoff limit", LastProbeTime: now, LastTransitionTime: now})
	w.waitFor("the attempt of the failed Job to be doomed", waitTimeout, func(m *model.Model, _ time.Time) bool {
		p := m.Pod(key)
		return p != nil && p.Verdict.Class == classify.Doomed && p.Verdict.Rule == classify.RuleJobFailed
	})
}
