package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The real Argo Rollouts controller (github.com/argoproj/argo-rollouts), built with its CRDs by
// hack/build-argo-rollouts.sh into the directory DOOMWATCH_ARGO_BIN names, runs beside a
// ControlPlane so that the tests see the Rollout statuses it writes rather than ones written by
// hand.

// ArgoBinary is the controller's binary in DOOMWATCH_ARGO_BIN.
const ArgoBinary = "rollouts-controller"

// ArgoCRDs are the CRD files beside it (the module's manifests/crds): the controller waits for
// the informers of all five to sync before it starts its workers.
var ArgoCRDs = []string{
	"rollout-crd.yaml", "analysis-run-crd.yaml", "analysis-template-crd.yaml",
	"cluster-analysis-template-crd.yaml", "experiment-crd.yaml",
}

// RolloutGVR is the resource of argoproj.io/v1alpha1 Rollouts.
var RolloutGVR = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "rollouts"}

// CheckArgo says why the controller cannot run from argoBin, or nil.
func CheckArgo(argoBin string) error {
	if argoBin == "" {
		return fmt.Errorf("DOOMWATCH_ARGO_BIN is not set (hack/build-argo-rollouts.sh prints it; `make test` sets it)")
	}
	for _, f := range append([]string{ArgoBinary}, ArgoCRDs...) {
		if _, err := os.Stat(filepath.Join(argoBin, f)); err != nil {
			return fmt.Errorf("%s not in DOOMWATCH_ARGO_BIN=%s (run hack/build-argo-rollouts.sh): %w", f, argoBin, err)
		}
	}
	return nil
}

// InstallArgoCRDs applies the Argo Rollouts CRDs from argoBin and waits until the API serves them.
func (cp *ControlPlane) InstallArgoCRDs(ctx context.Context, argoBin string) error {
	var names []string
	for _, f := range ArgoCRDs {
		b, err := os.ReadFile(filepath.Join(argoBin, f))
		if err != nil {
			return err
		}
		objs, err := parseObjects(f, b)
		if err != nil {
			return err
		}
		for _, o := range objs {
			// Server-side apply: the CRDs are over half a megabyte each, past the 256 KiB a
			// client-side apply's last-applied annotation may hold.
			if _, err := cp.Dynamic.Resource(crdGVR).Apply(ctx, o.GetName(), o, applyOptions); err != nil {
				return fmt.Errorf("applying %s: %w", f, err)
			}
			names = append(names, o.GetName())
		}
	}
	for _, name := range names {
		if err := cp.waitEstablished(ctx, name); err != nil {
			return err
		}
	}
	cp.Mapper.Reset()
	return nil
}

// StartArgoRollouts installs the Argo Rollouts CRDs and starts the controller from argoBin against
// the control plane, and waits until its workers run. Stop stops it with the rest.
//
// It watches every namespace (no --namespaced): the control plane is the test's own, so there is
// nothing to keep it out of, and --namespaced would tie it to the one namespace of its
// kubeconfig's context where the tests give each case, or scenario, a namespace of its own.
func (cp *ControlPlane) StartArgoRollouts(ctx context.Context, argoBin string) error {
	if err := CheckArgo(argoBin); err != nil {
		return err
	}
	if err := cp.InstallArgoCRDs(ctx, argoBin); err != nil {
		return err
	}
	// Its own system:masters identity, as the other components have, so that its requests are
	// told apart in the API server's log.
	kc, err := cp.component("argo-rollouts-controller")
	if err != nil {
		return err
	}
	logPath := cp.path("rollouts-controller.log")
	for range 3 {
		// The healthz and metrics servers listen on 0.0.0.0 (controller/controller.go listenAddr);
		// their defaults, 8080 and 8090, are taken on a shared machine as often as not.
		ports, err := freePorts(2)
		if err != nil {
			return err
		}
		// The log is appended to across attempts: only this attempt's lines count.
		var from int64
		if fi, err := os.Stat(logPath); err == nil {
			from = fi.Size()
		}
		p, err := startProcess("rollouts-controller", logPath, filepath.Join(argoBin, ArgoBinary),
			"--kubeconfig="+kc,
			"--leader-elect=false",
			fmt.Sprintf("--healthzPort=%d", ports[0]),
			fmt.Sprintf("--metricsPort=%d", ports[1]),
			"--logformat=text",
			// The default 40 QPS would do for a test's few Rollouts; more keeps its start, which
			// lists every kind it watches, quick on a busy API server.
			"--qps=100",
			"--burst=200",
		)
		if err != nil {
			return err
		}
		cp.mu.Lock()
		cp.argo = p
		cp.mu.Unlock()
		healthy := healthzHTTP(ports[0])
		// A port taken meanwhile does not stop the controller: its servers log the bind error and
		// it runs on (controller/controller.go Run), so the log is read for it.
		portTaken := func() bool { return strings.Contains(logSince(logPath, from), "address already in use") }
		err = waitReady(ctx, p, func(ctx context.Context) bool {
			// /healthz answers before the informers sync; the workers start after them, with
			// this line (controller/controller.go startLeading).
			return portTaken() || (strings.Contains(logSince(logPath, from), `msg="Started controller"`) && healthy(ctx))
		})
		if err != nil {
			return err
		}
		if !portTaken() {
			return nil
		}
		p.kill()
	}
	return fmt.Errorf("rollouts-controller: %w three times; log %s", errAddrInUse, logPath)
}

// healthzHTTP probes a plain-HTTP /healthz on a loopback port.
func healthzHTTP(port int) func(context.Context) bool {
	hc := &http.Client{Timeout: 2 * time.Second}
	return func(ctx context.Context) bool {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+loopback(port)+"/healthz", nil)
		resp, err := hc.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
}

// logSince returns a log file's text from byte offset from on.
func logSince(path string, from int64) string {
	b, err := os.ReadFile(path)
	if err != nil || int64(len(b)) < from {
		return ""
	}
	return string(b[from:])
}
