package classify

import (
	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ResourceVerdict judges an object of a kind doomwatch does not model (a custom resource, a
// Service, a PersistentVolumeClaim) as Helm 4 and Flux do: with kstatus's status.Compute (the
// maintained fork, github.com/fluxcd/cli-utils pkg/kstatus/status), which reads the generic
// conventions (observedGeneration, the Reconciling and Stalled conditions, a Ready condition) and
// its rules for built-in kinds. Current is complete, Failed (Stalled=True, or a kind's own
// failure) doomed; InProgress, Terminating and Unknown wait, with kstatus's message. kstatus
// cannot tell a Ready=False that will recover from one that will not (its README); doomwatch
// calls only what kstatus calls Failed doomed.
//
// The reason is "<kstatus status>: <its message>", on one line; the message is the API's text
// (a condition's message), unsanitised.
func ResourceVerdict(obj *unstructured.Unstructured) RolloutVerdict {
	res, err := status.Compute(obj)
	if err != nil {
		// A status of the wrong shape (a condition that is not an object): kstatus cannot read it,
		// which is no sign of doom.
		return RolloutVerdict{RolloutProgressing, "Unknown: " + oneLine(err.Error())}
	}
	reason := string(res.Status)
	if res.Message != "" {
		reason += ": " + oneLine(res.Message)
	}
	switch res.Status {
	case status.CurrentStatus:
		return RolloutVerdict{RolloutComplete, reason}
	case status.FailedStatus:
		return RolloutVerdict{RolloutDoomed, reason}
	}
	return RolloutVerdict{RolloutProgressing, reason}
}
