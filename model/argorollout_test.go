package model

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"doomwatch/classify"
	"doomwatch/contract"
	"doomwatch/model/podtest"
)

// argoRolloutFixture is an Argo Rollout as the dynamic client hands it over (integers as int64),
// in the middle of an update to pod hash "new" from stable "old", with status fields as the
// controller names them (pkg/apis/rollouts/v1alpha1 RolloutStatus).
func argoRolloutFixture(phase, message string, status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
		"metadata": map[string]any{"namespace": "shop", "name": "web", "uid": "Rollout-web", "generation": int64(2)},
		"spec":     map[string]any{"replicas": int64(4), "strategy": map[string]any{"canary": map[string]any{}}},
		"status": map[string]any{"observedGeneration": "2", "phase": phase, "message": message,
			"currentPodHash": "new", "stableRS": "old", "replicas": int64(5), "updatedReplicas": int64(1),
			"readyReplicas": int64(4), "availableReplicas": int64(4)},
	}}
	for k, v := range status {
		u.Object["status"].(map[string]any)[k] = v
	}
	return u
}

// argoReplicaSet is a ReplicaSet the Rollout controls, its template labelled with its pod hash.
func argoReplicaSet(name, hash string) *appsv1.ReplicaSet {
	rs := replicaSet("shop", name, "", "")
	rs.OwnerReferences = []metav1.OwnerReference{podtest.ControllerRef("Rollout", "web")}
	rs.Spec.Template.Labels = map[string]string{argoPodHashLabel: hash}
	return rs
}

// TestArgoRollout: a Rollout's pods are grouped under it through its ReplicaSets, its new
// ReplicaSet is status.currentPodHash's, a crash-looping canary dooms it while Argo still says
// Progressing, a pause at a canary step does not, and the gate finds it with its current pods.
func TestArgoRollout(t *testing.T) {
	m := New(DefaultConfig())
	m.Apply(&contract.Batch{Workloads: contract.Workloads(argoRolloutFixture("Progressing", "more replicas need to be updated", nil),
		argoReplicaSet("web-old", "old"), argoReplicaSet("web-new", "new"))}, t0)
	apply(m, t0, pod("shop", "web-old-a", ownedBy("ReplicaSet", "web-old")),
		pod("shop", "web-new-a", ownedBy("ReplicaSet", "web-new"), crashLoop()))
	if o := m.Pod("shop/web-new-a").Owner; o != "Rollout/web" {
		t.Errorf("the canary pod's owner = %q, want Rollout/web", o)
	}
	r := rolloutOf(t, m, "web")
	if r.Kind != "Rollout" || r.Verdict != classify.RolloutDoomed || r.NewReplicaSet != "web-new" ||
		strings.Join(r.OldReplicaSets, ",") != "web-old" || !strings.HasPrefix(r.Reason, "1/1 new pods doomed: ") || r.Desired != 4 {
		t.Fatalf("crash-looping canary: %+v", r)
	}
	st := m.Gate([]Target{{Kind: contract.KindRollout, Namespace: "shop", Name: "web"}}, t0)[0]
	if !st.Found || st.Rollout.Verdict != classify.RolloutDoomed || st.Pods.Pods != 1 || st.Old != 1 || len(st.Doomed) != 1 {
		t.Fatalf("gate: %+v", st)
	}

	// The canary pod recovers and Argo pauses at its step: waiting, not doomed.
	apply(m, t0, pod("shop", "web-new-a", ownedBy("ReplicaSet", "web-new")))
	paused := argoRolloutFixture("Paused", "CanaryPauseStep", map[string]any{"controllerPause": true,
		"pauseConditions": []any{map[string]any{"reason": "CanaryPauseStep", "startTime": "2026-12-04T10:00:00Z"}}})
	m.Apply(&contract.Batch{Workloads: contract.Workloads(paused)}, t0)
	if r = rolloutOf(t, m, "web"); r.Verdict != classify.RolloutProgressing || r.Reason != "Paused: CanaryPauseStep" {
		t.Fatalf("paused at a step: %s %q", r.Verdict, r.Reason)
	}

	// A ReplicaSet that leaves the Rollout leaves its rollout; a deleted Rollout has none.
	m.Apply(&contract.Batch{Deletes: []contract.Ref{{Kind: contract.KindReplicaSet, Namespace: "shop", Name: "web-old"}}}, t0)
	if r = rolloutOf(t, m, "web"); len(r.OldReplicaSets) != 0 {
		t.Errorf("old ReplicaSets after its delete: %v", r.OldReplicaSets)
	}
	m.Apply(&contract.Batch{Deletes: []contract.Ref{{Kind: contract.KindRollout, Namespace: "shop", Name: "web"}}}, t0)
	if len(m.Rollouts()) != 0 {
		t.Errorf("rollouts after the Rollout's delete: %+v", m.Rollouts())
	}
}

// TestArgoRolloutOfAnyShape: the object is the API server's and may be of any shape; fields of
// the wrong type read as absent, and nothing panics.
func TestArgoRolloutOfAnyShape(t *testing.T) {
	m := New(DefaultConfig())
	odd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
		"metadata": map[string]any{"namespace": "shop", "name": "web"},
		"spec":     "not a map",
		"status":   map[string]any{"phase": int64(3), "pauseConditions": "no", "replicas": "many", "abort": "yes"},
	}}
	m.Apply(&contract.Batch{Workloads: contract.Workloads(odd)}, t0)
	if r := rolloutOf(t, m, "web"); r.Verdict != classify.RolloutProgressing {
		t.Errorf("an odd Rollout: %+v", r)
	}
}

// TestArgoRolloutControllerStatuses judges every status the real Argo Rollouts controller wrote
// in e2e/testdata/argo (TestArgoRolloutsController records them) as the model reads a Rollout,
// with no pods: what the controller's own status says at each moment. A canary that completes is
// never doomed and ends complete; one paused at a step is never doomed; one whose pods crash-loop
// is doomed once the controller marks it Degraded, with its message, and with
// progressDeadlineAbort as aborted. The pods' earlier doom is the e2e test's (doomwatch wait).
func TestArgoRolloutControllerStatuses(t *testing.T) {
	for _, tc := range []struct {
		file      string
		last      classify.RolloutClass
		lastWhy   string
		everDoom  bool
		wantPause bool
	}{
		{"healthy", classify.RolloutComplete, `rollout "healthy" is Healthy`, false, true},
		{"paused", classify.RolloutProgressing, "Paused: CanaryPauseStep", false, true},
		{"crashloop", classify.RolloutDoomed, `Degraded: ProgressDeadlineExceeded: ReplicaSet "crashloop-`, true, false},
		{"crashloop-abort", classify.RolloutDoomed, `Aborted: RolloutAborted: Rollout aborted update to revision 2: ReplicaSet "crashloop-abort-`, true, false},
	} {
		t.Run(tc.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("..", "e2e", "testdata", "argo", tc.file+".yaml"))
			if err != nil {
				t.Fatal(err)
			}
			var last classify.RolloutVerdict
			doomed, paused, n := false, false, 0
			for _, doc := range strings.Split(string(b), "\n---\n") {
				// As the API's JSON decodes: integers int64.
				j, err := yaml.YAMLToJSON([]byte(doc))
				if err != nil {
					t.Fatal(err)
				}
				var u unstructured.Unstructured
				if string(j) == "null" {
					continue
				}
				if err := u.UnmarshalJSON(j); err != nil {
					t.Fatal(err)
				}
				n++
				last = classify.ArgoRolloutVerdict(argoRolloutOf(&u), classify.NewPods{})
				if last.Class == classify.RolloutDoomed && !doomed {
					doomed = true
					if !tc.everDoom {
						t.Errorf("status %d (phase %q) judged doomed: %s", n, argoString(&u, "status", "phase"), last.Reason)
					}
				}
				paused = paused || strings.HasPrefix(last.Reason, "Paused: ")
			}
			if n < 5 {
				t.Fatalf("%d statuses in the fixture", n)
			}
			if last.Class != tc.last || !strings.HasPrefix(last.Reason, tc.lastWhy) {
				t.Errorf("last status: %+v, want %s %q…", last, tc.last, tc.lastWhy)
			}
			if paused != tc.wantPause {
				t.Errorf("paused at some status: %v, want %v", paused, tc.wantPause)
			}
		})
	}
}
