package classify

import (
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// timedOutReason is the Progressing condition's reason once a Deployment has exceeded its
// progressDeadlineSeconds (kubernetes pkg/controller/deployment/util/deployment_util.go,
// TimedOutReason; kubectl pkg/util/deployment keeps a copy).
const timedOutReason = "ProgressDeadlineExceeded"

// DeploymentStatus is `kubectl rollout status` for a Deployment, as a plain (message, done, err)
// value: kubectl pkg/polymorphichelpers/rollout_status.go, DeploymentStatusViewer.Status, with
// its messages verbatim minus the trailing newline. The checks run in kubectl's order:
// observedGeneration first (a spec the controller has not seen yet says nothing), then the
// progress deadline (err, the rollout failed), updated < desired, old replicas pending
// termination, available < updated, and otherwise done. kubectl's revision argument is not
// ported: doomwatch always asks about the latest revision. The name is the API's, unsanitised.
func DeploymentStatus(d *appsv1.Deployment) (msg string, done bool, err error) {
	if d.Generation > d.Status.ObservedGeneration {
		return "Waiting for deployment spec update to be observed...", false, nil
	}
	for i := range d.Status.Conditions {
		c := &d.Status.Conditions[i]
		if c.Type == appsv1.DeploymentProgressing && c.Reason == timedOutReason {
			return "", false, fmt.Errorf("deployment %q exceeded its progress deadline", d.Name)
		}
	}
	st := &d.Status
	if d.Spec.Replicas != nil && st.UpdatedReplicas < *d.Spec.Replicas {
		return fmt.Sprintf("Waiting for deployment %q rollout to finish: %d out of %d new replicas have been updated...", d.Name, st.UpdatedReplicas, *d.Spec.Replicas), false, nil
	}
	if st.Replicas > st.UpdatedReplicas {
		return fmt.Sprintf("Waiting for deployment %q rollout to finish: %d old replicas are pending termination...", d.Name, st.Replicas-st.UpdatedReplicas), false, nil
	}
	if st.AvailableReplicas < st.UpdatedReplicas {
		return fmt.Sprintf("Waiting for deployment %q rollout to finish: %d of %d updated replicas are available...", d.Name, st.AvailableReplicas, st.UpdatedReplicas), false, nil
	}
	return fmt.Sprintf("deployment %q successfully rolled out", d.Name), true, nil
}

// StatefulSetStatus is `kubectl rollout status` for a StatefulSet: kubectl
// pkg/polymorphichelpers/rollout_status.go, StatefulSetStatusViewer.Status, in its order and with
// its messages verbatim minus the trailing newline. Only the RollingUpdate strategy has a rollout
// status; for OnDelete kubectl answers with an error and done, and so does this.
func StatefulSetStatus(s *appsv1.StatefulSet) (msg string, done bool, err error) {
	if s.Spec.UpdateStrategy.Type != appsv1.RollingUpdateStatefulSetStrategyType {
		return "", true, fmt.Errorf("rollout status is only available for %s strategy type", appsv1.RollingUpdateStatefulSetStrategyType)
	}
	st := &s.Status
	if st.ObservedGeneration == 0 || s.Generation > st.ObservedGeneration {
		return "Waiting for statefulset spec update to be observed...", false, nil
	}
	if s.Spec.Replicas != nil && st.ReadyReplicas < *s.Spec.Replicas {
		return fmt.Sprintf("Waiting for %d pods to be ready...", *s.Spec.Replicas-st.ReadyReplicas), false, nil
	}
	if ru := s.Spec.UpdateStrategy.RollingUpdate; ru != nil {
		if s.Spec.Replicas != nil && ru.Partition != nil && st.UpdatedReplicas < *s.Spec.Replicas-*ru.Partition {
			return fmt.Sprintf("Waiting for partitioned roll out to finish: %d out of %d new pods have been updated...",
				st.UpdatedReplicas, *s.Spec.Replicas-*ru.Partition), false, nil
		}
		return fmt.Sprintf("partitioned roll out complete: %d new pods have been updated...", st.UpdatedReplicas), true, nil
	}
	if st.UpdateRevision != st.CurrentRevision {
		return fmt.Sprintf("waiting for statefulset rolling update to complete %d pods at revision %s...",
			st.UpdatedReplicas, st.UpdateRevision), false, nil
	}
	return fmt.Sprintf("statefulset rolling update complete %d pods at revision %s...", st.CurrentReplicas, st.CurrentRevision), true, nil
}

// DaemonSetStatus is `kubectl rollout status` for a DaemonSet: kubectl
// pkg/polymorphichelpers/rollout_status.go, DaemonSetStatusViewer.Status, in its order and with its
// messages verbatim minus the trailing newline (its error names the StatefulSet constant, which has
// the same value). Only the RollingUpdate strategy has a rollout status.
func DaemonSetStatus(d *appsv1.DaemonSet) (msg string, done bool, err error) {
	if d.Spec.UpdateStrategy.Type != appsv1.RollingUpdateDaemonSetStrategyType {
		return "", true, fmt.Errorf("rollout status is only available for %s strategy type", appsv1.RollingUpdateStatefulSetStrategyType)
	}
	st := &d.Status
	if d.Generation > st.ObservedGeneration {
		return "Waiting for daemon set spec update to be observed...", false, nil
	}
	if st.UpdatedNumberScheduled < st.DesiredNumberScheduled {
		return fmt.Sprintf("Waiting for daemon set %q rollout to finish: %d out of %d new pods have been updated...", d.Name, st.UpdatedNumberScheduled, st.DesiredNumberScheduled), false, nil
	}
	if st.NumberAvailable < st.DesiredNumberScheduled {
		return fmt.Sprintf("Waiting for daemon set %q rollout to finish: %d of %d updated pods are available...", d.Name, st.NumberAvailable, st.DesiredNumberScheduled), false, nil
	}
	return fmt.Sprintf("daemon set %q successfully rolled out", d.Name), true, nil
}

// ErrBarePodDeleted is BarePodStatus's answer for a bare pod deleted before it succeeded.
var ErrBarePodDeleted = errors.New("Pod status: Terminating: a bare pod waited for is being deleted")

// BarePodStatus is a deploy gate's status for a bare pod (no controller), judged as Krane judges
// an unmanaged pod it deployed (lib/krane/kubernetes_resource/pod.rb): such a pod is a task (a
// migration, a seed), done once it has Succeeded; it fails when it is being deleted before that
// ("Pod status: Terminating") and when its verdict v, the model's, is doomed (err is then v's
// reason). The dashboard shows a terminating pod as progressing: this is the gate's one difference.
func BarePodStatus(pod *corev1.Pod, v Verdict) (msg string, done bool, err error) {
	switch {
	case pod.DeletionTimestamp != nil && pod.Status.Phase != corev1.PodSucceeded:
		return "", false, ErrBarePodDeleted
	case v.Class == Doomed:
		return "", false, errors.New(v.Reason)
	case pod.Status.Phase == corev1.PodSucceeded:
		return "pod " + pod.Name + " succeeded", true, nil
	}
	msg = "a bare pod completes when it has succeeded; phase " + string(pod.Status.Phase)
	if v.Reason != "" {
		msg += ": " + v.Reason
	}
	return msg, false, nil
}
