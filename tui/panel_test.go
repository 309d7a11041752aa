package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"doomwatch/model"
)

// spyPanel wraps a panel and records how the root sized and drew it.
type spyPanel struct {
	panel
	w, h, sized int
	drawn       []bool // the focused argument of each View
}

func (s *spyPanel) SetSize(w, h int) {
	s.w, s.h = w, h
	s.sized++
	s.panel.SetSize(w, h)
}

func (s *spyPanel) View(focused bool) string {
	s.drawn = append(s.drawn, focused)
	return s.panel.View(focused)
}

// fakePanel is a panel added to the dashboard the way a new one is: one entry in the slice. It
// answers its own key, frob, with nav.
type fakePanel struct {
	c         *common
	frob      key.Binding
	nav       tea.Msg
	w, h      int
	refreshed int
	got       []tea.Msg
}

func newFakePanel(c *common) *fakePanel {
	return &fakePanel{c: c, frob: key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "frob"))}
}

func (f *fakePanel) SetSize(w, h int) { f.w, f.h = w, h }

func (f *fakePanel) Update(msg tea.Msg) (tea.Msg, tea.Cmd) {
	f.got = append(f.got, msg)
	if k, ok := msg.(tea.KeyPressMsg); ok && key.Matches(k, f.frob) {
		return f.nav, nil
	}
	return nil, nil
}

func (f *fakePanel) View(focused bool) string {
	return fmt.Sprintf("FAKE focused=%v %dx%d", focused, f.w, f.h)
}

func (f *fakePanel) Help() rankedHelp {
	return f.c.keys.listHelp(withDesc(f.c.keys.Enter, "fake's pods"), rankedBinding{f.frob, 2})
}

func (f *fakePanel) Refresh(*snapshot) { f.refreshed++ }

// fakePane is a pane opened by openFakeMsg.
type fakePane struct {
	*fakePanel
	opened, closed int
}

// openFakeMsg opens the fake pane.
type openFakeMsg struct{}

func (p *fakePane) Open(msg tea.Msg) (bool, tea.Cmd) {
	if _, ok := msg.(openFakeMsg); !ok {
		return false, nil
	}
	p.opened++
	return true, nil
}

func (p *fakePane) Close() { p.closed++ }

func (p *fakePane) View(bool) string { return fmt.Sprintf("FAKE PANE %dx%d", p.w, p.h) }

// TestTabSizesAndDrawsEveryPanelInTurn: tab cycles through every panel of the slice, a new one
// included, and back to the pods; each is sized to the body and drawn focused when its turn
// comes, and one that is not shown is left alone (it keeps its place).
func TestTabSizesAndDrawsEveryPanelInTurn(t *testing.T) {
	d := newTestDashboard(t, 120, 30)
	fake := newFakePanel(d.c)
	d.panels = append(d.panels, fake)
	spies := make([]*spyPanel, len(d.panels))
	for i, p := range d.panels {
		spies[i] = &spyPanel{panel: p}
		d.panels[i] = spies[i]
	}
	d.Update(tea.WindowSizeMsg{Width: 110, Height: 30})
	for turn := range len(d.panels) + 1 {
		i := turn % len(d.panels)
		if d.focus != Focus(i) {
			t.Fatalf("after %d tabs the focus is %d, want %d", turn, d.focus, i)
		}
		s := spies[i]
		// The pods share the body with the nodes panel under them.
		if f := d.computeFrame(); s.sized == 0 || s.w != 110 || s.h != f.main.h || f.main.p != panel(s) {
			t.Errorf("panel %d: sized %d times, last %dx%d, want the body's 110x%d", i, s.sized, s.w, s.h, f.main.h)
		}
		for _, o := range spies {
			o.drawn = nil
		}
		screen(d)
		for j, o := range spies {
			if want := j == i; len(o.drawn) != btoi(want) || want && !o.drawn[0] {
				t.Errorf("with panel %d focused, panel %d was drawn %v", i, j, o.drawn)
			}
		}
		sized := make([]int, len(spies))
		for j, o := range spies {
			sized[j] = o.sized
		}
		press(d, "tab")
		next := int(d.focus)
		for j, o := range spies {
			if j != next && o.sized != sized[j] {
				t.Errorf("tab to panel %d resized panel %d, which is not focused", next, j)
			}
		}
	}
	if !strings.Contains(screen(d), "PODS") {
		t.Errorf("tab after the last panel should come back to the pods:\n%s", screen(d))
	}
}

// TestAPanelIsOneSliceEntry: a panel appended to the slice gets the model's updates, the keys the
// root does not take, the messages no one asked for and the footer's help, and the root handles
// what its keys answer.
func TestAPanelIsOneSliceEntry(t *testing.T) {
	d := newTestDashboard(t, 160, 30)
	fake := newFakePanel(d.c)
	fake.nav = showPodsMsg{node: "node-3"}
	d.panels = append(d.panels, fake)
	press(d, "tab", "tab", "tab")
	if d.focus != 3 || !strings.Contains(screen(d), "FAKE focused=true 160x") {
		t.Fatalf("three tabs should focus the new panel:\n%s", screen(d))
	}
	if footer := lastLine(screen(d)); !strings.Contains(footer, "x frob") || !strings.Contains(footer, "enter fake's pods") {
		t.Errorf("the footer should show the panel's own help: %q", footer)
	}
	press(d, "?")
	if s := screen(d); !strings.Contains(s, "frob") {
		t.Errorf("the full help should show the panel's own keys:\n%s", s)
	}
	press(d, "?")
	before := fake.refreshed
	d.Update(batchMsg{})
	d.opts.Now = func() time.Time { return t0.Add(time.Hour) } // the ages on screen move
	d.Update(tickMsg{})
	if fake.refreshed != before+2 {
		t.Errorf("a batch and a tick refreshed the panel %d times, want 2", fake.refreshed-before)
	}
	type elseMsg struct{}
	press(d, "j")
	d.Update(elseMsg{})
	if n := len(fake.got); n < 2 || fake.got[n-2] != (tea.Msg)(tea.KeyPressMsg{Code: 'j', Text: "j"}) || fake.got[n-1] != (tea.Msg)(elseMsg{}) {
		t.Errorf("the panel should get the list keys and unknown messages, got %v", fake.got)
	}
	press(d, "x")
	if d.focus != FocusPods || d.query.Node != "node-3" || d.pods.rows.Len() != 4 {
		t.Errorf("the panel's answer showPodsMsg{node-3}: focus %d node %q, %d rows", d.focus, d.query.Node, d.pods.rows.Len())
	}
}

// TestAPaneIsOneSliceEntry: a pane appended to the slice opens on its message over the body, is
// sized, refreshed and drawn, gets the keys and the footer; esc closes it and gives the panels back.
func TestAPaneIsOneSliceEntry(t *testing.T) {
	d := newTestDashboard(t, 120, 30)
	p := &fakePane{fakePanel: newFakePanel(d.c)}
	d.panes = append(d.panes, p)
	press(d, "tab")
	d.Update(openFakeMsg{})
	f := d.computeFrame()
	if p.opened != 1 || !d.showDetail || p.w != 120 || p.h != f.bodyH || p.refreshed == 0 {
		t.Fatalf("openFakeMsg: opened %d, shown %v, %dx%d (body %d), refreshed %d", p.opened, d.showDetail, p.w, p.h, f.bodyH, p.refreshed)
	}
	if s := screen(d); !strings.Contains(s, "FAKE PANE") || strings.Contains(s, "NODES") {
		t.Errorf("the pane should cover the body:\n%s", s)
	}
	if footer := lastLine(screen(d)); !strings.Contains(footer, "x frob") {
		t.Errorf("the footer should show the pane's help: %q", footer)
	}
	before := p.refreshed
	d.Update(batchMsg{})
	if p.refreshed != before+1 {
		t.Errorf("a batch refreshed the open pane %d times, want 1", p.refreshed-before)
	}
	press(d, "j", "tab")
	if d.focus != FocusNodes || len(p.got) < 2 {
		t.Errorf("keys should go to the pane, not the panels: focus %d, pane got %v", d.focus, p.got)
	}
	press(d, "esc")
	if d.showDetail || p.closed != 1 || !strings.Contains(screen(d), "NODES") {
		t.Errorf("esc: shown %v, closed %d:\n%s", d.showDetail, p.closed, screen(d))
	}
	before = p.refreshed
	d.Update(batchMsg{})
	if p.refreshed != before {
		t.Errorf("a closed pane was refreshed")
	}
}

// TestKeysAnswerNavigationMessages: enter and n do not reach into the root; each panel answers
// them with a typed message naming where they lead.
func TestKeysAnswerNavigationMessages(t *testing.T) {
	d := newTestDashboard(t, 120, 30)
	enter, n := tea.KeyPressMsg{Code: tea.KeyEnter}, tea.KeyPressMsg{Code: 'n', Text: "n"}
	d.pods.selectKey("shop/checkout-7d9f8b6c5-f00")
	d.nodes.selectKey("node-2")
	checkout := d.rollouts.rollouts[0]
	for i := range d.rollouts.rollouts {
		if d.rollouts.rollouts[i].Name == "checkout" {
			checkout = d.rollouts.rollouts[i]
		}
	}
	d.rollouts.selectKey(checkout.Workload())
	for _, c := range []struct {
		name string
		p    panel
		key  tea.KeyPressMsg
		want tea.Msg
	}{
		{"enter on a pod", d.pods, enter, openDetailMsg{key: "shop/checkout-7d9f8b6c5-f00"}},
		{"n on a pod", d.pods, n, showPodsMsg{node: "node-3"}},
		{"enter on a node", d.nodes, enter, showPodsMsg{node: "node-2"}},
		{"n on a node", d.nodes, n, showPodsMsg{node: "node-2"}},
		{"enter on a rollout", d.rollouts, enter, showPodsMsg{owner: "shop/Deployment/checkout"}},
		{"n on a rollout", d.rollouts, n, nil},
	} {
		if nav, _ := c.p.Update(c.key); nav != c.want {
			t.Errorf("%s answered %#v, want %#v", c.name, nav, c.want)
		}
	}
	// An empty list answers nothing.
	empty := newNodesPanel(d.c, 0)
	if nav, _ := empty.Update(enter); nav != nil {
		t.Errorf("enter on an empty nodes panel answered %#v", nav)
	}
}

// TestNavigationMessagesShowWhereTheyLead: the root handles showPodsMsg and openDetailMsg the
// same, whoever sends them.
func TestNavigationMessagesShowWhereTheyLead(t *testing.T) {
	d := newTestDashboard(t, 120, 30)
	press(d, "tab", "tab")
	d.query.Text = "checkout"
	d.Update(showPodsMsg{node: "node-3"})
	if d.focus != FocusPods || d.query.Node != "node-3" || d.query.Text != "checkout" {
		t.Errorf("showPodsMsg{node}: focus %d, query %+v; want the pods, node-3, the text kept", d.focus, d.query)
	}
	d.Update(showPodsMsg{owner: "shop/Deployment/checkout"})
	if d.query.Owner != "shop/Deployment/checkout" || d.query.Node != "" || d.query.Text != "" {
		t.Errorf("showPodsMsg{owner}: query %+v; the node and text filters could hide the workload's pods", d.query)
	}
	for _, p := range rows(d) {
		if p.Owner != "Deployment/checkout" {
			t.Errorf("%s is not checkout's", p.Key)
		}
	}
	key := "shop/api-7d9f8b6c5-xk2lq"
	d.Update(openDetailMsg{key: key})
	if !d.showDetail || !strings.Contains(screen(d), "POD "+key) {
		t.Fatalf("openDetailMsg should open the pod's detail:\n%s", screen(d))
	}
	d.Update(showPodsMsg{})
	if d.showDetail || d.focus != FocusPods || d.query.Owner != "shop/Deployment/checkout" {
		t.Errorf("showPodsMsg{} should bring back the table as it was: detail %v focus %d query %+v",
			d.showDetail, d.focus, d.query)
	}
}

// TestDetailKeepsTheTablesPlace: back from a pod's detail, the table shows the rows it showed
// before, although the detail took the body the nodes panel shares with it.
func TestDetailKeepsTheTablesPlace(t *testing.T) {
	d := newTestDashboard(t, 120, 27)
	if f := d.computeFrame(); f.below.h == 0 {
		t.Fatalf("at 120x27 the nodes panel should be under the pods for this test to mean anything")
	}
	press(d, "G", "k", "k", "k", "k", "k", "k", "k", "k")
	if d.pods.cur.offset == 0 {
		t.Fatalf("the table did not scroll")
	}
	table := func() string {
		f := d.computeFrame()
		return strings.Join(strings.Split(screen(d), "\n")[f.main.top:f.main.top+f.main.h], "\n")
	}
	before := table()
	press(d, "enter")
	if !d.showDetail {
		t.Fatal("enter did not open the detail")
	}
	press(d, "esc")
	if got := table(); got != before {
		t.Errorf("the table moved:\n--- before ---\n%s\n--- after ---\n%s", before, got)
	}
}

// TestQueryBarEscDropsOneFilterAtATime: esc over the panels drops the text filter, then the
// owner, the node and the verdict filter, in that order, and keeps the sort.
func TestQueryBarEscDropsOneFilterAtATime(t *testing.T) {
	b := newQueryBar(true)
	b.query = model.Query{Text: "pay", Owner: "shop/Deployment/payments", Node: "node-3", Filter: model.Filter(2), Sort: model.Sort(1)}
	b.input.SetValue("pay")
	esc := tea.KeyPressMsg{Code: tea.KeyEscape}
	for _, want := range []model.Query{
		{Owner: "shop/Deployment/payments", Node: "node-3", Filter: model.Filter(2), Sort: model.Sort(1)},
		{Node: "node-3", Filter: model.Filter(2), Sort: model.Sort(1)},
		{Filter: model.Filter(2), Sort: model.Sort(1)},
		{Sort: model.Sort(1)},
		{Sort: model.Sort(1)},
	} {
		if !b.edit(esc, DefaultKeyMap()) || b.query != want {
			t.Errorf("esc: query %+v, want %+v", b.query, want)
		}
	}
	if b.input.Value() != "" {
		t.Errorf("the input still holds %q after the text filter went", b.input.Value())
	}
}
