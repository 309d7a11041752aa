package classify

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNewPodsReasonsAreCapped(t *testing.T) {
	p := NewPods{Doomed: 5, Total: 5, Reasons: []string{"a", "b", "c", "d", "e"}}
	if got, want := p.String(), "5/5 new pods doomed: a; b; c; and 2 more"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if len(p.Reasons) != 5 || p.Reasons[3] != "d" {
		t.Errorf("String modified the reasons: %v", p.Reasons)
	}
}

// TestDeploymentVerdict: Krane's every-new-pod-doomed rule, the proportional rule for large
// rollouts, the stale-status guard, and kubectl's answer otherwise.
func TestDeploymentVerdict(t *testing.T) {
	crash := []string{"Crashing repeatedly (exit 1)"}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-2", Generation: 1}, Status: appsv1.ReplicaSetStatus{ObservedGeneration: 1}}
	for _, tc := range []struct {
		name   string
		d      *appsv1.Deployment
		rs     *appsv1.ReplicaSet
		pods   NewPods
		want   RolloutClass
		reason string
	}{
		{"one pod, doomed (Krane)", deploy(1, 1, 1, 0), rs, NewPods{Total: 1, Doomed: 1, Reasons: crash}, RolloutDoomed, "1/1 new pods doomed: Crashing repeatedly (exit 1)"},
		{"two pods, one doomed: Krane waits", deploy(2, 2, 2, 0), rs, NewPods{Total: 2, Doomed: 1, Reasons: crash}, RolloutProgressing, "0 of 2 updated replicas are available"},
		{"300 replicas, 75 new, 3 crash-looping, none healthy", deploy(300, 375, 75, 0), rs, NewPods{Total: 75, Doomed: 3, Reasons: crash}, RolloutDoomed, "3/75 new pods doomed: Crashing repeatedly (exit 1), none healthy"},
		{"300 replicas, 2 doomed: not yet", deploy(300, 375, 75, 0), rs, NewPods{Total: 75, Doomed: 2, Reasons: crash}, RolloutProgressing, "75 out of 300 new replicas"},
		{"one healthy new pod leaves it to Krane's rule", deploy(300, 375, 75, 1), rs, NewPods{Total: 75, Doomed: 40, Healthy: 1, Reasons: crash}, RolloutProgressing, "75 out of 300"},
		{"no new ReplicaSet yet", deploy(3, 3, 0, 0), nil, NewPods{Total: 3, Doomed: 3, Reasons: crash}, RolloutProgressing, "0 out of 3"},
		{"new ReplicaSet not observed", deploy(3, 3, 3, 0), &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Generation: 2}, Status: appsv1.ReplicaSetStatus{ObservedGeneration: 1}},
			NewPods{Total: 3, Doomed: 3, Reasons: crash}, RolloutProgressing, "0 of 3 updated replicas"},
		{"complete", deploy(3, 3, 3, 3), rs, NewPods{Total: 3, Healthy: 3}, RolloutComplete, `deployment "web" successfully rolled out`},
		{"doomed before, a new pod still starting: stays doomed", deploy(4, 6, 3, 0), rs, NewPods{Total: 3, Doomed: 2, WasDoomed: true, Reasons: crash}, RolloutDoomed, "2/3 new pods doomed"},
		{"doomed before, a new pod healthy: the doom ends", deploy(4, 6, 3, 1), rs, NewPods{Total: 3, Doomed: 2, Healthy: 1, WasDoomed: true, Reasons: crash}, RolloutProgressing, "3 out of 4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := DeploymentVerdict(tc.d, tc.rs, tc.pods)
			if v.Class != tc.want || !strings.Contains(v.Reason, tc.reason) {
				t.Errorf("got %s %q, want %s containing %q", v.Class, v.Reason, tc.want, tc.reason)
			}
		})
	}
}

// TestSetVerdicts: any doomed pod of the current revision dooms a StatefulSet or DaemonSet, once
// the controller has observed the spec (Krane); there is no progress deadline to wait for.
func TestSetVerdicts(t *testing.T) {
	one := int32(3)
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db", Generation: 2},
		Spec:   appsv1.StatefulSetSpec{Replicas: &one, UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType}},
		Status: appsv1.StatefulSetStatus{ObservedGeneration: 2, UpdateRevision: "db-2", CurrentRevision: "db-1", ReadyReplicas: 2}}
	doomed := NewPods{Total: 1, Doomed: 1, Reasons: []string{"Crashing repeatedly (exit 1)"}}
	if v := StatefulSetVerdict(sts, doomed); v.Class != RolloutDoomed {
		t.Errorf("StatefulSet with a doomed update pod: %s %q", v.Class, v.Reason)
	}
	stale := sts.DeepCopy()
	stale.Generation = 3
	if v := StatefulSetVerdict(stale, doomed); v.Class != RolloutProgressing {
		t.Errorf("StatefulSet not observed: %s %q", v.Class, v.Reason)
	}
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", Generation: 4, Annotations: map[string]string{appsv1.DeprecatedTemplateGeneration: "4"}},
		Spec:   appsv1.DaemonSetSpec{UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType}},
		Status: appsv1.DaemonSetStatus{ObservedGeneration: 4, DesiredNumberScheduled: 3, UpdatedNumberScheduled: 3, NumberAvailable: 3}}
	if v := DaemonSetVerdict(ds, NewPods{Total: 3, Healthy: 3}); v.Class != RolloutComplete {
		t.Errorf("DaemonSet rolled out: %s %q", v.Class, v.Reason)
	}
	if v := DaemonSetVerdict(ds, doomed); v.Class != RolloutDoomed {
		t.Errorf("DaemonSet with a doomed current pod: %s %q", v.Class, v.Reason)
	}
}
