package classify

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
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
