package tui

import (
	"fmt"
	"slices"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"doomwatch/model"
)

// queryBar is the pod table's query and the `/` input that edits its text: the sort and the
// filters the keys set (v, s, n, esc, enter on a node or a rollout), the input line over the
// footer while the user types, and the status line the table's title shows. The dashboard embeds
// it: the query is what the pod table shows (dashboard.refreshPods).
type queryBar struct {
	input     textinput.Model
	filtering bool
	query     model.Query
	// shown is the query whose rows the pod table shows: query itself, or the previous one while
	// query's text filter runs off the UI goroutine (textFilter).
	shown model.Query
	text  textFilter
	// contexts are the fleet's clusters the context key cycles through (none with one).
	contexts []string
}

func newQueryBar(noColor bool) queryBar {
	b := queryBar{input: textinput.New()}
	b.input.Prompt = "/"
	b.input.Placeholder = "namespace, name, node or reason; @context"
	if noColor {
		var fs textinput.Styles
		fs.Cursor.Blink = false
		b.input.SetStyles(fs)
	}
	return b
}

// SetWidth fits the input to the terminal's width.
func (b *queryBar) SetWidth(w int) { b.input.SetWidth(max(w-4, 10)) }

// startTyping opens the input on the query's text.
func (b *queryBar) startTyping() tea.Cmd {
	b.filtering = true
	b.input.SetValue(b.query.Text)
	b.input.CursorEnd()
	return b.input.Focus()
}

// typing handles a key while the input is open: Accept keeps the text, Clear drops it, any other
// key edits it. changed says the pod view must be read again: the text changed or typing ended.
func (b *queryBar) typing(msg tea.KeyPressMsg, k KeyMap) (cmd tea.Cmd, changed bool) {
	switch {
	case key.Matches(msg, k.Clear):
		b.stopTyping()
		b.input.SetValue("")
		b.query.Text = ""
		return nil, true
	case key.Matches(msg, k.Accept):
		b.stopTyping()
		return nil, true
	}
	b.input, cmd = b.input.Update(msg)
	if v := b.input.Value(); v != b.query.Text {
		b.query.Text = v
		return cmd, true
	}
	return cmd, false
}

func (b *queryBar) stopTyping() {
	b.filtering = false
	b.input.Blur()
}

// Update hands the input what it needs while open (its cursor's blink, a paste).
func (b *queryBar) Update(msg tea.Msg) tea.Cmd {
	if !b.filtering {
		return nil
	}
	var cmd tea.Cmd
	b.input, cmd = b.input.Update(msg)
	return cmd
}

// edit applies a query key pressed over the panels (verdict, sort, esc) and reports whether msg
// was one. Esc drops one filter at a time, the text first.
func (b *queryBar) edit(msg tea.KeyPressMsg, k KeyMap) bool {
	q := &b.query
	switch {
	case key.Matches(msg, k.Back):
		switch {
		case q.Text != "":
			q.Text = ""
			b.input.SetValue("")
		case q.Owner != "":
			q.Owner = ""
		case q.Node != "":
			q.Node = ""
		case q.Context != "":
			q.Context = ""
		case q.Filter != model.All:
			q.Filter = model.All
		}
	case key.Matches(msg, k.Verdict):
		q.Filter = (q.Filter + 1) % 4
	case key.Matches(msg, k.Sort):
		q.Sort = (q.Sort + 1) % 4
	case key.Matches(msg, k.Context) && len(b.contexts) > 1:
		// The next cluster, and after the last all of them again.
		i := slices.Index(b.contexts, q.Context) + 1
		if q.Context == "" {
			i = 0
		}
		q.Context = ""
		if i < len(b.contexts) {
			q.Context = b.contexts[i]
		}
	default:
		return false
	}
	return true
}

// narrow shows what msg asks for: one node's pods, or exactly one workload's, by owner. A text
// filter on the workload's name would also catch "checkout-db" for "checkout"; the text and node
// filters go, as either could hide the workload's pods.
func (b *queryBar) narrow(msg showPodsMsg) {
	if msg.context != "" {
		b.query.Context = msg.context // a node's or a workload's name means one cluster's
	}
	if msg.owner != "" {
		b.query.Owner = msg.owner
		b.query.Text, b.query.Node = "", ""
		b.input.SetValue("")
	}
	if msg.node != "" {
		b.query.Node = msg.node
	}
}

var sortNames = [...]string{"severity", "name", "node", "age"}
var filterNames = [...]string{"all", "problems", "doomed", "transient"}

// status says what the pod table shows: rows of total pods, and the query.
func (b *queryBar) status(rows, total int) string {
	q := b.query
	s := fmt.Sprintf("%s of %s · sort: %s · verdict: %s", thousands(rows), thousands(total),
		sortNames[q.Sort%4], filterNames[q.Filter%4])
	if q.Owner != "" {
		s += " · owner: " + q.Owner
	}
	if q.Node != "" {
		s += " · node: " + q.Node
	}
	if q.Context != "" {
		s += " · context: " + q.Context
	}
	if q.Text != "" && !b.filtering {
		// The text is the user's own, from the input, whose sanitiser drops control characters
		// (bubbles textinput).
		s += " · filter: " + q.Text
	}
	if q != b.shown {
		s += " · filtering…"
	}
	return s
}

// View is the input line.
func (b *queryBar) View() string { return b.input.View() }

// Help is the help while typing: every other key is text.
func (b *queryBar) Help(k KeyMap) rankedHelp {
	return modeHelp{
		short: []rankedBinding{{k.Accept, 1}, {k.Clear, 1}, {k.ForceQuit, 0}},
		full:  [][]key.Binding{{k.Accept, k.Clear, k.ForceQuit}},
	}
}
