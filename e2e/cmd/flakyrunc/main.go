// Command flakyrunc is the runtime binary of the real node's "flaky" runtime handler: containerd's
// runc shim calls it as it calls runc, and it passes every call on to runc unchanged, except that
// the first N creates of a container whose environment sets DOOMWATCH_FLAKY_FAILS=N run with a
// bundle runc cannot start on this machine.
// The failure is runc's own: the bundle asks for an OOM score adjustment below the runtime's, which
// a VM's root may not set (the reason containerd's CRI plugin has restrict_oom_score_adj), so runc's
// init fails the way it does on a node whose kernel refuses a start. It is how the suite produces a
// transient start failure (exit code 128) with the messages a real runtime writes, then a good start.
//
// Its settings are in the JSON file beside it (flakyrunc.json): {"runc": path, "stateDir": dir};
// stateDir counts the creates per container.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

type settings struct {
	Runc     string `json:"runc"`
	StateDir string `json:"stateDir"`
}

// The annotations containerd's CRI plugin puts in every container's OCI spec
// (containerd/containerd pkg/cri/annotations).
const (
	annContainerType    = "io.kubernetes.cri.container-type"
	annSandboxNamespace = "io.kubernetes.cri.sandbox-namespace"
	annSandboxName      = "io.kubernetes.cri.sandbox-name"
	annContainerName    = "io.kubernetes.cri.container-name"
)

func main() {
	self, err := os.Executable()
	if err != nil {
		fail(err)
	}
	raw, err := os.ReadFile(self + ".json")
	if err != nil {
		fail(err)
	}
	var s settings
	if err := json.Unmarshal(raw, &s); err != nil {
		fail(fmt.Errorf("%s.json: %w", self, err))
	}
	if bundle, ok := creating(os.Args[1:]); ok {
		if err := maybeBreak(s, bundle); err != nil {
			fail(err)
		}
	}
	args := append([]string{s.Runc}, os.Args[1:]...)
	fail(syscall.Exec(s.Runc, args, os.Environ()))
}

// creating returns the bundle of a `runc [global flags] create --bundle DIR ... ID` call.
func creating(args []string) (string, bool) {
	create := false
	for i, a := range args {
		switch {
		case a == "create":
			create = true
		case create && (a == "--bundle" || a == "-b") && i+1 < len(args):
			return args[i+1], true
		}
	}
	return "", false
}

// FailsEnv is the container environment variable that asks for failed creates.
const FailsEnv = "DOOMWATCH_FLAKY_FAILS"

// maybeBreak rewrites the bundle's config.json for the first creates of a container that asks.
func maybeBreak(s settings, bundle string) error {
	path := filepath.Join(bundle, "config.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var spec map[string]any
	if err := json.Unmarshal(raw, &spec); err != nil {
		return err
	}
	ann, _ := spec["annotations"].(map[string]any)
	if ann[annContainerType] != "container" {
		return nil
	}
	proc, _ := spec["process"].(map[string]any)
	if proc == nil {
		return nil
	}
	fails := 0
	env, _ := proc["env"].([]any)
	for _, e := range env {
		if s, ok := e.(string); ok && strings.HasPrefix(s, FailsEnv+"=") {
			fails, _ = strconv.Atoi(strings.TrimPrefix(s, FailsEnv+"="))
		}
	}
	key := fmt.Sprintf("%v_%v_%v", ann[annSandboxNamespace], ann[annSandboxName], ann[annContainerName])
	counter := filepath.Join(s.StateDir, key)
	n := 0
	if b, err := os.ReadFile(counter); err == nil {
		n, _ = strconv.Atoi(string(b))
	}
	if n >= fails {
		return nil
	}
	if err := os.WriteFile(counter, []byte(strconv.Itoa(n+1)), 0o644); err != nil {
		return err
	}
	proc["oomScoreAdj"] = -1000
	out, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o644)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "flakyrunc:", err)
	os.Exit(1)
}
