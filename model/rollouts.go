package model

import (
	"slices"
	"sort"

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
	// NewPods counts the new pods (the new ReplicaSet's, the update revision's), NewDoomed those
	// doomed and DoomReason the first of their reasons: what --stable reads of a complete rollout
	// (Soak). Tolerates is how many doomed new pods its required rollout lets it have (Krane's
	// krane.shopify.io/required-rollout on a Deployment), 0 without one. A change of these alone
	// makes no new Rollouts list: they are current in Current's answer and the gate's, and may be
	// older in the list.
	NewPods, NewDoomed, Tolerates int
	DoomReason                    string
}

// Workload is the rollout's workload as Query.Owner names it: "shop/Deployment/checkout".
func (r *Rollout) Workload() string { return r.Namespace + "/" + r.Kind + "/" + r.Name }

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
		case ok:
			// Only what --stable reads changed (the new pods' counts): kept, without a new list,
			// as the pods of a large rollout change on every batch (BenchmarkBatch). Readers of
			// those fields ask Current.
			c.byKey[k] = r
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

// Current is rollout r as of the latest Rollouts, with the counts a change of which alone does not
// make a new Rollouts list (NewPods, NewDoomed, DoomReason, Tolerates); false when the model has
// no such rollout. r, from that list, is found by its kind, namespace and name.
func (m *Model) Current(r *Rollout) (Rollout, bool) {
	cur, ok := m.rollouts.byKey[rolloutKey{contract.Kind(r.Kind), nsName{r.Namespace, r.Name}}]
	return cur, ok
}

func sameRollout(a, b *Rollout) bool {
	return a.Namespace == b.Namespace && a.Kind == b.Kind && a.Name == b.Name && a.Verdict == b.Verdict &&
		a.Desired == b.Desired && a.Updated == b.Updated && a.Ready == b.Ready && a.Available == b.Available &&
		a.Reason == b.Reason && a.NewReplicaSet == b.NewReplicaSet && slices.Equal(a.OldReplicaSets, b.OldReplicaSets)
}

// buildRollout makes workload k's rollout, as its kind does; false when the workload is not known
// or has no rollout status (the OnDelete strategy).
func (m *Model) buildRollout(k rolloutKey) (Rollout, bool) {
	if km := kinds[k.kind]; km != nil && km.rollout != nil {
		return km.rollout(m, k.nsName)
	}
	return Rollout{}, false
}

// podCounts is what the pods of a revision (a ReplicaSet, a set's revision) say for its rollout:
// how many there are, how many are doomed (and with which reasons, sanitised) and healthy, counted
// by count and uncount.
type podCounts struct {
	total, doomed, healthy int
	// failing counts the pods that are transient or doomed: with healthy, the pods that have had
	// their try (escalation waits for the rest, failingRevisions).
	failing int
	reasons map[string]int
}

// countRS adds (d = 1) or removes (d = -1) pod p in the counts of its revision, as its
// controller's kind names it (kindModel.revision), and marks the rollout that reads them dirty.
//
// A pod its controller replaces (classify.Replaced) is left out.
func (m *Model) countRS(p *Pod, d int) {
	if classify.Replaced(p.Verdict.Rule) {
		return
	}
	km := kindOf(p.ctrl.kind)
	if km == nil || km.revision == nil {
		return
	}
	rev, rk, ok := km.revision(m, p)
	countIn(m.revPods, rev, p, d)
	if ok {
		m.rollouts.dirty[rk] = struct{}{}
	}
}

// countIn counts p (d = 1) or stops counting it (d = -1) in counts[k], which goes when empty.
func countIn[K comparable](counts map[K]*podCounts, k K, p *Pod, d int) {
	s := counts[k]
	if s == nil {
		s = &podCounts{}
		counts[k] = s
	}
	s.add(p, d)
	if s.total <= 0 {
		delete(counts, k)
	}
}

// add counts p (d = 1) or stops counting it (d = -1).
func (s *podCounts) add(p *Pod, d int) {
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

// newPods is what the counted pods say, for classify's rollout verdicts.
func (s *podCounts) newPods() classify.NewPods {
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

// judged sets the rollout's verdict from classify's, and what its new pods say; the reason is
// sanitised (the pods' reasons already are, the workload's name in kubectl's messages is not).
func (r Rollout) judged(v classify.RolloutVerdict, pods classify.NewPods) Rollout {
	r.Verdict, r.Reason = v.Class, sanitize.Text(v.Reason)
	r.NewPods, r.NewDoomed = pods.Total, pods.Doomed
	if len(pods.Reasons) > 0 {
		r.DoomReason = pods.Reasons[0]
	}
	return r
}
