package main

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jstemmer/go-junit-report/v2/junit"

	"doomwatch/report"
)

// TestHelpReadsAsThePlugin: run as kubectl-doomwatch (how kubectl runs a plugin), the help names
// the command "kubectl doomwatch"; otherwise "doomwatch". wait has its own help.
func TestHelpReadsAsThePlugin(t *testing.T) {
	saved := os.Args[0]
	t.Cleanup(func() { os.Args[0] = saved })
	for _, tc := range []struct{ argv0, want, notWant string }{
		{"/usr/local/bin/kubectl-doomwatch", "  kubectl doomwatch wait deployment/NAME", "  doomwatch "},
		{"/home/me/go/bin/doomwatch", "  doomwatch wait deployment/NAME", "kubectl doomwatch"},
	} {
		os.Args[0] = tc.argv0
		for _, args := range [][]string{{"--help"}, {"wait", "--help"}} {
			code, stdout, _ := runCLI(args...)
			if code != exitOK || !strings.Contains(stdout, tc.want) || strings.Contains(stdout, tc.notWant) {
				t.Errorf("%s %v: exit %d, help\n%s\nwant %q and not %q", tc.argv0, args, code, stdout, tc.want, tc.notWant)
			}
		}
	}
	os.Args[0] = "doomwatch"
	_, stdout, _ := runCLI("wait", "--help")
	for _, flag := range []string{"--timeout", "--stable", "-l, --selector", "-o, --output", "-n, --namespace", "Exit codes: 0",
		"[-o text|json|junit]", "Verdict format: text, json or junit", "GITHUB_ACTIONS=true"} {
		if !strings.Contains(stdout, flag) {
			t.Errorf("wait --help does not mention %q", flag)
		}
	}
	for _, flag := range []string{"      --once ", "--all-namespaces", "      --at "} {
		if strings.Contains(stdout, flag) {
			t.Errorf("wait --help mentions %q, which wait does not take", flag)
		}
	}
}

// TestWaitOnTheDemo runs the gate on the demo cluster, sped up: the same code as against a real
// cluster from the informers on. The demo's payments rollout pulls an image tag that does not
// exist; checkout, cart and frontend complete while checkout's pods fail with exit 128 on node-3,
// which takes longer than 2s of real time at the demo's own speed.
func TestWaitOnTheDemo(t *testing.T) {
	t.Run("doomed", func(t *testing.T) {
		code, stdout, stderr := runCLI("wait", "--demo", "--speed", "100", "-n", "shop", "deployment/payments", "--timeout", "60s")
		if code != exitError {
			t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		for _, want := range []string{
			"deployment/payments is doomed: 2/2 new pods doomed: Image not found: registry.example.com/payments:v2.4.1-typo\n",
			"/payments: Image not found: registry.example.com/payments:v2.4.1-typo\n",
		} {
			if !strings.Contains(stdout, want) {
				t.Errorf("stdout does not say %q:\n%s", want, stdout)
			}
		}
		if strings.Contains(stdout, "no log") {
			t.Errorf("a container that never ran gets a log:\n%s", stdout)
		}
	})
	t.Run("complete with warnings", func(t *testing.T) {
		code, stdout, stderr := runCLI("wait", "--demo", "--speed", "30", "-n", "shop", "deploy", "checkout", "cart", "frontend", "--timeout", "60s")
		if code != exitOK {
			t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		for _, want := range []string{
			`deployment/checkout: deployment "checkout" successfully rolled out`,
			"warning: node-3 is suspect: ",
			"warning: deployment/checkout: 3 pods failed to start with exit 128 on node node-3 in the last 15m (transient",
		} {
			if !strings.Contains(stdout, want) {
				t.Errorf("stdout does not say %q:\n%s", want, stdout)
			}
		}
		if !regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d deployment/checkout: complete: `).MatchString(stderr) {
			t.Errorf("stderr has no plain progress line for checkout's completion:\n%s", stderr)
		}
	})
	t.Run("selector", func(t *testing.T) {
		code, stdout, stderr := runCLI("wait", "--demo", "-n", "shop", "-l", "app.kubernetes.io/name in (cart,frontend)")
		want := `deployment/cart: deployment "cart" successfully rolled out` + "\n" +
			`deployment/frontend: deployment "frontend" successfully rolled out` + "\n"
		if code != exitOK || stdout != want {
			t.Errorf("exit %d, stdout\n%s\nwant\n%s\nstderr %s", code, stdout, want, stderr)
		}
		code, _, stderr = runCLI("wait", "--demo", "-n", "shop", "-l", "app.kubernetes.io/name=nothing")
		if code != exitError || stderr != "doomwatch: no deployments in namespace shop match -l app.kubernetes.io/name=nothing\n" {
			t.Errorf("no match: exit %d, stderr %q", code, stderr)
		}
	})
	t.Run("not found", func(t *testing.T) {
		start := time.Now()
		code, stdout, stderr := runCLI("wait", "--demo", "-n", "shop", "deployment/paymnets", "sts/redis")
		if code != exitError || stdout != "" || time.Since(start) > 10*time.Second {
			t.Errorf("exit %d after %s, stdout %q", code, time.Since(start), stdout)
		}
		if want := "doomwatch: deployment/paymnets not found in namespace shop\n"; stderr != want {
			t.Errorf("stderr = %q, want %q", stderr, want)
		}
	})
	t.Run("job", func(t *testing.T) {
		// The demo's schema migration runs at 1s and completes about 10s later: the Job
		// controller's Complete condition passes the gate.
		code, stdout, stderr := runCLI("wait", "--demo", "--speed", "100", "-n", "shop", "jobs.batch/db-migrate-v2", "--timeout", "60s")
		if code != exitOK || stdout != "job/db-migrate-v2: job \"db-migrate-v2\" completed: 1 succeeded\n" {
			t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		start := time.Now()
		code, stdout, _ := runCLI("wait", "--demo", "-n", "shop", "deployment/checkout", "--timeout", "2s")
		took := time.Since(start)
		if code != exitTimeout || took < 2*time.Second || took > 8*time.Second {
			t.Errorf("exit %d after %s, want 70 after 2s", code, took)
		}
		for _, want := range []string{"timed out after 2s; still waiting for:\n", `deployment/checkout: Waiting for deployment "checkout" rollout to finish`,
			" (e.g. checkout-"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("stdout does not say %q:\n%s", want, stdout)
			}
		}
	})
	t.Run("stable", func(t *testing.T) {
		// A minute of the demo's clock at --speed 100: cart, complete from the start, must hold for
		// it before the gate passes, and the progress says it is soaking.
		code, stdout, stderr := runCLI("wait", "--demo", "--speed", "100", "-n", "shop", "deploy/cart", "--stable", "60s", "-o", "json")
		if code != exitOK {
			t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		var rep report.Gate
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatalf("decoding %s: %v", stdout, err)
		}
		if rep.Stable != "1m" || len(rep.Workloads) != 1 || !strings.HasSuffix(rep.Workloads[0].Reason, "; stable for 1m") {
			t.Errorf("stable %q, workloads %+v", rep.Stable, rep.Workloads)
		}
		if !regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d deployment/cart: complete, stable for \d+s of 1m$`).MatchString(stderr) {
			t.Errorf("stderr does not say cart is soaking:\n%s", stderr)
		}
	})
	t.Run("json", func(t *testing.T) {
		code, stdout, _ := runCLI("wait", "--demo", "--speed", "100", "-n", "shop", "deployment/payments", "-o", "json")
		if code != exitError {
			t.Fatalf("exit %d", code)
		}
		var rep report.Gate
		dec := json.NewDecoder(strings.NewReader(stdout))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rep); err != nil {
			t.Fatalf("decoding %s: %v", stdout, err)
		}
		if rep.Verdict != "doomed" || rep.ExitCode != 1 || len(rep.Workloads) != 1 {
			t.Fatalf("report %+v", rep)
		}
		w := rep.Workloads[0]
		if w.Kind != "Deployment" || w.Namespace != "shop" || w.Name != "payments" || w.Verdict != "doomed" || len(w.Doomed) != 2 ||
			w.Doomed[0].Container != "payments" || w.Doomed[0].ExitCode != nil || w.Doomed[0].Log == nil {
			t.Errorf("workload %+v", w)
		}
		// Every list is [] rather than null, as the README's schema says.
		for _, key := range []string{`"warnings": [`, `"suspectNodes": [`, `"pending": [`, `"log": [`} {
			if !strings.Contains(stdout, key) {
				t.Errorf("the document has no %s", key)
			}
		}
	})
}

// TestWaitJUnit: -o junit is the verdict as a JUnit report a CI reads, the doomed workload a
// failure with its reason; under GitHub Actions the failure is an annotation on stderr too. A
// workload not found still gets its report, beside the error line.
func TestWaitJUnit(t *testing.T) {
	t.Setenv("GITHUB_ACTIONS", "true")
	t.Run("doomed", func(t *testing.T) {
		code, stdout, stderr := runCLI("wait", "--demo", "--speed", "100", "-n", "shop", "deployment/payments", "-o", "junit", "--timeout", "60s")
		if code != exitError {
			t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		var suites junit.Testsuites
		if err := xml.Unmarshal([]byte(stdout), &suites); err != nil {
			t.Fatalf("parsing %s: %v", stdout, err)
		}
		const reason = "2/2 new pods doomed: Image not found: registry.example.com/payments:v2.4.1-typo"
		if len(suites.Suites) != 1 || len(suites.Suites[0].Testcases) != 1 || suites.Failures != 1 {
			t.Fatalf("want one suite with one failed test:\n%s", stdout)
		}
		s := suites.Suites[0]
		tc := s.Testcases[0]
		if s.Name != "doomwatch wait" || s.Timestamp == "" || s.Time == "" || s.Time == "0.000" ||
			tc.Name != "deployment/payments" || tc.Classname != "shop" || tc.Failure == nil ||
			tc.Failure.Message != reason || !strings.Contains(tc.Failure.Data, "/payments: Image not found: registry.example.com/payments:v2.4.1-typo\n  node node-") {
			t.Errorf("suite %q at %q for %q, testcase %+v:\n%s", s.Name, s.Timestamp, s.Time, tc, stdout)
		}
		if want := "\n::error title=doomwatch%3A deployment/payments doomed::" + reason + "%0A"; !strings.Contains(stderr, want) {
			t.Errorf("stderr has no %q:\n%s", want, stderr)
		}
	})
	t.Run("not found", func(t *testing.T) {
		code, stdout, stderr := runCLI("wait", "--demo", "-n", "shop", "deployment/paymnets", "-o", "junit")
		if code != exitError {
			t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		var suites junit.Testsuites
		if err := xml.Unmarshal([]byte(stdout), &suites); err != nil {
			t.Fatalf("parsing %s: %v", stdout, err)
		}
		if suites.Failures != 1 || suites.Suites[0].Testcases[0].Failure.Type != "missing" {
			t.Errorf("want a failure: missing\n%s", stdout)
		}
		want := "doomwatch: deployment/paymnets not found in namespace shop\n"
		if !strings.HasPrefix(stderr, "::error title=doomwatch%3A deployment/paymnets missing::deployment/paymnets not found in namespace shop\n") ||
			!strings.HasSuffix(stderr, want) {
			t.Errorf("stderr %q, want the annotation and then %q", stderr, want)
		}
	})
}

// TestWaitAcrossTheDemoFleet is the multi-cluster gate on the three demo clusters: payments' bad
// image is rolled out in demo-eu and demo-ap, not in demo-us; cart completes in all three.
func TestWaitAcrossTheDemoFleet(t *testing.T) {
	t.Run("doomed in some", func(t *testing.T) {
		code, stdout, stderr := runCLI("wait", "--demo", "--fleet", "--speed", "100", "-n", "shop", "deployment/payments", "--timeout", "60s")
		if code != exitError {
			t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		if !strings.Contains(stdout, "deployment/payments in demo-eu is doomed: 2/2 new pods doomed: Image not found: registry.example.com/payments:v2.4.1-typo\n") &&
			!strings.Contains(stdout, "deployment/payments in demo-ap is doomed: 2/2 new pods doomed: Image not found: registry.example.com/payments:v2.4.1-typo\n") {
			t.Errorf("stdout does not name a doomed context:\n%s", stdout)
		}
		if strings.Contains(stdout, "deployment/payments in demo-us is doomed") {
			t.Errorf("demo-us's payments is called doomed:\n%s", stdout)
		}
	})
	t.Run("complete everywhere, json", func(t *testing.T) {
		code, stdout, stderr := runCLI("wait", "--demo", "--fleet", "--speed", "100", "-n", "shop", "deployment/cart", "--timeout", "60s", "-o", "json")
		if code != exitOK {
			t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		var rep report.Gate
		dec := json.NewDecoder(strings.NewReader(stdout))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rep); err != nil {
			t.Fatalf("decoding %s: %v", stdout, err)
		}
		var contexts []string
		for _, c := range rep.Clusters {
			if c.Verdict != "complete" {
				t.Errorf("cluster %+v", c)
			}
			contexts = append(contexts, c.Context)
		}
		if strings.Join(contexts, ",") != "demo-eu,demo-us,demo-ap" || len(rep.Workloads) != 3 {
			t.Fatalf("clusters %v, %d workloads; want the three demo clusters, one cart each", contexts, len(rep.Workloads))
		}
		for i, w := range rep.Workloads {
			if w.Context != contexts[i] || w.Name != "cart" || w.Verdict != "complete" {
				t.Errorf("workload %d: %+v", i, w)
			}
		}
	})
}

// TestWaitManifestErrors: wait -f reads its manifests before it connects, so a set that cannot
// be read fails at once, a line for each problem and exit 1; the flags that cannot go with -f are
// usage errors (exit 2). No cluster is reached: the kubeconfig names none.
func TestWaitManifestErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		t.Helper()
		p := dir + "/" + name
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("a.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: shop\n")
	noVersion := write("b.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n---\nkind: Deployment\nmetadata:\n  name: x\n")
	broken := write("c.json", `{"apiVersion": "v1", "kind": `)
	t.Setenv("KUBECONFIG", dir+"/no-such-kubeconfig")
	for _, tc := range []struct {
		name  string
		args  []string
		code  int
		lines []string
	}{
		{"two bad files", []string{"wait", "-f", noVersion, "-f", broken}, exitError, []string{
			"doomwatch: " + noVersion + ": document 2: Deployment x: apiVersion is not set",
			"doomwatch: " + broken + ": document 1: unexpected EOF",
		}},
		{"namespace against -n", []string{"wait", "-f", good, "-n", "other"}, exitError, []string{
			"doomwatch: " + good + ": document 1: the namespace from the provided object \"shop\" does not match the namespace \"other\". You must pass '--namespace=shop' to perform this operation.",
		}},
		{"no such path", []string{"wait", "-f", dir + "/nope.yaml"}, exitError, nil},
		{"-f and a name", []string{"wait", "-f", good, "deploy/web"}, exitUsage, []string{
			"doomwatch: -f's manifests name the workloads: not with names or -l too (see doomwatch wait --help)",
		}},
		{"-R alone", []string{"wait", "-R", "deploy/web"}, exitUsage, []string{
			"doomwatch: -R reads the directories of -f: pass -f too (see doomwatch wait --help)",
		}},
		{"-f on the demo", []string{"wait", "--demo", "-f", good}, exitUsage, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(tc.args...)
			if code != tc.code || stdout != "" {
				t.Fatalf("exit %d, want %d; stdout %q stderr %q", code, tc.code, stdout, stderr)
			}
			if tc.lines == nil {
				oneErrorLine(t, stderr)
				return
			}
			if want := strings.Join(tc.lines, "\n") + "\n"; stderr != want {
				t.Errorf("stderr:\n%s\nwant:\n%s", stderr, want)
			}
		})
	}
}
