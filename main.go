// Command doomwatch is a terminal dashboard for Kubernetes rollouts that labels each pod transient
// or doomed. This file names the program and maps what its commands (package cmd) return to exit
// codes and one line on stderr, with the hint that fits.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"doomwatch/cmd"
	"doomwatch/kube"
	"doomwatch/report"
	"doomwatch/sanitize"
)

// Exit codes: 0 success, 1 an error while running (cluster unreachable, bad kubeconfig, not
// synced in time) or, for wait, a doomed or missing workload, 2 a usage error (unknown flag, bad
// value, conflicting flags), 70 wait's timeout.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
	// exitTimeout is wait's timeout, Krane's code for it (EX_SOFTWARE); exitInterrupted is the
	// shell's code for SIGINT.
	exitTimeout     = 70
	exitInterrupted = 130
)

// Hints are added once, here at the boundary, to errors about the cluster, each to the kind of
// error it can help with.
const (
	connectHint = "is the cluster reachable? check --context/--kubeconfig"
	authHint    = "check the credentials of this context, e.g. with kubectl auth whoami"
	rbacHint    = "see the README's RBAC section for what doomwatch needs"
)

// version is set at build time with -ldflags "-X main.version=…"; otherwise the module version.
var version = ""

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole program behind main, returning the exit code; tests call it directly.
func run(args []string, stdout, stderr io.Writer) int {
	profileOnSignal()
	err := cmd.Execute(&cmd.Program{Name: progName(), Version: buildVersion(), Stdout: stdout, Stderr: stderr,
		Stdin: os.Stdin, ExitCode: exitCode}, args)
	if msg := message(err); msg != "" {
		fmt.Fprintln(stderr, "doomwatch: "+msg)
	}
	return exitCode(err)
}

// exitCode is the exit code of an error cmd.Execute returned.
func exitCode(err error) int {
	var usage *cmd.UsageError
	var gate *cmd.GateError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &usage):
		return exitUsage
	case errors.Is(err, cmd.ErrInterrupted):
		return exitInterrupted
	case errors.Is(err, cmd.ErrTimedOut):
		return exitTimeout
	case errors.As(err, &gate) && gate.Verdict == report.Timeout:
		return exitTimeout
	}
	return exitError
}

// message is the one line said about err, sanitised, with the hint that fits it; "" for none
// (success, or a gate's verdict, which is printed already).
func message(err error) string {
	var usage *cmd.UsageError
	var gate *cmd.GateError
	var lines *cmd.LinesError
	switch {
	case err == nil, errors.As(err, &gate):
		return ""
	case errors.As(err, &lines):
		out := make([]string, len(lines.Lines))
		for i, l := range lines.Lines {
			out[i] = sanitize.Text(l)
		}
		return strings.Join(out, "\n"+"doomwatch: ")
	case errors.As(err, &usage):
		// The help of the command that was run: the root's does not document a subcommand's flags.
		help := progName() + " --help"
		if usage.Command != "" {
			help = progName() + " " + usage.Command + " --help"
		}
		return fmt.Sprintf("%s (see %s)", sanitize.Text(err.Error()), help)
	}
	msg := sanitize.Text(err.Error())
	if hint := clusterHint(err); hint != "" {
		msg += " (" + hint + ")"
	}
	return msg
}

// clusterHint is the hint for an error from a real cluster (cmd.ClusterError; none for the demo):
// the connection hint only when the server could not be reached or the informers did not sync in
// time, not when it answered with a refusal (credentials, RBAC) or the kubeconfig was at fault
// (its message says what to fix).
func clusterHint(err error) string {
	var cluster *cmd.ClusterError
	switch {
	case !errors.As(err, &cluster):
		return ""
	case errors.Is(err, kube.ErrUnreachable), errors.Is(err, kube.ErrNotSynced):
		return connectHint
	case errors.Is(err, kube.ErrUnauthorized):
		return authHint
	case errors.Is(err, kube.ErrForbidden):
		return rbacHint
	}
	return ""
}

// progName is how the user ran doomwatch: "kubectl doomwatch" when kubectl runs it as the plugin
// kubectl-doomwatch (kubectl passes the plugin's path as argv[0]), otherwise "doomwatch".
func progName() string {
	base := filepath.Base(os.Args[0])
	base = strings.TrimSuffix(base, ".exe")
	if rest, ok := strings.CutPrefix(base, "kubectl-"); ok && rest != "" {
		// kubectl maps dashes in a plugin's file name to spaces and underscores to dashes.
		return "kubectl " + strings.ReplaceAll(strings.ReplaceAll(rest, "-", " "), "_", "-")
	}
	return "doomwatch"
}

func buildVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
