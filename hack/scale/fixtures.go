package scale

import (
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// The load takes every runtime message from classify's fixtures rather than writing its own: each
// fixture quotes an upstream source verbatim and names it in its cite annotation
// (classify/testdata/README.md), and a message made up to look plausible would not exercise the
// rules real clusters hit.
var (
	// startErrorFixtures are node-side exit-128 StartErrors, one per bad node (transient: the
	// runtime failed on that node, the image and command are fine).
	startErrorFixtures = []string{
		"rt-containerd-cgroup-memsw-enoent",        // kubernetes/kubernetes#119403
		"rt-containerd-prochooks-unable-to-freeze", // kubernetes/kubernetes#131087
		"rt-containerd-ttrpc-closed",               // containerd/containerd#11505
	}
	// crashFixtures give the last termination of crash-looping pods: a bad rollout's exit 1
	// (containerd's errorExitReason) and a scattered OOM kill (oomExitReason).
	crashFixtures = []string{"crashloop-exit-1", "crashloop-oomkilled"}
)

// citeAnnotation is where each fixture names its sources.
const citeAnnotation = "test.doomwatch.io/cite"

// Termination is one container termination taken from a fixture, with the fixture's citation.
type Termination struct {
	Fixture  string
	Reason   string
	Message  string
	ExitCode int32
	Cite     string
}

// Messages are the terminations the load writes.
type Messages struct {
	StartErrors []Termination // exit 128 StartError, for the bad nodes
	Crashes     []Termination // lastState of CrashLoopBackOff pods
}

// LoadMessages reads the fixtures from dir (classify/testdata).
func LoadMessages(dir string) (Messages, error) {
	var m Messages
	for _, name := range startErrorFixtures {
		t, err := readTermination(dir, name, false)
		if err != nil {
			return m, err
		}
		if t.ExitCode != 128 || t.Reason != "StartError" {
			return m, fmt.Errorf("fixture %s: want a StartError with exit 128, got %s %d", name, t.Reason, t.ExitCode)
		}
		m.StartErrors = append(m.StartErrors, t)
	}
	for _, name := range crashFixtures {
		t, err := readTermination(dir, name, true)
		if err != nil {
			return m, err
		}
		m.Crashes = append(m.Crashes, t)
	}
	return m, nil
}

// readTermination decodes fixture name and returns its first container's terminated state, or
// its last termination when last is set.
func readTermination(dir, name string, last bool) (Termination, error) {
	path := filepath.Join(dir, name+".yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		return Termination{}, fmt.Errorf("reading fixture: %w", err)
	}
	var pod corev1.Pod
	if err := yaml.UnmarshalStrict(b, &pod); err != nil {
		return Termination{}, fmt.Errorf("decoding %s: %w", path, err)
	}
	if len(pod.Status.ContainerStatuses) == 0 {
		return Termination{}, fmt.Errorf("fixture %s has no container status", name)
	}
	cs := pod.Status.ContainerStatuses[0]
	t := cs.State.Terminated
	if last {
		t = cs.LastTerminationState.Terminated
	}
	if t == nil {
		return Termination{}, fmt.Errorf("fixture %s: container %s has no termination to take", name, cs.Name)
	}
	cite := pod.Annotations[citeAnnotation]
	if cite == "" {
		return Termination{}, fmt.Errorf("fixture %s has no %s annotation", name, citeAnnotation)
	}
	return Termination{Fixture: name, Reason: t.Reason, Message: t.Message, ExitCode: t.ExitCode, Cite: cite}, nil
}
