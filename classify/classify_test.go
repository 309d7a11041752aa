package classify

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// testNow is the clock the tests judge at when a fixture gives none: the fixtures' own "now".
var testNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func terminated(reason string, code int32, msg string) *corev1.ContainerStateTerminated {
	return &corev1.ContainerStateTerminated{Reason: reason, ExitCode: code, Message: msg}
}

// Start-failure messages, verbatim from upstream reports (see each comment). None is written
// for the test: a message shaped to pass a rule hides the bug the rule has on real clusters.
const (
	// kubernetes/kubernetes#87735: runc lost its child while starting it (docker via dockershim,
	// ContainerCannotRun 128). Nothing about the pod's command: node trouble.
	msgRunc128EOF = `OCI runtime create failed: container_linux.go:345: starting container process caused "process_linux.go:303: getting the final child's pid from pipe caused \"EOF\"": unknown`
	// kubesphere-sigs/ks-devops-helm-chart#141: containerd StartError 128, the command is not on
	// $PATH (the kubelet event's "Error: " prefix dropped).
	msgContainerdNotFound = `failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: "devops-tool": executable file not found in $PATH: unknown`
	// containerd/containerd#11033: containerd StartError 128, the shim timed out opening the
	// container's stdout fifo on a loaded node.
	msgShimDeadline = `failed to create containerd task: failed to create shim task: failed to start io pipe copy: unable to copy pipes: containerd-shim: opening w/o fifo "/run/containerd/io.containerd.grpc.v1.cri/containers/base/io/1363662740/base-stdout" failed: context deadline exceeded`
	// jboss-dockerfiles/drools#62: docker names the missing command, ContainerCannotRun 127.
	msgDocker127 = `OCI runtime create failed: container_linux.go:349: starting container process caused "exec: \"./start_business-central-wb.sh\": stat ./start_business-central-wb.sh: no such file or directory": unknown`
	// moby/moby#31702: a path component of the command is a file (ENOTDIR); docker appends its
	// mount hint after runc's trailing line break (moby daemon/errors.go
	// translateContainerdStartErr) and records exit 127. Two lines.
	msgDockerENOTDIR = "oci runtime error: container_linux.go:247: starting container process caused \"exec: \\\"/etc/service/emby/run/emby.sh\\\": stat /etc/service/emby/run/emby.sh: not a directory\"\n" +
		": Are you trying to mount a directory onto a file (or vice-versa)? Check if the specified host path exists and is the expected type"
	// xanmod/linux#255: docker 20.10 could not open a cgroup file while applying the container's
	// cgroup config (the client's "Error response from daemon: " prefix dropped). The errno is
	// about a path under /sys/fs/cgroup, not the command: node trouble, though moby records 127.
	msgDockerCgroupENOENT = `failed to create shim: OCI runtime create failed: container_linux.go:380: starting container process caused: process_linux.go:545: container init caused: process_linux.go:508: setting cgroup config for procHooks process caused: openat2 /sys/fs/cgroup/system.slice/docker-93e3ef5ec1c4a029e6f0bb7509b63f5337a430926760181fa66d30509272df2c.scope/io.weight: no such file or directory: unknown`
	// nestybox/sysbox#548: runc may not create the container's rdma cgroup (docker CLI prefix and
	// trailing period removed). EACCES on a cgroup path: node trouble, though moby records 126.
	msgDockerCgroupEACCES = `failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: unable to apply cgroup configuration: mkdir /sys/fs/cgroup/rdma/docker/b0df665f7fdc462f9f9e16cfe3a6be6209357c6b9965c4c7b212ff70587f272f: permission denied: unknown`
	// NVIDIA/nvidia-docker#1269: the shim could not execute the configured OCI runtime
	// (docker-compose's "ERROR: for plex  Cannot start service plex: " prefix dropped). moby
	// records 127 for "executable file not found"; the runtime is missing on the node.
	msgDockerRuntimeMissing = `OCI runtime create failed: unable to retrieve OCI runtime error (open /run/containerd/io.containerd.runtime.v1.linux/moby/7a5db13e7762a66cc95bc070c9fb3be25c72ef6df42250d0abf433029c4f0286/log.json: no such file or directory): exec: \"nvidia-container-runtime\": executable file not found in $PATH: unknown`
	// containerd/containerd#11557: containerd 2.0 could not find runc for a user-namespaced pod
	// (kubelet event for the container, its "Error: " prefix dropped): StartError 128, node trouble.
	msgContainerdRuntimeMissing = `failed to create containerd task: failed to create shim task: OCI runtime create failed: unable to retrieve OCI runtime error (open /run/containerd/io.containerd.runtime.v2.task/k8s.io/emptydir-concealed-disk-over-sizelimit-quotas-false-container/log.json: no such file or directory): exec: \"runc\": executable file not found in $PATH`
	// containerd/containerd#6429: docker 20.10 with containerd 1.5, the command is not on $PATH;
	// `docker inspect` shows exit code 127 (docker CLI prefix and trailing period removed).
	msgDocker127NotFound = `OCI runtime create failed: container_linux.go:380: starting container process caused: exec: "toto": executable file not found in $PATH: unknown`
	// NVIDIA/gpu-operator#575: the shim could not execute the runtime binary at its configured
	// absolute path (kubelet event; "Failed to create pod sandbox: rpc error: code = Unknown desc
	// = " dropped).
	msgContainerdRuntimeForkExec = `failed to create containerd task: failed to create shim task: OCI runtime create failed: unable to retrieve OCI runtime error (open /run/containerd/io.containerd.runtime.v2.task/k8s.io/6d828237f3cb1abdde025fe9daeb3db486f6390b1d0cb07dd0e0a8b4ce450f9f/log.json: no such file or directory): fork/exec /opt/nvidia-runtime/toolkit/nvidia-container-runtime: no such file or directory: unknown`
)

func TestStartFailure(t *testing.T) {
	tests := []struct {
		name   string
		t      *corev1.ContainerStateTerminated
		ok     bool
		kind   Class
		rule   Rule
		reason string
	}{
		{"nil", nil, false, 0, 0, ""},
		{"ordinary crash", terminated("Error", 1, ""), false, 0, 0, ""},
		{"docker 128 runtime trouble", terminated("ContainerCannotRun", 128, msgRunc128EOF),
			true, Transient, RuleStartFailure128, "Failed to start on node, will retry (exit 128): OCI runtime create failed"},
		{"containerd 128 missing executable", terminated("StartError", 128, msgContainerdNotFound),
			true, Doomed, RuleStartFailureConfig, "Failed to start (exit 128): failed to create containerd task"},
		{"containerd 128 shim deadline", terminated("StartError", 128, msgShimDeadline),
			true, Transient, RuleStartFailure128, "context deadline exceeded"},
		{"127 missing executable", terminated("ContainerCannotRun", 127, msgDocker127),
			true, Doomed, RuleStartFailure, "Failed to start (exit 127): OCI runtime create failed"},
		{"126 without message", terminated("ContainerCannotRun", 126, ""), true, Doomed, RuleStartFailure, "Failed to start (exit 126)"},
		{"127 not a directory, two lines", terminated("ContainerCannotRun", 127, msgDockerENOTDIR), true, Doomed, RuleStartFailure,
			`stat /etc/service/emby/run/emby.sh: not a directory" : Are you trying to mount`},
		{"127 command not on $PATH", terminated("ContainerCannotRun", 127, msgDocker127NotFound), true, Doomed, RuleStartFailure,
			`Failed to start (exit 127): OCI runtime create failed`},
		// cri-dockerd: moby turns any "no such file or directory" into 127 and "permission denied"
		// into 126, so these are the node's trouble with the command's exit codes.
		{"127 cgroup ENOENT", terminated("ContainerCannotRun", 127, msgDockerCgroupENOENT), true, Transient, RuleStartFailure128,
			"Failed to start on node, will retry (exit 127): failed to create shim"},
		{"126 cgroup EACCES", terminated("ContainerCannotRun", 126, msgDockerCgroupEACCES), true, Transient, RuleStartFailure128,
			"Failed to start on node, will retry (exit 126): failed to create shim task"},
		{"127 OCI runtime missing", terminated("ContainerCannotRun", 127, msgDockerRuntimeMissing), true, Transient, RuleStartFailure128,
			`exec: \"nvidia-container-runtime\": executable file not found`},
		{"containerd 128 OCI runtime missing", terminated("StartError", 128, msgContainerdRuntimeMissing), true, Transient, RuleStartFailure128,
			"Failed to start on node, will retry (exit 128)"},
		{"other exit code", terminated("ContainerCannotRun", 137, msgDockerCgroupENOENT), true, Doomed, RuleStartFailure, "Failed to start (exit 137)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, ok := StartFailure(tt.t)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			if v.Class != tt.kind || v.Rule != tt.rule {
				t.Errorf("verdict = %s/%s, want %s/%s", v.Class, v.Rule, tt.kind, tt.rule)
			}
			if !strings.Contains(v.Reason, tt.reason) {
				t.Errorf("reason = %q, want it to contain %q", v.Reason, tt.reason)
			}
			if !v.HasExitCode || v.ExitCode != tt.t.ExitCode || v.Message != tt.t.Message {
				t.Errorf("exit code / message not carried: %+v", v)
			}
		})
	}
}

// TestCommandError pins the structural parse: the errno counts only right after the container's
// command or working directory in a runtime's own form, never inside a cgroup, mount or shim error.
// Every message is verbatim from the source named beside it or in the constants above.
func TestCommandError(t *testing.T) {
	tests := []struct {
		name string
		msg  string
		want bool
	}{
		{"runc 1.1 not on $PATH (containerd)", msgContainerdNotFound, true},
		{"runc 1.0 not on $PATH (docker)", msgDocker127NotFound, true},
		{"runc rc stat ENOENT, docker-quoted", msgDocker127, true},
		{"runc ENOTDIR with docker's mount hint", msgDockerENOTDIR, true},
		// opencontainers/runc#4713 (CRI-O, fixture rt-crio-runc-exec-not-found).
		{"runc 1.1 under CRI-O", `container create failed: runc create failed: unable to start container process: exec: "/cluster/kube-apiserver-operator": executable file not found in $PATH`, true},
		// containers/crun#1688 under CRI-O's prefix (fixture create-error-crio-executable).
		{"crun not on $PATH", "container create failed: executable file `/app/serve` not found in $PATH: No such file or directory", true},
		// woodpecker-ci/woodpecker#2510 (fixture rt-crio-crun-chdir-enoent).
		{"crun bare chdir", "container create failed: chdir: No such file or directory", true},
		{"runc cgroup ENOENT", msgDockerCgroupENOENT, false},
		{"runc cgroup EACCES", msgDockerCgroupEACCES, false},
		{"runc lost its child", msgRunc128EOF, false},
		{"shim deadline", msgShimDeadline, false},
		{"shim cannot exec the OCI runtime, docker", msgDockerRuntimeMissing, false},
		{"shim cannot exec the OCI runtime, containerd", msgContainerdRuntimeMissing, false},
		{"shim cannot fork/exec the OCI runtime", msgContainerdRuntimeForkExec, false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := commandError(tt.msg); got != tt.want {
				t.Errorf("commandError(%q) = %v, want %v", tt.msg, got, tt.want)
			}
		})
	}
	if n := testing.AllocsPerRun(100, func() { commandError(msgDockerRuntimeMissing) }); n != 0 {
		t.Errorf("commandError allocates %v times", n)
	}
}

func TestCacheSyncFailure(t *testing.T) {
	// The first three are the kubelet's texts as pkg/kubelet/util/manager/watch_based_manager.go
	// (v1.37 objectCache.Get) formats them: `failed to sync %s cache: %v` with wait.ErrWaitTimeout,
	// and apierrors.NewNotFound(corev1.Resource("secret"), name). The last two are truncations of
	// the first, not messages: the match must need the whole phrase.
	for msg, want := range map[string]bool{
		"failed to sync secret cache: timed out waiting for the condition":    true,
		"failed to sync configmap cache: timed out waiting for the condition": true,
		`secret "db" not found`: false,
		"failed to sync":        false,
		"cache failed to sync ": false,
	} {
		if got := cacheSyncFailure(msg); got != want {
			t.Errorf("cacheSyncFailure(%q) = %v, want %v", msg, got, want)
		}
	}
}

func TestContainsFold(t *testing.T) {
	for _, tt := range []struct {
		s, sub string
		want   bool
	}{
		{"registry/x:v1: NOT FOUND", "not found", true},
		{"code = NotFound desc", "not found", false}, // Krane's /not found/i needs the space
		{"No such file or directory", "no such file or directory", true},
		{"short", "longer than s", false},
		{"", "", true},
		{"", "a", false},
		{"aXb", "ab", false},
		{"aab", "ab", true}, // a false start does not skip the real match
	} {
		if got := ContainsFold(tt.s, tt.sub); got != tt.want {
			t.Errorf("ContainsFold(%q, %q) = %v, want %v", tt.s, tt.sub, got, tt.want)
		}
	}
}

func TestLowerASCII(t *testing.T) {
	if LowerASCII('Q') != 'q' || LowerASCII('q') != 'q' || LowerASCII('/') != '/' || LowerASCII(0xC3) != 0xC3 {
		t.Error("LowerASCII folds more or less than ASCII letters")
	}
}

func TestOneLine(t *testing.T) {
	for in, want := range map[string]string{
		"plain":              "plain",
		"  a\n\tb \r\nc\n  ": "a b c",
		"ends\n":             "ends",
	} {
		if got := oneLine(in); got != want {
			t.Errorf("oneLine(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRestartsDuration checks the RESTARTS column's age against apimachinery's HumanDuration
// boundaries, which kubectl uses.
func TestRestartsDuration(t *testing.T) {
	finished := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}}},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
			Name: "app", RestartCount: 7,
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(finished)}},
		}}}}
	for after, want := range map[time.Duration]string{
		90 * time.Second:              "7 (90s ago)",
		200 * time.Second:             "7 (3m20s ago)",
		45 * time.Minute:              "7 (45m ago)",
		5*time.Hour + 7*time.Minute:   "7 (5h7m ago)",
		3*24*time.Hour + time.Hour:    "7 (3d1h ago)",
		-10 * time.Second:             "7 (<invalid> ago)",
		400 * 24 * time.Hour:          "7 (400d ago)",
		-500 * time.Millisecond:       "7 (0s ago)",
		119*time.Second + 999999:      "7 (119s ago)",
		24*time.Hour + 30*time.Minute: "7 (24h ago)",
	} {
		if got := Restarts(pod, finished.Add(after)); got != want {
			t.Errorf("Restarts after %v = %q, want %q", after, got, want)
		}
	}
	// Without a last termination kubectl prints the bare count.
	pod.Status.ContainerStatuses[0].LastTerminationState = corev1.ContainerState{}
	if got := Restarts(pod, finished); got != "7" {
		t.Errorf("Restarts without lastState = %q, want 7", got)
	}
}

// TestStatusInitWalkStops checks printPod's early break: the first unfinished init container
// decides, later ones (even failing) are not looked at, and regular containers are skipped.
func TestStatusInitWalkStops(t *testing.T) {
	pod := &corev1.Pod{
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "a"}, {Name: "b"}, {Name: "c"}},
			Containers:     []corev1.Container{{Name: "app"}},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodPending,
			InitContainerStatuses: []corev1.ContainerStatus{
				{Name: "a", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"}}},
				{Name: "b", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}},
				{Name: "c", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}, RestartCount: 9},
			},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", RestartCount: 3,
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}},
		},
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	if got := Status(pod, now); got != "Init:1/3" {
		t.Errorf("Status = %q, want Init:1/3", got)
	}
	// Restarts count init containers walked so far (a, b), not c or app.
	if got := Restarts(pod, now); got != "0" {
		t.Errorf("Restarts = %q, want 0", got)
	}
}

func TestNilPod(t *testing.T) {
	if v := Pod(nil, testNow); !v.Class.Valid() || v.Reason == "" {
		t.Errorf("Pod(nil) = %+v", v)
	}
	if Status(nil, time.Time{}) != "" || Ready(nil) != "" || Restarts(nil, time.Time{}) != "" {
		t.Error("kubectl columns of a nil pod should be empty")
	}
	if got := Containers(nil, testNow, nil); len(got) != 0 {
		t.Errorf("Containers(nil) = %v", got)
	}
}

// TestHealthyPodAllocatesNothing holds the contract in Pod's doc comment: the model reclassifies
// on every update, so the common case must not allocate.
func TestHealthyPodAllocatesNothing(t *testing.T) {
	pod := fixturePod(t, "healthy-two-containers")
	if allocs := testing.AllocsPerRun(100, func() { _ = Pod(pod, testNow) }); allocs != 0 {
		t.Errorf("Pod(healthy) allocates %.0f times per call, want 0", allocs)
	}
}

func TestKindAndRuleNames(t *testing.T) {
	if Class(99).Valid() || Class(99).String() != "unknown" {
		t.Error("out-of-range Kind")
	}
	if Rule(200).String() != "rule(200)" || RuleStartFailure128.String() != "start-failure-128" {
		t.Error("Rule names")
	}
	if len(ruleNames) != int(lastRule)+1 {
		t.Errorf("ruleNames has %d names for %d rules", len(ruleNames), lastRule+1)
	}
}

func fixturePod(tb testing.TB, name string) *corev1.Pod {
	tb.Helper()
	for _, fx := range loadFixtures(tb) {
		if fx.pod.Name == name {
			return fx.pod
		}
	}
	tb.Fatalf("no fixture %s", name)
	return nil
}

// The detail pane labels an init container "(sidecar)" from IsSidecarContainer (the model's
// ContainerState.Sidecar), which IsSidecar answers by name: only a restartPolicy
// Always init container qualifies, never a plain init container or a regular container.
func TestIsSidecar(t *testing.T) {
	side := fixturePod(t, "sidecar-running")
	plain := fixturePod(t, "init-exitcode")
	for _, tc := range []struct {
		pod  *corev1.Pod
		name string
		want bool
	}{
		{side, "log-shipper", true},
		{side, "app", false},
		{plain, "migrate-db", false},
		{plain, "app", false},
		{side, "missing", false},
		{nil, "log-shipper", false},
	} {
		if got := IsSidecar(tc.pod, tc.name); got != tc.want {
			t.Errorf("IsSidecar(%v, %q) = %v, want %v", tc.pod != nil, tc.name, got, tc.want)
		}
		if tc.pod != nil {
			if got := IsSidecarContainer(initSpec(tc.pod, tc.name)); got != tc.want {
				t.Errorf("IsSidecarContainer(%q) = %v, want %v", tc.name, got, tc.want)
			}
		}
	}
}
