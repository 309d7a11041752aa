package model

import (
	appsv1 "k8s.io/api/apps/v1"

	"doomwatch/classify"
	"doomwatch/contract"
	"doomwatch/sanitize"
)

// A StatefulSet controls its pods itself: they are counted per revision (their
// controller-revision-hash label), and its rollout and a gate read those of the update revision.
func init() {
	registerKind(revisionedKind(contract.KindStatefulSet, (*Model).statefulSet,
		func(s *appsv1.StatefulSet) bool {
			return s.Spec.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType
		},
		(*Model).statefulSetRollout,
		func(s *appsv1.StatefulSet) error { _, _, err := classify.StatefulSetStatus(s); return err },
		func(s *appsv1.StatefulSet) string { return s.Status.UpdateRevision }))
}

// revisionedKind is the row of a kind that controls its pods itself and counts them per revision
// (StatefulSets, DaemonSets; setRevision): its rollout, under the RollingUpdate strategy only
// (rolling), and a gate read the pods of the current revision. kubectl rollout status has no
// status for the OnDelete strategy (status says why), so neither has doomwatch.
func revisionedKind[T interface {
	*appsv1.StatefulSet | *appsv1.DaemonSet
}](kind contract.Kind, get func(*Model, nsName) T, rolling func(T) bool, rollout func(*Model, T) Rollout,
	status func(T) error, revision func(T) string) *kindModel {
	return &kindModel{
		kind:     kind,
		revision: setRevision,
		rollout: func(m *Model, k nsName) (Rollout, bool) {
			if o := get(m, k); o != nil && rolling(o) {
				return rollout(m, o), true
			}
			return Rollout{}, false
		},
		gate: func(m *Model, k nsName, st *GateStatus) []gateCtrl {
			o := get(m, k)
			if o == nil {
				return nil
			}
			st.Found = true
			if err := status(o); err != nil {
				st.Unsupported = sanitize.Text(err.Error())
				return nil
			}
			return []gateCtrl{{ctrl: ownerKey{k.ns, string(kind), k.name}, byRevision: true, revision: revision(o)}}
		},
	}
}

// statefulSet is the StatefulSet stored under k, or nil.
func (m *Model) statefulSet(k nsName) *appsv1.StatefulSet {
	return objectAs[*appsv1.StatefulSet](m, contract.KindStatefulSet, k)
}

// setRevision counts a StatefulSet's or DaemonSet's pod under its revision, for the set's rollout.
func setRevision(_ *Model, p *Pod) (revKey, rolloutKey, bool) {
	kind := contract.Kind(p.ctrl.kind)
	return revKey{kind: kind, ns: p.ctrl.ns, name: p.ctrl.name, revision: p.rec.Revision()},
		rolloutKey{kind, nsName{p.ctrl.ns, p.ctrl.name}}, true
}

// statefulSetRollout is a StatefulSet's rollout (RollingUpdate only). It is doomed as Krane's
// StatefulSet#deploy_failed? (lib/krane/kubernetes_resource/stateful_set.rb) says: once the
// controller has observed the latest spec, when a pod of the update revision (its
// controller-revision-hash label is status.updateRevision) is doomed. Otherwise kubectl's
// StatefulSetStatus decides.
func (m *Model) statefulSetRollout(s *appsv1.StatefulSet) Rollout {
	st := &s.Status
	r := newRollout(contract.KindStatefulSet, s.Namespace, s.Name, s.Spec.Replicas, st.UpdatedReplicas, st.ReadyReplicas, st.AvailableReplicas)
	pods := m.revPods[revKey{contract.KindStatefulSet, s.Namespace, s.Name, st.UpdateRevision}].newPods()
	return r.judged(classify.StatefulSetVerdict(s, pods), pods)
}
