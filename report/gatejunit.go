package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/jstemmer/go-junit-report/v2/junit"
)

// junitName names the report, and the suite of a wait in one context.
const junitName = "doomwatch wait"

// WriteJUnit writes the verdict as JUnit XML, the test report CI systems read: a testsuite per
// context (one, "doomwatch wait", without several), a testcase per workload ("deployment/web",
// its namespace as the classname). A doomed, missing or unsupported workload is a failure whose
// message is its reason and whose body has the doomed containers, their logs and the suspect
// nodes they ran on; at a timeout each workload not complete is a failure with what it still
// waited for; one still progressing when another's failure ended the wait is skipped. The
// warnings are the suite's system-out.
func (rep *Gate) WriteJUnit(out io.Writer) error {
	suites := junit.Testsuites{Name: junitName, Time: junitSeconds(rep.Seconds)}
	if len(rep.Clusters) == 0 {
		suites.AddSuite(rep.junitSuite(0, junitName, "", rep.Verdict, rep.Message))
	}
	for i, c := range rep.Clusters {
		suites.AddSuite(rep.junitSuite(i, c.Context, c.Context, c.Verdict, c.Message))
	}
	// The declaration first, as go-junit-report's own command writes it.
	b := bytes.NewBufferString(xml.Header)
	if err := suites.WriteXML(b); err != nil {
		return err
	}
	_, err := b.WriteTo(out)
	return err
}

// junitSuite is the suite of one context's workloads, whose own verdict and message are given.
func (rep *Gate) junitSuite(id int, name, context string, verdict Verdict, message string) junit.Testsuite {
	s := junit.Testsuite{Name: name, ID: id, Time: junitSeconds(rep.Seconds)}
	if !rep.StartedAt.IsZero() {
		s.SetTimestamp(rep.StartedAt.UTC())
	}
	for i := range rep.Workloads {
		if w := &rep.Workloads[i]; w.Context == context {
			s.AddTestcase(rep.junitCase(w, verdict, message))
		}
	}
	lines := rep.warningLines(func(c string) bool { return c == context })
	// The count of warnings not kept is the fleet's, not a context's: it goes with the first.
	if rep.MoreWarnings > 0 && id == 0 {
		lines = append(lines, rep.moreWarningsLine())
	}
	if len(lines) > 0 {
		s.SystemOut = &junit.Output{Data: xmlText(strings.Join(lines, "\n") + "\n")}
	}
	return s
}

// junitCase is w's testcase in a context whose wait ended with verdict and message.
func (rep *Gate) junitCase(w *Workload, verdict Verdict, message string) junit.Testcase {
	tc := junit.Testcase{Name: strings.ToLower(w.Kind) + "/" + w.Name, Classname: w.Namespace}
	var b strings.Builder
	fmt.Fprintln(&b, w.headline())
	switch {
	case w.Verdict == Complete:
	case w.Verdict == Doomed || w.Verdict == Missing || w.Verdict == Unsupported:
		if len(w.Doomed) == 0 {
			writePending(&b, w) // a progress deadline passed with no doomed pod to show
		}
		rep.writeDoomed(&b, w)
		tc.Failure = &junit.Result{Message: w.Reason, Type: string(w.Verdict), Data: xmlText(b.String())}
	case verdict == Timeout:
		writePending(&b, w)
		tc.Failure = &junit.Result{Message: message + ": " + w.Reason, Type: string(Timeout), Data: xmlText(b.String())}
	default:
		// Another workload's failure ended the wait first: this one was neither complete nor failed.
		writePending(&b, w)
		tc.Skipped = &junit.Result{Message: "still progressing when the wait ended: " + w.Reason, Data: xmlText(b.String())}
	}
	return tc
}

// writeDoomed writes w's doomed containers with where they ran, their exit codes and logs, then
// the suspect nodes among their nodes and those of w's start failures.
func (rep *Gate) writeDoomed(b *strings.Builder, w *Workload) {
	nodes := map[string]bool{}
	for j := range w.Doomed {
		c := &w.Doomed[j]
		fmt.Fprintf(b, "%s: %s\n", c.Ref(), c.Reason)
		where := "not scheduled"
		if c.Node != "" {
			where, nodes[c.Node] = "node "+c.Node, true
		}
		if c.ExitCode != nil {
			where += fmt.Sprintf(", exit code %d", *c.ExitCode)
		}
		fmt.Fprintf(b, "  %s\n", where)
		writeLog(b, c)
	}
	for _, f := range w.StartFailures {
		nodes[f.Node] = true
	}
	for _, n := range rep.SuspectNodes {
		if n.Context == w.Context && nodes[n.Name] {
			fmt.Fprintf(b, "%s is suspect: %s\n", n.Name, n.Why)
		}
	}
}

// junitSeconds is a duration as JUnit gives one, in seconds with milliseconds, as
// go-junit-report's own.
func junitSeconds(s float64) string { return fmt.Sprintf("%.3f", s) }

// xmlText replaces what XML 1.0 cannot hold (its Char production: the C0 controls but tab, line
// feed and carriage return, the surrogates, U+FFFE and U+FFFF) with U+FFFD. encoding/xml does so
// in attributes and text, but writes CDATA, as junit's bodies are, verbatim; go-junit-report
// cleans its own output the same way.
func xmlText(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' || r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF {
			return r
		}
		return '\uFFFD'
	}, s)
}
