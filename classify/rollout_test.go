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
