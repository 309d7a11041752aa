package model

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"doomwatch/classify"
	"doomwatch/contract"
)

// kindModel is what one workload kind means to the model: how a change of one of its objects
// spreads, what it says of the pods it controls, its rollout and what a deploy gate waits for. It
// is kubectl's StatusViewerFor and kstatus's legacyTypes in the model's terms: each kind is one
// file (deployment.go, replicaset.go, statefulset.go, daemonset.go, job.go) that registers its
// row, and nothing else in the model switches on a workload kind. A nil func is a question the
// kind has no answer to.
type kindModel struct {
	kind contract.Kind
	// changed runs after an object of the kind was stored (obj) or deleted (obj nil) under k: it
	// keeps the kind's links to other objects and marks the rollouts the change touches dirty
	// (touched, after it, marks the object's own rollout).
	changed func(m *Model, k nsName, obj metav1.Object)
	// ownsReplicaSets says the kind rolls out through ReplicaSets it controls (a Deployment, an Argo
	// Rollout): replicaset.go links them to it, and their pods count for its rollout.
	ownsReplicaSets bool
	// owner is the workload pods controlled by object k belong to, "Deployment/checkout" (a
	// ReplicaSet's Deployment, a Job's CronJob); "" when k is its own (topOwner).
	owner func(m *Model, k nsName) string
	// revision is the revision the counted pod p, controlled by an object of the kind, is counted
	// under, and the rollout whose verdict reads that count (ok false: none yet).
	revision func(m *Model, p *Pod) (rev revKey, rollout rolloutKey, ok bool)
	// rollout is workload k's rollout; false when k is not known or has no rollout status.
	rollout func(m *Model, k nsName) (Rollout, bool)
	// gate looks target k up for a deploy gate: it sets st.Found and st.Unsupported, and returns
	// the controllers whose pods are the target's, each saying which of them are current.
	gate func(m *Model, k nsName, st *GateStatus) []gateCtrl
	// gateRollout is the verdict of target t for a kind without a rollout (rollout nil), from what
	// its current pods say (pods: counted by the gate); false when t is not known.
	gateRollout func(m *Model, t Target, pods classify.NewPods) (Rollout, bool)
	// judgesPods says the kind's objects take part in their pods' verdicts (podVerdict), so their
	// pods are indexed (podsByCtrl) and judged again when the object changes.
	judgesPods bool
	// podVerdict is pod's verdict v in the light of its controller, object k (a Job's retries).
	podVerdict func(m *Model, k nsName, pod *corev1.Pod, v classify.Verdict) classify.Verdict
}

// kinds are the workload kinds the model knows, by kind, as their files register them.
var kinds = map[contract.Kind]*kindModel{}

// registerKind adds a kind's row; each kind's file calls it from init.
func registerKind(k *kindModel) {
	if _, dup := kinds[k.kind]; dup {
		panic("model: kind " + string(k.kind) + " registered twice")
	}
	kinds[k.kind] = k
}

// kindOf is the row of the pods' controller kind ctrl, nil for a kind the model does not model.
func kindOf(ctrl string) *kindModel { return kinds[contract.Kind(ctrl)] }

// revKey is one revision of a workload whose pods the model counts: a ReplicaSet (revision ""),
// or a StatefulSet's or DaemonSet's revision (its pods' controller-revision-hash or
// pod-template-generation label).
type revKey struct {
	kind     contract.Kind
	ns, name string
	revision string
}

// gateCtrl is one controller whose pods a gate target judges: a Deployment's ReplicaSets (current
// says which is the new one), or a set itself, whose current pods are those of revision.
type gateCtrl struct {
	ctrl    ownerKey
	current bool
	// byRevision: the pods are current when their revision is revision ("": all of them).
	byRevision bool
	revision   string
}

// objectAs is the stored object of kind under k as the type its informer makes, or the zero value.
func objectAs[T metav1.Object](m *Model, kind contract.Kind, k nsName) T {
	o, _ := m.objects[kind][k].(T)
	return o
}

// storeWorkload keeps one object of a batch and lets its kind spread the change.
func (m *Model) storeWorkload(o contract.Object) {
	km := kinds[o.Kind]
	if km == nil || o.Obj == nil {
		return
	}
	k := nsName{o.Obj.GetNamespace(), o.Obj.GetName()}
	store := m.objects[o.Kind]
	if store == nil {
		store = make(map[nsName]metav1.Object)
		m.objects[o.Kind] = store
	}
	store[k] = o.Obj
	km.touched(m, k, o.Obj)
}

// deleteWorkload forgets object k of kind; false when kind is not a workload kind.
func (m *Model) deleteWorkload(kind contract.Kind, k nsName) bool {
	km := kinds[kind]
	if km == nil {
		return false
	}
	if store := m.objects[kind]; store != nil {
		delete(store, k)
	}
	km.touched(m, k, nil)
	return true
}

// touched spreads a store (obj) or delete (obj nil) of object k of the kind: the kind's own links,
// the object's rollout when the kind has rollouts, and its pods' verdicts when they read it.
func (km *kindModel) touched(m *Model, k nsName, obj metav1.Object) {
	if km.changed != nil {
		km.changed(m, k, obj)
	}
	if km.rollout != nil {
		m.markRollout(km.kind, k)
	}
	if km.judgesPods {
		m.rejudgeCtrl(ownerKey{k.ns, string(km.kind), k.name})
	}
}

// markRollout marks workload k's rollout to be made again.
func (m *Model) markRollout(kind contract.Kind, k nsName) {
	m.rollouts.dirty[rolloutKey{kind, k}] = struct{}{}
}

// rejudgeCtrl judges the pods of controller k again: its object changed (a Job's retry count or
// condition changes its failed attempts' verdicts).
func (m *Model) rejudgeCtrl(k ownerKey) {
	for p := range m.podsByCtrl[k] {
		m.rejudge(p)
	}
}

// indexCtrlPod adds (d > 0) or removes pod p in its controller's pod set, for the kinds whose
// objects judge their pods.
func (m *Model) indexCtrlPod(p *Pod, d int) {
	km := kindOf(p.ctrl.kind)
	if km == nil || !km.judgesPods {
		return
	}
	set := m.podsByCtrl[p.ctrl]
	if d > 0 {
		if set == nil {
			set = make(map[*Pod]struct{})
			m.podsByCtrl[p.ctrl] = set
		}
		set[p] = struct{}{}
		return
	}
	delete(set, p)
	if len(set) == 0 {
		delete(m.podsByCtrl, p.ctrl)
	}
}

// withController is v, pod p's verdict, in the light of its controller's object.
func (m *Model) withController(p *Pod, pod *corev1.Pod, v classify.Verdict) classify.Verdict {
	if km := kindOf(p.ctrl.kind); km != nil && km.podVerdict != nil {
		v = km.podVerdict(m, nsName{p.ctrl.ns, p.ctrl.name}, pod, v)
	}
	return v
}
