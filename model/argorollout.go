package model

import (
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"doomwatch/classify"
	"doomwatch/contract"
	"doomwatch/sanitize"
)

// An Argo Rollout (argoproj.io/v1alpha1) rolls out through ReplicaSets it controls, as a
// Deployment does: its new ReplicaSet is the one whose pods carry status.currentPodHash, and its
// verdict reads that ReplicaSet's pods as a Deployment's verdict reads its new one's
// (classify.ArgoRolloutVerdict). Objects come from the dynamic client, unstructured.
func init() {
	registerKind(&kindModel{
		kind:            contract.KindRollout,
		ownsReplicaSets: true,
		rollout:         (*Model).argoRollout,
		gate: func(m *Model, k nsName, st *GateStatus) []gateCtrl {
			u := m.argoRolloutObject(k)
			if u == nil {
				return nil
			}
			st.Found = true
			hash := argoString(u, "status", "currentPodHash")
			owned := m.ownedReplicaSets(contract.KindRollout, k, u.GetUID())
			out := make([]gateCtrl, len(owned))
			for i, rs := range owned {
				out[i] = gateCtrl{ctrl: ownerKey{rs.Namespace, string(contract.KindReplicaSet), rs.Name},
					current: hash != "" && argoPodHash(rs) == hash}
			}
			return out
		},
	})
}

// argoPodHashLabel is the label Argo Rollouts puts on a Rollout's ReplicaSets and their pod
// templates (pkg/apis/rollouts/v1alpha1 DefaultRolloutUniqueLabelKey); status.currentPodHash names
// the new one.
const argoPodHashLabel = "rollouts-pod-template-hash"

// argoPodHash is the ReplicaSet's Argo pod hash, from its template's labels (the informer keeps
// those; it drops the ReplicaSet's own).
func argoPodHash(rs *appsv1.ReplicaSet) string { return rs.Spec.Template.Labels[argoPodHashLabel] }

// argoRolloutObject is the Rollout stored under k, or nil.
func (m *Model) argoRolloutObject(k nsName) *unstructured.Unstructured {
	return objectAs[*unstructured.Unstructured](m, contract.KindRollout, k)
}

// argoRollout makes Rollout k's rollout; false when it is not known.
func (m *Model) argoRollout(k nsName) (Rollout, bool) {
	u := m.argoRolloutObject(k)
	if u == nil {
		return Rollout{}, false
	}
	in := argoRolloutOf(u)
	var desired *int32
	if v, ok := argoInt(u, "spec", "replicas"); ok {
		d := int32(v)
		desired = &d
	}
	updated, _ := argoInt(u, "status", "updatedReplicas")
	ready, _ := argoInt(u, "status", "readyReplicas")
	available, _ := argoInt(u, "status", "availableReplicas")
	r := newRollout(contract.KindRollout, k.ns, k.name, desired, int32(updated), int32(ready), int32(available))
	hash := argoString(u, "status", "currentPodHash")
	var newRS *appsv1.ReplicaSet
	for _, rs := range m.ownedReplicaSets(contract.KindRollout, k, u.GetUID()) {
		if hash != "" && argoPodHash(rs) == hash {
			newRS = rs
			r.NewReplicaSet = sanitize.Text(rs.Name)
		} else {
			r.OldReplicaSets = append(r.OldReplicaSets, sanitize.Text(rs.Name))
		}
	}
	var pods classify.NewPods
	if newRS != nil {
		pods = m.revPods[replicaSetRev(nsName{newRS.Namespace, newRS.Name})].newPods()
		if old, ok := m.rollouts.byKey[rolloutKey{contract.KindRollout, k}]; ok {
			pods.WasDoomed = old.Verdict == classify.RolloutDoomed && old.NewReplicaSet == r.NewReplicaSet
		}
	}
	return r.judged(classify.ArgoRolloutVerdict(in, pods), pods), true
}

// argoRolloutOf is what classify reads of Rollout u. The object is the API server's, of any
// shape: a field of the wrong type reads as absent.
func argoRolloutOf(u *unstructured.Unstructured) *classify.ArgoRollout {
	in := &classify.ArgoRollout{
		Name:               u.GetName(),
		Generation:         u.GetGeneration(),
		ObservedGeneration: argoString(u, "status", "observedGeneration"),
		Phase:              argoString(u, "status", "phase"),
		Message:            argoString(u, "status", "message"),
	}
	in.Abort, _, _ = unstructured.NestedBool(u.Object, "status", "abort")
	in.ControllerPause, _, _ = unstructured.NestedBool(u.Object, "status", "controllerPause")
	in.SpecPaused, _, _ = unstructured.NestedBool(u.Object, "spec", "paused")
	if conds, ok, _ := unstructured.NestedSlice(u.Object, "status", "pauseConditions"); ok {
		for _, c := range conds {
			if cm, ok := c.(map[string]any); ok {
				if reason, ok := cm["reason"].(string); ok {
					in.PauseReasons = append(in.PauseReasons, reason)
				}
			}
		}
		slices.Sort(in.PauseReasons)
	}
	return in
}

// argoString is the string at path in u, "" when absent or not a string.
func argoString(u *unstructured.Unstructured, path ...string) string {
	s, _, _ := unstructured.NestedString(u.Object, path...)
	return s
}

// argoInt is the integer at path in u: the dynamic client decodes JSON numbers as int64, and a
// float64 that is whole (a recording decoded elsewhere) reads too.
func argoInt(u *unstructured.Unstructured, path ...string) (int64, bool) {
	v, ok, err := unstructured.NestedFieldNoCopy(u.Object, path...)
	if !ok || err != nil {
		return 0, false
	}
	switch n := v.(type) {
	case int64:
		return n, true
	case float64:
		if n == float64(int64(n)) {
			return int64(n), true
		}
	}
	return 0, false
}
