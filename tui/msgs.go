package tui

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"doomwatch/contract"
	"doomwatch/model"
)

// batchMsg carries what the source handed over at once into Update: one coalescing interval's
// batches, at most one of each cluster, applied together before one refresh.
type batchMsg struct{ batches []contract.Batch }

// sourceClosedMsg says the batch channel was closed: the source has stopped for good.
type sourceClosedMsg struct{}

// tickMsg is the once-a-second clock that expires evidence and refreshes ages.
type tickMsg struct{}

// filterDueMsg says the user stopped typing a text filter for a moment: its job may start.
type filterDueMsg struct{ seq int }

// filterDoneMsg carries a text filter's result, matched off the UI goroutine.
type filterDoneMsg struct{ res *model.FilterResult }

// showPodsMsg asks for the pod table, narrowed to one node's pods (node) or exactly one
// workload's (owner, a Rollout.Workload); with neither it only brings the table back.
type showPodsMsg struct{ context, node, owner string }

// openDetailMsg asks for the detail pane of the pod with key.
type openDetailMsg struct{ key string }

// panicMsg reports a panic caught in a component so Run can restore the terminal and fail.
type panicMsg struct{ err error }

// waitForBatch waits for the next batches. It captures only the channel, never the dashboard, so
// the goroutine running it shares no state with Update (bubbletea's realtime example).
func waitForBatch(ch <-chan []contract.Batch) tea.Cmd {
	if ch == nil {
		return nil
	}
	return func() tea.Msg {
		bs, ok := <-ch
		if !ok {
			return sourceClosedMsg{}
		}
		return batchMsg{batches: bs}
	}
}

// runFilter matches a text filter's snapshot off the UI goroutine. It captures only the job, an
// immutable snapshot of the model's rows, never the model or the dashboard.
func runFilter(job *model.FilterJob) tea.Cmd {
	return func() tea.Msg { return filterDoneMsg{res: job.Run()} }
}

// tick schedules the next clock tick.
func tick() tea.Cmd {
	return tea.Tick(time.Second, func(time.Time) tea.Msg { return tickMsg{} })
}
