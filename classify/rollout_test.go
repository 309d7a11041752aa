package classify

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// deploy builds Deployment "web" with replicas desired, whose controller has observed the spec and
// reports the given status counts (replicas, updated, available).
func deploy(replicas, total, updated, available int32, conds ...appsv1.DeploymentCondition) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Generation: 3},
		Spec:       appsv1.DeploymentSpec{Replicas: &replicas},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 3, Replicas: total, UpdatedReplicas: updated,
			AvailableReplicas: available, Conditions: conds},
	}
}

var progressing = appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue,
	Reason: "ReplicaSetUpdated"}

// The deployment controller's text: pkg/controller/deployment/progress.go (v1.37,
// `ReplicaSet %q has timed out progressing.`).
var deadlineExceeded = appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse,
	Reason: "ProgressDeadlineExceeded", Message: `ReplicaSet "web-7d9f" has timed out progressing.`}

// TestDeploymentStatus: each of kubectl's answers, word for word, in kubectl's order of checks.
func TestDeploymentStatus(t *testing.T) {
	unobserved := deploy(3, 3, 3, 3, deadlineExceeded)
	unobserved.Generation = 4
	tests := []struct {
		name    string
		d       *appsv1.Deployment
		msg     string
		done    bool
		wantErr string
	}{
		{"spec not observed yet, even past the deadline", unobserved,
			"Waiting for deployment spec update to be observed...", false, ""},
		{"progress deadline exceeded", deploy(3, 4, 1, 3, progressing, deadlineExceeded),
			"", false, `deployment "web" exceeded its progress deadline`},
		{"new replicas not all updated", deploy(3, 4, 1, 3, progressing),
			`Waiting for deployment "web" rollout to finish: 1 out of 3 new replicas have been updated...`, false, ""},
		{"old replicas terminating", deploy(3, 5, 3, 3, progressing),
			`Waiting for deployment "web" rollout to finish: 2 old replicas are pending termination...`, false, ""},
		{"updated replicas not all available", deploy(3, 3, 3, 1, progressing),
			`Waiting for deployment "web" rollout to finish: 1 of 3 updated replicas are available...`, false, ""},
		{"complete", deploy(3, 3, 3, 3, progressing),
			`deployment "web" successfully rolled out`, true, ""},
		{"scaled to zero", deploy(0, 0, 0, 0),
			`deployment "web" successfully rolled out`, true, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msg, done, err := DeploymentStatus(tc.d)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if msg != tc.msg || done != tc.done || gotErr != tc.wantErr {
				t.Errorf("DeploymentStatus = (%q, %v, %q), want (%q, %v, %q)", msg, done, gotErr, tc.msg, tc.done, tc.wantErr)
			}
		})
	}
}

// TestStatefulSetStatus: kubectl's StatefulSetStatusViewer cases (kubectl
// pkg/polymorphichelpers/rollout_status_test.go, TestStatefulSetStatusViewerStatus), word for word.
func TestStatefulSetStatus(t *testing.T) {
	partition := func(p int32) *appsv1.RollingUpdateStatefulSetStrategy {
		return &appsv1.RollingUpdateStatefulSetStrategy{Partition: &p}
	}
	rolling := appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType}
	tests := []struct {
		name       string
		generation int64
		strategy   appsv1.StatefulSetUpdateStrategy
		status     appsv1.StatefulSetStatus
		msg        string
		done       bool
		wantErr    string
	}{
		{"on delete returns an error", 1, appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType},
			appsv1.StatefulSetStatus{ObservedGeneration: 1, ReadyReplicas: 1},
			"", true, "rollout status is only available for RollingUpdate strategy type"},
		{"never observed", 1, rolling, appsv1.StatefulSetStatus{ReadyReplicas: 3},
			"Waiting for statefulset spec update to be observed...", false, ""},
		{"unobserved update is not complete", 2, rolling,
			appsv1.StatefulSetStatus{ObservedGeneration: 1, Replicas: 3, ReadyReplicas: 3, CurrentReplicas: 3},
			"Waiting for statefulset spec update to be observed...", false, ""},
		{"if all pods are not ready the update is not complete", 1, rolling,
			appsv1.StatefulSetStatus{ObservedGeneration: 2, Replicas: 3, ReadyReplicas: 2, CurrentReplicas: 3},
			"Waiting for 1 pods to be ready...", false, ""},
		{"partition update completes when all replicas above the partition are updated", 1,
			appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType, RollingUpdate: partition(2)},
			appsv1.StatefulSetStatus{ObservedGeneration: 2, Replicas: 3, ReadyReplicas: 3, CurrentReplicas: 2, UpdatedReplicas: 1},
			"partitioned roll out complete: 1 new pods have been updated...", true, ""},
		{"partition update is in progress if all pods above the partition have not been updated", 1,
			appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType, RollingUpdate: partition(2)},
			appsv1.StatefulSetStatus{ObservedGeneration: 2, Replicas: 3, ReadyReplicas: 3, CurrentReplicas: 3},
			"Waiting for partitioned roll out to finish: 0 out of 1 new pods have been updated...", false, ""},
		{"revisions differ", 1, rolling,
			appsv1.StatefulSetStatus{ObservedGeneration: 1, Replicas: 3, ReadyReplicas: 3, UpdatedReplicas: 1,
				CurrentRevision: "db-1", UpdateRevision: "db-2"},
			"waiting for statefulset rolling update to complete 1 pods at revision db-2...", false, ""},
		{"update completes when all replicas are current", 1, rolling,
			appsv1.StatefulSetStatus{ObservedGeneration: 2, Replicas: 3, ReadyReplicas: 3, CurrentReplicas: 3, UpdatedReplicas: 3,
				CurrentRevision: "foo", UpdateRevision: "foo"},
			"statefulset rolling update complete 3 pods at revision foo...", true, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			replicas := int32(3)
			s := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "foo", Generation: tc.generation},
				Spec: appsv1.StatefulSetSpec{Replicas: &replicas, UpdateStrategy: tc.strategy}, Status: tc.status}
			msg, done, err := StatefulSetStatus(s)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if msg != tc.msg || done != tc.done || gotErr != tc.wantErr {
				t.Errorf("StatefulSetStatus = (%q, %v, %q), want (%q, %v, %q)", msg, done, gotErr, tc.msg, tc.done, tc.wantErr)
			}
		})
	}
}

// TestDaemonSetStatus: kubectl's DaemonSetStatusViewer cases (TestDaemonSetStatusViewerStatus and
// TestDaemonSetStatusViewerStatusWithWrongUpdateStrategyType), word for word.
func TestDaemonSetStatus(t *testing.T) {
	tests := []struct {
		name       string
		generation int64
		strategy   appsv1.DaemonSetUpdateStrategyType
		status     appsv1.DaemonSetStatus
		msg        string
		done       bool
		wantErr    string
	}{
		{"not all updated", 0, appsv1.RollingUpdateDaemonSetStrategyType,
			appsv1.DaemonSetStatus{ObservedGeneration: 1, DesiredNumberScheduled: 1},
			`Waiting for daemon set "foo" rollout to finish: 0 out of 1 new pods have been updated...`, false, ""},
		{"not all available", 1, appsv1.RollingUpdateDaemonSetStrategyType,
			appsv1.DaemonSetStatus{ObservedGeneration: 1, UpdatedNumberScheduled: 2, DesiredNumberScheduled: 2, NumberAvailable: 1},
			`Waiting for daemon set "foo" rollout to finish: 1 of 2 updated pods are available...`, false, ""},
		{"complete", 1, appsv1.RollingUpdateDaemonSetStrategyType,
			appsv1.DaemonSetStatus{ObservedGeneration: 1, UpdatedNumberScheduled: 2, DesiredNumberScheduled: 2, NumberAvailable: 2},
			`daemon set "foo" successfully rolled out`, true, ""},
		{"unobserved", 2, appsv1.RollingUpdateDaemonSetStrategyType,
			appsv1.DaemonSetStatus{ObservedGeneration: 1, UpdatedNumberScheduled: 2, DesiredNumberScheduled: 2, NumberAvailable: 2},
			"Waiting for daemon set spec update to be observed...", false, ""},
		{"on delete", 1, appsv1.OnDeleteDaemonSetStrategyType, appsv1.DaemonSetStatus{ObservedGeneration: 1},
			"", true, "rollout status is only available for RollingUpdate strategy type"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "foo", Generation: tc.generation},
				Spec: appsv1.DaemonSetSpec{UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: tc.strategy}}, Status: tc.status}
			msg, done, err := DaemonSetStatus(d)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if msg != tc.msg || done != tc.done || gotErr != tc.wantErr {
				t.Errorf("DaemonSetStatus = (%q, %v, %q), want (%q, %v, %q)", msg, done, gotErr, tc.msg, tc.done, tc.wantErr)
			}
		})
	}
}

// TestBarePodStatus: Krane's rule for an unmanaged pod: done once Succeeded, failed when deleted
// before that or doomed, waiting otherwise with the verdict's reason.
func TestBarePodStatus(t *testing.T) {
	now := metav1.Now()
	pod := func(phase corev1.PodPhase, deleted bool) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "migrate"}, Status: corev1.PodStatus{Phase: phase}}
		if deleted {
			p.DeletionTimestamp = &now
		}
		return p
	}
	crash := Verdict{Class: Doomed, Rule: RuleCrashLoop, Reason: "Crashing repeatedly (exit 1)"}
	starting := Verdict{Class: Progressing, Rule: RuleStarting, Reason: "Creating container"}
	for _, tc := range []struct {
		name    string
		pod     *corev1.Pod
		v       Verdict
		msg     string
		done    bool
		wantErr string
	}{
		{"succeeded", pod(corev1.PodSucceeded, false), Verdict{Class: Completed}, "pod migrate succeeded", true, ""},
		{"succeeded, then deleted", pod(corev1.PodSucceeded, true), Verdict{Class: Completed}, "pod migrate succeeded", true, ""},
		{"deleted while running", pod(corev1.PodRunning, true), Verdict{Class: Progressing}, "", false, ErrBarePodDeleted.Error()},
		{"doomed", pod(corev1.PodRunning, false), crash, "", false, "Crashing repeatedly (exit 1)"},
		{"running and ready", pod(corev1.PodRunning, false), Verdict{Class: Healthy}, "a bare pod completes when it has succeeded; phase Running", false, ""},
		{"starting", pod(corev1.PodPending, false), starting, "a bare pod completes when it has succeeded; phase Pending: Creating container", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg, done, err := BarePodStatus(tc.pod, tc.v)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if msg != tc.msg || done != tc.done || gotErr != tc.wantErr {
				t.Errorf("BarePodStatus = (%q, %v, %q), want (%q, %v, %q)", msg, done, gotErr, tc.msg, tc.done, tc.wantErr)
			}
		})
	}
}
