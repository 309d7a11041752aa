package tui

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"doomwatch/classify"
	"doomwatch/model"
)

// Progress is `doomwatch wait`'s live view on a terminal: inline (not the alternate screen), one
// line per workload with its desired, updated and ready counts, its pods' badge counts and a
// spinner, redrawn in place. It reads no keys: ctrl+c reaches wait as SIGINT. The last frame stays
// on the terminal.
type Progress struct {
	p    *tea.Program
	done chan struct{}
}

// gateStatusMsg carries the workloads' latest status to the view.
type gateStatusMsg struct {
	statuses []model.GateStatus
	now      time.Time
}

// gateStopMsg asks the view for its last frame and to quit.
type gateStopMsg struct{}

// StartProgress starts the live view on out.
func StartProgress(ctx context.Context, out io.Writer, noColor bool) *Progress {
	return startProgress(ctx, out, noColor)
}

// startProgress is StartProgress with more program options (tests set the window size, which a
// terminal reports).
func startProgress(ctx context.Context, out io.Writer, noColor bool, extra ...tea.ProgramOption) *Progress {
	noColor = noColor || os.Getenv("NO_COLOR") != ""
	v := &gateView{st: newStyles(noColor), spin: spinner.New(spinner.WithSpinner(spinner.Dot))}
	opts := append([]tea.ProgramOption{tea.WithContext(ctx), tea.WithOutput(out), tea.WithInput(nil)}, extra...)
	if noColor {
		opts = append(opts, tea.WithColorProfile(colorprofile.Ascii))
	}
	pr := &Progress{p: tea.NewProgram(v, opts...), done: make(chan struct{})}
	go func() {
		defer close(pr.done)
		_, _ = pr.p.Run()
	}()
	return pr
}

// Update shows the workloads' status.
func (pr *Progress) Update(statuses []model.GateStatus, now time.Time) {
	pr.p.Send(gateStatusMsg{statuses: statuses, now: now})
}

// Stop draws the last frame without the spinner and returns once the terminal is restored.
func (pr *Progress) Stop() {
	pr.p.Send(gateStopMsg{})
	select {
	case <-pr.done:
	case <-time.After(time.Second):
		pr.p.Kill()
		<-pr.done
	}
}

// gateView is the bubbletea model behind Progress.
type gateView struct {
	st       *styles
	spin     spinner.Model
	statuses []model.GateStatus
	width    int
	stopped  bool
}

func (v *gateView) Init() tea.Cmd { return v.spin.Tick }

func (v *gateView) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case gateStatusMsg:
		v.statuses = msg.statuses
	case gateStopMsg:
		v.stopped = true
		return v, tea.Quit
	case tea.WindowSizeMsg:
		v.width = msg.Width
	case spinner.TickMsg:
		var cmd tea.Cmd
		v.spin, cmd = v.spin.Update(msg)
		return v, cmd
	}
	return v, nil
}

func (v *gateView) View() tea.View {
	var b strings.Builder
	for i := range v.statuses {
		st := &v.statuses[i]
		r := &st.Rollout
		lead := v.spin.View()
		if v.stopped || r.Verdict != classify.RolloutProgressing {
			lead = rolloutIcon(r.Verdict)
		}
		if style, ok := v.st.rollout[r.Verdict]; ok {
			lead = style.Render(lead)
		}
		old := ""
		if st.Old > 0 {
			old = fmt.Sprintf("  %d old", st.Old)
		}
		line := fmt.Sprintf("%s %s  %s  %s%s  %s", lead, st.Target, RolloutCounts(r), v.counts(st.Pods), old, r.Reason)
		if v.width > 0 {
			line = fit(line, v.width)
		}
		b.WriteString(line)
		// The last frame stays on the terminal; bubbletea clears from the start of the frame's last
		// line as it quits, so that line must be an empty one.
		if i < len(v.statuses)-1 || v.stopped {
			b.WriteByte('\n')
		}
	}
	return tea.NewView(b.String())
}

// RolloutCounts is a rollout's replica counts, each with its name: "12 desired, 3 updated, 14
// ready". Ready counts the old pods too (a Deployment's readyReplicas, a StatefulSet's and a
// DaemonSet's alike), so mid-rollout it can pass desired: "14/12 ready" would read as more ready
// than asked for. kubectl rollout status says it the same way, each count named ("3 of 12 updated
// replicas are available").
func RolloutCounts(r *model.Rollout) string {
	return fmt.Sprintf("%d desired, %d updated, %d ready", r.Desired, r.Updated, r.Ready)
}

// counts renders the badge counts in their colours.
func (v *gateView) counts(c model.Counts) string {
	var parts []string
	for _, k := range countKinds {
		if n := countOf(c, k); n > 0 {
			parts = append(parts, v.st.badgeFor(k, fmt.Sprintf("%s %d", badgeIcons[k], n)))
		}
	}
	if len(parts) == 0 {
		return "no pods yet"
	}
	return strings.Join(parts, " ")
}

// countKinds are the kinds BadgeCounts and the live view count, most severe last.
var countKinds = [...]classify.Class{classify.Healthy, classify.Completed, classify.Progressing, classify.Transient, classify.Doomed}

func countOf(c model.Counts, k classify.Class) int {
	switch k {
	case classify.Healthy:
		return c.Healthy
	case classify.Completed:
		return c.Completed
	case classify.Progressing:
		return c.Progressing
	case classify.Transient:
		return c.Transient
	case classify.Doomed:
		return c.Doomed
	}
	return 0
}

// BadgeCounts is the colourless count of pods per verdict, "1 healthy, 2 progressing, 1
// transient", for plain progress lines.
func BadgeCounts(c model.Counts) string {
	var parts []string
	for _, k := range countKinds {
		if n := countOf(c, k); n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, k))
		}
	}
	if len(parts) == 0 {
		return "no pods yet"
	}
	return strings.Join(parts, ", ")
}
