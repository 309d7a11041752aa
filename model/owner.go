package model

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"doomwatch/contract"
	"doomwatch/sanitize"
)

// ownerKey names a pod's direct controller: namespace, kind and name.
type ownerKey struct{ ns, kind, name string }

// controllerOf returns the controller reference (ownerReferences[].controller == true), as the
// garbage collector and kubectl do (apimachinery metav1.GetControllerOf). A pod owned without a
// controller flag falls back to its first owner, so it is still grouped.
func controllerOf(refs []metav1.OwnerReference) *metav1.OwnerReference {
	for i := range refs {
		if c := refs[i].Controller; c != nil && *c {
			return &refs[i]
		}
	}
	if len(refs) > 0 {
		return &refs[0]
	}
	return nil
}

// ctrlKey returns the ownerKey of a pod's controller, zero for an unmanaged pod.
func ctrlKey(ns string, refs []metav1.OwnerReference) ownerKey {
	c := controllerOf(refs)
	if c == nil {
		return ownerKey{}
	}
	return ownerKey{ns: ns, kind: c.Kind, name: c.Name}
}

// ownerEntry is a controller's top owner and workload, and how many counted pods it has: the entry
// goes with the last of them, so the cache holds the controllers of the pods the model has, not
// every ReplicaSet a long session ever saw. While a pod is counted its controller's entry stays,
// even after the controller itself is deleted, so pods still terminating stay grouped under their
// Deployment.
type ownerEntry struct {
	top      string // "Deployment/checkout"
	workload string // "shop/Deployment/checkout", Failure.Workload and Query.Owner
	pods     int
}

// topOwner returns the workload a controller belongs to, "Deployment/checkout":
//   - ReplicaSet → its controlling Deployment when the ReplicaSet is known, else "ReplicaSet/<name>"
//     (only known objects are trusted; the pod-template-hash suffix is not guessed away);
//   - Job → its CronJob when the Job is known and owned by one, else "Job/<name>";
//   - anything else (StatefulSet, DaemonSet, custom controllers) is its own top owner.
//
// Results are cached per controller, so every pod of a ReplicaSet shares one string.
func (m *Model) topOwner(k ownerKey) string {
	if k.kind == "" {
		return ""
	}
	return m.ownerEntry(k).top
}

// ownerEntry returns k's cache entry, resolving it when there is none.
func (m *Model) ownerEntry(k ownerKey) *ownerEntry {
	e := m.owners[k]
	if e == nil {
		e = &ownerEntry{}
		e.set(sanitize.Text(k.ns), m.resolveOwner(k))
		m.owners[k] = e
	}
	return e
}

func (e *ownerEntry) set(ns, top string) { e.top, e.workload = top, ns+"/"+top }

// countOwner adds (d = 1) or removes (d = -1) pod p in its controller's entry.
func (m *Model) countOwner(p *Pod, d int) {
	if p.ctrl.kind == "" {
		return
	}
	if d > 0 {
		m.ownerEntry(p.ctrl).pods++
		return
	}
	if e := m.owners[p.ctrl]; e != nil {
		if e.pods--; e.pods <= 0 {
			// Forgotten at the end of the batch (forgetOwners), not now: an update of the pod
			// uncounts it before it counts it again.
			m.ownerless = append(m.ownerless, p.ctrl)
		}
	}
}

// forgetOwners drops the entries of controllers left without a counted pod.
func (m *Model) forgetOwners() {
	for _, k := range m.ownerless {
		if e := m.owners[k]; e != nil && e.pods <= 0 {
			delete(m.owners, k)
		}
	}
	clear(m.ownerless)
	m.ownerless = m.ownerless[:0]
}

// workloadOf is p's workload: its controller's entry's, or the pod's key for an unmanaged pod.
func (m *Model) workloadOf(p *Pod) string {
	if p.Owner == "" {
		return p.Key
	}
	return m.ownerEntry(p.ctrl).workload
}

func (m *Model) resolveOwner(k ownerKey) string {
	switch k.kind {
	case string(contract.KindReplicaSet):
		if rs := m.replicaSets[nsName{k.ns, k.name}]; rs != nil {
			if d := controllerOf(rs.OwnerReferences); d != nil {
				return sanitize.Text(d.Kind) + "/" + sanitize.Text(d.Name)
			}
		}
	case string(contract.KindJob):
		if j := m.jobs[nsName{k.ns, k.name}]; j != nil {
			if c := controllerOf(j.OwnerReferences); c != nil {
				return sanitize.Text(c.Kind) + "/" + sanitize.Text(c.Name)
			}
		}
	}
	return sanitize.Text(k.kind) + "/" + sanitize.Text(k.name)
}

// applyOwners stores the batch's controllers and returns the pods' controllers whose top owner
// changed (a ReplicaSet seen for the first time, or re-parented).
func (m *Model) applyOwners(b *contract.Batch) map[ownerKey]struct{} {
	var changed map[ownerKey]struct{}
	note := func(k ownerKey) {
		e := m.owners[k]
		if e == nil {
			return // no pod resolved it yet; the first pod resolves it fresh
		}
		if top := m.resolveOwner(k); top != e.top {
			e.set(sanitize.Text(k.ns), top)
			if changed == nil {
				changed = make(map[ownerKey]struct{})
			}
			changed[k] = struct{}{}
		}
	}
	for _, rs := range b.ReplicaSets {
		k := nsName{rs.Namespace, rs.Name}
		m.replicaSets[k] = rs
		m.linkReplicaSet(k, rs)
		note(ownerKey{rs.Namespace, string(contract.KindReplicaSet), rs.Name})
	}
	for _, j := range b.Jobs {
		m.jobs[nsName{j.Namespace, j.Name}] = j
		note(ownerKey{j.Namespace, string(contract.KindJob), j.Name})
	}
	for _, d := range b.Deployments {
		k := nsName{d.Namespace, d.Name}
		m.deployments[k] = d
		m.rollouts.dirty[deployKey(k)] = struct{}{}
	}
	for _, s := range b.StatefulSets {
		k := nsName{s.Namespace, s.Name}
		m.statefulSets[k] = s
		m.rollouts.dirty[rolloutKey{contract.KindStatefulSet, k}] = struct{}{}
	}
	for _, d := range b.DaemonSets {
		k := nsName{d.Namespace, d.Name}
		m.daemonSets[k] = d
		m.rollouts.dirty[rolloutKey{contract.KindDaemonSet, k}] = struct{}{}
	}
	return changed
}

// reresolveOwners regroups the pods of controllers whose top owner changed, and moves their
// ledger entries to the new workload so escalation counts them together.
func (m *Model) reresolveOwners(changed map[ownerKey]struct{}) {
	moved := make(map[string]string) // pod UID → new workload
	for _, p := range m.pods {
		if _, ok := changed[p.ctrl]; !ok {
			continue
		}
		p.Owner = m.topOwner(p.ctrl)
		w := m.workloadOf(p)
		if w != p.workload {
			p.workload = w
			moved[p.UID] = w
			if _, ok := m.esc.startOf[p]; ok {
				m.indexStart(p, true) // filed again under its new workload
			}
		}
		m.syncRow(p)
	}
	if len(moved) > 0 {
		m.ledger.rewriteWorkloads(moved, &m.esc)
		m.nodeView.valid = false
	}
}
