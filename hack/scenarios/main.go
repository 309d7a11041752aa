// Command scenarios scores doomwatch against the real Kubernetes controllers: it starts the e2e
// control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok's
// simulated nodes, all on loopback; the Argo Rollouts controller too when a scenario's target is a
// rollout), plays the scenarios of e2e/scenarios with doomwatch's verdict
// stream, `doomwatch wait` and `kubectl rollout status` watching each rollout, and prints the
// confusion matrix, the times and the targets as markdown on stdout (and to --out). Progress goes
// to stderr. `make scenarios` runs it; ACCURACY.md holds a run.
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"doomwatch/e2e"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "scenarios:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		k8sBin, argoBin, which, out, doomwatch, streams string
		capacity                                        int
		noKubectl, keep                                 bool
	)
	pflag.StringVar(&k8sBin, "k8s-bin", os.Getenv("DOOMWATCH_K8S_BIN"), "directory with the control plane's binaries and kubectl (hack/build-k8s.sh)")
	pflag.StringVar(&argoBin, "argo-bin", os.Getenv("DOOMWATCH_ARGO_BIN"), "directory with the Argo Rollouts controller and CRDs (hack/build-argo-rollouts.sh), for the scenarios whose target is a rollout")
	pflag.StringVar(&which, "scenarios", "all", `scenarios to run: "all", "quick", or names and globs, comma-separated`)
	pflag.StringVar(&out, "out", "", "also write the report to this file")
	pflag.StringVar(&doomwatch, "doomwatch", "", "doomwatch binary (default: go build the module in the current directory)")
	pflag.IntVar(&capacity, "capacity", 700, "how much runs at once: the sum of the running scenarios' pods (twice their replicas) and nodes")
	pflag.BoolVar(&noKubectl, "no-kubectl", false, "skip kubectl rollout status (which waits out a doomed Deployment's 10-minute progress deadline)")
	pflag.BoolVar(&keep, "keep", false, "keep the servers' files and logs, and the verdict streams")
	pflag.StringVar(&streams, "streams", "", "keep each scenario's verdict stream in this directory as NAME.jsonl (default: with the servers' files)")
	pflag.Parse()
	if k8sBin == "" {
		return fmt.Errorf("--k8s-bin (or DOOMWATCH_K8S_BIN) names hack/build-k8s.sh's directory")
	}
	all, err := e2e.LoadScenarios()
	if err != nil {
		return err
	}
	scenarios, err := e2e.SelectScenarios(all, which)
	if err != nil {
		return err
	}
	argo := false
	for _, s := range scenarios {
		argo = argo || s.NeedsArgo()
	}
	if argo {
		if err := e2e.CheckArgo(argoBin); err != nil {
			return fmt.Errorf("the Argo Rollouts scenarios need the controller (--argo-bin): %w", err)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	dir, err := os.MkdirTemp("", "doomwatch-scenarios-")
	if err != nil {
		return err
	}
	if doomwatch == "" {
		doomwatch = filepath.Join(dir, "doomwatch")
		build := exec.Command("go", "build", "-o", doomwatch, ".")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("building doomwatch: %w", err)
		}
	}
	if streams == "" {
		streams = filepath.Join(dir, "streams")
	}
	if err := os.MkdirAll(streams, 0o755); err != nil {
		return err
	}
	start := time.Now()
	cp, err := e2e.StartControlPlane(ctx, k8sBin, dir, e2e.ControlPlaneOptions{})
	if err != nil {
		return fmt.Errorf("starting the control plane (files in %s): %w", dir, err)
	}
	defer func() {
		cp.Stop()
		if !keep {
			os.RemoveAll(dir)
		}
	}()
	logf := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Since(start).Round(time.Second)}, args...)...)
	}
	if argo {
		if err := cp.StartArgoRollouts(ctx, argoBin); err != nil {
			return fmt.Errorf("starting the Argo Rollouts controller: %w", err)
		}
		logf("Argo Rollouts controller ready")
	}
	logf("control plane ready at %s (kubeconfig %s); %d scenarios", cp.Host, cp.AdminKubeconfig, len(scenarios))
	results := e2e.RunScenarios(ctx, cp, scenarios, e2e.RunConfig{
		Doomwatch: doomwatch, Kubectl: filepath.Join(k8sBin, "kubectl"),
		NoKubectl: noKubectl, Capacity: capacity, Log: logf, StreamDir: streams,
	})
	logf("all scenarios done")
	report := func(f *os.File) {
		fmt.Fprintf(f, "`make scenarios`, %s: %d scenarios in %s, %d kwok nodes in all (Kubernetes v1.37.2, kwok v0.8.0).\n\n",
			time.Now().UTC().Format(time.RFC1123), len(results), time.Since(start).Round(time.Second), countNodes(scenarios))
		e2e.WriteReport(f, results)
	}
	report(os.Stdout)
	if out != "" {
		f, err := os.Create(out)
		if err != nil {
			return err
		}
		report(f)
		if err := f.Close(); err != nil {
			return err
		}
	}
	if keep {
		fmt.Fprintf(os.Stderr, "files kept in %s\n", dir)
	}
	return nil
}

func countNodes(ss []*e2e.Scenario) int {
	n := 0
	for _, s := range ss {
		n += s.NodeCount()
	}
	return n
}
