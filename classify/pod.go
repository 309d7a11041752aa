package classify

import (
	"time"

	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Pod-level reasons (kubernetes pkg/kubelet/eviction, pkg/scheduler, pkg/util/node).
const (
	reasonEvicted       = "Evicted"
	reasonPreempting    = "Preempting"
	reasonNodeLost      = "NodeLost"
	reasonUnschedulable = "Unschedulable"
	reasonGated         = "SchedulingGated"
	// Graceful node shutdown (pkg/kubelet/nodeshutdown): v1.20-1.21 kubelets failed the pods they
	// killed with reason Shutdown ("Node is shutting, evicting pods"); since kubernetes#102840
	// the reason is Terminated plus a DisruptionTarget condition. NodeShutdown is the admission
	// rejection of a pod that arrives while the node shuts down ("Pod was rejected as the node is
	// shutting down."). All mean the node went away, not the workload.
	reasonNodeShutdown = "NodeShutdown"
	reasonShutdown     = "Shutdown"
)

// admissionRejections are the pod reasons the kubelet sets when it refuses to run a pod it was
// assigned (pkg/kubelet/kubelet.go rejectPod: phase Failed, message "Pod was rejected: ..."; the
// reasons come from pkg/kubelet/lifecycle/predicate.go and handlers.go, pkg/kubelet/cm/admission,
// pkg/kubelet/sysctl and pkg/kubelet/nodeshutdown): the node changed between scheduling and
// admission (resources, labels, taints, ports), or a device, CPU or topology manager could not
// serve the pod there. "OutOf<resource>" is matched as a prefix (OutOfcpu, OutOfmemory, OutOfpods,
// OutOfnvidia.com/gpu). A controller replaces such a pod, usually on another node. Evicted at
// admission ("The node had condition: [DiskPressure].") is judged as an eviction.
var admissionRejections = map[string]bool{
	"NodeAffinity":                         true,
	"NodeName":                             true,
	"NodePorts":                            true,
	"TaintToleration":                      true,
	"InvalidNodeInfo":                      true,
	"UnexpectedAdmissionError":             true,
	"UnexpectedPredicateFailureType":       true,
	"PodOSNotSupported":                    true,
	"PodOSSelectorNodeLabelDoesNotMatch":   true,
	"TopologyAffinityError":                true,
	"SysctlForbidden":                      true,
	"UnknownReason":                        true,
	"SupplementalGroupsPolicyNotSupported": true,
	"InitContainerRestartPolicyForbidden":  true,
	"AppArmor":                             true,
	"PodLevelResourcesNotSupported":        true,
	"PodLevelResourcesIncompatible":        true,
	"PodFeatureUnsupported":                true,
	"SMTAlignmentError":                    true,
	reasonNodeShutdown:                     true, // "Pod was rejected as the node is shutting down."
}

// nodeRejected reports whether a pod's Failed reason is a kubelet admission rejection.
func nodeRejected(reason string) bool {
	return strings.HasPrefix(reason, "OutOf") || admissionRejections[reason]
}

// disrupted reports whether a failed pod was taken down for the node's or the cluster's sake, not
// its own: evicted, preempted, or stopped by a graceful node shutdown (Krane
// TRANSIENT_FAILURE_REASONS, extended with the DisruptionTarget condition the kubelet, the
// eviction API, the scheduler and the taint manager set since v1.26).
func disrupted(pod *corev1.Pod) bool {
	switch pod.Status.Reason {
	case reasonEvicted, reasonPreempting, reasonNodeShutdown, reasonShutdown:
		return true
	}
	return conditionTrue(pod, corev1.DisruptionTarget)
}

// conditionTrue reports whether the pod has condition t with status True.
func conditionTrue(pod *corev1.Pod, t corev1.PodConditionType) bool {
	c := condition(pod, t)
	return c != nil && c.Status == corev1.ConditionTrue
}

func condition(pod *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == t {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// podPrelude returns the pod-level verdict and how it combines with the containers' verdicts:
// decided means it alone is the pod's verdict; otherwise it is considered before the containers
// when podFirst (so it names ties), after them when not, and not at all when !hasPod.
func podPrelude(pod *corev1.Pod) (pv Verdict, hasPod, podFirst, decided bool) {
	pv, hasPod = podLevel(pod)
	switch {
	case pod.Status.Phase == corev1.PodSucceeded:
		return pv, hasPod, false, true
	case pod.Status.Phase == corev1.PodFailed && pv.Class == Transient:
		// An evicted or preempted managed pod is replaced by its controller; its containers'
		// final states (often ContainerStatusUnknown 137) say nothing about the rollout.
		return pv, hasPod, false, true
	}
	// Pod-level first so it names ties (an unscheduled pod's containers merely wait, an evicted
	// pod's containers were killed), except for a failed pod without a pod-level reason, where
	// the container that failed says more than "Pod status: Failed".
	podFirst = hasPod && (pod.Status.Phase != corev1.PodFailed || pod.Status.Reason != "")
	return pv, hasPod, podFirst, false
}

// severest keeps the most severe verdict considered; on ties the first one stays.
type severest struct {
	best  Verdict
	found bool
}

func (s *severest) consider(v *Verdict) {
	if !s.found || MoreSevere(*v, s.best) {
		s.best, s.found = *v, true
	}
}

// Pod returns the pod's verdict at now: the most severe of its containers' verdicts and its own
// pod-level verdict, naming the container that decided it. It allocates nothing for a healthy pod.
//
// now is the time the status is judged at (the model passes its clock). It decides one thing: a
// crash-looping container that runs again between crashes stays doomed (RuleCrashLoopRunning)
// until it has been up for 10 minutes, the kubelet's own measure of a recovered container;
// RecoveredAt says when.
func Pod(pod *corev1.Pod, now time.Time) Verdict {
	if pod == nil {
		return noPod
	}
	pv, hasPod, podFirst, decided := podPrelude(pod)
	if decided {
		return pv
	}
	var s severest
	if podFirst {
		s.consider(&pv)
	}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		cs := statusFor(pod.Status.InitContainerStatuses, i, c.Name)
		if s.found && s.best.Class != Completed && runningReady(cs) && !mayHold(cs) && isSidecar(c) {
			continue // healthy never outranks what was found; skip building the verdict
		}
		v := judge(pod, c, cs, true, now)
		v.Container, v.Init = c.Name, true
		s.consider(&v)
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		cs := statusFor(pod.Status.ContainerStatuses, i, c.Name)
		if s.found && runningReady(cs) && !mayHold(cs) && s.best.Class != Completed {
			continue
		}
		v := judge(pod, c, cs, false, now)
		v.Container = c.Name
		s.consider(&v)
	}
	if hasPod && !podFirst {
		s.consider(&pv)
	}
	return s.best
}

var noPod = Verdict{Class: Progressing, Rule: RuleStarting, Reason: "No pod", Source: FromPod}

// PodAndContainers judges every container once and returns both Pod's verdict and Containers'
// verdicts appended to dst: the pair Pod and Containers return, at the cost of one judgement per
// container. Callers that need both (the model, on every pod update) use this.
func PodAndContainers(pod *corev1.Pod, now time.Time, dst []ContainerVerdict) (Verdict, []ContainerVerdict) {
	if pod == nil {
		return noPod, dst
	}
	start := len(dst)
	dst = Containers(pod, now, dst)
	pv, hasPod, podFirst, decided := podPrelude(pod)
	if decided {
		return pv, dst
	}
	var s severest
	if podFirst {
		s.consider(&pv)
	}
	for i := start; i < len(dst); i++ {
		s.consider(&dst[i].Verdict)
	}
	if hasPod && !podFirst {
		s.consider(&pv)
	}
	return s.best, dst
}

// Containers appends one verdict per container at now to dst (init containers first, in spec
// order, then regular containers) and returns the extended slice.
func Containers(pod *corev1.Pod, now time.Time, dst []ContainerVerdict) []ContainerVerdict {
	if pod == nil {
		return dst
	}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		v := judge(pod, c, statusFor(pod.Status.InitContainerStatuses, i, c.Name), true, now)
		dst = append(dst, newContainerVerdict(c.Name, true, v))
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		v := judge(pod, c, statusFor(pod.Status.ContainerStatuses, i, c.Name), false, now)
		dst = append(dst, newContainerVerdict(c.Name, false, v))
	}
	return dst
}

// mayHold reports whether crashLoopRunning could hold a running container doomed: the skip of
// healthy containers above must not skip one.
func mayHold(cs *corev1.ContainerStatus) bool {
	return cs.RestartCount >= 2 && cs.LastTerminationState.Terminated != nil
}

// runningReady is judgeRunning's healthy case, checked without building a verdict.
func runningReady(cs *corev1.ContainerStatus) bool {
	return cs != nil && cs.Ready && cs.State.Running != nil && cs.State.Waiting == nil && cs.State.Terminated == nil
}

// statusFor finds a container's status by name. The kubelet reports statuses in spec order, so
// index i is tried first.
func statusFor(statuses []corev1.ContainerStatus, i int, name string) *corev1.ContainerStatus {
	if i < len(statuses) && statuses[i].Name == name {
		return &statuses[i]
	}
	for j := range statuses {
		if statuses[j].Name == name {
			return &statuses[j]
		}
	}
	return nil
}

// managed reports whether a controller owns the pod (Krane's "parent"): it will replace the pod.
func managed(pod *corev1.Pod) bool {
	for i := range pod.OwnerReferences {
		if c := pod.OwnerReferences[i].Controller; c != nil && *c {
			return true
		}
	}
	return false
}

// podLevel returns the verdict of the pod's own phase, conditions and deletion, following Krane
// pod.rb phase_failure_message and failed_schedule_reason. ok is false when the pod itself
// signals nothing.
func podLevel(pod *corev1.Pod) (Verdict, bool) {
	st := &pod.Status
	v := Verdict{Source: FromPod, Message: st.Message}
	switch st.Phase {
	case corev1.PodSucceeded:
		v.Class, v.Rule, v.Reason = Completed, RuleCompleted, "Succeeded"
		return v, true
	case corev1.PodFailed:
		// Krane TRANSIENT_FAILURE_REASONS: an evicted or preempted pod with a controller is
		// replaced; an unmanaged one is gone for good. The same holds for a pod the node shut
		// down under it, or refused at admission: neither says anything about the workload.
		if managed(pod) {
			switch {
			case nodeRejected(st.Reason):
				v.Class, v.Rule = Transient, RulePodRejected
				v.Reason = withDetail("Rejected by node ("+oneLine(st.Reason)+"), controller will replace it", st.Message)
				return v, true
			case disrupted(pod):
				head := "Disrupted"
				if st.Reason != "" {
					head = oneLine(st.Reason)
				}
				v.Class, v.Rule = Transient, RulePodEvicted
				v.Reason = withDetail(head+", controller will replace it", st.Message)
				return v, true
			}
		}
		v.Class, v.Rule = Doomed, RulePodFailed
		head := "Pod status: Failed"
		if st.Reason != "" {
			head += " (Reason: " + oneLine(st.Reason) + ")"
		}
		v.Reason = withDetail(head, st.Message)
		return v, true
	}
	if pod.DeletionTimestamp != nil {
		// A pod being deleted is on its way out on purpose: progressing. Krane dooms an unmanaged
		// pod that is terminating, which fits a deploy (the pod it deployed will not come back)
		// but not a dashboard, where deleting a bare pod is an operator's deliberate act. kubectl
		// prints Unknown for a NodeLost pod being deleted.
		v.Class, v.Rule, v.Reason = Progressing, RuleTerminating, "Terminating"
		if st.Reason == reasonNodeLost {
			v.Reason = "Terminating (node lost)"
		}
		return v, true
	}
	if st.Phase == corev1.PodUnknown {
		v.Class, v.Rule = Transient, RulePodUnknown
		v.Reason = withDetail("Pod status: Unknown (node not reporting)", st.Message)
		return v, true
	}
	if st.Phase == corev1.PodRunning {
		return podReadiness(pod)
	}
	if st.Phase == corev1.PodPending || st.Phase == "" {
		for i := range st.Conditions {
			c := &st.Conditions[i]
			if c.Type != corev1.PodScheduled || c.Status != corev1.ConditionFalse {
				continue
			}
			// Krane failed_schedule_reason: PodScheduled=False; the scheduler keeps retrying,
			// so it is progressing, with the scheduler's message as the reason.
			v.Class, v.Rule, v.Message = Progressing, RuleUnschedulable, c.Message
			switch c.Reason {
			case reasonGated:
				v.Reason = withDetail("Scheduling gated", c.Message)
			default:
				v.Reason = withDetail("Unschedulable", c.Message)
			}
			return v, true
		}
	}
	return Verdict{}, false
}

// podReadiness judges a running pod whose containers are all ready but whose Ready condition is
// not True. Krane's deploy_succeeded? reads the pod's Ready condition, not the containers':
//   - a readiness gate (pod.spec.readinessGates) that its controller has not set True yet: the
//     kubelet writes Ready=False with "corresponding condition of pod readiness gate %q does not
//     exist." or "the status of pod readiness gate %q is not \"True\", but %v"
//     (pkg/kubelet/status/generate.go GeneratePodReadyCondition);
//   - a node that stopped reporting: the node lifecycle controller sets only the pod's Ready
//     condition to False (pkg/controller/util/node MarkPodsNotReady); containers stay ready and
//     the phase stays Running. The model names the node when it knows it is NotReady.
//
// When a container is not ready its own verdict says why, so this returns nothing.
func podReadiness(pod *corev1.Pod) (Verdict, bool) {
	ready := condition(pod, corev1.PodReady)
	if ready == nil || ready.Status == corev1.ConditionTrue || !containersReady(pod) {
		return Verdict{}, false
	}
	v := Verdict{Source: FromPod, Message: ready.Message}
	for _, g := range pod.Spec.ReadinessGates {
		if !conditionTrue(pod, g.ConditionType) {
			v.Class, v.Rule = Progressing, RuleReadinessGate
			v.Reason = "Readiness gate " + oneLine(string(g.ConditionType)) + " not met"
			return v, true
		}
	}
	v.Class, v.Rule = Transient, RulePodNotReady
	v.Reason = withDetail("Pod not ready although its containers are (node not reporting?)", ready.Message)
	return v, true
}

// containersReady reports whether every regular container and every sidecar is running and
// ready.
func containersReady(pod *corev1.Pod) bool {
	for i := range pod.Spec.Containers {
		if !runningReady(statusFor(pod.Status.ContainerStatuses, i, pod.Spec.Containers[i].Name)) {
			return false
		}
	}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if isSidecar(c) && !runningReady(statusFor(pod.Status.InitContainerStatuses, i, c.Name)) {
			return false
		}
	}
	return true
}
