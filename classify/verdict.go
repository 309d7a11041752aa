// Package classify judges Kubernetes pods: is each container healthy, progressing, transiently
// failing or doomed, and why; and what `kubectl get pods` prints for it. It is pure: it imports only
// the standard library and k8s.io/api, reads no clock and does no I/O. Every other package asks this
// one for verdicts and never re-derives them.
package classify

import "strconv"

// Class is the class of a verdict: the badge a pod or container shows.
type Class uint8

// The classes of verdict. Their numeric order is not their severity; use Severity.
const (
	Healthy Class = iota
	Completed
	Progressing
	Transient
	Doomed
)

var classNames = [...]string{"healthy", "completed", "progressing", "transient", "doomed"}

// String returns the lower-case name used in JSON and on badges ("doomed").
func (k Class) String() string {
	if int(k) < len(classNames) {
		return classNames[k]
	}
	return "unknown"
}

// Valid reports whether k is one of the five kinds.
func (k Class) Valid() bool { return k <= Doomed }

// Severity orders kinds for "most severe wins": doomed > transient > progressing > healthy >
// completed. Completed ranks lowest: a finished init container never outweighs a running one.
func (k Class) Severity() int {
	switch k {
	case Doomed:
		return 4
	case Transient:
		return 3
	case Progressing:
		return 2
	case Healthy:
		return 1
	default:
		return 0
	}
}

// Source says which part of the status decided a verdict.
type Source uint8

// The places a verdict can come from.
const (
	FromNone      Source = iota // no status yet, or a healthy default
	FromState                   // containerStatus.state
	FromLastState               // containerStatus.lastState
	FromPod                     // pod-level phase, conditions or deletion
	FromEvents                  // the Warning events posted about the pod (PodEvents)
)

var sourceNames = [...]string{"", "state", "lastState", "pod", "events"}

// String returns "state", "lastState", "pod", "events" or "".
func (s Source) String() string {
	if int(s) < len(sourceNames) {
		return sourceNames[s]
	}
	return ""
}

// Rule names the rule that produced a verdict, so the model can apply evidence (sticky doom after
// an image "not found", the exit-128 ledger) without re-deriving anything.
type Rule uint8

// Rules, one per row of classify/RULES.md's table.
const (
	RuleNone                 Rule = iota
	RuleRunningReady              // running and ready
	RuleRunningNotReady           // running, readiness not yet passed
	RuleStarting                  // ContainerCreating, PodInitializing, no status yet
	RuleCompleted                 // terminated exit 0, or pod Succeeded
	RuleCrashLoop                 // waiting CrashLoopBackOff
	RuleImageNotFound             // ErrImagePull whose message says "not found"
	RuleImagePull                 // ErrImagePull otherwise (network, timeouts)
	RuleImagePullBackOff          // ImagePullBackOff
	RuleInvalidImage              // InvalidImageName, ErrImageNeverPull
	RuleConfigError               // CreateContainerConfigError
	RuleConfigCacheSync           // CreateContainerConfigError "failed to sync ... cache"
	RuleCreateError               // CreateContainerError / RunContainerError, deterministic
	RuleCreateErrorTransient      // CreateContainerError / RunContainerError, otherwise
	RuleStartFailure128           // ContainerCannotRun / StartError 128 (or 126/127 not about the command): runtime trouble
	RuleStartFailureConfig        // ContainerCannotRun / StartError with a deterministic message
	RuleStartFailure              // ContainerCannotRun / StartError with another exit code
	RuleTerminatedError           // terminated non-zero, not restarted
	RuleWaitingOther              // another waiting reason
	RulePodFailed                 // phase Failed
	RulePodEvicted                // Evicted / Preempting with a controller owner
	RuleUnschedulable             // PodScheduled=False Unschedulable
	RuleTerminating               // deletionTimestamp set
	RuleEscalated                 // over time (Escalate): cross-node exit-128 escalation
	RuleStickyImageNotFound       // over time (StillNotFound): ImagePullBackOff after "not found"
	RuleRestarting                // terminated non-zero in a pod that will restart it
	RulePodUnknown                // phase Unknown: the node stopped reporting
	RuleImageAccessDenied         // ErrImagePull: access denied / no such repository / 401
	RulePodRejected               // phase Failed by a kubelet admission rejection, controller owner
	RulePodNotReady               // containers ready, pod Ready=False (node not reporting)
	RuleReadinessGate             // containers ready, a readiness gate not yet True
	RuleNodeNotReady              // set by the model: pod-not-ready on a node that is NotReady
	RuleJobRetrying               // set by the model: a failed Job attempt with retries left
	RuleJobFailed                 // set by the model: a failed attempt of a Job that failed
	RuleJobSucceeded              // set by the model: a failed attempt of a Job that succeeded
	RuleSandboxFailed             // events: FailedCreatePodSandBox while the pod waits for its sandbox
	RuleVolumeConfigMissing       // events: a volume's secret or configmap does not exist
	RuleMultiAttach               // events: the volume is attached to another node
	RuleVolumeNotReady            // events: any other mount or attach failure
	RuleStartFailureBackOff       // CrashLoopBackOff at the kubelet's first back-off step after a node-level start failure
	RuleCrashLoopRunning          // running or exited again inside a crash loop the kubelet backs off
	RuleStartFailureRepeated      // over time (StartedAgain): a node-level start failure again after the kubelet's back-off
)

// lastRule is the highest Rule; ruleNames has one name per rule up to it.
const lastRule = RuleStartFailureRepeated

var ruleNames = [...]string{
	"none", "running-ready", "running-not-ready", "starting", "completed", "crash-loop",
	"image-not-found", "image-pull", "image-pull-backoff", "invalid-image", "config-error",
	"config-cache-sync", "create-error", "create-error-transient", "start-failure-128",
	"start-failure-config", "start-failure", "terminated-error", "waiting-other", "pod-failed",
	"pod-evicted", "unschedulable", "terminating", "escalated", "sticky-image-not-found",
	"restarting", "pod-unknown", "image-access-denied", "pod-rejected", "pod-not-ready",
	"readiness-gate", "node-not-ready", "job-retrying", "job-failed", "job-succeeded",
	"sandbox-failed", "volume-config-missing", "multi-attach", "volume-not-ready",
	"start-failure-backoff", "crash-loop-running", "start-failure-repeated",
}

// String returns the rule's kebab-case name ("start-failure-128"), as RULES.md lists it.
func (r Rule) String() string {
	if int(r) < len(ruleNames) {
		return ruleNames[r]
	}
	return "rule(" + strconv.Itoa(int(r)) + ")"
}

// Verdict is the judgement of one container or one pod. It is a plain value.
type Verdict struct {
	Class Class
	Rule  Rule
	// Reason is one human line, e.g. "Crashing repeatedly (exit 128): ContainerCannotRun: OCI ...".
	// It is empty only for healthy and completed verdicts.
	Reason string
	// Message is the raw runtime message the verdict rests on (waiting or terminated message).
	Message string
	// ExitCode is valid when HasExitCode.
	ExitCode    int32
	HasExitCode bool
	Source      Source
	// Container names the container that decided a pod's verdict ("" when the pod itself did).
	Container string
	// Init is true when Container is an init container (sidecars included).
	Init bool
}

// ContainerVerdict is one container's verdict together with its identity.
//
// Name and Init always equal the embedded Verdict's Container and Init: both are set in one
// place, newContainerVerdict. The embedded pair makes cv.Verdict self-describing when it is lifted
// into a pod's verdict; Name and Init are the names callers read (cv.Name, cv.Init). Anyone who
// rewrites one (the model sanitises names) must rewrite the other; SetName does both.
type ContainerVerdict struct {
	Name string
	Init bool
	Verdict
}

// SetName sets the container's name in both places it is kept.
func (cv *ContainerVerdict) SetName(name string) { cv.Name, cv.Verdict.Container = name, name }

func newContainerVerdict(name string, init bool, v Verdict) ContainerVerdict {
	v.Container, v.Init = name, init
	return ContainerVerdict{Name: name, Init: init, Verdict: v}
}

// MoreSevere reports whether a outranks b. Ties keep the earlier verdict, so the first container
// (in spec order, init containers first) that reached a severity names the pod's verdict.
func MoreSevere(a, b Verdict) bool { return a.Class.Severity() > b.Class.Severity() }
