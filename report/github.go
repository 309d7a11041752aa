package report

import (
	"fmt"
	"io"
	"strings"
)

// The escaping of GitHub Actions' workflow commands, as the Actions toolkit's escapeData and
// escapeProperty (actions/toolkit packages/core/src/command.ts): in the message, % and line
// breaks; in a property (title=) also the : and , that delimit properties. A sanitised reason has
// no line break, but a doomed container's line joins the reason's, and one escaped line cannot
// start a command of its own.
var (
	githubData     = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	githubProperty = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)

// WriteGitHubAnnotations writes the verdict as GitHub Actions workflow commands, a line each
// ("Workflow commands for GitHub Actions",
// https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-commands): an
// ::error for each workload that failed the gate (doomed, missing, unsupported, or not complete
// at the timeout) with its reason and doomed containers, then a ::warning for each suspect node
// and each transient failure. Errors come first: GitHub shows only the first few annotations of
// each kind a step makes.
func (rep *Gate) WriteGitHubAnnotations(out io.Writer) error {
	var b strings.Builder
	command := func(cmd, title, message string) {
		fmt.Fprintf(&b, "::%s title=%s::%s\n", cmd, githubProperty.Replace("doomwatch: "+title), githubData.Replace(message))
	}
	for i := range rep.Workloads {
		w := &rep.Workloads[i]
		verdict, message := rep.contextVerdict(w.Context)
		switch {
		case w.Verdict == Doomed || w.Verdict == Missing || w.Verdict == Unsupported:
			lines := []string{w.Reason}
			for j := range w.Doomed {
				c := &w.Doomed[j]
				where := ""
				if c.Node != "" {
					where = " (node " + c.Node + ")"
				}
				lines = append(lines, c.Ref()+": "+c.Reason+where)
			}
			command("error", w.Ref()+" "+string(w.Verdict), strings.Join(lines, "\n"))
		case verdict == Timeout && w.Verdict != Complete:
			lines := []string{message + ": " + w.Reason}
			for j := range w.Pending {
				lines = append(lines, pendingLine(&w.Pending[j]))
			}
			command("error", w.Ref()+" timed out", strings.Join(lines, "\n"))
		}
	}
	for _, n := range rep.SuspectNodes {
		command("warning", "node "+n.Name+in(n.Context)+" suspect", n.Why)
	}
	for i := range rep.Warnings {
		c := &rep.Warnings[i]
		command("warning", c.Ref()+" transient", c.Reason+" ("+onNode(c.Node)+")")
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// contextVerdict is the verdict and message of the wait in context: the gate's own with one
// context, that context's (Clusters) with several.
func (rep *Gate) contextVerdict(context string) (Verdict, string) {
	for _, c := range rep.Clusters {
		if c.Context == context {
			return c.Verdict, c.Message
		}
	}
	return rep.Verdict, rep.Message
}
