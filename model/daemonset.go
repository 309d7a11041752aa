package model

import (
	appsv1 "k8s.io/api/apps/v1"

	"doomwatch/classify"
	"doomwatch/contract"
)

// A DaemonSet controls its pods itself: they are counted per template generation (their
// pod-template-generation label), and its rollout and a gate read those of the current one
// (the API server's deprecated.daemonset.template.generation annotation).
func init() {
	registerKind(revisionedKind(contract.KindDaemonSet, (*Model).daemonSet,
		func(d *appsv1.DaemonSet) bool {
			return d.Spec.UpdateStrategy.Type == appsv1.RollingUpdateDaemonSetStrategyType
		},
		(*Model).daemonSetRollout,
		func(d *appsv1.DaemonSet) error { _, _, err := classify.DaemonSetStatus(d); return err },
		func(d *appsv1.DaemonSet) string { return d.Annotations[appsv1.DeprecatedTemplateGeneration] }))
}

// daemonSet is the DaemonSet stored under k, or nil.
func (m *Model) daemonSet(k nsName) *appsv1.DaemonSet {
	return objectAs[*appsv1.DaemonSet](m, contract.KindDaemonSet, k)
}

// daemonSetRollout is a DaemonSet's rollout (RollingUpdate only). It is doomed as Krane's
// DaemonSet#deploy_failed? (lib/krane/kubernetes_resource/daemon_set.rb) says: once the controller
// has observed the latest spec, when a pod of the current template generation (its
// pod-template-generation label is the DaemonSet's deprecated.daemonset.template.generation
// annotation, which the API server keeps) is doomed. Otherwise kubectl's DaemonSetStatus decides.
func (m *Model) daemonSetRollout(d *appsv1.DaemonSet) Rollout {
	st := &d.Status
	r := newRollout(contract.KindDaemonSet, d.Namespace, d.Name, &st.DesiredNumberScheduled, st.UpdatedNumberScheduled, st.NumberReady, st.NumberAvailable)
	pods := m.revPods[revKey{contract.KindDaemonSet, d.Namespace, d.Name, d.Annotations[appsv1.DeprecatedTemplateGeneration]}].newPods()
	return r.judged(classify.DaemonSetVerdict(d, pods), pods)
}
