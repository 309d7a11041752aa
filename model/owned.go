package model

import (
	"slices"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"doomwatch/classify"
	"doomwatch/contract"
)

// maxOwnerDepth bounds a walk up a pod's controllers: a Knative Service's pods are five levels
// down (Service, Configuration, Revision, Deployment, ReplicaSet), and ownerReferences can form a
// cycle, which the garbage collector tolerates and a walk must too.
const maxOwnerDepth = 16

// Owned is what the pods an object controls say of it, at any depth of ownerReferences: an
// operator's custom resource, a Knative Service. kstatus judges such an object by its own status
// only, and a CR whose pods crash-loop stays InProgress there until its operator gives up, if it
// ever does; its pods' verdicts say at once why.
type Owned struct {
	// Workloads are the workloads of kinds the model knows between the object and its pods (the
	// Deployment an operator made, a Knative Revision's Deployment), by kind and name: their
	// current pods are counted, as a deploy gate counts them, and old revisions' pods are not.
	Workloads []Target
	// Doomed is a doomed workload's rollout ("deployment/web: ProgressDeadlineExceeded: …"), ""
	// while none is.
	Doomed string
	// Pods counts the current pods per verdict: the workloads', and the pods the object controls
	// through objects the model does not hold (or itself), but for those being deleted.
	Pods Counts
	// Problems are the doomed and transient containers of those pods, as GateStatus has them.
	Problems, Transient []GateProblem
	// Suspect lists the suspect nodes their failures hit.
	Suspect []Node
	// Unknown are controllers the model does not hold that parents did not resolve: the caller
	// looks them up (their own controller) and asks again. Their pods are not counted meanwhile.
	Unknown []OwnerRef
}

// OwnerRef is a controller reference met in Namespace, the namespace of the object that holds it:
// the object it names is there, or cluster-scoped.
type OwnerRef struct {
	Namespace string
	metav1.OwnerReference
}

// OwnedBy is what the pods object uid controls (directly or through other objects) say of it, in
// namespace ns ("" for a cluster-scoped object, whose pods may be in any namespace). Each pod's
// controller (ownerReferences[].controller) is followed up: through the objects of the kinds the
// model stores, and through parents for the others. The garbage collector follows the same references; the
// controller one is the one that says who manages an object (metav1.GetControllerOf).
//
// parents are the ownerReferences of the objects the model does not hold, by their UID, as the
// caller found them (nil: none); Owned.Unknown lists those it needs and does not have. A Job on the
// way that finished before since (when the wait began) is history, not the object's state now:
// its pods are left out.
func (m *Model) OwnedBy(ns string, uid types.UID, parents map[types.UID][]metav1.OwnerReference, since, now time.Time) Owned {
	var out Owned
	type chain struct {
		owned bool
		entry Target // the lowest workload of a kind with a gate on the way, zero without one
	}
	byCtrl := map[types.UID]chain{}
	unknown := map[types.UID]bool{}
	entries := map[Target]bool{}
	var direct []*Pod
	for _, p := range m.pods {
		if p.ctrl.kind == "" || ns != "" && p.Namespace != ns {
			continue
		}
		first := controllerOf(p.rec.GetOwnerReferences())
		c, ok := byCtrl[first.UID]
		if !ok || first.UID == "" {
			c = chain{}
			ref := first
			for depth := 0; ref != nil && depth < maxOwnerDepth; depth++ {
				if ref.UID == uid {
					c.owned = true
					break
				}
				if obj := m.objects[contract.Kind(ref.Kind)][nsName{p.Namespace, ref.Name}]; obj != nil && (ref.UID == "" || obj.GetUID() == ref.UID) {
					if km := kinds[contract.Kind(ref.Kind)]; c.entry.Kind == "" && km.gate != nil {
						c.entry = Target{Kind: km.kind, Namespace: p.Namespace, Name: ref.Name, Since: since}
					}
					ref = controllerOf(obj.GetOwnerReferences())
					continue
				}
				if ref.Kind == "Node" && ref.APIVersion == "v1" {
					break // a static pod's mirror: its node controls nothing above it
				}
				refs, known := parents[ref.UID]
				if !known {
					if !unknown[ref.UID] {
						unknown[ref.UID] = true
						out.Unknown = append(out.Unknown, OwnerRef{p.Namespace, *ref})
					}
					break
				}
				ref = controllerOf(refs)
			}
			byCtrl[first.UID] = c
		}
		switch {
		case !c.owned:
		case c.entry.Kind == contract.KindJob:
			if j := m.job(nsName{c.entry.Namespace, c.entry.Name}); j != nil && !jobFinishedBefore(j, since) {
				entries[c.entry] = true
			}
		case c.entry.Kind != "":
			entries[c.entry] = true
		case !p.rec.Deleting():
			direct = append(direct, p)
		}
	}
	for t := range entries {
		out.Workloads = append(out.Workloads, t)
	}
	slices.SortFunc(out.Workloads, func(a, b Target) int {
		return strings.Compare(a.workload(), b.workload())
	})
	suspect := map[string]Node{}
	for _, st := range m.Gate(out.Workloads, now) {
		out.Pods.Pods += st.Pods.Pods
		out.Pods.Healthy += st.Pods.Healthy
		out.Pods.Progressing += st.Pods.Progressing
		out.Pods.Transient += st.Pods.Transient
		out.Pods.Doomed += st.Pods.Doomed
		out.Pods.Completed += st.Pods.Completed
		out.Problems = append(out.Problems, st.Doomed...)
		out.Transient = append(out.Transient, st.Transient...)
		if st.Rollout.Verdict == classify.RolloutDoomed && out.Doomed == "" {
			out.Doomed = st.Target.String() + ": " + st.Rollout.Reason
		}
		for _, n := range st.Suspect {
			suspect[n.Name] = n
		}
	}
	sort.Slice(direct, func(i, j int) bool { return direct[i].Key < direct[j].Key })
	failing := map[string]bool{}
	for _, p := range direct {
		out.Pods.add(p.Verdict.Class, 1)
		switch p.Verdict.Class {
		case classify.Doomed:
			out.Problems = append(out.Problems, gateProblems(p)...)
		case classify.Transient:
			out.Transient = append(out.Transient, gateProblems(p)...)
		default:
			continue
		}
		if p.Node != "" {
			failing[p.Node] = true
		}
	}
	if len(failing) > 0 {
		for _, n := range m.Nodes(now) {
			if failing[n.Name] && n.Suspect {
				suspect[n.Name] = n
			}
		}
	}
	for _, n := range suspect {
		out.Suspect = append(out.Suspect, n)
	}
	slices.SortFunc(out.Suspect, func(a, b Node) int { return strings.Compare(a.Name, b.Name) })
	return out
}
