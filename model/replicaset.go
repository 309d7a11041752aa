package model

import (
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"doomwatch/contract"
	"doomwatch/sanitize"
)

// A ReplicaSet is a revision of the workload that controls it, a Deployment or an Argo Rollout
// (the kinds with ownsReplicaSets): its pods are counted under it, for that workload's rollout and
// for escalation, and they belong to that workload.
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
			owner, ok := m.rsOwner[k]
			return replicaSetRev(k), owner, ok
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

// linkReplicaSet records which workload controls ReplicaSet k (rs nil: it was deleted) and marks
// the rollouts it leaves and joins dirty.
func (m *Model) linkReplicaSet(k nsName, rs *appsv1.ReplicaSet) {
	old, had := m.rsOwner[k]
	var now rolloutKey
	has := false
	if rs != nil {
		if c := controllerOf(rs.OwnerReferences); c != nil {
			if km := kindOf(c.Kind); km != nil && km.ownsReplicaSets {
				now, has = rolloutKey{km.kind, nsName{rs.Namespace, c.Name}}, true
			}
		}
	}
	if had {
		m.rollouts.dirty[old] = struct{}{}
		if !has || old != now {
			if set := m.ownerRS[old]; set != nil {
				delete(set, k)
				if len(set) == 0 {
					delete(m.ownerRS, old)
				}
			}
			delete(m.rsOwner, k)
		}
	}
	if has {
		m.rsOwner[k] = now
		set := m.ownerRS[now]
		if set == nil {
			set = make(map[nsName]struct{})
			m.ownerRS[now] = set
		}
		set[k] = struct{}{}
		m.rollouts.dirty[now] = struct{}{}
	}
}

// ownedReplicaSets are the known ReplicaSets workload k of kind controls (uid, when known, is its
// UID: a ReplicaSet of an earlier workload of the same name is not its own), by name.
func (m *Model) ownedReplicaSets(kind contract.Kind, k nsName, uid types.UID) []*appsv1.ReplicaSet {
	var owned []*appsv1.ReplicaSet
	for rk := range m.ownerRS[rolloutKey{kind, k}] {
		rs := m.replicaSet(rk)
		if rs == nil {
			continue
		}
		if c := controllerOf(rs.OwnerReferences); c != nil && (c.UID == "" || uid == "" || c.UID == uid) {
			owned = append(owned, rs)
		}
	}
	// By name, so that the answer does not depend on map order.
	slices.SortFunc(owned, func(a, b *appsv1.ReplicaSet) int { return strings.Compare(a.Name, b.Name) })
	return owned
}
