package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestDemoOnceJSON runs the whole --once path over the demo cluster: flags → demo source → informers
// → model → JSON on stdout.
func TestDemoOnceJSON(t *testing.T) {
	code, stdout, stderr := runCLI("--demo", "--once", "--at", "90s", "-o", "json")
	if code != exitOK {
		t.Fatalf("exit code %d, stderr %q", code, stderr)
	}
	if stderr != "" {
		t.Errorf("stderr = %q, want nothing (logs never reach the terminal)", stderr)
	}
	var snap struct {
		Context string `json:"context"`
		Summary struct {
			Pods int `json:"pods"`
		} `json:"summary"`
		Nodes []struct {
			Name string `json:"name"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(stdout), &snap); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
	}
	if snap.Context != "demo" || snap.Summary.Pods == 0 || len(snap.Nodes) == 0 {
		t.Errorf("snapshot context %q, %d pods, %d nodes: want the synced demo cluster", snap.Context, snap.Summary.Pods, len(snap.Nodes))
	}
}

// TestDemoOnceTellsTheStory: --demo --once without --at shows the demo at 90s, with its doomed
// rollouts and its suspect node, not its first moment, when every pod is still healthy; --at 0s
// still shows that first moment.
func TestDemoOnceTellsTheStory(t *testing.T) {
	once := func(args ...string) story {
		t.Helper()
		code, stdout, stderr := runCLI(append([]string{"--demo", "--once", "-o", "json"}, args...)...)
		if code != exitOK {
			t.Fatalf("--demo --once %v: exit code %d, stderr %q", args, code, stderr)
		}
		return storyOf(t, stdout)
	}
	told, at90 := once(), once("--at", "90s")
	for _, want := range []string{"shop/Deployment/payments doomed", "search/Deployment/search doomed"} {
		if !slices.Contains(told.rollouts, want) {
			t.Errorf("--demo --once: rollouts %q, want %q", told.rollouts, want)
		}
	}
	if !slices.Equal(told.suspects, []string{"node-3"}) {
		t.Errorf("--demo --once: suspect nodes %q, want node-3", told.suspects)
	}
	if !slices.Equal(told.pods, at90.pods) || !slices.Equal(told.rollouts, at90.rollouts) {
		t.Errorf("--demo --once differs from --demo --once --at 90s:\n%q\n%q", told.rollouts, at90.rollouts)
	}
	start := once("--at", "0s")
	if len(start.suspects) > 0 || slices.ContainsFunc(start.rollouts, func(r string) bool { return strings.HasSuffix(r, " doomed") }) {
		t.Errorf("--demo --once --at 0s: rollouts %q, suspects %q; want the story's start, nothing doomed yet", start.rollouts, start.suspects)
	}
	code, stdout, _ := runCLI("--help")
	if code != exitOK || !strings.Contains(stdout, "--once defaults to 90s") {
		t.Errorf("--help does not say what --demo --once shows without --at")
	}
}

// TestOnceRequestTimeoutIsOneBound: --request-timeout bounds the connection check and --once's
// wait for the informers together. The slow server answers the check late (after 3/4 of the
// timeout) and then never answers the informers' lists; the silent one accepts TCP and says
// nothing. Both must exit 1 within the timeout plus a little, not the check's time plus another
// full timeout to sync.
func TestOnceRequestTimeoutIsOneBound(t *testing.T) {
	const timeout = 2 * time.Second
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("limit") != "1" { // an informer: never answer
			<-r.Context().Done()
			return
		}
		select { // the connection check: answer, late
		case <-time.After(timeout * 3 / 4):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[]}`)
	}))
	t.Cleanup(slow.Close)

	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold); silent.Close() })
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			go func() { <-hold; c.Close() }()
		}
	}()

	for _, tc := range []struct {
		name, server, want string
	}{
		{"slow check, informers never sync", slow.URL, "timed out waiting for the informers to sync"},
		{"silent server", "https://" + silent.Addr().String(), "did not answer within 2s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kubeconfig := writeKubeconfig(t, tc.server)
			type result struct {
				code           int
				stdout, stderr string
			}
			done := make(chan result, 1)
			go func() {
				code, stdout, stderr := runCLI("--once", "--kubeconfig", kubeconfig, "--request-timeout", timeout.String())
				done <- result{code, stdout, stderr}
			}()
			// The slack covers start-up and shutdown; a second full timeout for the sync would not fit.
			bound, cancel := context.WithTimeout(context.Background(), timeout+timeout/2)
			defer cancel()
			select {
			case <-bound.Done():
				t.Fatalf("doomwatch --once still running %s after it started, with --request-timeout %s", timeout+timeout/2, timeout)
			case r := <-done:
				if r.code != exitError {
					t.Errorf("exit code %d, want %d", r.code, exitError)
				}
				line := oneErrorLine(t, r.stderr)
				if !strings.Contains(line, tc.want) || !strings.Contains(line, connectHint) {
					t.Errorf("stderr = %q, want %q and the hint", line, tc.want)
				}
				if r.stdout != "" {
					t.Errorf("stdout = %q, want nothing", r.stdout)
				}
			}
		})
	}
}

// TestDemoFleetOnceTable: with several contexts the table has a CONTEXT column, how each cluster
// answered, and what is true across clusters: the workloads whose verdict differs between them,
// and how many fare the same.
func TestDemoFleetOnceTable(t *testing.T) {
	code, stdout, stderr := runCLI("--demo", "--fleet", "--once", "--at", "90s")
	if code != exitOK {
		t.Fatalf("exit code %d, stderr %q", code, stderr)
	}
	for _, want := range []string{
		"CONTEXT   NAMESPACE     NAME ",
		"\nCLUSTERS\nCONTEXT   SERVER   SYNCED   FORBIDDEN   ERROR\ndemo-eu   <none>   true     <none>      <none>\n",
		"\nACROSS CLUSTERS\nthe 2 suspect nodes of 2 clusters (demo-eu, demo-us) both run containerd://2.2.0 (0 of 13 others do)\n",
		// What differs between the clusters is listed; what is the same in each is counted.
		"\nshop/Deployment/payments: doomed in demo-eu, demo-ap; complete in demo-us\n" +
			"11 workloads the same everywhere they run: 1 doomed, 2 progressing, 8 complete\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the table lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "search/Deployment/search: doomed in") || strings.Contains(stdout, "shop/Deployment/cart: complete in") {
		t.Errorf("the table lists workloads that fare the same in every cluster one by one:\n%s", stdout)
	}
}
