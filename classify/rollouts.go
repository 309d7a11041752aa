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
func DeploymentVerdict(d *appsv1.Deployment, newRS *appsv1.ReplicaSet, pods NewPods) RolloutVerdict {
	current := newRS != nil && observed(d.Generation, d.Status.ObservedGeneration) &&
		observed(newRS.Generation, newRS.Status.ObservedGeneration)
	if !current {
		pods = NewPods{}
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
