package model

import (
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	"doomwatch/classify"
	"doomwatch/contract"
	"doomwatch/sanitize"
)

// A Deployment rolls out through the ReplicaSets it controls (replicaset.go links them): its
// rollout is kubectl's, read with the pods of its new ReplicaSet, and a gate waits for those pods.
func init() {
	registerKind(&kindModel{
		kind:            contract.KindDeployment,
		ownsReplicaSets: true,
		rollout:         (*Model).deploymentRollout,
		gate:            (*Model).deploymentGate,
	})
}

const (
	// podTemplateHashLabel is the Deployment controller's label on its ReplicaSets (kubernetes
	// pkg/controller/deployment/util/deployment_util.go).
	podTemplateHashLabel = appsv1.DefaultDeploymentUniqueLabelKey
)

func deployKey(k nsName) rolloutKey { return rolloutKey{contract.KindDeployment, k} }

// deployment is the Deployment stored under k, or nil.
func (m *Model) deployment(k nsName) *appsv1.Deployment {
	return objectAs[*appsv1.Deployment](m, contract.KindDeployment, k)
}

// deploymentRollout makes Deployment k's rollout from the ReplicaSets it controls; false when the
// Deployment is not known.
func (m *Model) deploymentRollout(k nsName) (Rollout, bool) {
	d := m.deployment(k)
	if d == nil {
		return Rollout{}, false
	}
	rss := m.ownedReplicaSets(contract.KindDeployment, k, d.UID)
	st := &d.Status
	r := newRollout(contract.KindDeployment, d.Namespace, d.Name, d.Spec.Replicas, st.UpdatedReplicas, st.ReadyReplicas, st.AvailableReplicas)
	newRS := findNewReplicaSet(d, rss)
	for _, rs := range rss {
		if rs == newRS {
			r.NewReplicaSet = sanitize.Text(rs.Name)
		} else {
			r.OldReplicaSets = append(r.OldReplicaSets, sanitize.Text(rs.Name))
		}
	}
	sort.Strings(r.OldReplicaSets)

	var pods classify.NewPods
	if newRS != nil {
		pods = m.revPods[replicaSetRev(nsName{newRS.Namespace, newRS.Name})].newPods()
		if old, ok := m.rollouts.byKey[deployKey(k)]; ok {
			pods.WasDoomed = old.Verdict == classify.RolloutDoomed && old.NewReplicaSet == sanitize.Text(newRS.Name)
		}
	}
	if req, err := classify.RequiredRollout(d); err == nil {
		r.Tolerates = int(req.Tolerates(r.Desired)) // spec.replicas, or the API server's default, 1
	}
	return r.judged(classify.DeploymentVerdict(d, newRS, pods), pods), true
}

// deploymentGate: a Deployment's current pods are its new ReplicaSet's; the other ReplicaSets'
// pods are the old ones the rollout replaces.
func (m *Model) deploymentGate(k nsName, st *GateStatus) []gateCtrl {
	d := m.deployment(k)
	if d == nil {
		return nil
	}
	st.Found = true
	// Krane's required rollout: a value Krane refuses, the gate refuses.
	if _, err := classify.RequiredRollout(d); err != nil {
		st.Unsupported = "annotation " + contract.RequiredRolloutAnnotation + ": " + sanitize.Text(err.Error())
	}
	owned := m.ownedReplicaSets(contract.KindDeployment, k, d.UID)
	newRS := findNewReplicaSet(d, owned)
	out := make([]gateCtrl, len(owned))
	for i, rs := range owned {
		out[i] = gateCtrl{ctrl: ownerKey{rs.Namespace, string(contract.KindReplicaSet), rs.Name}, current: rs == newRS}
	}
	return out
}

// findNewReplicaSet picks the Deployment's new ReplicaSet among those it owns.
//
// The revision annotation comes first: the Deployment controller stamps the same
// deployment.kubernetes.io/revision on a Deployment and its new ReplicaSet, and it survives
// kube/'s informer transform, which trims pod templates. When revisions are missing, fall back to
// kubectl's FindNewReplicaSet (kubectl pkg/util/deployment/deployment.go): the oldest ReplicaSet
// whose template equals the Deployment's, ignoring the pod-template-hash label.
func findNewReplicaSet(d *appsv1.Deployment, rss []*appsv1.ReplicaSet) *appsv1.ReplicaSet {
	if rev := d.Annotations[contract.RevisionAnnotation]; rev != "" {
		for _, rs := range rss {
			if rs.Annotations[contract.RevisionAnnotation] == rev {
				return rs
			}
		}
	}
	sorted := append([]*appsv1.ReplicaSet(nil), rss...)
	sort.Slice(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		return a.Name < b.Name
	})
	for _, rs := range sorted {
		if equalIgnoreHash(&rs.Spec.Template, &d.Spec.Template) {
			return rs
		}
	}
	return nil
}

// equalIgnoreHash mirrors kubectl's EqualIgnoreHash: templates compare equal once the
// pod-template-hash label is removed.
func equalIgnoreHash(a, b *corev1.PodTemplateSpec) bool {
	a1, b1 := a.DeepCopy(), b.DeepCopy()
	delete(a1.Labels, podTemplateHashLabel)
	delete(b1.Labels, podTemplateHashLabel)
	if len(a1.Labels) == 0 {
		a1.Labels = nil
	}
	if len(b1.Labels) == 0 {
		b1.Labels = nil
	}
	return apiequality.Semantic.DeepEqual(a1, b1)
}
