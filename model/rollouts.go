package model

import (
	"fmt"
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

type rolloutCache struct {
	valid    bool
	rollouts []Rollout
}

// Rollouts returns every Deployment's rollout, doomed first, then by namespace/name. The slice is
// cached until the model changes; callers must not modify it.
func (m *Model) Rollouts() []Rollout {
	if !m.rollouts.valid {
		m.rollouts.rollouts, m.rollouts.valid = m.buildRollouts(), true
	}
	return m.rollouts.rollouts
}

func (m *Model) buildRollouts() []Rollout {
	owned := make(map[podKey][]*appsv1.ReplicaSet, len(m.deployments))
	for _, rs := range m.replicaSets {
		if c := controllerOf(rs.OwnerReferences); c != nil && c.Kind == string(KindDeployment) {
			k := podKey{rs.Namespace, c.Name}
			if d := m.deployments[k]; d != nil && (c.UID == "" || d.UID == "" || c.UID == d.UID) {
				owned[k] = append(owned[k], rs)
			}
		}
	}
	out := make([]Rollout, 0, len(m.deployments))
	for k, d := range m.deployments {
		out = append(out, m.rollout(d, owned[k]))
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
	return out
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

// newPodsDoom collects the doom of the new ReplicaSet's pods. Their reasons are already sanitised.
func (m *Model) newPodsDoom(rs *appsv1.ReplicaSet) newPodDoom {
	pods := m.podsByRS[podKey{rs.Namespace, rs.Name}]
	d := newPodDoom{total: len(pods)}
	seen := make(map[string]struct{})
	for _, p := range pods {
		if p.Verdict.Kind != classify.Doomed {
			continue
		}
		d.doomed++
		if _, ok := seen[p.Verdict.Reason]; !ok {
			seen[p.Verdict.Reason] = struct{}{}
			d.reasons = append(d.reasons, p.Verdict.Reason)
		}
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
