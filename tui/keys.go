package tui

import (
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
)

// KeyMap holds every key binding of the dashboard. The footer's help and every other key hint
// are generated from it, so the help can never drift from what the keys do.
type KeyMap struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	Enter, Back, Tab                        key.Binding
	Filter, Verdict, Node, Sort             key.Binding
	Help, Quit                              key.Binding
	// Accept and Clear end the `/` filter's input, keeping or dropping the text. ForceQuit quits
	// even while typing, where q is text.
	Accept, Clear, ForceQuit key.Binding
}

// DefaultKeyMap returns the bindings of issue 4.
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
		Help:      key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit:      key.NewBinding(key.WithKeys("q"), key.WithHelp("q", "quit")),
		Accept:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "apply filter")),
		Clear:     key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear filter")),
		ForceQuit: key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit")),
	}
}

// ShortHelp is the one-line footer.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.Enter, k.Tab, k.Filter, k.Verdict, k.Node, k.Sort, k.Help, k.Quit}
}

// FullHelp is the help that `?` opens.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.Enter, k.Back, k.Tab},
		{k.Filter, k.Verdict, k.Node, k.Sort},
		{k.Help, k.Quit, k.ForceQuit},
	}
}

// modeHelp is the help of a mode in which only some keys work (typing a filter, reading a pod's
// detail), so the footer offers no key that does nothing there.
type modeHelp struct {
	short []key.Binding
	full  [][]key.Binding
}

func (m modeHelp) ShortHelp() []key.Binding  { return m.short }
func (m modeHelp) FullHelp() [][]key.Binding { return m.full }

// filterHelp is the help while typing a `/` filter: every other key is text.
func (k KeyMap) filterHelp() help.KeyMap {
	keys := []key.Binding{k.Accept, k.Clear, k.ForceQuit}
	return modeHelp{short: keys, full: [][]key.Binding{keys}}
}

// detailHelp is the help in the detail pane, which scrolls and goes back.
func (k KeyMap) detailHelp() help.KeyMap {
	return modeHelp{
		short: []key.Binding{k.Back, k.Up, k.Down, k.PageDown, k.Help, k.Quit},
		full:  [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}, {k.Back}, {k.Help, k.Quit, k.ForceQuit}},
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
