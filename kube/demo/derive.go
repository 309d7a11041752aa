package demo

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
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

// deriveDeployment computes a Deployment's status as its controller does (kubernetes
// pkg/controller/deployment/sync.go calculateStatus and progress.go): counts summed over its
// ReplicaSets, Available against maxUnavailable, and Progressing with the progress deadline.
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
	st := appsv1.DeploymentStatus{
		ObservedGeneration: d.Generation, Replicas: replicas, UpdatedReplicas: newRS.Status.Replicas,
		ReadyReplicas: ready, AvailableReplicas: available, Conditions: prev.Conditions,
	}
	if u := specTotal - available; u > 0 {
		st.UnavailableReplicas = u
	}
	want := *d.Spec.Replicas
	// Progress is any increase of the new ReplicaSet's pods, ready or available ones
	// (progress.go: util.DeploymentProgressing).
	if prev.UpdatedReplicas < st.UpdatedReplicas || prev.ReadyReplicas < st.ReadyReplicas || prev.AvailableReplicas < st.AvailableReplicas {
		w.progress[key] = at
	}
	// Condition reasons and messages: sync.go calculateStatus (Available) and progress.go
	// syncRolloutStatus (Progressing), with the new ReplicaSet's name.
	maxUnavailable, _ := intstr.GetScaledValueFromIntOrPercent(d.Spec.Strategy.RollingUpdate.MaxUnavailable, int(want), false)
	if available >= want-int32(maxUnavailable) {
		setDeployCondition(&st, appsv1.DeploymentAvailable, corev1.ConditionTrue, "MinimumReplicasAvailable", "Deployment has minimum availability.", at)
	} else {
		setDeployCondition(&st, appsv1.DeploymentAvailable, corev1.ConditionFalse, "MinimumReplicasUnavailable", "Deployment does not have minimum availability.", at)
	}
	complete := st.UpdatedReplicas == want && st.Replicas == want && st.AvailableReplicas == want
	deadline := time.Duration(*d.Spec.ProgressDeadlineSeconds) * time.Second
	last := w.progress[key]
	switch {
	case complete:
		setDeployCondition(&st, appsv1.DeploymentProgressing, corev1.ConditionTrue, "NewReplicaSetAvailable",
			fmt.Sprintf("ReplicaSet %q has successfully progressed.", newRS.Name), at)
	case at >= last+deadline:
		// The controller notices the deadline when it passes, not when it next syncs, so the
		// condition carries the same times however often the demo looks.
		setDeployCondition(&st, appsv1.DeploymentProgressing, corev1.ConditionFalse, "ProgressDeadlineExceeded",
			fmt.Sprintf("ReplicaSet %q has timed out progressing.", newRS.Name), last+deadline)
	default:
		setDeployCondition(&st, appsv1.DeploymentProgressing, corev1.ConditionTrue, "ReplicaSetUpdated",
			fmt.Sprintf("ReplicaSet %q is progressing.", newRS.Name), last)
	}
	d.Status = st
}

// setDeployCondition replaces a condition; the transition time holds while the status does
// (deployment util SetDeploymentCondition), the update time moves with the reason and message.
func setDeployCondition(st *appsv1.DeploymentStatus, t appsv1.DeploymentConditionType, s corev1.ConditionStatus, reason, msg string, at time.Duration) {
	conds := make([]appsv1.DeploymentCondition, 0, len(st.Conditions)+1)
	next := appsv1.DeploymentCondition{Type: t, Status: s, Reason: reason, Message: msg, LastUpdateTime: timestamp(at), LastTransitionTime: timestamp(at)}
	placed := false
	for _, c := range st.Conditions {
		if c.Type != t {
			conds = append(conds, c)
			continue
		}
		if c.Status == s && c.Reason == reason && c.Message == msg {
			next.LastUpdateTime = c.LastUpdateTime
			if reason == "ReplicaSetUpdated" {
				next.LastUpdateTime = timestamp(at)
			}
		}
		if c.Status == s {
			next.LastTransitionTime = c.LastTransitionTime
		}
		conds = append(conds, next)
		placed = true
	}
	if !placed {
		conds = append(conds, next)
	}
	st.Conditions = conds
}
