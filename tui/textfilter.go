package tui

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"doomwatch/model"
)

// textFilter builds a text filter's view over a large model off the UI goroutine (Update never
// does long work): it waits for typing to pause, has the model snapshot its rows
// (model.StartFilter), matches them in a Cmd, and hands the result back to the model
// (model.AdoptFilter), which replays the batches applied meanwhile. Until then the pod table shows
// the previous query's rows and the status line says "filtering…".
type textFilter struct {
	q      model.Query // the query being built
	active bool
	// seq numbers the waits for a pause in typing: only the last one starts a job.
	seq int
}

// want asks for q's view. While the user types, the job waits for a pause (dashboard.debounce);
// a key that changes the sort or a filter of a text-filtered view starts it at once.
func (f *textFilter) want(d *dashboard, q model.Query) tea.Cmd {
	if f.active && f.q == q {
		return nil // on its way already
	}
	f.q, f.active = q, true
	f.seq++
	if d.filtering && d.debounce > 0 {
		seq := f.seq
		return tea.Tick(d.debounce, func(time.Time) tea.Msg { return filterDueMsg{seq: seq} })
	}
	return runFilter(d.m.StartFilter(q))
}

// due starts the job when seq is the last wait.
func (f *textFilter) due(d *dashboard, seq int) tea.Cmd {
	if !f.active || seq != f.seq {
		return nil
	}
	return runFilter(d.m.StartFilter(f.q))
}

// done adopts the result of the query still wanted; a result the model refuses (its journal
// overflowed under heavy churn) is built again.
func (f *textFilter) done(d *dashboard, res *model.FilterResult) tea.Cmd {
	if !f.active || res.Query() != f.q || d.query != f.q {
		return nil // superseded by another query
	}
	if !d.m.AdoptFilter(res) {
		return runFilter(d.m.StartFilter(f.q))
	}
	f.active = false
	d.shown = f.q
	cmd := d.refreshPods()
	d.layout()
	return cmd
}

// drop forgets the query being built: the user moved on to one built at once.
func (f *textFilter) drop() {
	f.active = false
	f.seq++
}
