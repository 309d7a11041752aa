package report

import (
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"github.com/jstemmer/go-junit-report/v2/junit"

	"doomwatch/model"
)

// parseJUnit writes rep as JUnit and reads it back as a CI would: valid XML, with its declaration,
// whose every character XML 1.0 allows.
func parseJUnit(t *testing.T, rep *Gate) (junit.Testsuites, string) {
	t.Helper()
	var b strings.Builder
	if err := GatePrinters.Print(&b, "junit", rep); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.HasPrefix(out, xml.Header) {
		t.Errorf("no XML declaration:\n%s", out)
	}
	for i, r := range out {
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0xFFFE || r == 0xFFFF {
			t.Errorf("character %U at %d is not XML", r, i)
		}
	}
	var suites junit.Testsuites
	if err := xml.Unmarshal([]byte(out), &suites); err != nil {
		t.Fatalf("parsing the JUnit: %v\n%s", err, out)
	}
	return suites, out
}

// caseOf is the testcase named name in suite s.
func caseOf(t *testing.T, s *junit.Testsuite, name string) junit.Testcase {
	t.Helper()
	for _, tc := range s.Testcases {
		if tc.Name == name {
			return tc
		}
	}
	t.Fatalf("suite %q has no testcase %q: %+v", s.Name, name, s.Testcases)
	return junit.Testcase{}
}

func TestJUnitComplete(t *testing.T) {
	rep := Gate{Verdict: Complete, StartedAt: time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC), Seconds: 12.5,
		Workloads: []Workload{
			{Kind: "Deployment", Namespace: "shop", Name: "web", Verdict: Complete, Reason: `deployment "web" successfully rolled out`},
			{Kind: "StatefulSet", Namespace: "data", Name: "db", Verdict: Complete, Reason: "ok"},
		}}
	suites, out := parseJUnit(t, &rep)
	if len(suites.Suites) != 1 || suites.Tests != 2 || suites.Failures != 0 || suites.Errors != 0 {
		t.Fatalf("want one suite of two passing tests:\n%s", out)
	}
	s := &suites.Suites[0]
	if s.Name != "doomwatch wait" || s.Tests != 2 || s.Failures != 0 || s.Time != "12.500" || s.Timestamp != "2026-12-02T10:00:00Z" {
		t.Errorf("suite %q: %d tests, %d failures, time %q, timestamp %q", s.Name, s.Tests, s.Failures, s.Time, s.Timestamp)
	}
	for name, class := range map[string]string{"deployment/web": "shop", "statefulset/db": "data"} {
		tc := caseOf(t, s, name)
		if tc.Classname != class || tc.Failure != nil || tc.Error != nil || tc.Skipped != nil {
			t.Errorf("%s: %+v, want a pass with classname %s", name, tc, class)
		}
	}
	if s.SystemOut != nil {
		t.Errorf("system-out %q without warnings", s.SystemOut.Data)
	}
}

func TestJUnitDoomed(t *testing.T) {
	code := int32(1)
	rep := Gate{Verdict: Doomed, Window: "15m",
		Workloads: []Workload{
			{Kind: "Deployment", Namespace: "shop", Name: "web", Verdict: Doomed, Reason: "2/2 new pods doomed: Crashing repeatedly (exit 1)",
				Doomed: []Container{
					{Namespace: "shop", Pod: "web-a", Container: "app", Node: "node-3", Reason: "Crashing repeatedly (exit 1)", ExitCode: &code,
						Log: []string{"loading config", "panic: boom"}, LogPrevious: true},
					{Namespace: "shop", Pod: "web-b", Container: "app", Reason: "Crashing repeatedly (exit 1)", LogError: "not allowed"},
				}},
			{Kind: "Deployment", Namespace: "shop", Name: "api", Verdict: Progressing, Reason: `Waiting for deployment "api" rollout to finish`},
			{Kind: "Deployment", Namespace: "shop", Name: "wbe", Verdict: Missing, Reason: "deployment/wbe not found in namespace shop"},
		},
		SuspectNodes: []SuspectNode{
			{Name: "node-3", Why: "4 of 4 pods that started here in the last 15m failed; 0 of 31 elsewhere"},
			{Name: "node-9", Why: "3 of 3 pods that started here in the last 15m failed; 0 of 31 elsewhere"},
		},
		Warnings: []Container{{Namespace: "shop", Pod: "api-x", Container: "app", Node: "node-9", Reason: "Failed to start on node, will retry (exit 128)"}},
	}
	suites, out := parseJUnit(t, &rep)
	if len(suites.Suites) != 1 || suites.Tests != 3 || suites.Failures != 2 {
		t.Fatalf("want one suite of three tests, two failed:\n%s", out)
	}
	s := &suites.Suites[0]
	web := caseOf(t, s, "deployment/web")
	if web.Failure == nil || web.Failure.Message != "2/2 new pods doomed: Crashing repeatedly (exit 1)" || web.Failure.Type != "doomed" {
		t.Fatalf("web: %+v, want a failure with its reason", web.Failure)
	}
	want := "deployment/web is doomed: 2/2 new pods doomed: Crashing repeatedly (exit 1)\n" +
		"web-a/app: Crashing repeatedly (exit 1)\n" +
		"  node node-3, exit code 1\n" +
		"  last 2 lines of web-a/app's previous log:\n" +
		"    loading config\n" +
		"    panic: boom\n" +
		"web-b/app: Crashing repeatedly (exit 1)\n" +
		"  not scheduled\n" +
		"  (no log: not allowed)\n" +
		"node-3 is suspect: 4 of 4 pods that started here in the last 15m failed; 0 of 31 elsewhere\n"
	if web.Failure.Data != want {
		t.Errorf("web's failure:\n%s\nwant (node-9, where none of its containers ran, is not its suspect):\n%s", web.Failure.Data, want)
	}
	// A workload still progressing when another's doom ended the wait neither passed nor failed.
	if api := caseOf(t, s, "deployment/api"); api.Skipped == nil || api.Failure != nil ||
		api.Skipped.Message != `still progressing when the wait ended: Waiting for deployment "api" rollout to finish` {
		t.Errorf("api: %+v, want skipped", api)
	}
	if wbe := caseOf(t, s, "deployment/wbe"); wbe.Failure == nil || wbe.Failure.Type != "missing" ||
		wbe.Failure.Message != "deployment/wbe not found in namespace shop" {
		t.Errorf("wbe: %+v, want a failure: missing", wbe.Failure)
	}
	if s.SystemOut == nil || !strings.Contains(s.SystemOut.Data,
		"warning: api-x/app (transient, on node node-9): Failed to start on node, will retry (exit 128)\n") ||
		!strings.Contains(s.SystemOut.Data, "node-9 is suspect: ") {
		t.Errorf("system-out %+v, want the transient warning and the suspect nodes", s.SystemOut)
	}
}

func TestJUnitTimeout(t *testing.T) {
	rep := Gate{Verdict: Timeout, Message: "timed out after 10m", Workloads: []Workload{
		{Kind: "Deployment", Namespace: "shop", Name: "web", Verdict: Complete, Reason: "ok"},
		{Kind: "Deployment", Namespace: "shop", Name: "api", Verdict: Progressing, Reason: `Waiting for deployment "api" rollout to finish`,
			Pending: []model.GatePending{{Reason: "Readiness probe must respond at /healthz (port 8080)", Pods: 2, Example: "api-a/app"}}},
	}}
	suites, out := parseJUnit(t, &rep)
	if len(suites.Suites) != 1 || suites.Tests != 2 || suites.Failures != 1 {
		t.Fatalf("want one suite of two tests, one failed:\n%s", out)
	}
	s := &suites.Suites[0]
	if web := caseOf(t, s, "deployment/web"); web.Failure != nil {
		t.Errorf("web completed and failed: %+v", web.Failure)
	}
	api := caseOf(t, s, "deployment/api")
	if api.Failure == nil || api.Failure.Type != "timeout" ||
		api.Failure.Message != `timed out after 10m: Waiting for deployment "api" rollout to finish` ||
		!strings.Contains(api.Failure.Data, "  2 pods: Readiness probe must respond at /healthz (port 8080) (e.g. api-a/app)\n") {
		t.Errorf("api: %+v, want a timeout with what it still waited for", api.Failure)
	}
}

func TestJUnitFleet(t *testing.T) {
	eu := Gate{Verdict: Doomed, Workloads: []Workload{
		{Kind: "Deployment", Namespace: "shop", Name: "web", Verdict: Doomed, Reason: "1/1 new pods doomed: Image not found: web:typo",
			Doomed: []Container{{Namespace: "shop", Pod: "web-a", Container: "app", Node: "node-1", Reason: "Image not found: web:typo"}}},
	}, SuspectNodes: []SuspectNode{}, Warnings: []Container{}}
	us := Gate{Verdict: Progressing, Workloads: []Workload{
		{Kind: "Deployment", Namespace: "shop", Name: "web", Verdict: Progressing, Reason: "Waiting"},
	}, SuspectNodes: []SuspectNode{{Name: "node-3", Why: "why"}},
		Warnings: []Container{{Namespace: "shop", Pod: "web-x", Container: "app", Node: "node-3", Reason: "Failed to start"}}}
	rep := FleetGate([]string{"eu", "us"}, []Gate{eu, us})
	suites, out := parseJUnit(t, &rep)
	if len(suites.Suites) != 2 || suites.Tests != 2 || suites.Failures != 1 || suites.Skipped != 1 {
		t.Fatalf("want two suites of a test each, one failed and one skipped:\n%s", out)
	}
	s0, s1 := &suites.Suites[0], &suites.Suites[1]
	if s0.Name != "eu" || s1.Name != "us" || s0.ID != 0 || s1.ID != 1 {
		t.Errorf("suites %q (id %d) and %q (id %d), want eu and us", s0.Name, s0.ID, s1.Name, s1.ID)
	}
	if web := caseOf(t, s0, "deployment/web"); web.Failure == nil || web.Classname != "shop" ||
		web.Failure.Message != "1/1 new pods doomed: Image not found: web:typo" ||
		!strings.Contains(web.Failure.Data, "web-a/app in eu: Image not found: web:typo\n  node node-1\n") {
		t.Errorf("eu's web: %+v", web)
	}
	if web := caseOf(t, s1, "deployment/web"); web.Skipped == nil || web.Failure != nil {
		t.Errorf("us's web: %+v, want skipped", web)
	}
	// Each context's warnings go with its own suite.
	if s0.SystemOut != nil {
		t.Errorf("eu's system-out %q holds us's warnings", s0.SystemOut.Data)
	}
	if s1.SystemOut == nil || s1.SystemOut.Data != "node-3 in us is suspect: why\n"+
		"warning: web-x/app in us (transient, on node node-3): Failed to start\n" {
		t.Errorf("us's system-out %+v", s1.SystemOut)
	}
}

// TestJUnitControlCharacters: whatever reached the document, the JUnit is XML a CI can read: the
// characters XML 1.0 cannot hold become U+FFFD in attributes and bodies alike, and a CDATA end
// inside a log line does not end the body.
func TestJUnitControlCharacters(t *testing.T) {
	code := int32(2)
	reason := "bad\x00config\x1b[31m\x07\x7f\ufffe done"
	rep := Gate{Verdict: Doomed, Workloads: []Workload{
		{Kind: "Deployment", Namespace: "shop", Name: "web", Verdict: Doomed, Reason: reason,
			Doomed: []Container{{Pod: "web-a", Container: "app", Reason: reason, ExitCode: &code,
				Log: []string{"line\x01one\x0b", "a ]]> b", "tab\there"}}}},
	}, Warnings: []Container{{Pod: "web-b", Container: "app", Reason: "x\x1fy"}}}
	suites, out := parseJUnit(t, &rep)
	web := caseOf(t, &suites.Suites[0], "deployment/web")
	if web.Failure == nil {
		t.Fatalf("no failure:\n%s", out)
	}
	clean := "bad\ufffdconfig\ufffd[31m\ufffd\x7f\ufffd done"
	if web.Failure.Message != clean {
		t.Errorf("message %q, want %q", web.Failure.Message, clean)
	}
	for _, want := range []string{"web-a/app: " + clean + "\n", "    line\ufffdone\ufffd\n", "    a ]]> b\n", "    tab\there\n"} {
		if !strings.Contains(web.Failure.Data, want) {
			t.Errorf("failure body %q lacks %q", web.Failure.Data, want)
		}
	}
	if so := suites.Suites[0].SystemOut; so == nil || !strings.Contains(so.Data, "x\ufffdy") {
		t.Errorf("system-out %+v", so)
	}
}
