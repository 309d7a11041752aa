package demo

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Pod lifecycle steps, as a kubelet reports them. Each is one status write in a real cluster.

// podSchedule binds the pod to node (the scheduler) and starts its sandbox (the kubelet).
func podSchedule(p *corev1.Pod, node, hostIP, podIP string, at time.Duration) {
	p.Spec.NodeName = node
	setPodCondition(p, corev1.PodScheduled, corev1.ConditionTrue, "", "", at)
	setPodCondition(p, corev1.PodReadyToStartContainers, corev1.ConditionTrue, "", "", at)
	setPodCondition(p, corev1.PodInitialized, corev1.ConditionTrue, "", "", at)
	p.Status.HostIP, p.Status.HostIPs = hostIP, []corev1.HostIP{{IP: hostIP}}
	p.Status.PodIP, p.Status.PodIPs = podIP, []corev1.PodIP{{IP: podIP}}
	p.Status.StartTime = timestampPtr(at)
	cs := containerStatus(p)
	cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
	cs.Started = boolp(false)
}

// podUnschedulable is what the scheduler writes when no node fits.
func podUnschedulable(p *corev1.Pod, msg string, at time.Duration) {
	setPodCondition(p, corev1.PodScheduled, corev1.ConditionFalse, corev1.PodReasonUnschedulable, msg, at)
}

// podWaiting sets the container waiting (ErrImagePull, ImagePullBackOff, CrashLoopBackOff). A
// terminated state before it becomes lastState, as kubelet reports it.
func podWaiting(p *corev1.Pod, reason, msg string) {
	cs := containerStatus(p)
	if cs.State.Terminated != nil {
		cs.LastTerminationState = corev1.ContainerState{Terminated: cs.State.Terminated}
	}
	cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}
	cs.Ready, cs.Started = false, boolp(false)
}

// podRun starts a (new instance of the) container. Restarting after a termination moves it to
// lastState and counts a restart.
func podRun(p *corev1.Pod, containerID, imageID string, at time.Duration) {
	cs := containerStatus(p)
	if t := cs.State.Terminated; t != nil {
		cs.LastTerminationState = corev1.ContainerState{Terminated: t}
	}
	if cs.LastTerminationState.Terminated != nil {
		cs.RestartCount++
	}
	cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: timestamp(at)}}
	cs.ContainerID, cs.ImageID = containerID, imageID
	cs.Ready, cs.Started = false, boolp(true)
}

// podReady marks the container's readiness probe as passing.
func podReady(p *corev1.Pod) { containerStatus(p).Ready = true }

// podTerminate records the container's exit. started is nil for a container that never started
// (containerd reports the Unix epoch then).
func podTerminate(p *corev1.Pod, containerID, reason, msg string, exit int32, started *time.Duration, at time.Duration) {
	cs := containerStatus(p)
	t := &corev1.ContainerStateTerminated{ExitCode: exit, Reason: reason, Message: msg, FinishedAt: timestamp(at), ContainerID: containerID}
	if started != nil {
		t.StartedAt = timestamp(*started)
	} else {
		t.StartedAt = metav1.NewTime(time.Unix(0, 0).UTC())
	}
	if cs.State.Running != nil && started == nil {
		t.StartedAt = cs.State.Running.StartedAt
	}
	cs.State = corev1.ContainerState{Terminated: t}
	cs.ContainerID = containerID
	cs.Ready, cs.Started = false, boolp(false)
}

// derive plays the controllers at simulated time at: pod phase and readiness conditions (kubelet),
// ReplicaSet, Deployment, DaemonSet, StatefulSet and Job status (their controllers).
func (w *world) derive(at time.Duration) {
	for _, k := range sortedKeys(w.pods) {
		derivePod(w.pods[k], at)
	}
	owned := map[types.UID][]*corev1.Pod{}
	for _, k := range sortedKeys(w.pods) {
		p := w.pods[k]
		if ref := metav1.GetControllerOf(p); ref != nil {
			owned[ref.UID] = append(owned[ref.UID], p)
		}
	}
	for _, rs := range w.rss {
		c := podCounts{minReady: time.Duration(rs.Spec.MinReadySeconds) * time.Second, at: at}
		c.add(owned[rs.UID])
		rs.Status = appsv1.ReplicaSetStatus{Replicas: c.active, FullyLabeledReplicas: c.active, ReadyReplicas: c.ready,
			AvailableReplicas: c.available, ObservedGeneration: rs.Generation}
	}
	for _, k := range sortedKeys(w.deploys) {
		w.deriveDeployment(k, at)
	}
	for _, ds := range w.dss {
		var c podCounts
		c.add(owned[ds.UID])
		n := int32(len(w.nodes))
		ds.Status = appsv1.DaemonSetStatus{CurrentNumberScheduled: c.scheduled, DesiredNumberScheduled: n, NumberReady: c.ready,
			NumberAvailable: c.available, UpdatedNumberScheduled: c.scheduled, NumberUnavailable: n - c.ready, ObservedGeneration: ds.Generation}
	}
	for _, sts := range w.stss {
		var c podCounts
		c.add(owned[sts.UID])
		rev := sts.Name + "-" + sts.Annotations["demo.doomwatch/revision"]
		sts.Status = appsv1.StatefulSetStatus{Replicas: c.active, ReadyReplicas: c.ready, AvailableReplicas: c.available,
			CurrentReplicas: c.active, UpdatedReplicas: c.active, CurrentRevision: rev, UpdateRevision: rev,
			ObservedGeneration: sts.Generation, CollisionCount: int32p(0)}
	}
	for _, job := range w.jobs {
		var c podCounts
		c.add(owned[job.UID])
		job.Status.Active, job.Status.Ready, job.Status.Succeeded = c.active, &c.ready, c.succeeded
		job.Status.Terminating = int32p(0)
	}
}

type podCounts struct {
	active, ready, available, scheduled, succeeded int32
	minReady, at                                   time.Duration
}

// add counts pods as the ReplicaSet controller does: pods being deleted and finished pods are
// not active (kubernetes pkg/controller/controller_utils.go FilterActivePods).
func (c *podCounts) add(pods []*corev1.Pod) {
	for _, p := range pods {
		if p.Status.Phase == corev1.PodSucceeded {
			c.succeeded++
		}
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		c.active++
		if p.Spec.NodeName != "" {
			c.scheduled++
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type != corev1.PodReady || cond.Status != corev1.ConditionTrue {
				continue
			}
			c.ready++
			// Available: ready for at least minReadySeconds (podutil.IsPodAvailable).
			if !cond.LastTransitionTime.Time.Add(c.minReady).After(Epoch.Add(c.at)) {
				c.available++
			}
		}
	}
}

// derivePod sets the phase and readiness conditions from the container statuses, after kubelet's
// getPhase (pkg/kubelet/kubelet_pods.go) for restartPolicy Always: a container that has never
// started keeps the pod Pending; once all have started, the pod is Running, restarts included.
func derivePod(p *corev1.Pod, at time.Duration) {
	if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || p.Spec.NodeName == "" {
		return
	}
	var unready []string
	pending := false
	for _, cs := range p.Status.ContainerStatuses {
		if !cs.Ready {
			unready = append(unready, cs.Name)
		}
		if cs.State.Waiting != nil && cs.LastTerminationState.Terminated == nil {
			pending = true
		}
	}
	if len(p.Status.ContainerStatuses) == 0 {
		pending = true
	}
	if pending {
		p.Status.Phase = corev1.PodPending
	} else {
		p.Status.Phase = corev1.PodRunning
	}
	if len(unready) == 0 && len(p.Status.ContainerStatuses) > 0 {
		setPodCondition(p, corev1.ContainersReady, corev1.ConditionTrue, "", "", at)
		setPodCondition(p, corev1.PodReady, corev1.ConditionTrue, "", "", at)
		return
	}
	// kubernetes/kubernetes pkg/kubelet/status/generate.go GenerateContainersReadyCondition:
	// "containers with unready status: %s" of a []string, which prints as [a b].
	msg := fmt.Sprintf("containers with unready status: [%s]", strings.Join(unready, " "))
	setPodCondition(p, corev1.ContainersReady, corev1.ConditionFalse, "ContainersNotReady", msg, at)
	setPodCondition(p, corev1.PodReady, corev1.ConditionFalse, "ContainersNotReady", msg, at)
}

// deriveDeployment computes a Deployment's status as its controller does on each sync: the counters
// and the Available condition of calculateStatus (kubernetes pkg/controller/deployment/sync.go), then
// the Progressing condition of syncRolloutStatus (progress.go), at simulated time at.
func (w *world) deriveDeployment(key string, at time.Duration) {
	d := w.deploys[key]
	var newRS *appsv1.ReplicaSet
	var replicas, specTotal, ready, available int32
	for _, k := range sortedKeys(w.rss) {
		rs := w.rss[k]
		if ref := metav1.GetControllerOf(rs); ref == nil || ref.UID != d.UID {
			continue
		}
		if rs.Annotations["deployment.kubernetes.io/revision"] == d.Annotations["deployment.kubernetes.io/revision"] {
			newRS = rs
		}
		replicas += rs.Status.Replicas
		specTotal += *rs.Spec.Replicas
		ready += rs.Status.ReadyReplicas
		available += rs.Status.AvailableReplicas
	}
	if newRS == nil {
		return
	}
	prev := d.Status
	defer func() {
		if !equality.Semantic.DeepEqual(prev, d.Status) {
			w.synced[key] = at
		}
	}()
	// calculateStatus: the counters summed over the ReplicaSets, the conditions copied from the
	// status the controller last wrote, and Available against maxUnavailable.
	st := appsv1.DeploymentStatus{
		ObservedGeneration: d.Generation, Replicas: replicas, UpdatedReplicas: newRS.Status.Replicas,
		ReadyReplicas: ready, AvailableReplicas: available, CollisionCount: d.Status.CollisionCount,
		Conditions: slices.Clone(d.Status.Conditions),
	}
	if u := specTotal - available; u > 0 {
		st.UnavailableReplicas = u
	}
	want := *d.Spec.Replicas
	maxUnavailable, _ := intstr.GetScaledValueFromIntOrPercent(d.Spec.Strategy.RollingUpdate.MaxUnavailable, int(want), false)
	if available >= want-int32(maxUnavailable) {
		setDeployCondition(&st, newDeployCondition(appsv1.DeploymentAvailable, corev1.ConditionTrue, minimumReplicasAvailable, "Deployment has minimum availability.", at))
	} else {
		setDeployCondition(&st, newDeployCondition(appsv1.DeploymentAvailable, corev1.ConditionFalse, minimumReplicasUnavailable, "Deployment does not have minimum availability.", at))
	}

	// syncRolloutStatus. Without a progress deadline there is no Progressing condition.
	if !hasProgressDeadline(d) {
		st.Conditions = withoutDeployCondition(st.Conditions, appsv1.DeploymentProgressing)
		d.Status = st
		return
	}
	// "If there is only one replica set that is active then that means we are not running a new
	// rollout and this is a resync where we don't need to estimate any progress": a Deployment whose
	// last rollout completed (reason NewReplicaSetAvailable) and that has no old pods left keeps its
	// condition, however many of its pods are unavailable for the moment (an evicted pod being
	// replaced). Only a new ReplicaSet's rollout (old pods alongside the new ones) is checked again.
	cur := deployCondition(d.Status, appsv1.DeploymentProgressing)
	if st.Replicas == st.UpdatedReplicas && cur != nil && cur.Reason == newRSAvailableReason {
		d.Status = st
		return
	}
	switch {
	case deploymentComplete(d, &st):
		setDeployCondition(&st, newDeployCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, newRSAvailableReason,
			fmt.Sprintf("ReplicaSet %q has successfully progressed.", newRS.Name), at))
	case deploymentProgressing(d, &st):
		// Progress moves lastUpdateTime (the deadline's clock) even when the reason stays; the
		// transition time holds while the status stays True.
		c := newDeployCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, replicaSetUpdatedReason,
			fmt.Sprintf("ReplicaSet %q is progressing.", newRS.Name), at)
		if cur != nil {
			if cur.Status == corev1.ConditionTrue {
				c.LastTransitionTime = cur.LastTransitionTime
			}
			st.Conditions = withoutDeployCondition(st.Conditions, appsv1.DeploymentProgressing)
		}
		setDeployCondition(&st, c)
	case deploymentTimedOut(d, &st, at):
		setDeployCondition(&st, newDeployCondition(appsv1.DeploymentProgressing, corev1.ConditionFalse, timedOutReason,
			fmt.Sprintf("ReplicaSet %q has timed out progressing.", newRS.Name), at))
	}
	d.Status = st
}

// The Deployment condition reasons (kubernetes pkg/controller/deployment/util/deployment_util.go).
const (
	newReplicaSetReason        = "NewReplicaSetCreated"
	replicaSetUpdatedReason    = "ReplicaSetUpdated"
	newRSAvailableReason       = "NewReplicaSetAvailable"
	timedOutReason             = "ProgressDeadlineExceeded"
	minimumReplicasAvailable   = "MinimumReplicasAvailable"
	minimumReplicasUnavailable = "MinimumReplicasUnavailable"
)

// replicaSetCreated is what the deployment controller records when it creates the ReplicaSet of
// a new template: a Progressing condition that starts the progress deadline's clock (kubernetes
// pkg/controller/deployment/sync.go getNewReplicaSet; its message is "Created new replica set %q").
func replicaSetCreated(d *appsv1.Deployment, rs *appsv1.ReplicaSet, at time.Duration) {
	if hasProgressDeadline(d) {
		setDeployCondition(&d.Status, newDeployCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, newReplicaSetReason,
			fmt.Sprintf("Created new replica set %q", rs.Name), at))
	}
}

// hasProgressDeadline is util.HasProgressDeadline: a deadline that is set and not MaxInt32.
func hasProgressDeadline(d *appsv1.Deployment) bool {
	return d.Spec.ProgressDeadlineSeconds != nil && *d.Spec.ProgressDeadlineSeconds != math.MaxInt32
}

// deploymentComplete is util.DeploymentComplete: every replica updated and available, no old
// ones, and the latest generation observed.
func deploymentComplete(d *appsv1.Deployment, st *appsv1.DeploymentStatus) bool {
	want := *d.Spec.Replicas
	return st.UpdatedReplicas == want && st.Replicas == want && st.AvailableReplicas == want &&
		st.ObservedGeneration >= d.Generation
}

// deploymentProgressing is util.DeploymentProgressing: against the status the controller last
// wrote, more updated, ready or available pods, or fewer old ones.
func deploymentProgressing(d *appsv1.Deployment, st *appsv1.DeploymentStatus) bool {
	old := d.Status
	return st.UpdatedReplicas > old.UpdatedReplicas ||
		st.Replicas-st.UpdatedReplicas < old.Replicas-old.UpdatedReplicas ||
		st.ReadyReplicas > old.ReadyReplicas ||
		st.AvailableReplicas > old.AvailableReplicas
}

// deploymentTimedOut is util.DeploymentTimedOut: the Progressing condition's lastUpdateTime (the
// last progress, or the new ReplicaSet's creation) is more than the deadline ago. A condition of a
// completed rollout (NewReplicaSetAvailable) never times out; one that has, stays so.
func deploymentTimedOut(d *appsv1.Deployment, st *appsv1.DeploymentStatus, at time.Duration) bool {
	c := deployCondition(*st, appsv1.DeploymentProgressing)
	switch {
	case c == nil || c.Reason == newRSAvailableReason:
		return false
	case c.Reason == timedOutReason:
		return true
	}
	return c.LastUpdateTime.Add(progressDeadline(d)).Before(Epoch.Add(at))
}

func progressDeadline(d *appsv1.Deployment) time.Duration {
	return time.Duration(*d.Spec.ProgressDeadlineSeconds) * time.Second
}

// progressCheck is when the deployment controller, having last changed d's status at now, looks at
// its progress again with nothing else changed (kubernetes pkg/controller/deployment/progress.go
// requeueStuckDeployment): a second after the deadline passes (its lastUpdateTime plus the
// deadline, "a second to avoid milliseconds skew"), or, with less than a second to go, at once and
// rate limited until it has passed, which the demo plays as one look 5ms after it (the first
// back-off of the controller's queue, workqueue.DefaultTypedControllerRateLimiter in
// deployment_controller.go NewDeploymentController). ok is false when no look can change the status: no deadline or Progressing
// condition, a complete rollout, one that timed out, or one whose condition says its last rollout
// completed (DeploymentTimedOut never times that out, and syncRolloutStatus leaves it be).
func progressCheck(d *appsv1.Deployment, now time.Duration) (at time.Duration, ok bool) {
	c := deployCondition(d.Status, appsv1.DeploymentProgressing)
	if !hasProgressDeadline(d) || c == nil || deploymentComplete(d, &d.Status) ||
		c.Reason == timedOutReason || c.Reason == newRSAvailableReason {
		return 0, false
	}
	due := c.LastUpdateTime.Add(progressDeadline(d)).Sub(Epoch)
	if due-now < time.Second {
		return max(due, now) + 5*time.Millisecond, true
	}
	return due + time.Second, true
}

// nextProgressCheck is the earliest progressCheck of the world's Deployments.
func (w *world) nextProgressCheck() (time.Duration, bool) {
	var next time.Duration
	found := false
	for k, d := range w.deploys {
		if at, ok := progressCheck(d, w.synced[k]); ok && (!found || at < next) {
			next, found = at, true
		}
	}
	return next, found
}

// newDeployCondition is util.NewDeploymentCondition at simulated time at.
func newDeployCondition(t appsv1.DeploymentConditionType, s corev1.ConditionStatus, reason, msg string, at time.Duration) appsv1.DeploymentCondition {
	return appsv1.DeploymentCondition{Type: t, Status: s, Reason: reason, Message: msg, LastUpdateTime: timestamp(at), LastTransitionTime: timestamp(at)}
}

// deployCondition is util.GetDeploymentCondition: a copy of the condition of type t, or nil.
func deployCondition(st appsv1.DeploymentStatus, t appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for _, c := range st.Conditions {
		if c.Type == t {
			return &c
		}
	}
	return nil
}

// setDeployCondition is util.SetDeploymentCondition: a condition of the same status and reason is
// left as it is (times and message included); otherwise it is replaced, at the end of the list,
// keeping its transition time while the status holds.
func setDeployCondition(st *appsv1.DeploymentStatus, c appsv1.DeploymentCondition) {
	cur := deployCondition(*st, c.Type)
	if cur != nil && cur.Status == c.Status && cur.Reason == c.Reason {
		return
	}
	if cur != nil && cur.Status == c.Status {
		c.LastTransitionTime = cur.LastTransitionTime
	}
	st.Conditions = append(withoutDeployCondition(st.Conditions, c.Type), c)
}

// withoutDeployCondition is util's filterOutCondition, behind RemoveDeploymentCondition.
func withoutDeployCondition(conds []appsv1.DeploymentCondition, t appsv1.DeploymentConditionType) []appsv1.DeploymentCondition {
	var out []appsv1.DeploymentCondition
	for _, c := range conds {
		if c.Type != t {
			out = append(out, c)
		}
	}
	return out
}
