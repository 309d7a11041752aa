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

// topOwner returns the workload a controller belongs to, "Deployment/checkout", as its kind says
// (resolveOwner): a known ReplicaSet's Deployment, a known Job's CronJob; anything else
// (StatefulSet, DaemonSet, custom controllers, objects not known yet) is its own top owner.
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

// resolveOwner is the workload of controller k's pods, as k's kind says (kindModel.owner); a
// controller of a kind without an owner, or not known, is its own.
func (m *Model) resolveOwner(k ownerKey) string {
	if km := kindOf(k.kind); km != nil && km.owner != nil {
		if top := km.owner(m, nsName{k.ns, k.name}); top != "" {
			return top
		}
	}
	return sanitize.Text(k.kind) + "/" + sanitize.Text(k.name)
}

// applyOwners stores the batch's workloads and returns the pods' controllers whose top owner
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
	for _, o := range b.Workloads {
		m.storeWorkload(o)
		if o.Obj != nil {
			note(ownerKey{o.Obj.GetNamespace(), string(o.Kind), o.Obj.GetName()})
		}
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
