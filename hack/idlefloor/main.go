// Command idlefloor is a bubbletea program that draws one static line and does nothing else: what
// bubbletea's renderer costs an idle program by itself (its frame ticker runs at --fps whether or
// not the view changed). hack/benchscale measures it beside doomwatch's idle CPU.
package main

import (
	"flag"
	"fmt"
	"os"

	tea "charm.land/bubbletea/v2"
)

// m is the whole program: a static view; q quits.
type m struct{}

func (m) Init() tea.Cmd { return nil }
func (m) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok && k.String() == "q" {
		return m{}, tea.Quit
	}
	return m{}, nil
}
func (m) View() tea.View { v := tea.NewView("static"); v.AltScreen = true; return v }

func main() {
	fps := flag.Int("fps", 60, "the renderer's frame rate (bubbletea's default: 60)")
	flag.Parse()
	if _, err := tea.NewProgram(m{}, tea.WithFPS(*fps)).Run(); err != nil {
		fmt.Fprintln(os.Stderr, "idlefloor:", err)
		os.Exit(1)
	}
}
