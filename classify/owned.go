package classify

import "fmt"

// OwnedPods is what the pods an object controls say of it, counted by the model (model.Owned):
// its current pods and those doomed, the first doomed one's reason, and a doomed workload's on
// the way ("deployment/web: …").
type OwnedPods struct {
	Total, Doomed    int
	Reason, Workload string
}

// OwnedVerdict is the verdict of an object of a kind doomwatch does not model (a custom resource)
// in the light of the pods it controls, at any depth of ownerReferences; own is its own verdict
// (kstatus's, or its CRD's Krane conditions). While own waits, a doomed pod dooms it with the pod's
// reason ("1/2 pods it controls doomed: …"), or a doomed workload on the way with that one's, where
// kstatus alone would wait for its operator to give up, if it ever does. A doomed or complete own
// verdict stands: its controller has said, as a Deployment with one pod of four crash-looping
// stays complete.
func OwnedVerdict(own RolloutVerdict, pods OwnedPods) RolloutVerdict {
	switch {
	case own.Class != RolloutProgressing:
		return own
	case pods.Doomed > 0:
		return RolloutVerdict{RolloutDoomed, fmt.Sprintf("%d/%d pods it controls doomed: %s", pods.Doomed, pods.Total, pods.Reason)}
	case pods.Workload != "":
		return RolloutVerdict{RolloutDoomed, pods.Workload}
	}
	return own
}
