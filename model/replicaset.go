package model

import (
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"doomwatch/contract"
	"doomwatch/sanitize"
)

// A ReplicaSet is a Deployment's revision: its pods are counted under it, for the Deployment's
// rollout (deployment.go) and for escalation, and they belong to the Deployment that controls it.
func init() {
	registerKind(&kindModel{
		kind: contract.KindReplicaSet,
		changed: func(m *Model, k nsName, obj metav1.Object) {
			rs, _ := obj.(*appsv1.ReplicaSet)
			m.linkReplicaSet(k, rs)
		},
		owner: func(m *Model, k nsName) string {
			// Only known objects are trusted: the pod-template-hash suffix is not guessed away.
			if rs := m.replicaSet(k); rs != nil {
				if d := controllerOf(rs.OwnerReferences); d != nil {
					return sanitize.Text(d.Kind) + "/" + sanitize.Text(d.Name)
				}
			}
			return ""
		},
		revision: func(m *Model, p *Pod) (revKey, rolloutKey, bool) {
			k := nsName{p.ctrl.ns, p.ctrl.name}
			dk, ok := m.rsDeploy[k]
			return replicaSetRev(k), deployKey(dk), ok
		},
	})
}

// replicaSet is the ReplicaSet stored under k, or nil.
func (m *Model) replicaSet(k nsName) *appsv1.ReplicaSet {
	return objectAs[*appsv1.ReplicaSet](m, contract.KindReplicaSet, k)
}

// replicaSetRev is the revision ReplicaSet k's pods are counted under.
func replicaSetRev(k nsName) revKey {
	return revKey{kind: contract.KindReplicaSet, ns: k.ns, name: k.name}
}

// linkReplicaSet records which Deployment controls ReplicaSet k (rs nil: it was deleted) and marks
// the rollouts it leaves and joins dirty.
func (m *Model) linkReplicaSet(k nsName, rs *appsv1.ReplicaSet) {
	old, had := m.rsDeploy[k]
	var now nsName
	has := false
	if rs != nil {
		if c := controllerOf(rs.OwnerReferences); c != nil && c.Kind == string(contract.KindDeployment) {
			now, has = nsName{rs.Namespace, c.Name}, true
		}
	}
	if had {
		m.rollouts.dirty[deployKey(old)] = struct{}{}
		if !has || old != now {
			if set := m.deployRS[old]; set != nil {
				delete(set, k)
				if len(set) == 0 {
					delete(m.deployRS, old)
				}
			}
			delete(m.rsDeploy, k)
		}
	}
	if has {
		m.rsDeploy[k] = now
		set := m.deployRS[now]
		if set == nil {
			set = make(map[nsName]struct{})
			m.deployRS[now] = set
		}
		set[k] = struct{}{}
		m.rollouts.dirty[deployKey(now)] = struct{}{}
	}
}
