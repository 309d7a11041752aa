package classify

import (
	"strconv"
	"strings"
)

// The rules below judge what one status cannot show: they take what the model remembers of a
// pod, its workload or its node (a restart count, an earlier pull failure, the nodes a workload
// failed to start on) and return the verdict. The model keeps the memory; the rules are here.

// Escalates reports the container rules that escalation dooms: a start failure of the node's
// runtime (containerd's exit 128, CRI-O's create error), transient on one node. A pod's sandbox
// failure (RuleSandboxFailed) escalates too, as the pod's own verdict.
func Escalates(r Rule) bool {
	return r == RuleStartFailure128 || r == RuleCreateErrorTransient
}

// NotNodeLocal is cross-node escalation's rule: whether a workload whose containers failed to
// start (Escalates) on failedNodes nodes within the window is not suffering node-local trouble,
// and on how many nodes the reason says so; 0 when it may be node-local. Krane's exit-128 rule
// rests on the failures being node-local, a few pods on one node (Shopify/krane#656), so failures
// on several nodes (min, --escalate-nodes) are the workload's. But flaky nodes are several too
// (two flaky nodes and one failure elsewhere are three nodes), and so is a runtime that fails a
// few starts in a hundred on every node. The pods of the workload's failing revisions tell which:
// total of them, healthy and failing (transient or doomed), the rest still on their way. So:
//   - healthy on at least half of their pods, the revisions start where they run: what fails is
//     where, not what, and the workload is never escalated;
//   - while some pods have not had their try (neither healthy nor failing), it waits: the first
//     failures of a rollout land on flaky and calm nodes alike before any pod is ready, and a
//     workload that cannot start fails on every try soon enough;
//   - none healthy, nothing shows the workload can start at all: failedNodes counts, every node
//     it failed on;
//   - otherwise only the nodes that do not stand out as suspects count (notSuspect of them). The
//     model judges those suspects with every workload's failures counted but those of the
//     workloads none of whose failing revisions' pods is healthy, whose failures must not make
//     suspects of the nodes they are on.
func NotNodeLocal(failedNodes, notSuspect, healthy, failing, total, min int) int {
	switch {
	case total > 0 && 2*healthy >= total:
		return 0
	case healthy+failing < total:
		return 0
	case healthy == 0 && failedNodes >= min:
		return failedNodes
	case notSuspect >= min:
		return notSuspect
	}
	return 0
}

// Escalate is the verdict of a start failure v (Escalates(v.Rule), or a sandbox failure) of a
// workload whose pods failed to start on nodes nodes (at least the model's --escalate-nodes):
// doomed, since the trouble is not node-local. The reason names the exit code when the failure had one (128 from
// containerd; cri-dockerd's 126 and 127 are the same runtime trouble, RuleStartFailure128), none
// for a create error or a sandbox.
func Escalate(v Verdict, nodes int) Verdict {
	failure := v.Rule
	v.Class, v.Rule = Doomed, RuleEscalated
	if failure == RuleStartFailure128 && v.HasExitCode {
		v.Reason = "failed to start with exit " + strconv.Itoa(int(v.ExitCode)) + " on " + strconv.Itoa(nodes) + " nodes: not node-local"
	} else {
		v.Reason = "failed to start on " + strconv.Itoa(nodes) + " nodes: not node-local"
	}
	return v
}

// StartFailing reports the rules a container passes through between two start attempts: the
// failure itself and the moments before the back-off is written.
func StartFailing(r Rule) bool {
	switch r {
	case RuleStartFailure128, RuleCreateErrorTransient, RuleStartFailureBackOff, RuleStartFailureRepeated, RuleStarting:
		return true
	}
	return false
}

// startBackOffHead is how RuleStartFailureBackOff's reason begins; the rest is the exit code and
// the runtime's message.
const startBackOffHead = "Failed to start on node, retrying after the kubelet's back-off"

// StartedAgain judges a container seen waiting out the kubelet's first back-off after a start
// failure (RuleStartFailureBackOff, the flake's back-off) at restart count restarts, when it was
// seen there before at seenAt: at a higher count it has failed to start once more after a back-off
// was served, and is doomed (RuleStartFailureRepeated). One status shows the back-off's length
// (a second step dooms: startFailureBackOff); this catches the repeat over time whatever the
// kubelet's steps are (kubelets with ReduceDefaultCrashLoopBackOffDecay start at 1 s, a
// maxContainerRestartPeriod below 10 s caps every step).
func StartedAgain(c ContainerVerdict, seenAt, restarts int32) (ContainerVerdict, bool) {
	if c.Rule != RuleStartFailureBackOff || restarts <= seenAt {
		return c, false
	}
	c.Class, c.Rule = Doomed, RuleStartFailureRepeated
	c.Reason = "Failed to start again after the kubelet's back-off" + strings.TrimPrefix(c.Reason, startBackOffHead)
	return c, true
}

// StillNotFound judges a container back in the kubelet's pull states (RuleImagePull,
// RuleImagePullBackOff) for the same image after a pull that said the image does not exist or
// may not be pulled (first, RuleImageNotFound or RuleImageAccessDenied): the kubelet's
// ImagePullBackOff message no longer says why, and waiting will not make the image appear, so it
// stays doomed with the first pull's reason (RuleStickyImageNotFound).
func StillNotFound(c ContainerVerdict, first Verdict) (ContainerVerdict, bool) {
	if c.Rule != RuleImagePullBackOff && c.Rule != RuleImagePull {
		return c, false
	}
	c.Verdict = Verdict{Class: Doomed, Rule: RuleStickyImageNotFound, Reason: first.Reason, Message: first.Message,
		Source: FromState, Container: c.Name, Init: c.Init}
	return c, true
}

// PullBackOff judges a container waiting out the kubelet's image pull back-off whose message does
// not say why (RuleImagePullBackOff with `Back-off pulling image "x"` alone, as every kubelet
// before v1.32 writes it), given lastErr, the error of the last failed pull of img (the image its
// spec names) that the model saw: the message of the container's ErrImagePull status, or the error
// in the kubelet's Failed event (PullFailure), the same text. The verdict is
// the one a v1.32+ kubelet's message, `Back-off pulling image "x": ErrImagePull: <lastErr>`, gets
// from one status (image_manager.go pullImage appends its prevPullErrMsg): transient with the
// error as its reason's detail, a rate limit named (a crash loop's reason keeps its exit code the
// same way); doomed for an image that does not exist or may not be pulled, as
// RuleStickyImageNotFound, since the status alone does not show it. ok is false, and c is returned
// unchanged, for any other verdict, a back-off message that carries its own error, or no lastErr.
func PullBackOff(c ContainerVerdict, img, lastErr string) (ContainerVerdict, bool) {
	if c.Rule != RuleImagePullBackOff || lastErr == "" || !bareBackOff(c.Message) {
		return c, false
	}
	pullBackOff(&c.Verdict, img, reasonErrImagePull+": "+lastErr)
	if c.Class == Doomed {
		c.Rule = RuleStickyImageNotFound
	}
	c.Message = lastErr
	return c, true
}

// Replaced reports a pod its controller replaces: failed by the kubelet for a node reason
// (evicted, preempted, rejected at admission, shut down with its node). Such pods stay in the API
// until they are garbage-collected, often for days; a rollout's verdict leaves them out
// (NewPods), or one of them would keep a new ReplicaSet whose live pods are all doomed from ever
// being doomed. Krane counts them (its all-doomed rule sees a transient pod); doomwatch counts
// the pods that will run.
func Replaced(r Rule) bool { return r == RulePodEvicted || r == RulePodRejected }
