package cmd

import (
	"fmt"
	"io"
	"time"

	"doomwatch/classify"
	"doomwatch/model"
	"doomwatch/report"
	"doomwatch/tui"
)

// progress shows the gate's progress on stderr.
type progress interface {
	Update(statuses []model.GateStatus, now time.Time)
	Stop()
}

// plainProgress is progress for a log (CI): a line per change of a workload's verdict as it
// happens, a line per transient failure the first time it is seen, and otherwise each workload's
// line when it changed, at most every plainEvery.
type plainProgress struct {
	w io.Writer
	// soak is set under --stable: a complete workload's reason is then its soak, "complete,
	// stable for 12s of 1m" (gate.shown), which its lines show.
	soak     bool
	verdicts map[string]classify.RolloutClass
	lines    map[string]string
	warned   map[string]bool
	last     time.Time
}

// plainEvery is the plain progress's pace.
const plainEvery = 5 * time.Second

func (p *plainProgress) Update(statuses []model.GateStatus, now time.Time) {
	if p.verdicts == nil {
		p.verdicts, p.lines, p.warned = map[string]classify.RolloutClass{}, map[string]string{}, map[string]bool{}
	}
	stamp := now.UTC().Format("15:04:05")
	due := now.Sub(p.last) >= plainEvery
	printed := false
	for i := range statuses {
		st := &statuses[i]
		name := st.Target.String()
		v := st.Rollout.Verdict
		if old, ok := p.verdicts[name]; !ok || old != v {
			p.verdicts[name] = v
			if p.soaking(st) {
				fmt.Fprintf(p.w, "%s %s: %s\n", stamp, name, st.Rollout.Reason) // the reason says complete
			} else {
				fmt.Fprintf(p.w, "%s %s: %s: %s\n", stamp, name, v, st.Rollout.Reason)
			}
			p.lines[name] = p.line(st)
			printed = true
		}
		for _, t := range st.Transient {
			if key := warnKey(&t); len(p.warned) < maxWarnings && !p.warned[key] {
				p.warned[key] = true
				fmt.Fprintf(p.w, "%s %s\n", stamp, report.WarningLine(t.Ref(), t.Node, t.Reason))
			}
		}
		if line := p.line(st); due && line != p.lines[name] {
			p.lines[name] = line
			fmt.Fprintf(p.w, "%s %s\n", stamp, line)
			printed = true
		}
	}
	if printed {
		p.last = now
	}
}

func (p *plainProgress) Stop() {}

func (p *plainProgress) soaking(st *model.GateStatus) bool {
	return p.soak && st.Rollout.Verdict == classify.RolloutComplete
}

// line is progressLine, with a soaking workload's soak after it: the seconds it has held make the
// line change, so it is printed at plainEvery while the window runs.
func (p *plainProgress) line(st *model.GateStatus) string {
	if p.soaking(st) {
		return progressLine(st) + " · " + st.Rollout.Reason
	}
	return progressLine(st)
}

// progressLine is a workload's one line, its counts as the live view has them: "deployment/web:
// 3 desired, 2 updated, 1 ready · 1 healthy, 1 progressing, 1 transient".
func progressLine(st *model.GateStatus) string {
	line := fmt.Sprintf("%s: %s · %s", st.Target, tui.RolloutCounts(&st.Rollout), tui.BadgeCounts(st.Pods))
	if st.Old > 0 {
		line += fmt.Sprintf(" · %d old", st.Old)
	}
	return line
}
