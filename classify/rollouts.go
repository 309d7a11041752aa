package classify

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
)

// RolloutClass is the class of a rollout's verdict, named as JSON, the tables and the gate print
// it. It is the one rollout-verdict type: the model's rollouts and the gate's document carry it.
type RolloutClass string

// The classes of rollout verdict.
const (
	RolloutProgressing RolloutClass = "progressing"
	RolloutComplete    RolloutClass = "complete"
	RolloutDoomed      RolloutClass = "doomed"
)

// RolloutVerdict is the judgement of one rollout: a plain value, like a pod's Verdict. Reason is
// one line; names in it are the API's, unsanitised.
type RolloutVerdict struct {
	Class  RolloutClass
	Reason string
}

// NewPods counts a rollout's new pods as the model keeps them: a Deployment's new ReplicaSet's,
// a StatefulSet's update revision's, a DaemonSet's current template generation's. Pods their
// controller replaces (evicted, rejected at admission) are left out by the caller.
type NewPods struct {
	Total, Doomed int
	// Healthy counts the pods running and ready with nothing held against them (class Healthy).
	Healthy int
	// Reasons are the doomed pods' distinct reasons, sorted.
	Reasons []string
	// WasDoomed says the rollout was doomed for these same new pods (the same new ReplicaSet) at
	// the last judgement: a new pod created since, still starting, does not take the doom back.
	WasDoomed bool
}

// maxDoomReasons caps the distinct doom reasons a rollout's one-line reason lists.
const maxDoomReasons = 3

// String is "2/3 new pods doomed: Image not found: …; OOMKilled …", at most maxDoomReasons
// reasons and "and N more".
func (p NewPods) String() string {
	list := p.Reasons
	if len(list) > maxDoomReasons {
		list = append(list[:maxDoomReasons:maxDoomReasons], fmt.Sprintf("and %d more", len(list)-maxDoomReasons))
	}
	return fmt.Sprintf("%d/%d new pods doomed: %s", p.Doomed, p.Total, strings.Join(list, "; "))
}

// ProportionalDoomPods is how many doomed new pods, with none healthy, doom a Deployment's rollout
// before every new pod is doomed.
const ProportionalDoomPods = 3

// DeploymentVerdict judges a Deployment's rollout from its status, its new ReplicaSet (nil when
// none is known) and that ReplicaSet's pods. In order:
//
//   - Until the controllers have observed the latest spec, the status and the new ReplicaSet may
//     be the previous rollout's: `kubectl rollout status` (DeploymentStatus) waits for the
//     Deployment's observedGeneration, and Krane's ReplicaSet#deploy_failed? (replica_set.rb)
//     refuses a stale ReplicaSet status; the pods are judged only when both are current.
//   - Krane's rule (lib/krane/kubernetes_resource/replica_set.rb, deploy_failed?): the new
//     ReplicaSet has pods and every one of them is doomed.
//   - The proportional rule, beyond Krane: at least ProportionalDoomPods new pods are doomed and
//     none is healthy. A large rollout whose new pods crash-loop while others are still being
//     created or started is then doomed in seconds, when the first few have failed, not when the
//     last of them has (Shopify/krane#255, where a 300-pod rollout waited for every pod; zendesk's
//     samson added an allowed-failure percentage for the same reason). One healthy new pod says the
//     release can run, and leaves the call to Krane's rule; one or two doomed pods of many may be
//     the pods' own bad luck (an OOM kill on a busy node). A rollout of one or two pods is judged
//     by Krane's rule alone.
//   - Otherwise kubectl's DeploymentStatus: its progress deadline error dooms the rollout (the new
//     pods' doom reasons say why), done completes it, anything else is progressing.
//
// A Deployment with Krane's krane.shopify.io/required-rollout (RequiredRollout) other than full is
// judged by requiredVerdict instead; one whose annotation Krane would refuse is judged as full (the
// gate refuses it: model's deploymentGate).
func DeploymentVerdict(d *appsv1.Deployment, newRS *appsv1.ReplicaSet, pods NewPods) RolloutVerdict {
	current := newRS != nil && observed(d.Generation, d.Status.ObservedGeneration) &&
		observed(newRS.Generation, newRS.Status.ObservedGeneration)
	if !current {
		pods = NewPods{}
	}
	if req, err := RequiredRollout(d); err == nil && !req.Full() {
		return requiredVerdict(d, newRS, current, pods, req)
	}
	if v, doomed := newPodsDoom(pods); doomed {
		return v
	}
	msg, done, err := DeploymentStatus(d)
	switch {
	case err != nil:
		reason := err.Error()
		if pods.Doomed > 0 {
			reason += "; " + pods.String()
		}
		return RolloutVerdict{RolloutDoomed, reason}
	case done:
		return RolloutVerdict{RolloutComplete, msg}
	}
	return RolloutVerdict{RolloutProgressing, msg}
}

// requiredVerdict judges a Deployment whose required rollout (req) is none, maxUnavailable or a
// percentage, as Krane's Deployment#deploy_succeeded? does, with doomwatch's doom beside it:
//
//   - Nothing is judged until the controllers have observed the latest spec (current).
//   - Doomed when the doomed new pods leave fewer than req.Min of spec.replicas able to run (a
//     crash-looping pod stays, and is not replaced): the requirement can no longer be met. Within
//     that, doomed pods are tolerated: the user said how many replicas are enough, and the
//     proportional rule's guess gives way to it.
//   - Complete when the new ReplicaSet wants, has ready and has available at least req.Min
//     replicas (Krane's three counts); "none" as soon as there is a new ReplicaSet.
//   - Otherwise kubectl's progress deadline error dooms it; anything else is progressing.
func requiredVerdict(d *appsv1.Deployment, newRS *appsv1.ReplicaSet, current bool, pods NewPods, req Required) RolloutVerdict {
	desired := int32(1)
	if d.Spec.Replicas != nil {
		desired = *d.Spec.Replicas
	}
	requires := fmt.Sprintf("%s %q requires %d of %d", requiredRolloutAnnotation, req.Value, req.Min, desired)
	if !current {
		msg, _, _ := DeploymentStatus(d)
		if newRS == nil && d.Generation <= d.Status.ObservedGeneration {
			msg = fmt.Sprintf("Waiting for deployment %q to have a new ReplicaSet", d.Name)
		}
		return RolloutVerdict{RolloutProgressing, msg}
	}
	if pods.Doomed > 0 && int(desired)-pods.Doomed < int(req.Min) {
		return RolloutVerdict{RolloutDoomed, fmt.Sprintf("%s, more than %s tolerates (%s)", pods, requiredRolloutAnnotation, requires)}
	}
	rsDesired := int32(1)
	if newRS.Spec.Replicas != nil {
		rsDesired = *newRS.Spec.Replicas
	}
	st := &newRS.Status
	if rsDesired >= req.Min && st.ReadyReplicas >= req.Min && st.AvailableReplicas >= req.Min {
		return RolloutVerdict{RolloutComplete, fmt.Sprintf("deployment %q: %d new replicas available, %s", d.Name, st.AvailableReplicas, requires)}
	}
	if _, _, err := DeploymentStatus(d); err != nil {
		reason := err.Error()
		if pods.Doomed > 0 {
			reason += "; " + pods.String()
		}
		return RolloutVerdict{RolloutDoomed, reason}
	}
	return RolloutVerdict{RolloutProgressing, fmt.Sprintf("Waiting for deployment %q: %d new replicas available, %s", d.Name, st.AvailableReplicas, requires)}
}

// StatefulSetVerdict judges a StatefulSet's rollout (RollingUpdate) as Krane's
// StatefulSet#deploy_failed? (lib/krane/kubernetes_resource/stateful_set.rb) does: once the
// controller has observed the latest spec, a doomed pod of the update revision (pods are those
// whose controller-revision-hash is status.updateRevision) dooms it. There is no progress
// deadline for a StatefulSet (kubernetes/kubectl#738): without this rule a crash loop only times
// out. Otherwise kubectl's StatefulSetStatus decides.
func StatefulSetVerdict(s *appsv1.StatefulSet, pods NewPods) RolloutVerdict {
	if s.Status.UpdateRevision == "" || s.Status.ObservedGeneration == 0 || !observed(s.Generation, s.Status.ObservedGeneration) {
		pods = NewPods{}
	}
	msg, done, err := StatefulSetStatus(s)
	return setVerdict(pods, msg, done, err)
}

// DaemonSetVerdict judges a DaemonSet's rollout (RollingUpdate) as Krane's DaemonSet#deploy_failed?
// (lib/krane/kubernetes_resource/daemon_set.rb) does: once the controller has observed the latest
// spec, a doomed pod of the current template generation (its pod-template-generation label is the
// DaemonSet's deprecated.daemonset.template.generation annotation) dooms it. Otherwise kubectl's
// DaemonSetStatus decides.
func DaemonSetVerdict(d *appsv1.DaemonSet, pods NewPods) RolloutVerdict {
	if d.Annotations[appsv1.DeprecatedTemplateGeneration] == "" || !observed(d.Generation, d.Status.ObservedGeneration) {
		pods = NewPods{}
	}
	msg, done, err := DaemonSetStatus(d)
	return setVerdict(pods, msg, done, err)
}

// newPodsDoom is the new pods' part of DeploymentVerdict: Krane's rule, the proportional rule and
// the hysteresis that keeps a doom while no new pod is healthy.
func newPodsDoom(pods NewPods) (RolloutVerdict, bool) {
	switch {
	case pods.Total > 0 && pods.Doomed == pods.Total:
		return RolloutVerdict{RolloutDoomed, pods.String()}, true
	case pods.Doomed >= ProportionalDoomPods && pods.Healthy == 0:
		return RolloutVerdict{RolloutDoomed, pods.String() + ", none healthy"}, true
	case pods.WasDoomed && pods.Doomed > 0 && pods.Healthy == 0:
		// Hysteresis: the surge creates the next new pod while the first ones crash; until one
		// of them is healthy, or none is doomed any more, the doom stands (no flap back to
		// progressing, as argo-rollouts#3765 shows for readiness).
		return RolloutVerdict{RolloutDoomed, pods.String() + ", none healthy"}, true
	}
	return RolloutVerdict{}, false
}

// setVerdict is a StatefulSet's or DaemonSet's verdict: doomed when one of its current pods is
// (Krane fails these on any doomed pod, a Deployment only when all the new ones are), else
// kubectl's answer. err is kubectl's "only available for RollingUpdate": progressing, since the
// caller judges only RollingUpdate workloads.
func setVerdict(pods NewPods, msg string, done bool, err error) RolloutVerdict {
	switch {
	case pods.Doomed > 0:
		return RolloutVerdict{RolloutDoomed, pods.String()}
	case err != nil:
		return RolloutVerdict{RolloutProgressing, err.Error()}
	case done:
		return RolloutVerdict{RolloutComplete, msg}
	}
	return RolloutVerdict{RolloutProgressing, msg}
}

// observed reports whether a controller's status has caught up with its object's generation.
func observed(generation, observedGeneration int64) bool { return observedGeneration >= generation }

// SouredVerdict is the verdict of a rollout that has completed, in its --stable window (stable is
// the window as the user wrote it), whose new pods now say pods: doomed when more of them are
// doomed than its required rollout tolerates (tolerates; 0 without one), with the first doomed
// pod's reason; false when they are not. One doomed pod is enough here, where the rollout rules
// above want all, or most with none healthy: the rollout had completed, and a pod that crashes
// after passing its readiness probe is what the window is for (argo-rollouts#3765's crash loop).
func SouredVerdict(pods NewPods, tolerates int, stable string) (RolloutVerdict, bool) {
	if pods.Doomed == 0 || pods.Doomed <= tolerates {
		return RolloutVerdict{}, false
	}
	reason := ""
	if len(pods.Reasons) > 0 {
		reason = pods.Reasons[0]
	}
	return RolloutVerdict{RolloutDoomed, fmt.Sprintf("%d/%d new pods doomed after the rollout completed (--stable %s): %s",
		pods.Doomed, pods.Total, stable, reason)}, true
}
