package classify

import (
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Waiting reasons the kubelet sets (kubernetes/kubernetes pkg/kubelet/images/types.go,
// pkg/kubelet/kuberuntime/kuberuntime_container.go, pkg/kubelet/container/sync_result.go).
const (
	reasonCrashLoop         = "CrashLoopBackOff"
	reasonErrImagePull      = "ErrImagePull"
	reasonImagePullBackOff  = "ImagePullBackOff"
	reasonInvalidImageName  = "InvalidImageName"
	reasonErrImageNeverPull = "ErrImageNeverPull"
	reasonConfigError       = "CreateContainerConfigError"
	reasonCreateError       = "CreateContainerError"
	reasonRunError          = "RunContainerError"
	reasonCreating          = "ContainerCreating"
	reasonPodInitializing   = "PodInitializing"

	// Start failures: dockershim / cri-dockerd report ContainerCannotRun
	// (kubernetes/kubernetes pkg/kubelet/dockershim/docker_container.go), containerd reports
	// StartError (containerd internal/cri/server/container_start.go).
	reasonCannotRun  = "ContainerCannotRun"
	reasonStartError = "StartError"
)

// The kubelet's crash-loop back-off (kubernetes pkg/kubelet/kubelet.go, v1.37: initialCrashLoopBackOff,
// MaxCrashLoopBackOff, and the crashLoopBackOff's HasExpiredFunc). doBackOff
// (pkg/kubelet/kuberuntime/kuberuntime_manager.go) restarts a failed container at once when no
// back-off runs for it and starts one (client-go util/flowcontrol Backoff.Next: 10 s); at the next
// failure it waits in CrashLoopBackOff, "back-off 10s restarting failed container=NAME
// pod=NAME_NS(UID)", and every failure after that doubles the wait up to 5 min. A failure more than
// 600 s after the restart before it finds the back-off expired and starts again at 10 s.
const (
	// firstBackOff is the back-off's first step: the wait that follows the first failures of a
	// container, before any back-off has been served. ReduceDefaultCrashLoopBackOffDecay (alpha)
	// starts at 1 s, and a maxContainerRestartPeriod below 10 s caps it; both stay within it.
	firstBackOff = 10 * time.Second
	// backOffReset is how long a container must run for the kubelet to forget its crash loop.
	backOffReset = 600 * time.Second
)

// backOffDelay reads the wait out of a CrashLoopBackOff message: "back-off 20s restarting failed
// container=…" (kubelets before 1.27 wrote "Back-off 2m40s restarting failed container=…").
func backOffDelay(msg string) (time.Duration, bool) {
	const head = "back-off "
	if len(msg) < len(head) || !strings.EqualFold(msg[:len(head)], head) {
		return 0, false
	}
	rest := msg[len(head):]
	end := strings.IndexByte(rest, ' ')
	if end < 0 {
		return 0, false
	}
	d, err := time.ParseDuration(rest[:end])
	return d, err == nil
}

// StartFailure judges a terminated state as a container start failure (reason ContainerCannotRun
// or StartError). ok is false when t is not a start failure. The verdict is transient,
// RuleStartFailure128, for exit 128 (Krane's rule) and, beyond Krane, for a cri-dockerd 126 or 127
// whose message is not about the container's command or working directory (moby derives those
// codes from errno texts anywhere in the message); it is doomed for a command or working-directory
// error and for any other exit code. The model's start-failure ledger records only
// RuleStartFailure128, so it counts all three codes as node evidence. Source is left unset
// (FromNone): the caller knows whether t came from state or lastState.
func StartFailure(t *corev1.ContainerStateTerminated) (v Verdict, ok bool) {
	if t == nil || (t.Reason != reasonCannotRun && t.Reason != reasonStartError) {
		return Verdict{}, false
	}
	v = Verdict{Message: t.Message, ExitCode: t.ExitCode, HasExitCode: true}
	switch {
	case t.ExitCode == 128 || (t.ExitCode == 126 || t.ExitCode == 127) && t.Message != "":
		// A 126 or 127 without any message keeps Krane's verdict below: there is no text to tell
		// the command's error from the node's.
		if commandError(t.Message) {
			// Only an error about the container's own command or working directory counts:
			// runc's cgroup and mount errors on a sick node carry the same errno texts in their
			// paths. containerd reports a missing executable as StartError 128
			// (kubernetes/kubernetes#120331), so Krane's literal "128 is transient" would hide it.
			v.Class, v.Rule = Doomed, RuleStartFailureConfig
			if t.ExitCode != 128 {
				v.Rule = RuleStartFailure // Krane pod.rb: ContainerCannotRun 126/127
			}
			v.Reason = startReason("Failed to start", t.ExitCode, t.Message)
			return v, true
		}
		// Krane pod.rb (Shopify/krane#656): 128 start failures seen on one node at a time are
		// node-local runtime trouble and clear within seconds; do not fail the rollout on them.
		// Beyond Krane, 126 and 127 without the command structure are the same trouble: on
		// cri-dockerd, moby's translateContainerdStartErr (daemon/errors.go) turns a start error
		// into 127 when its text merely contains "no such file or directory" or "executable file
		// not found" (since moby/moby#42270 without checking it names the command) and into 126
		// on "permission denied", so a runc cgroup ENOENT or EACCES, or the OCI runtime binary
		// missing on the node, arrives as ContainerCannotRun 127 or 126.
		v.Class, v.Rule = Transient, RuleStartFailure128
		v.Reason = startReason("Failed to start on node, will retry", t.ExitCode, t.Message)
	default:
		// Krane pod.rb: any other ContainerCannotRun exit code is a configuration error.
		v.Class, v.Rule = Doomed, RuleStartFailure
		v.Reason = startReason("Failed to start", t.ExitCode, t.Message)
	}
	return v, true
}

// startReason is "head (exit N): message" in one allocation: the exit codes runtimes use are
// constants, so only the final concatenation allocates.
func startReason(head string, code int32, msg string) string {
	var exit string
	switch code {
	case 126:
		exit = " (exit 126)"
	case 127:
		exit = " (exit 127)"
	case 128:
		exit = " (exit 128)"
	default:
		exit = " (exit " + strconv.Itoa(int(code)) + ")"
	}
	if msg = oneLine(msg); msg == "" {
		return head + exit
	}
	return head + exit + ": " + msg
}

// judge returns the verdict of one container. spec may be nil (a status without a spec entry),
// cs is nil while the kubelet has not reported the container yet.
func judge(pod *corev1.Pod, spec *corev1.Container, cs *corev1.ContainerStatus, init bool, now time.Time) Verdict {
	if cs == nil {
		return Verdict{Class: Progressing, Rule: RuleStarting, Reason: "Waiting for the kubelet to start it"}
	}
	st := &cs.State
	switch {
	case st.Waiting != nil:
		// Krane's exit-128 fix (Shopify/krane#656): the current state is checked before
		// lastState, so a CrashLoopBackOff dooms the container even when its last failure was
		// a transient-looking 128.
		if v, ok := judgeWaiting(spec, cs); ok {
			return v
		}
		if v, ok := StartFailure(cs.LastTerminationState.Terminated); ok {
			v.Source = FromLastState
			return v
		}
		return waitingFallback(st.Waiting)
	case st.Terminated != nil:
		return judgeTerminated(pod, spec, st.Terminated, cs.RestartCount, init)
	case st.Running != nil:
		// A start failure only in lastState while the container now runs is history: the
		// runtime has since started the process. The model counts it as node evidence.
		if v, ok := crashLoopRunning(pod, spec, cs, init, now); ok {
			return v
		}
		return judgeRunning(spec, cs, init)
	}
	// No state at all: the API documents the default as waiting.
	if v, ok := StartFailure(cs.LastTerminationState.Terminated); ok {
		v.Source = FromLastState
		return v
	}
	return Verdict{Class: Progressing, Rule: RuleStarting, Reason: "Waiting to start"}
}

// judgeWaiting returns the verdict for the waiting reasons that decide on their own; ok is false
// for reasons that only say "not yet" (ContainerCreating, PodInitializing, others), after which
// lastState is consulted.
func judgeWaiting(spec *corev1.Container, cs *corev1.ContainerStatus) (Verdict, bool) {
	w := cs.State.Waiting
	v := Verdict{Message: w.Message, Source: FromState}
	switch w.Reason {
	case reasonCrashLoop:
		// Krane pod.rb: "Crashing repeatedly (exit N)". Beyond Krane: the CrashLoopBackOff
		// message ("back-off 5m0s restarting failed container") says nothing, so the reason
		// carries the last termination's reason and message, e.g. ContainerCannotRun's OCI error.
		lt := cs.LastTerminationState.Terminated
		if lt != nil && (lt.Reason == reasonCannotRun || lt.Reason == reasonStartError) && firstStep(w.Message, cs.RestartCount) {
			if v, ok := startBackOff(lt); ok {
				return v, true
			}
		}
		v.Class, v.Rule = Doomed, RuleCrashLoop
		if lt == nil {
			v.Reason = "Crashing repeatedly"
			return v, true
		}
		v.ExitCode, v.HasExitCode = lt.ExitCode, true
		if lt.Message != "" {
			v.Message = lt.Message
		}
		head := "Crashing repeatedly (exit " + strconv.Itoa(int(lt.ExitCode)) + ")"
		detail := lt.Reason
		if detail == "Error" || detail == "Completed" {
			// kubelet's generic reasons add nothing to the exit code.
			detail = ""
		}
		if m := oneLine(lt.Message); m != "" {
			if detail != "" {
				detail += ": " + m
			} else {
				detail = m
			}
		}
		if detail != "" {
			head += ": " + detail
		}
		v.Reason = head
	case reasonErrImagePull:
		// Krane pod.rb: ErrImagePull whose message matches /not found/i is doomed (the image was
		// never pushed); anything else is registry or network trouble the kubelet retries. Beyond
		// Krane: a refused pull (no such repository, no credentials) is doomed too, a "not found"
		// about a layer in the node's own content store is not (pullError), and a registry's rate
		// limit is named, as the back-off that follows names it (pullBackOff).
		o := pullError(w.Message)
		if !pullDoom(&v, o, image(spec, cs)) {
			v.Class, v.Rule = Transient, RuleImagePull
			if o == pullRateLimit {
				v.Reason = pullRateLimitHead + ", will retry: " + rateLimitText(w.Message)
			} else {
				v.Reason = withDetail("Image pull failed, will retry", w.Message)
			}
		}
	case reasonImagePullBackOff:
		// kubelet 1.32+ appends the previous pull error to the back-off message
		// (pkg/kubelet/images/image_manager.go pullImage: `Back-off pulling image "x": ErrImagePull:
		// ...`, from its prevPullErrMsg); earlier kubelets write only `Back-off pulling image "x"`,
		// and the model then passes the error it saw last to PullBackOff, which judges it here too.
		pullBackOff(&v, image(spec, cs), trimBackOff(w.Message))
	case reasonInvalidImageName, reasonErrImageNeverPull:
		// kubelet pkg/kubelet/images/image_manager.go: neither is retried into success.
		v.Class, v.Rule = Doomed, RuleInvalidImage
		if w.Reason == reasonInvalidImageName {
			v.Reason = withDetail("Invalid image name", w.Message)
		} else {
			v.Reason = withDetail("Image not present and pull policy is Never", w.Message)
		}
	case reasonConfigError:
		// Krane pod.rb: a missing secret/configmap key is doomed, except kubelet's
		// "failed to sync %s cache", which clears (kubernetes/kubernetes#74755, #75260). Beyond
		// Krane: the kubelet's other catch-up errors after a restart clear too (kubeletCatchUp).
		if kubeletCatchUp(w.Message) {
			v.Class, v.Rule = Transient, RuleConfigCacheSync
			v.Reason = withDetail("Waiting for the kubelet to catch up", w.Message)
		} else {
			v.Class, v.Rule = Doomed, RuleConfigError
			v.Reason = withDetail("Failed to generate container configuration", w.Message)
		}
	case reasonCreateError, reasonRunError:
		// CRI-O reports a missing executable at create time as CreateContainerError; an error
		// about the container's own command or working directory is a configuration error,
		// anything else (name reservation races, cgroup, storage) a runtime hiccup.
		head := "Failed to create container"
		if w.Reason == reasonRunError {
			head = "Failed to run container"
		}
		if commandError(w.Message) {
			v.Class, v.Rule = Doomed, RuleCreateError
			v.Reason = withDetail(head, w.Message)
		} else {
			v.Class, v.Rule = Transient, RuleCreateErrorTransient
			v.Reason = withDetail(head+", will retry", w.Message)
		}
	default:
		return Verdict{}, false
	}
	return v, true
}

// waitingFallback judges a waiting state that no rule above decided.
func waitingFallback(w *corev1.ContainerStateWaiting) Verdict {
	v := Verdict{Message: w.Message, Source: FromState}
	switch w.Reason {
	case reasonCreating:
		v.Class, v.Rule, v.Reason = Progressing, RuleStarting, "Creating container"
	case reasonPodInitializing:
		v.Class, v.Rule, v.Reason = Progressing, RuleStarting, "Waiting for init containers"
	case "":
		v.Class, v.Rule, v.Reason = Progressing, RuleStarting, "Waiting to start"
	default:
		// PreStartHookError, PostStartHookError, RegistryUnavailable, ...: the kubelet retries
		// them, so they are trouble but not proof of doom.
		v.Class, v.Rule = Transient, RuleWaitingOther
		v.Reason = withDetail(oneLine(w.Reason), w.Message)
	}
	return v
}

// startBackOff judges a CrashLoopBackOff at the back-off's first step after the start failure
// lt. One back-off after a start failure on the node is the flake's, not a crash loop: the
// kubelet backs off after the first failures of a container (doBackOff), so a runtime hiccup that
// clears in seconds shows this state before the retry succeeds. Krane's state-before-lastState
// order dooms it (Shopify/krane#656, the maintainers' concern for a one-pod rollout); a start
// failure after a longer back-off has come back after one was served, and stays a crash loop. ok
// is false for a start failure that is not the node's (a missing executable).
func startBackOff(lt *corev1.ContainerStateTerminated) (Verdict, bool) {
	v, ok := StartFailure(lt)
	if !ok || v.Class != Transient {
		return Verdict{}, false
	}
	v.Source, v.Rule = FromState, RuleStartFailureBackOff
	v.Reason = startReason("Failed to start on node, retrying after the kubelet's back-off", lt.ExitCode, lt.Message)
	return v, true
}

// firstStep reports whether a CrashLoopBackOff waits the back-off's first step: by its message,
// or, for a message without the wait, by the restart count (at most one restart: no back-off
// served yet).
func firstStep(msg string, restarts int32) bool {
	if d, ok := backOffDelay(msg); ok {
		return d <= firstBackOff
	}
	return restarts <= 1
}

// judgeTerminated judges a container whose current state is terminated; restarts is its status's
// restart count.
func judgeTerminated(pod *corev1.Pod, spec *corev1.Container, t *corev1.ContainerStateTerminated, restarts int32, init bool) Verdict {
	if v, ok := StartFailure(t); ok {
		v.Source = FromState
		return v
	}
	v := Verdict{Message: t.Message, ExitCode: t.ExitCode, HasExitCode: true, Source: FromState}
	if t.ExitCode == 0 {
		if restartsOnSuccess(pod, spec, init) {
			// restartPolicy Always restarts a container that exited 0 as well (kubelet
			// pkg/kubelet/kuberuntime ShouldContainerBeRestarted); a service that keeps exiting
			// 0 ends in CrashLoopBackOff. Not done, then: trouble until the next state decides.
			v.Class, v.Rule, v.Reason = Transient, RuleRestarting, "Exited with code 0, restarting"
			if inCrashLoop(restarts, t) {
				v.Class, v.Rule, v.Reason = Doomed, RuleCrashLoopRunning, "Exiting repeatedly (exit 0, "+restartsText(restarts)+"), restarting after the kubelet's back-off"
			}
			return v
		}
		v.Class, v.Rule, v.Reason = Completed, RuleCompleted, "Completed"
		return v
	}
	head := "Exited with code " + strconv.Itoa(int(t.ExitCode))
	if willRestart(pod, spec) && inCrashLoop(restarts, t) {
		// Between a crash and the CrashLoopBackOff the kubelet writes next, the status shows the
		// exited container; inside a crash loop that is the loop, not a first failure.
		v.Class, v.Rule = Doomed, RuleCrashLoopRunning
		head = "Crashing repeatedly (exit " + strconv.Itoa(int(t.ExitCode)) + ", " + restartsText(restarts) + "), restarting after the kubelet's back-off"
	} else if willRestart(pod, spec) {
		// The kubelet will restart it; the state that follows (running, or CrashLoopBackOff)
		// decides. Until then it is trouble, not doom.
		v.Class, v.Rule = Transient, RuleRestarting
		head += ", restarting"
	} else {
		v.Class, v.Rule = Doomed, RuleTerminatedError
	}
	if t.Reason != "" && t.Reason != "Error" {
		head += ": " + oneLine(t.Reason)
	}
	v.Reason = withDetail(head, t.Message)
	return v
}

// willRestart reports whether the kubelet restarts a container that exited non-zero: the
// container's own restartPolicy (sidecars, KEP-5307 restart rules) or else the pod's, whose
// default is Always; never once the pod phase is terminal.
func willRestart(pod *corev1.Pod, spec *corev1.Container) bool {
	if !restartable(pod) {
		return false
	}
	if spec != nil && spec.RestartPolicy != nil {
		p := *spec.RestartPolicy
		return p == corev1.ContainerRestartPolicyAlways || p == corev1.ContainerRestartPolicyOnFailure
	}
	return pod.Spec.RestartPolicy != corev1.RestartPolicyNever
}

// restartsOnSuccess reports whether the kubelet restarts a container that exited 0: a sidecar
// (container restartPolicy Always), or a regular container of a restartPolicy Always pod. Plain
// init containers run to completion once.
func restartsOnSuccess(pod *corev1.Pod, spec *corev1.Container, init bool) bool {
	if !restartable(pod) {
		return false
	}
	if spec != nil && spec.RestartPolicy != nil {
		return *spec.RestartPolicy == corev1.ContainerRestartPolicyAlways
	}
	return !init && (pod.Spec.RestartPolicy == corev1.RestartPolicyAlways || pod.Spec.RestartPolicy == "")
}

// restartable reports whether the kubelet still restarts the pod's containers: not once the phase
// is terminal, nor while the pod is being deleted (its containers are being stopped).
func restartable(pod *corev1.Pod) bool {
	return pod.Status.Phase != corev1.PodFailed && pod.Status.Phase != corev1.PodSucceeded && pod.DeletionTimestamp == nil
}

// pullDoom sets v to the doomed verdict of a pull error of img that waiting will not fix and
// reports whether it did.
func pullDoom(v *Verdict, o pullOutcome, img string) bool {
	switch o {
	case pullNotFound:
		v.Class, v.Rule = Doomed, RuleImageNotFound
		v.Reason = "Image not found: " + oneLine(img)
	case pullAccessDenied:
		v.Class, v.Rule = Doomed, RuleImageAccessDenied
		v.Reason = "Image pull access denied (no such repository, or no credentials): " + oneLine(img)
	default:
		return false
	}
	return true
}

// pullRateLimitHead begins the reason of a pull the registry refused for its rate limit (HTTP 429,
// Docker Hub's "toomanyrequests"): transient, since a retry after the limit resets succeeds, but a
// cause the user can act on (authenticate, use a mirror), so the reason names it in the pull's
// error and in the back-off after it alike.
const pullRateLimitHead = "Image pull rate-limited by the registry"

// pullBackOff sets v to the verdict of a container waiting out the kubelet's pull back-off for
// img. prev is the pull error the back-off follows in the kubelet's form, "ErrImagePull: <error>"
// (image_manager.go prevPullErrMsg: the pull's reason, ": ", its message), or "" when the message
// carries none. The back-off is as doomed as a pull with that error, even in a single snapshot; a
// rate limit is named; anything else is transient with the error as the detail. Only an
// ErrImagePull is judged: the kubelet's other pull reasons there, RegistryUnavailable and
// SignatureValidationFailed (evalCRIPullErr), stay the detail of a plain back-off.
func pullBackOff(v *Verdict, img, prev string) {
	if err, ok := strings.CutPrefix(prev, reasonErrImagePull+": "); ok {
		o := pullError(err)
		if pullDoom(v, o, img) {
			return
		}
		if o == pullRateLimit {
			v.Class, v.Rule = Transient, RuleImagePullBackOff
			v.Reason = pullRateLimitHead + " (back-off): " + rateLimitText(err)
			return
		}
	}
	v.Class, v.Rule = Transient, RuleImagePullBackOff
	v.Reason = withDetail("Back-off pulling image "+oneLine(img), prev)
}

// inCrashLoop reports whether a container that exited (t) will wait out a back-off before its
// restart: it was itself a restart (restarts >= 1: doBackOff had started a back-off for it) and it
// failed within backOffReset of starting, so the back-off had not expired. An unknown start or end
// time does not count: no doom without the evidence.
func inCrashLoop(restarts int32, t *corev1.ContainerStateTerminated) bool {
	if restarts < 1 || t.StartedAt.IsZero() || t.FinishedAt.IsZero() {
		return false
	}
	return t.FinishedAt.Sub(t.StartedAt.Time) <= backOffReset
}

// crashLoopRunning keeps a crash-looping container doomed while it runs between crashes: it is a
// restart after a back-off (the instance before it was a restart that crashed within backOffReset,
// so inCrashLoop held for it) and has not yet been up for backOffReset at now, the kubelet's own
// measure of a container no longer crash-looping. Without this a crash loop reads doomed while it
// waits and healthy for the seconds it runs, and the rollout's verdict flaps with it (readiness
// oscillation keeps argo-rollouts' rollouts Progressing the same way). A start failure in lastState
// is not a crash: the flake's retry succeeded.
func crashLoopRunning(pod *corev1.Pod, spec *corev1.Container, cs *corev1.ContainerStatus, init bool, now time.Time) (Verdict, bool) {
	lt := cs.LastTerminationState.Terminated
	if lt == nil || cs.RestartCount < 2 || init && !isSidecar(spec) {
		return Verdict{}, false
	}
	if lt.Reason == reasonCannotRun || lt.Reason == reasonStartError {
		return Verdict{}, false
	}
	if lt.ExitCode == 0 && !restartsOnSuccess(pod, spec, init) || !inCrashLoop(cs.RestartCount-1, lt) {
		return Verdict{}, false
	}
	if started := cs.State.Running.StartedAt; started.IsZero() || now.Sub(started.Time) >= backOffReset {
		return Verdict{}, false
	}
	v := Verdict{Class: Doomed, Rule: RuleCrashLoopRunning, Source: FromLastState, Message: lt.Message,
		ExitCode: lt.ExitCode, HasExitCode: true}
	head := "Crashing repeatedly (exit " + strconv.Itoa(int(lt.ExitCode))
	if lt.Reason != "" && lt.Reason != "Error" && lt.Reason != "Completed" {
		head += ": " + oneLine(lt.Reason)
	}
	v.Reason = head + ", " + restartsText(cs.RestartCount) + "), running again; recovered once up 10m"
	return v, true
}

// RecoveredAt is when a running container that a RuleCrashLoopRunning verdict holds doomed counts
// as recovered, so that its verdict changes with time alone; zero when cs is not running.
func RecoveredAt(cs *corev1.ContainerStatus) time.Time {
	if cs == nil || cs.State.Running == nil {
		return time.Time{}
	}
	return cs.State.Running.StartedAt.Add(backOffReset)
}

func restartsText(n int32) string {
	if n == 1 {
		return "1 restart"
	}
	return strconv.Itoa(int(n)) + " restarts"
}

// judgeRunning judges a running container.
func judgeRunning(spec *corev1.Container, cs *corev1.ContainerStatus, init bool) Verdict {
	v := Verdict{Source: FromState}
	if init && !isSidecar(spec) {
		v.Class, v.Rule, v.Reason = Progressing, RuleStarting, "Initializing"
		return v
	}
	if cs.Ready {
		v.Class, v.Rule = Healthy, RuleRunningReady
		return v
	}
	v.Class, v.Rule = Progressing, RuleRunningNotReady
	switch {
	case spec != nil && spec.StartupProbe != nil && cs.Started != nil && !*cs.Started:
		v.Reason = "Startup probe " + probeText(spec.StartupProbe)
	case spec != nil && spec.ReadinessProbe != nil:
		// Krane pod.rb readiness_fail_reason: "must respond with a good status code at
		// '/path'" / "must exit 0 from the following command".
		v.Reason = "Readiness probe " + probeText(spec.ReadinessProbe)
	default:
		v.Reason = "Running, not ready yet"
	}
	return v
}

// probeText says what a probe waits for: "must respond at /healthz (port 8080)".
func probeText(p *corev1.Probe) string {
	switch {
	case p.HTTPGet != nil:
		path := p.HTTPGet.Path
		if path == "" {
			path = "/"
		}
		return "must respond at " + oneLine(path) + " (port " + oneLine(p.HTTPGet.Port.String()) + ")"
	case p.Exec != nil:
		return "must exit 0 from `" + oneLine(strings.Join(p.Exec.Command, " ")) + "`"
	case p.TCPSocket != nil:
		return "must accept TCP connections on port " + oneLine(p.TCPSocket.Port.String())
	case p.GRPC != nil:
		return "must report gRPC health SERVING on port " + strconv.Itoa(int(p.GRPC.Port))
	}
	return "has not passed yet"
}

// isSidecar reports whether an init container is a restartable sidecar (restartPolicy Always;
// kubernetes pkg/api/v1/pod IsRestartableInitContainer).
func isSidecar(c *corev1.Container) bool {
	return c != nil && c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// image returns the image a container asked for, falling back to the status.
func image(spec *corev1.Container, cs *corev1.ContainerStatus) string {
	if spec != nil && spec.Image != "" {
		return spec.Image
	}
	return cs.Image
}

// backOffHead begins every ImagePullBackOff message the kubelet writes (image_manager.go
// pullImage: `Back-off pulling image %q`).
const backOffHead = "Back-off pulling image"

// trimBackOff drops kubelet's `Back-off pulling image "x"` prefix from an ImagePullBackOff
// message, keeping the underlying error that newer kubelets append (`: ErrImagePull: ...`).
func trimBackOff(msg string) string {
	if !strings.HasPrefix(msg, backOffHead) {
		return msg
	}
	rest := msg[len(backOffHead):]
	if i := strings.Index(rest, "\": "); i >= 0 {
		return rest[i+3:]
	}
	return ""
}

// bareBackOff reports an ImagePullBackOff message that says nothing of the pull error: the
// kubelet's `Back-off pulling image "x"` alone, or no message.
func bareBackOff(msg string) bool {
	return msg == "" || strings.HasPrefix(msg, backOffHead) && trimBackOff(msg) == ""
}
