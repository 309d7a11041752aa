package model

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	"doomwatch/classify"
)

// RevisionAnnotation is the annotation the Deployment controller stamps with the same revision on a
// Deployment and its new ReplicaSet (kubernetes pkg/controller/deployment/util/deployment_util.go,
// RevisionAnnotation). The model finds the new ReplicaSet by it, so kube/'s informer transform must
// keep it.
const RevisionAnnotation = "deployment.kubernetes.io/revision"

const (
	// podTemplateHashLabel is the Deployment controller's label on its ReplicaSets (kubernetes
	// pkg/controller/deployment/util/deployment_util.go).
	podTemplateHashLabel = appsv1.DefaultDeploymentUniqueLabelKey
	// maxDoomReasonsInReason caps the distinct doom reasons a rollout's one-line reason lists.
	maxDoomReasonsInReason = 3
)

// rolloutCache keeps every Deployment's rollout. Only the rollouts of Deployments marked dirty
// (the Deployment, one of its ReplicaSets, or a pod of one changed) are made again, and the list is
// rebuilt only when one of them came out different.
type rolloutCache struct {
	byDeploy map[podKey]Rollout
	dirty    map[podKey]struct{}
	list     []Rollout
	built    bool
}

// Rollouts returns every Deployment's rollout, doomed first, then by namespace/name. The slice is
// the same until a rollout changes; callers must not modify it.
func (m *Model) Rollouts() []Rollout {
	c := &m.rollouts
	changed := !c.built
	for k := range c.dirty {
		r, ok := m.buildRollout(k)
		old, had := c.byDeploy[k]
		switch {
		case !ok && had:
			delete(c.byDeploy, k)
			changed = true
		case ok && (!had || !sameRollout(&old, &r)):
			c.byDeploy[k] = r
			changed = true
		}
	}
	clear(c.dirty)
	if !changed {
		return c.list
	}
	out := make([]Rollout, 0, len(c.byDeploy))
	for _, r := range c.byDeploy {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := &out[i], &out[j]
		if da, db := a.Verdict == RolloutDoomed, b.Verdict == RolloutDoomed; da != db {
			return da
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	c.list, c.built = out, true
	return out
}

func sameRollout(a, b *Rollout) bool {
	return a.Namespace == b.Namespace && a.Kind == b.Kind && a.Name == b.Name && a.Verdict == b.Verdict &&
		a.Desired == b.Desired && a.Updated == b.Updated && a.Ready == b.Ready && a.Available == b.Available &&
		a.Reason == b.Reason && a.NewReplicaSet == b.NewReplicaSet && slices.Equal(a.OldReplicaSets, b.OldReplicaSets)
}

// buildRollout makes Deployment k's rollout from the ReplicaSets it controls; false when the
// Deployment is not known.
func (m *Model) buildRollout(k podKey) (Rollout, bool) {
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
func (m *Model) linkReplicaSet(k podKey, rs *appsv1.ReplicaSet) {
	old, had := m.rsDeploy[k]
	var now podKey
	has := false
	if rs != nil {
		if c := controllerOf(rs.OwnerReferences); c != nil && c.Kind == string(KindDeployment) {
			now, has = podKey{rs.Namespace, c.Name}, true
		}
	}
	if had {
		m.rollouts.dirty[old] = struct{}{}
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
			set = make(map[podKey]struct{})
			m.deployRS[now] = set
		}
		set[k] = struct{}{}
		m.rollouts.dirty[now] = struct{}{}
	}
}

// rsPods is what a ReplicaSet's pods say for its rollout: how many there are, how many are doomed
// and with which reasons (sanitised), counted by count and uncount.
type rsPods struct {
	total, doomed int
	reasons       map[string]int
}

// countRS adds (d = 1) or removes (d = -1) pod p in its ReplicaSet's counts and marks the rollout
// of the ReplicaSet's Deployment dirty.
//
// A pod the kubelet failed for a node reason (evicted, preempted, rejected at admission, shut
// down with its node) is left out: its ReplicaSet has replaced it, and such pods stay in the API
// until they are garbage-collected, often for days. Counted, one of them would keep a new
// ReplicaSet whose live pods are all doomed from ever being doomed. Krane counts them (its
// all-doomed rule sees a transient pod); doomwatch counts the pods that will run.
func (m *Model) countRS(p *Pod, d int) {
	if p.ctrl.kind != string(KindReplicaSet) || replaced(p.Verdict.Rule) {
		return
	}
	k := podKey{p.ctrl.ns, p.ctrl.name}
	s := m.rsPods[k]
	if s == nil {
		s = &rsPods{}
		m.rsPods[k] = s
	}
	s.total += d
	if p.Verdict.Kind == classify.Doomed {
		s.doomed += d
		if s.reasons == nil {
			s.reasons = make(map[string]int)
		}
		if s.reasons[p.Verdict.Reason] += d; s.reasons[p.Verdict.Reason] <= 0 {
			delete(s.reasons, p.Verdict.Reason)
		}
	}
	if s.total <= 0 {
		delete(m.rsPods, k)
	}
	if dk, ok := m.rsDeploy[k]; ok {
		m.rollouts.dirty[dk] = struct{}{}
	}
}

// replaced reports a pod its controller replaces: failed by the kubelet for a node reason.
func replaced(r classify.Rule) bool {
	return r == classify.RulePodEvicted || r == classify.RulePodRejected
}

func (m *Model) rollout(d *appsv1.Deployment, rss []*appsv1.ReplicaSet) Rollout {
	r := Rollout{
		Namespace: Sanitize(d.Namespace),
		Kind:      string(KindDeployment),
		Name:      Sanitize(d.Name),
		Desired:   1, // the API server's default for spec.replicas
		Updated:   d.Status.UpdatedReplicas,
		Ready:     d.Status.ReadyReplicas,
		Available: d.Status.AvailableReplicas,
	}
	if d.Spec.Replicas != nil {
		r.Desired = *d.Spec.Replicas
	}
	newRS := findNewReplicaSet(d, rss)
	for _, rs := range rss {
		if rs == newRS {
			r.NewReplicaSet = Sanitize(rs.Name)
		} else {
			r.OldReplicaSets = append(r.OldReplicaSets, Sanitize(rs.Name))
		}
	}
	sort.Strings(r.OldReplicaSets)

	var doom newPodDoom
	// Until the controllers have observed the latest spec, the status and the new ReplicaSet may
	// be the previous rollout's and say nothing about this one. `kubectl rollout status`
	// (DeploymentStatus) waits for the Deployment's status.observedGeneration >=
	// metadata.generation first, and Krane's ReplicaSet#deploy_failed? (replica_set.rb) refuses a
	// stale status (observed_generation != current_generation); both are required here.
	if newRS != nil && current(d.Generation, d.Status.ObservedGeneration) &&
		current(newRS.Generation, newRS.Status.ObservedGeneration) {
		doom = m.newPodsDoom(newRS)
		if doom.total > 0 && doom.doomed == doom.total {
			// Krane's ReplicaSet rule (lib/krane/kubernetes_resource/replica_set.rb, deploy_failed?):
			// the rollout is doomed when the new ReplicaSet has pods and every one of them is doomed.
			r.Verdict, r.Reason = RolloutDoomed, doom.String()
			return r
		}
	}
	msg, done, err := classify.DeploymentStatus(d)
	switch {
	case err != nil:
		// kubectl stops at "exceeded its progress deadline"; the new pods' doom reasons say why.
		r.Verdict, r.Reason = RolloutDoomed, Sanitize(err.Error())
		if doom.doomed > 0 {
			r.Reason += "; " + doom.String()
		}
	case done:
		r.Verdict, r.Reason = RolloutComplete, Sanitize(msg)
	default:
		r.Verdict, r.Reason = RolloutProgressing, Sanitize(msg)
	}
	return r
}

// current reports whether a controller's status has caught up with its object's generation.
func current(generation, observed int64) bool { return observed >= generation }

// newPodDoom is what the new ReplicaSet's pods say: how many there are, how many are doomed and
// the doomed pods' distinct reasons, sorted.
type newPodDoom struct {
	doomed, total int
	reasons       []string
}

// String is "2/3 new pods doomed: Image not found: ...; OOMKilled ...", at most
// maxDoomReasonsInReason reasons and "and N more".
func (d newPodDoom) String() string {
	list := d.reasons
	if len(list) > maxDoomReasonsInReason {
		list = append(list[:maxDoomReasonsInReason:maxDoomReasonsInReason], fmt.Sprintf("and %d more", len(list)-maxDoomReasonsInReason))
	}
	return fmt.Sprintf("%d/%d new pods doomed: %s", d.doomed, d.total, strings.Join(list, "; "))
}

// newPodsDoom is the doom of the new ReplicaSet's pods, from its counts. Their reasons are
// already sanitised.
func (m *Model) newPodsDoom(rs *appsv1.ReplicaSet) newPodDoom {
	s := m.rsPods[podKey{rs.Namespace, rs.Name}]
	if s == nil {
		return newPodDoom{}
	}
	d := newPodDoom{total: s.total, doomed: s.doomed}
	for r := range s.reasons {
		d.reasons = append(d.reasons, r)
	}
	sort.Strings(d.reasons)
	return d
}

// findNewReplicaSet picks the Deployment's new ReplicaSet among those it owns.
//
// The revision annotation comes first: the Deployment controller stamps the same
// deployment.kubernetes.io/revision on a Deployment and its new ReplicaSet, and it survives
// kube/'s informer transform, which trims pod templates. When revisions are missing, fall back to
// kubectl's FindNewReplicaSet (kubectl pkg/util/deployment/deployment.go): the oldest ReplicaSet
// whose template equals the Deployment's, ignoring the pod-template-hash label.
func findNewReplicaSet(d *appsv1.Deployment, rss []*appsv1.ReplicaSet) *appsv1.ReplicaSet {
	if rev := d.Annotations[RevisionAnnotation]; rev != "" {
		for _, rs := range rss {
			if rs.Annotations[RevisionAnnotation] == rev {
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
