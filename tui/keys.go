package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
)

// KeyMap holds every key binding of the dashboard. The footer's help and every other key hint
// are generated from it, so the help can never drift from what the keys do.
type KeyMap struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	Enter, Back, Tab                        key.Binding
	Filter, Verdict, Node, Sort             key.Binding
	// Context focuses the next cluster's pods, then all of them again (with several contexts).
	Context key.Binding
	// Logs opens the log pane of the pod in view.
	Logs       key.Binding
	Help, Quit key.Binding
	// Accept and Clear end the `/` filter's input, keeping or dropping the text. ForceQuit quits
	// even while typing, where q is text.
	Accept, Clear, ForceQuit key.Binding
	// Copy puts a kubectl command for the selection on the clipboard (describe, logs); Cordon puts
	// the node's `kubectl cordon` there, a write, on a key of its own.
	Copy, Cordon key.Binding
	// The playback keys of a replay (Options.Replay); disabled live.
	Pause, Faster, Slower, SeekBack, SeekForward, PrevChange, NextChange key.Binding
}

// DefaultKeyMap returns the dashboard's key bindings (docs/dashboard.md, Keys).
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Up:        key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:      key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:    key.NewBinding(key.WithKeys("pgup"), key.WithHelp("pgup", "page up")),
		PageDown:  key.NewBinding(key.WithKeys("pgdown"), key.WithHelp("pgdn", "page down")),
		Top:       key.NewBinding(key.WithKeys("g", "home"), key.WithHelp("g", "top")),
		Bottom:    key.NewBinding(key.WithKeys("G", "end"), key.WithHelp("G", "bottom")),
		Enter:     key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "detail")),
		Back:      key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back/clear")),
		Tab:       key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "pods/nodes/rollouts")),
		Filter:    key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		Verdict:   key.NewBinding(key.WithKeys("v"), key.WithHelp("v", "verdict filter")),
		Node:      key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "this node only")),
		Sort:      key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort")),
		Context:   key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "next context/all")),
		Logs:      key.NewBinding(key.WithKeys("l"), key.WithHelp("l", "logs")),
		Copy:      key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "copy kubectl")),
		Cordon:    key.NewBinding(key.WithKeys("Y"), key.WithHelp("Y", "copy cordon")),
		Help:      key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit:      key.NewBinding(key.WithKeys("q"), key.WithHelp("q", "quit")),
		Accept:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "apply filter")),
		Clear:     key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear filter")),
		ForceQuit: key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit")),

		Pause:       key.NewBinding(key.WithKeys("space"), key.WithHelp("space", "pause/play")),
		Faster:      key.NewBinding(key.WithKeys("+", "="), key.WithHelp("+", "faster")),
		Slower:      key.NewBinding(key.WithKeys("-"), key.WithHelp("-", "slower")),
		SeekBack:    key.NewBinding(key.WithKeys("left", ","), key.WithHelp("←", "back 10s")),
		SeekForward: key.NewBinding(key.WithKeys("right", "."), key.WithHelp("→", "forward 10s")),
		PrevChange:  key.NewBinding(key.WithKeys("["), key.WithHelp("[", "previous change")),
		NextChange:  key.NewBinding(key.WithKeys("]"), key.WithHelp("]", "next change")),
	}
}

// replayKeys are the playback keys.
func (k *KeyMap) replayKeys() []*key.Binding {
	return []*key.Binding{&k.Pause, &k.Faster, &k.Slower, &k.SeekBack, &k.SeekForward, &k.PrevChange, &k.NextChange}
}

// ShortHelp is the one-line footer of the pod table.
func (k KeyMap) ShortHelp() []key.Binding { return k.listHelp(k.Enter).ShortHelp() }

// FullHelp is the help that `?` opens on the pod table.
func (k KeyMap) FullHelp() [][]key.Binding { return k.listHelp(k.Enter).FullHelp() }

// listHelp is the help of a list panel: the list keys, enter, whose help says what it does there
// (docs/dashboard.md's key table: the pod's detail, the node's pods, the rollout's pods), the panel's own
// keys, then the dashboard's. It is made when the footer is drawn, from the bindings then.
func (k *KeyMap) listHelp(enter key.Binding, own ...rankedBinding) listKeys {
	return listKeys{k: k, enter: enter, own: own}
}

// withDesc is b with another description in the help.
func withDesc(b key.Binding, desc string) key.Binding {
	b.SetHelp(b.Help().Key, desc)
	return b
}

// listKeys is a list panel's help (KeyMap.listHelp).
type listKeys struct {
	k     *KeyMap
	enter key.Binding
	own   []rankedBinding
}

func (h listKeys) ShortHelp() []key.Binding { return bindingsOf(h.shortRanked()) }

// shortRanked is the footer in display order, each binding with its rank. Help and quit are how a
// newcomer finds everything else and gets out, so they always show; the arrows go first when the
// line is short, because they are the keys everyone tries anyway.
func (h listKeys) shortRanked() []rankedBinding {
	k := h.k
	out := make([]rankedBinding, 0, 10+len(h.own))
	out = append(out, rankedBinding{k.Up, 7}, rankedBinding{k.Down, 7}, rankedBinding{h.enter, 2})
	out = append(out, h.own...)
	return append(out, rankedBinding{k.Tab, 3}, rankedBinding{k.Filter, 1}, rankedBinding{k.Verdict, 4},
		rankedBinding{k.Node, 5}, rankedBinding{k.Sort, 6}, rankedBinding{k.Context, 5},
		rankedBinding{k.Pause, 1}, rankedBinding{k.NextChange, 2}, rankedBinding{k.SeekBack, 4},
		rankedBinding{k.Help, 0}, rankedBinding{k.Quit, 0})
}

func (h listKeys) FullHelp() [][]key.Binding {
	k := h.k
	own := append(append([]key.Binding{h.enter}, bindingsOf(h.own)...), k.Back, k.Tab)
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		own,
		{k.Filter, k.Verdict, k.Node, k.Sort, k.Context},
		{k.Pause, k.Faster, k.Slower, k.SeekBack, k.SeekForward, k.PrevChange, k.NextChange},
		{k.Help, k.Quit, k.ForceQuit},
	}
}

// rankedBinding is a footer binding with its rank: when the footer is too narrow for all of
// them, the highest ranks are left out first; rank 0 is always shown.
type rankedBinding struct {
	b    key.Binding
	rank int
}

func bindingsOf(rbs []rankedBinding) []key.Binding {
	out := make([]key.Binding, len(rbs))
	for i, rb := range rbs {
		out[i] = rb.b
	}
	return out
}

// rankedHelp is a key map whose footer can be fitted to a width.
type rankedHelp interface {
	help.KeyMap
	shortRanked() []rankedBinding
}

// fitShort picks the footer bindings that fit on one line of width cells, ranks in order: every
// binding of rank 0, then each rank whose bindings all still fit (a rank that does not fit is
// skipped, a later, shorter one may). They keep their display order. bubbles' help would
// instead cut the line's tail, which is where help and quit are. sepWidth is the separator's.
func fitShort(rbs []rankedBinding, width, sepWidth int) []rankedBinding {
	itemWidth := func(b key.Binding) int {
		h := b.Help()
		return ansi.StringWidth(h.Key) + 1 + ansi.StringWidth(h.Desc)
	}
	maxRank := 0
	for _, rb := range rbs {
		maxRank = max(maxRank, rb.rank)
	}
	var keep [16]bool    // ranks taken; ranks are small constants
	cells, items := 0, 0 // the kept items' own widths, without separators
	for r := 0; r <= maxRank && r < len(keep); r++ {
		w, n := 0, 0
		for _, rb := range rbs {
			if rb.rank == r && rb.b.Enabled() {
				w += itemWidth(rb.b)
				n++
			}
		}
		if n == 0 {
			continue
		}
		if r == 0 || cells+w+sepWidth*(items+n-1) <= width {
			keep[r] = true
			cells += w
			items += n
		}
	}
	out := make([]rankedBinding, 0, len(rbs))
	for _, rb := range rbs {
		if rb.rank < len(keep) && keep[rb.rank] {
			out = append(out, rb)
		}
	}
	return out
}

// modeHelp is the help of a mode in which only some keys work (typing a filter, reading a pod's
// detail), so the footer offers no key that does nothing there.
type modeHelp struct {
	short []rankedBinding
	full  [][]key.Binding
}

func (m modeHelp) ShortHelp() []key.Binding     { return bindingsOf(m.short) }
func (m modeHelp) FullHelp() [][]key.Binding    { return m.full }
func (m modeHelp) shortRanked() []rankedBinding { return m.short }

// detailHelp is the help in the detail pane, which scrolls, opens the pod's log, copies a kubectl
// command (cp, whose help says which) and goes back.
func (k KeyMap) detailHelp(cp key.Binding) rankedHelp {
	return modeHelp{
		short: []rankedBinding{{k.Back, 1}, {k.Up, 2}, {k.Down, 2}, {k.PageDown, 3}, {k.Logs, 4}, {cp, 5}, {k.Help, 0}, {k.Quit, 0}},
		full:  [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}, {k.Logs, cp, k.Back}, {k.Help, k.Quit, k.ForceQuit}},
	}
}

// scrollHelp is the help in a pane that scrolls and goes back (the log), and copies a kubectl
// command when cp is enabled (describe, for a container that has no log).
func (k KeyMap) scrollHelp(cp key.Binding) rankedHelp {
	return modeHelp{
		short: []rankedBinding{{k.Back, 1}, {k.Up, 2}, {k.Down, 2}, {k.PageDown, 3}, {cp, 4}, {k.Help, 0}, {k.Quit, 0}},
		full:  [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}, {cp, k.Back}, {k.Help, k.Quit, k.ForceQuit}},
	}
}

// hints is a short inline hint, "esc back/clear · ↑/k up", from the bindings' own help.
func hints(bs ...key.Binding) string {
	parts := make([]string, 0, len(bs))
	for _, b := range bs {
		if b.Enabled() {
			h := b.Help()
			parts = append(parts, h.Key+" "+h.Desc)
		}
	}
	return strings.Join(parts, " · ")
}
