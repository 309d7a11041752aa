package model

import (
	"slices"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	"doomwatch/classify"
	"doomwatch/contract"
	"doomwatch/sanitize"
)

// Rollout is one workload's rollout: a Deployment, or a StatefulSet or DaemonSet with the
// RollingUpdate strategy. NewReplicaSet and OldReplicaSets are a Deployment's only.
type Rollout struct {
	// Context is the rollout's cluster in a fleet of more than one (Fleet.Rollouts), else "".
	Context               string
	Namespace, Kind, Name string
	Verdict               classify.RolloutClass
	Desired, Updated      int32
	Ready, Available      int32
	// Reason says why: kubectl's rollout-status message, or the pods' doom reasons.
	Reason         string
	NewReplicaSet  string
	OldReplicaSets []string
}

// Workload is the rollout's workload as Query.Owner names it: "shop/Deployment/checkout".
func (r *Rollout) Workload() string { return r.Namespace + "/" + r.Kind + "/" + r.Name }

const (
	// podTemplateHashLabel is the Deployment controller's label on its ReplicaSets (kubernetes
	// pkg/controller/deployment/util/deployment_util.go).
	podTemplateHashLabel = appsv1.DefaultDeploymentUniqueLabelKey
)

// rolloutCache keeps every workload's rollout. Only the rollouts of workloads marked dirty (the
// workload, one of its ReplicaSets, or a pod of one changed) are made again, and the list is rebuilt
// only when one of them came out different.
type rolloutCache struct {
	byKey map[rolloutKey]Rollout
	dirty map[rolloutKey]struct{}
	list  []Rollout
	built bool
}

// rolloutKey names a workload with a rollout: a Deployment, StatefulSet or DaemonSet.
type rolloutKey struct {
	kind contract.Kind
	nsName
}

func deployKey(k nsName) rolloutKey { return rolloutKey{contract.KindDeployment, k} }

// setKey is one revision of a StatefulSet or DaemonSet: its pods' controller-revision-hash or
// pod-template-generation label.
type setKey struct {
	kind     contract.Kind
	ns, name string
	revision string
}

// Rollouts returns every rollout (Deployments, StatefulSets with the RollingUpdate strategy and
// DaemonSets with it: `kubectl rollout status` has none for OnDelete), doomed first, then by
// namespace/name/kind. The slice is the same until a rollout changes; callers must not modify it.
func (m *Model) Rollouts() []Rollout {
	c := &m.rollouts
	changed := !c.built
	for k := range c.dirty {
		r, ok := m.buildRollout(k)
		old, had := c.byKey[k]
		switch {
		case !ok && had:
			delete(c.byKey, k)
			changed = true
		case ok && (!had || !sameRollout(&old, &r)):
			c.byKey[k] = r
			changed = true
		}
	}
	clear(c.dirty)
	if !changed {
		return c.list
	}
	out := make([]Rollout, 0, len(c.byKey))
	for _, r := range c.byKey {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := &out[i], &out[j]
		if da, db := a.Verdict == classify.RolloutDoomed, b.Verdict == classify.RolloutDoomed; da != db {
			return da
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Kind < b.Kind
	})
	c.list, c.built = out, true
	return out
}

func sameRollout(a, b *Rollout) bool {
	return a.Namespace == b.Namespace && a.Kind == b.Kind && a.Name == b.Name && a.Verdict == b.Verdict &&
		a.Desired == b.Desired && a.Updated == b.Updated && a.Ready == b.Ready && a.Available == b.Available &&
		a.Reason == b.Reason && a.NewReplicaSet == b.NewReplicaSet && slices.Equal(a.OldReplicaSets, b.OldReplicaSets)
}

// buildRollout makes workload k's rollout; false when the workload is not known or has no rollout
// status (the OnDelete strategy).
func (m *Model) buildRollout(k rolloutKey) (Rollout, bool) {
	switch k.kind {
	case contract.KindStatefulSet:
		if s := m.statefulSets[k.nsName]; s != nil && s.Spec.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType {
			return m.statefulSetRollout(s), true
		}
		return Rollout{}, false
	case contract.KindDaemonSet:
		if d := m.daemonSets[k.nsName]; d != nil && d.Spec.UpdateStrategy.Type == appsv1.RollingUpdateDaemonSetStrategyType {
			return m.daemonSetRollout(d), true
		}
		return Rollout{}, false
	}
	return m.deploymentRollout(k.nsName)
}

// deploymentRollout makes Deployment k's rollout from the ReplicaSets it controls; false when the
// Deployment is not known.
func (m *Model) deploymentRollout(k nsName) (Rollout, bool) {
	d := m.deployments[k]
	if d == nil {
		return Rollout{}, false
	}
	var owned []*appsv1.ReplicaSet
	for rk := range m.deployRS[k] {
		rs := m.replicaSets[rk]
		if rs == nil {
			continue
		}
		if c := controllerOf(rs.OwnerReferences); c != nil && (c.UID == "" || d.UID == "" || c.UID == d.UID) {
			owned = append(owned, rs)
		}
	}
	// By name, so that the answer does not depend on map order.
	slices.SortFunc(owned, func(a, b *appsv1.ReplicaSet) int { return strings.Compare(a.Name, b.Name) })
	return m.rollout(d, owned), true
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

// rsPods is what a ReplicaSet's pods say for its rollout: how many there are, how many are doomed
// (and with which reasons, sanitised) and healthy, counted by count and uncount.
type rsPods struct {
	total, doomed, healthy int
	// failing counts the pods that are transient or doomed: with healthy, the pods that have had
	// their try (escalation waits for the rest, failingRevisions).
	failing int
	reasons map[string]int
}

// countRS adds (d = 1) or removes (d = -1) pod p in its ReplicaSet's counts and marks the rollout
// of the ReplicaSet's Deployment dirty.
//
// A pod its controller replaces (classify.Replaced) is left out.
//
// StatefulSets' and DaemonSets' pods are counted the same way, per revision (setPods).
func (m *Model) countRS(p *Pod, d int) {
	if classify.Replaced(p.Verdict.Rule) {
		return
	}
	switch contract.Kind(p.ctrl.kind) {
	case contract.KindReplicaSet:
	case contract.KindStatefulSet, contract.KindDaemonSet:
		m.countSet(p, d)
		return
	default:
		return
	}
	k := nsName{p.ctrl.ns, p.ctrl.name}
	countIn(m.rsPods, k, p, d)
	if dk, ok := m.rsDeploy[k]; ok {
		m.rollouts.dirty[deployKey(dk)] = struct{}{}
	}
}

// countSet counts pod p of a StatefulSet or DaemonSet under its revision.
func (m *Model) countSet(p *Pod, d int) {
	kind := contract.Kind(p.ctrl.kind)
	k := setKey{kind: kind, ns: p.ctrl.ns, name: p.ctrl.name, revision: p.rec.Revision()}
	countIn(m.setPods, k, p, d)
	m.rollouts.dirty[rolloutKey{kind, nsName{k.ns, k.name}}] = struct{}{}
}

// countIn counts p (d = 1) or stops counting it (d = -1) in counts[k], which goes when empty.
func countIn[K comparable](counts map[K]*rsPods, k K, p *Pod, d int) {
	s := counts[k]
	if s == nil {
		s = &rsPods{}
		counts[k] = s
	}
	s.add(p, d)
	if s.total <= 0 {
		delete(counts, k)
	}
}

// add counts p (d = 1) or stops counting it (d = -1).
func (s *rsPods) add(p *Pod, d int) {
	s.total += d
	if p.Verdict.Class == classify.Healthy {
		s.healthy += d
	}
	if failing(p.Verdict.Class) {
		s.failing += d
	}
	if p.Verdict.Class == classify.Doomed {
		s.doomed += d
		if s.reasons == nil {
			s.reasons = make(map[string]int)
		}
		if s.reasons[p.Verdict.Reason] += d; s.reasons[p.Verdict.Reason] <= 0 {
			delete(s.reasons, p.Verdict.Reason)
		}
	}
}

// newRollout is a rollout's identity and counts; desired is spec.replicas (nil: the API server's
// default, 1).
func newRollout(kind contract.Kind, ns, name string, desired *int32, updated, ready, available int32) Rollout {
	r := Rollout{Namespace: sanitize.Text(ns), Kind: string(kind), Name: sanitize.Text(name), Desired: 1,
		Updated: updated, Ready: ready, Available: available}
	if desired != nil {
		r.Desired = *desired
	}
	return r
}

func (m *Model) rollout(d *appsv1.Deployment, rss []*appsv1.ReplicaSet) Rollout {
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
		pods = m.rsPods[nsName{newRS.Namespace, newRS.Name}].newPods()
		if old, ok := m.rollouts.byKey[deployKey(nsName{d.Namespace, d.Name})]; ok {
			pods.WasDoomed = old.Verdict == classify.RolloutDoomed && old.NewReplicaSet == sanitize.Text(newRS.Name)
		}
	}
	return r.judged(classify.DeploymentVerdict(d, newRS, pods))
}

// newPods is what the counted pods say, for classify's rollout verdicts.
func (s *rsPods) newPods() classify.NewPods {
	if s == nil {
		return classify.NewPods{}
	}
	p := classify.NewPods{Total: s.total, Doomed: s.doomed, Healthy: s.healthy}
	for r := range s.reasons {
		p.Reasons = append(p.Reasons, r)
	}
	sort.Strings(p.Reasons)
	return p
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

// statefulSetRollout is a StatefulSet's rollout (RollingUpdate only). It is doomed as Krane's
// StatefulSet#deploy_failed? (lib/krane/kubernetes_resource/stateful_set.rb) says: once the
// controller has observed the latest spec, when a pod of the update revision (its
// controller-revision-hash label is status.updateRevision) is doomed. Otherwise kubectl's
// StatefulSetStatus decides.
func (m *Model) statefulSetRollout(s *appsv1.StatefulSet) Rollout {
	st := &s.Status
	r := newRollout(contract.KindStatefulSet, s.Namespace, s.Name, s.Spec.Replicas, st.UpdatedReplicas, st.ReadyReplicas, st.AvailableReplicas)
	pods := m.setPods[setKey{contract.KindStatefulSet, s.Namespace, s.Name, st.UpdateRevision}].newPods()
	return r.judged(classify.StatefulSetVerdict(s, pods))
}

// daemonSetRollout is a DaemonSet's rollout (RollingUpdate only). It is doomed as Krane's
// DaemonSet#deploy_failed? (lib/krane/kubernetes_resource/daemon_set.rb) says: once the controller
// has observed the latest spec, when a pod of the current template generation (its
// pod-template-generation label is the DaemonSet's deprecated.daemonset.template.generation
// annotation, which the API server keeps) is doomed. Otherwise kubectl's DaemonSetStatus decides.
func (m *Model) daemonSetRollout(d *appsv1.DaemonSet) Rollout {
	st := &d.Status
	r := newRollout(contract.KindDaemonSet, d.Namespace, d.Name, &st.DesiredNumberScheduled, st.UpdatedNumberScheduled, st.NumberReady, st.NumberAvailable)
	pods := m.setPods[setKey{contract.KindDaemonSet, d.Namespace, d.Name, d.Annotations[appsv1.DeprecatedTemplateGeneration]}].newPods()
	return r.judged(classify.DaemonSetVerdict(d, pods))
}

// judged sets the rollout's verdict from classify's; the reason is sanitised (the pods' reasons
// already are, the workload's name in kubectl's messages is not).
func (r Rollout) judged(v classify.RolloutVerdict) Rollout {
	r.Verdict, r.Reason = v.Class, sanitize.Text(v.Reason)
	return r
}
