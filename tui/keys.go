package tui

import "charm.land/bubbles/v2/key"

// KeyMap holds every key binding of the dashboard. The footer's help is generated from it, so the
// help can never drift from what the keys do.
type KeyMap struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	Enter, Back, Tab                        key.Binding
	Filter, Verdict, Node, Sort             key.Binding
	Help, Quit                              key.Binding
}

// DefaultKeyMap returns the bindings of issue 4.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown"), key.WithHelp("pgdn", "page down")),
		Top:      key.NewBinding(key.WithKeys("g", "home"), key.WithHelp("g", "top")),
		Bottom:   key.NewBinding(key.WithKeys("G", "end"), key.WithHelp("G", "bottom")),
		Enter:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "detail")),
		Back:     key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back/clear")),
		Tab:      key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "pods/nodes/rollouts")),
		Filter:   key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		Verdict:  key.NewBinding(key.WithKeys("v"), key.WithHelp("v", "verdict filter")),
		Node:     key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "this node only")),
		Sort:     key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort")),
		Help:     key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit:     key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
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
		{k.Help, k.Quit},
	}
}
