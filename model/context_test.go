package model

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"doomwatch/classify"
	"doomwatch/contract"
)

// podReadyFalse is what the node lifecycle controller leaves on a pod of a node that stopped
// reporting: only the pod's Ready condition flips to False (MarkPodsNotReady); the containers
// stay ready and the phase Running.
func podReadyFalse() podOpt {
	return func(p *corev1.Pod) {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse})
	}
}

// unknownNode is a node whose kubelet stopped posting status: Ready Unknown since at, with the
// node lifecycle controller's message (pkg/controller/nodelifecycle/node_lifecycle_controller.go,
// "Kubelet stopped posting node status.").
func unknownNode(name string, at time.Time) *corev1.Node {
	n := node(name, false, false)
	n.Status.Conditions[0] = corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionUnknown,
		Reason: "NodeStatusUnknown", Message: "Kubelet stopped posting node status.", LastTransitionTime: metav1.NewTime(at)}
	return n
}

func TestPodOnNotReadyNode(t *testing.T) {
	m := New(DefaultConfig())
	p := pod("shop", "web-1", onNode("node-7"), ownedBy("ReplicaSet", "web-7d9f"), podReadyFalse())
	apply(m, t0, p)
	// Before the Node is known classify alone speaks: the pod is not healthy.
	if v := m.Pod("shop/web-1").Verdict; v.Class != classify.Transient || v.Rule != classify.RulePodNotReady {
		t.Fatalf("pod with Ready=False = %s/%s %q, want transient pod-not-ready", v.Class, v.Rule, v.Reason)
	}
	m.Apply(&contract.Batch{Nodes: []*corev1.Node{unknownNode("node-7", t0.Add(-4*time.Minute))}}, t0)
	v := m.Pod("shop/web-1").Verdict
	if v.Rule != classify.RuleNodeNotReady || v.Reason != "node node-7 NotReady for 4m: Kubelet stopped posting node status." {
		t.Fatalf("verdict = %s %q, want node-not-ready naming node-7 for 4m", v.Rule, v.Reason)
	}
	if c := m.Counts(); c.Transient != 1 || c.Healthy != 0 {
		t.Errorf("counts = %+v, want the pod counted transient", c)
	}
	// The reason keeps up with the clock without any pod update.
	m.Expire(t0.Add(3 * time.Minute))
	if v := m.Pod("shop/web-1").Verdict; !strings.Contains(v.Reason, "for 7m") {
		t.Errorf("after 3 more minutes reason = %q, want it to say 7m", v.Reason)
	}
	// The node comes back: the reason no longer blames it (the pod's own Ready condition decides).
	m.Apply(&contract.Batch{Nodes: []*corev1.Node{node("node-7", true, false)}}, t0.Add(4*time.Minute))
	if v := m.Pod("shop/web-1").Verdict; v.Rule != classify.RulePodNotReady {
		t.Errorf("after the node is Ready again rule = %s, want pod-not-ready until the pod updates", v.Rule)
	}
	ready := pod("shop", "web-1", onNode("node-7"), ownedBy("ReplicaSet", "web-7d9f"))
	apply(m, t0.Add(5*time.Minute), ready)
	if v := m.Pod("shop/web-1").Verdict; v.Class != classify.Healthy {
		t.Errorf("pod Ready again = %s %q, want healthy", v.Class, v.Reason)
	}
	// A healthy pod on a NotReady node whose Ready condition the controller has not flipped yet
	// stays healthy: the pod's own condition is the evidence.
	m.Apply(&contract.Batch{Nodes: []*corev1.Node{unknownNode("node-7", t0)}}, t0.Add(6*time.Minute))
	if v := m.Pod("shop/web-1").Verdict; v.Class != classify.Healthy {
		t.Errorf("ready pod on a node just gone Unknown = %s, want healthy", v.Class)
	}
	// Deleting the node forgets its readiness.
	m.Apply(&contract.Batch{Pods: records(p), Deletes: []contract.Ref{{Kind: contract.KindNode, Name: "node-7"}}}, t0.Add(7*time.Minute))
	if v := m.Pod("shop/web-1").Verdict; v.Rule != classify.RulePodNotReady {
		t.Errorf("after the node is deleted rule = %s, want pod-not-ready", v.Rule)
	}
}

// failedJobPod is one failed attempt of Job "migrate": restartPolicy Never, exit 1.
func failedJobPod(name string) *corev1.Pod {
	return pod("batch", name, onNode("node-1"), ownedBy("Job", "migrate"), func(p *corev1.Pod) {
		p.Spec.RestartPolicy = corev1.RestartPolicyNever
		p.Status.Phase = corev1.PodFailed
		cs := &p.Status.ContainerStatuses[0]
		cs.Ready = false
		cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1,
			FinishedAt: metav1.NewTime(t0.Add(-time.Minute))}}
	})
}

func job(ns, name string, backoff, failed int32, conds ...batchv1.JobCondition) *batchv1.Job {
	return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: "Job-" + "migrate"},
		Spec:   batchv1.JobSpec{BackoffLimit: &backoff},
		Status: batchv1.JobStatus{Failed: failed, Conditions: conds}}
}

func TestJobAttemptsJudgedByTheirJob(t *testing.T) {
	m := New(DefaultConfig())
	m.Apply(&contract.Batch{Workloads: contract.Workloads(job("batch", "migrate", 6, 3)), Pods: records(failedJobPod("migrate-a"))}, t0)
	v := m.Pod("batch/migrate-a").Verdict
	if v.Class != classify.Transient || v.Rule != classify.RuleJobRetrying || !strings.HasPrefix(v.Reason, "Job has 3 of 6 retries left") {
		t.Fatalf("failed attempt with retries left = %s/%s %q", v.Class, v.Rule, v.Reason)
	}
	// The Job's Failed condition dooms its attempts, without any pod update. Condition reasons and
	// messages: kubernetes/kubernetes pkg/controller/job/job_controller.go (BackoffLimitExceeded "Job
	// has reached the specified backoff limit"; CompletionsReached "Reached expected number of
	// succeeded pods").
	failed := batchv1.JobCondition{Type: batchv1.JobFailed, Status: corev1.ConditionTrue,
		Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit"}
	m.Apply(&contract.Batch{Workloads: contract.Workloads(job("batch", "migrate", 6, 7, failed))}, t0.Add(time.Minute))
	if v := m.Pod("batch/migrate-a").Verdict; v.Class != classify.Doomed || v.Rule != classify.RuleJobFailed {
		t.Errorf("attempt of a failed Job = %s/%s %q, want doomed job-failed", v.Class, v.Rule, v.Reason)
	}
	if c := m.Counts(); c.Doomed != 1 || c.Transient != 0 {
		t.Errorf("counts = %+v after the Job failed", c)
	}
	// A Job that succeeded after failed attempts: they are history.
	m2 := New(DefaultConfig())
	complete := batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue,
		Reason: "CompletionsReached", Message: "Reached expected number of succeeded pods"}
	m2.Apply(&contract.Batch{Pods: records(failedJobPod("migrate-b"))}, t0)
	if v := m2.Pod("batch/migrate-b").Verdict; v.Class != classify.Doomed {
		t.Fatalf("attempt before its Job is known = %s, want classify's doomed", v.Class)
	}
	m2.Apply(&contract.Batch{Workloads: contract.Workloads(job("batch", "migrate", 6, 2, complete))}, t0)
	if v := m2.Pod("batch/migrate-b").Verdict; v.Class != classify.Completed || v.Rule != classify.RuleJobSucceeded {
		t.Errorf("failed attempt of a Job that succeeded = %s/%s, want completed job-succeeded", v.Class, v.Rule)
	}
	// The Job is deleted: its pods fall back to classify's verdict.
	m2.Apply(&contract.Batch{Deletes: []contract.Ref{{Kind: contract.KindJob, Namespace: "batch", Name: "migrate"}}}, t0)
	if v := m2.Pod("batch/migrate-b").Verdict; v.Class != classify.Doomed {
		t.Errorf("attempt after its Job was deleted = %s, want doomed", v.Class)
	}
}
