package tui

import (
	"slices"
	"strings"
	"testing"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"doomwatch/classify"
	"doomwatch/contract"
	"doomwatch/model"
)

func newTestDashboard(t *testing.T, w, h int) *dashboard {
	t.Helper()
	d := newDashboard(Options{Model: model.FleetOf("", fixtureModel()), Now: func() time.Time { return t0 }}, true)
	d.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return d
}

func press(d *dashboard, keys ...string) tea.Cmd {
	var cmd tea.Cmd
	for _, k := range keys {
		var msg tea.KeyPressMsg
		switch k {
		case "enter":
			msg = tea.KeyPressMsg{Code: tea.KeyEnter}
		case "esc":
			msg = tea.KeyPressMsg{Code: tea.KeyEscape}
		case "tab":
			msg = tea.KeyPressMsg{Code: tea.KeyTab}
		case "pgdown":
			msg = tea.KeyPressMsg{Code: tea.KeyPgDown}
		case "ctrl+c":
			msg = tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
		default:
			r := []rune(k)[0]
			msg = tea.KeyPressMsg{Code: r, Text: k}
		}
		_, cmd = d.Update(msg)
	}
	return cmd
}

func screen(d *dashboard) string { return ansi.Strip(d.render()) }

// rows is every row of the pod table, in order.
func rows(d *dashboard) []*model.Pod { return d.pods.rows.Append(nil, 0, d.pods.rows.Len()) }

func rowKeys(d *dashboard) []string {
	keys := make([]string, d.pods.rows.Len())
	for i, p := range rows(d) {
		keys[i] = p.Key
	}
	return keys
}

func TestSelectionFollowsPodAcrossResort(t *testing.T) {
	d := newTestDashboard(t, 200, 50)
	target := "shop/checkout-7d9f8b6c5-h03"
	for d.pods.selected() != nil && d.pods.selected().Key != target {
		before := d.pods.cur.sel
		press(d, "j")
		if d.pods.cur.sel == before {
			t.Fatalf("did not find %s in %v", target, rowKeys(d))
		}
	}
	idx := d.pods.cur.sel
	// Three healthy pods above the target start crash-looping: severity order moves them ahead.
	var b contract.Batch
	for _, name := range []string{"checkout-7d9f8b6c5-h04", "checkout-7d9f8b6c5-h05", "checkout-7d9f8b6c5-h06"} {
		p := fixturePod(t, "shop/"+name)
		p.Status.ContainerStatuses[0] = waiting("checkout", "registry.example.com/checkout:v2", "CrashLoopBackOff",
			backOff("1m20s", "checkout", "shop", name), 4, terminated("Error", "", 1, 10*time.Second))
		b.Pods = appendPods(b.Pods, p)
	}
	d.Update(batchMsg{batches: []contract.Batch{b}})
	if got := d.pods.selected(); got == nil || got.Key != target {
		t.Fatalf("selection moved to %v, want %s", got, target)
	}
	if d.pods.cur.sel == idx {
		t.Fatalf("the update did not re-sort (index %d unchanged); the test proves nothing", idx)
	}
	if !strings.Contains(screen(d), "▶ shop      checkout-7d9f8b6c5-h03") {
		t.Errorf("the marker is not on %s:\n%s", target, screen(d))
	}
}

func TestSelectionStaysOnTopUntilTheUserMoves(t *testing.T) {
	d := newTestDashboard(t, 200, 50)
	top := d.pods.selected()
	if top == nil || d.pods.cur.sel != 0 {
		t.Fatalf("the dashboard should open on the top row, got %v at %d", top, d.pods.cur.sel)
	}
	// The top pod recovers: every container runs ready, so it sorts below the other problems.
	topKey, topKind := top.Key, top.Verdict.Class
	var b contract.Batch
	p := fixturePod(t, topKey)
	for i, cs := range p.Status.ContainerStatuses {
		p.Status.ContainerStatuses[i] = running(cs.Name, cs.Image, cs.RestartCount, nil)
	}
	p.Status.Conditions = readyConds(true)
	b.Pods = appendPods(b.Pods, p)
	d.Update(batchMsg{batches: []contract.Batch{b}})
	if d.m.Pod(topKey).Verdict.Class == topKind {
		t.Fatalf("the update did not change %s's verdict; the test proves nothing", topKey)
	}
	if got := d.pods.selected(); d.pods.cur.sel != 0 || got == nil || got.Key == topKey {
		t.Fatalf("before any key the selection should stay on the (new) top row; it is at row %d (old top %s)",
			d.pods.cur.sel, topKey)
	}
}

func TestFilterKeys(t *testing.T) {
	d := newTestDashboard(t, 120, 30)
	all := d.pods.rows.Len()
	press(d, "/", "s", "e", "a", "r", "c", "h")
	if !d.filtering || d.query.Text != "search" {
		t.Fatalf("filtering=%v text=%q", d.filtering, d.query.Text)
	}
	if d.pods.rows.Len() == 0 || d.pods.rows.Len() >= all {
		t.Fatalf("filter kept %d of %d rows", d.pods.rows.Len(), all)
	}
	if !strings.Contains(screen(d), "/search") {
		t.Errorf("filter input not shown:\n%s", screen(d))
	}
	// While typing, q is text, not quit.
	if cmd := press(d, "q"); d.query.Text != "searchq" || isQuit(cmd) {
		t.Fatalf("q while filtering: text %q, quit %v", d.query.Text, isQuit(cmd))
	}
	press(d, "esc")
	if d.filtering || d.query.Text != "" || d.pods.rows.Len() != all {
		t.Fatalf("esc: filtering=%v text=%q rows=%d, want all %d", d.filtering, d.query.Text, d.pods.rows.Len(), all)
	}
	// enter keeps the filter and gives the keys back to the table.
	press(d, "/", "p", "a", "y", "enter")
	if d.filtering || d.query.Text != "pay" {
		t.Fatalf("enter: filtering=%v text=%q", d.filtering, d.query.Text)
	}
	if !strings.Contains(screen(d), "filter: pay") {
		t.Errorf("status line lacks the filter:\n%s", screen(d))
	}
	press(d, "esc")
	if d.query.Text != "" {
		t.Errorf("esc in the table should clear the filter, text %q", d.query.Text)
	}
}

func isQuit(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	_, ok := cmd().(tea.QuitMsg)
	return ok
}

func TestVerdictFilterCycle(t *testing.T) {
	d := newTestDashboard(t, 120, 30)
	want := []struct {
		name string
		ok   func(classify.Class) bool
	}{
		{"problems", func(k classify.Class) bool { return k == classify.Transient || k == classify.Doomed }},
		{"doomed", func(k classify.Class) bool { return k == classify.Doomed }},
		{"transient", func(k classify.Class) bool { return k == classify.Transient }},
		{"all", func(classify.Class) bool { return true }},
	}
	for _, w := range want {
		press(d, "v")
		if !strings.Contains(screen(d), "verdict: "+w.name) {
			t.Errorf("status line does not say verdict: %s:\n%s", w.name, screen(d))
		}
		if d.pods.rows.Len() == 0 {
			t.Errorf("%s: no rows", w.name)
		}
		for _, p := range rows(d) {
			if !w.ok(p.Verdict.Class) {
				t.Errorf("%s: row %s is %s", w.name, p.Key, p.Verdict.Class)
			}
		}
	}
	if d.pods.rows.Len() != 19 {
		t.Errorf("back at all: %d rows, want 19", d.pods.rows.Len())
	}
}

func TestSortCycle(t *testing.T) {
	d := newTestDashboard(t, 120, 30)
	if first := d.pods.rows.At(0); first.Verdict.Class != classify.Doomed {
		t.Errorf("severity sort starts with %s (%s)", first.Key, first.Verdict.Class)
	}
	press(d, "s")
	if !strings.Contains(screen(d), "sort: name") || d.pods.rows.At(0).Key != "batch/report-29437-xq7zt" {
		t.Errorf("name sort: first row %s:\n%s", d.pods.rows.At(0).Key, screen(d))
	}
	press(d, "s")
	if !strings.Contains(screen(d), "sort: node") || d.pods.rows.At(0).Node != "node-1" {
		t.Errorf("node sort: first row on %s", d.pods.rows.At(0).Node)
	}
	press(d, "s")
	if !strings.Contains(screen(d), "sort: age") || !strings.HasPrefix(d.pods.rows.At(0).Name, "payments") {
		t.Errorf("age sort (newest first): first row %s", d.pods.rows.At(0).Key)
	}
	press(d, "s")
	if !strings.Contains(screen(d), "sort: severity") {
		t.Errorf("sort did not cycle back to severity")
	}
}

func TestNodeOnly(t *testing.T) {
	d := newTestDashboard(t, 120, 30)
	d.pods.selectKey("shop/checkout-7d9f8b6c5-f00")
	press(d, "n")
	if d.query.Node != "node-3" || d.pods.rows.Len() != 4 {
		t.Fatalf("n: node %q, %d rows; want node-3's 4 pods", d.query.Node, d.pods.rows.Len())
	}
	for _, p := range rows(d) {
		if p.Node != "node-3" {
			t.Errorf("row %s is on %s", p.Key, p.Node)
		}
	}
	press(d, "n")
	if d.query.Node != "" || d.pods.rows.Len() != 19 {
		t.Errorf("second n: node %q, %d rows", d.query.Node, d.pods.rows.Len())
	}
	// From the nodes panel, n (or enter) narrows to the selected node: the suspect is first.
	press(d, "tab", "enter")
	if d.focus != FocusPods || d.query.Node != "node-3" {
		t.Errorf("enter on the nodes panel: focus %d node %q", d.focus, d.query.Node)
	}
}

func TestTabDetailAndHelp(t *testing.T) {
	d := newTestDashboard(t, 80, 24)
	press(d, "tab")
	if !strings.Contains(screen(d), "⚠ SUSPECT") {
		t.Errorf("tab should show the nodes panel:\n%s", screen(d))
	}
	press(d, "tab")
	if !strings.Contains(screen(d), "ROLLOUTS") || !strings.Contains(screen(d), "payments") {
		t.Errorf("second tab should show the rollouts:\n%s", screen(d))
	}
	press(d, "tab")
	d.pods.selectKey("shop/api-7d9f8b6c5-xk2lq")
	press(d, "enter")
	s := screen(d)
	if !d.showDetail || !strings.Contains(s, "POD shop/api-7d9f8b6c5-xk2lq") {
		t.Fatalf("enter should open the detail:\n%s", s)
	}
	if strings.Contains(s, "(sidecar)") {
		t.Fatalf("the sidecar should be below the fold at 80x24 for this test to mean anything")
	}
	press(d, "pgdown")
	if s := screen(d); !strings.Contains(s, "(sidecar)") || !strings.Contains(s, "running since") {
		t.Errorf("page down should reveal the containers:\n%s", s)
	}
	press(d, "esc")
	if d.showDetail || !strings.Contains(screen(d), "PODS") {
		t.Errorf("esc should go back to the table")
	}
	press(d, "?")
	if s := screen(d); !strings.Contains(s, "page down") || !strings.Contains(s, "verdict filter") {
		t.Errorf("? should show the full help:\n%s", s)
	}
	if cmd := press(d, "q"); !isQuit(cmd) {
		t.Errorf("q should quit")
	}
	if cmd := press(d, "ctrl+c"); !isQuit(cmd) {
		t.Errorf("ctrl+c should quit")
	}
}

func TestResize(t *testing.T) {
	d := newTestDashboard(t, 80, 24)
	for _, sz := range [][2]int{{40, 10}, {59, 30}, {100, 14}} {
		d.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		if s := screen(d); !strings.Contains(s, "too small") {
			t.Errorf("%dx%d: %q", sz[0], sz[1], s)
		}
	}
	d.Update(tea.WindowSizeMsg{Width: 60, Height: 15})
	s := screen(d)
	if strings.Contains(s, "too small") || !strings.Contains(s, "PODS") {
		t.Errorf("60x15 should be usable:\n%s", s)
	}
	checkFrame(t, d.render(), 60, 15)
	// Growing shows more columns: the least useful ones come back.
	d.Update(tea.WindowSizeMsg{Width: 220, Height: 40})
	if s := screen(d); !strings.Contains(s, "LAST STATE") || !strings.Contains(s, "NAMESPACE") {
		t.Errorf("220 columns should show every column:\n%s", s)
	}
}

func TestMouse(t *testing.T) {
	d := newTestDashboard(t, 120, 30)
	f := d.computeFrame()
	d.Update(tea.MouseClickMsg{X: 5, Y: f.bodyTop + 2 + 3, Button: tea.MouseLeft})
	if d.pods.cur.sel != 3 {
		t.Errorf("click on the 4th row selected row %d", d.pods.cur.sel)
	}
	want := d.pods.rows.At(3).Key
	marked := ""
	for _, line := range strings.Split(screen(d), "\n") {
		if strings.HasPrefix(line, "▶ ") {
			marked = line
		}
	}
	if !strings.Contains(marked, strings.TrimPrefix(want, "shop/")+" ") {
		t.Errorf("the marker is not on the clicked row %s:\n%s", want, screen(d))
	}
	d.Update(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	if d.pods.cur.offset == 0 && d.pods.cur.sel == 3 {
		t.Errorf("the wheel did not scroll")
	}
}

func TestHealthAndSourceStates(t *testing.T) {
	m := model.New(model.DefaultConfig())
	b := contract.Batch{Health: &contract.Health{PodsSeen: 3412}}
	m.Apply(&b, t0)
	frame := RenderFrame(m, FrameOptions{Width: 100, Height: 20, Now: t0, NoColor: true})
	if !strings.Contains(frame, "syncing pods: 3,412 …") {
		t.Errorf("unsynced header:\n%s", frame)
	}
	b = contract.Batch{Health: &contract.Health{Synced: true, LastEvent: t0.Add(-12 * time.Second),
		WatchError: "connection refused", Forbidden: []contract.Kind{contract.KindNode}}}
	m.Apply(&b, t0)
	frame = RenderFrame(m, FrameOptions{Width: 140, Height: 20, Now: t0, NoColor: true})
	if !strings.Contains(frame, "reconnecting: connection refused · last update 12s ago") ||
		!strings.Contains(frame, "forbidden: nodes") {
		t.Errorf("broken watch header:\n%s", frame)
	}
	d := newDashboard(Options{Model: model.FleetOf("", m), Now: func() time.Time { return t0 }}, true)
	d.Update(tea.WindowSizeMsg{Width: 100, Height: 20})
	d.Update(sourceClosedMsg{})
	if !strings.Contains(screen(d), "source stopped") {
		t.Errorf("closed source:\n%s", screen(d))
	}
}

var _ = corev1.PodRunning

// TestKeysComeFromTheKeyMap: rebinding the filter's and the detail's keys changes what they do
// and what the hints say, together; no key is matched as a raw string behind the map's back.
func TestKeysComeFromTheKeyMap(t *testing.T) {
	d := newTestDashboard(t, 120, 30)
	d.c.keys.Accept = key.NewBinding(key.WithKeys("ctrl+j"), key.WithHelp("ctrl+j", "keep filter"))
	d.c.keys.ForceQuit = key.NewBinding(key.WithKeys("ctrl+x"), key.WithHelp("ctrl+x", "leave"))
	d.c.keys.Back = key.NewBinding(key.WithKeys("backspace"), key.WithHelp("⌫", "return"))
	ctrl := func(r rune) tea.KeyPressMsg { return tea.KeyPressMsg{Code: r, Mod: tea.ModCtrl} }

	press(d, "/", "p", "a", "y")
	footer := lastLine(screen(d))
	for _, want := range []string{"ctrl+j keep filter", "ctrl+x leave", "esc clear filter"} {
		if !strings.Contains(footer, want) {
			t.Errorf("filter footer lacks %q: %q", want, footer)
		}
	}
	if strings.Contains(footer, "q quit") {
		t.Errorf("filter footer offers q, which is text while typing: %q", footer)
	}
	if _, cmd := d.Update(ctrl('c')); isQuit(cmd) {
		t.Errorf("ctrl+c quit although ForceQuit is bound to ctrl+x")
	}
	press(d, "enter")
	if !d.filtering {
		t.Fatalf("enter ended the filter although Accept is bound to ctrl+j")
	}
	d.Update(ctrl('j'))
	if d.filtering || d.query.Text != "pay" {
		t.Fatalf("ctrl+j (Accept): filtering=%v text=%q", d.filtering, d.query.Text)
	}
	press(d, "/")
	if _, cmd := d.Update(ctrl('x')); !isQuit(cmd) {
		t.Errorf("ctrl+x (ForceQuit) did not quit while filtering")
	}
	press(d, "esc")

	d.pods.selectKey("shop/api-7d9f8b6c5-xk2lq")
	press(d, "enter")
	s := screen(d)
	if !strings.Contains(s, "POD shop/api-7d9f8b6c5-xk2lq  ⌫ return · ↑/k up · ↓/j down") {
		t.Errorf("detail title hint not from the key map:\n%s", s)
	}
	if footer := lastLine(s); !strings.Contains(footer, "⌫ return") || strings.Contains(footer, "/ filter") {
		t.Errorf("detail footer should offer the detail's keys only: %q", footer)
	}
	press(d, "esc")
	if !d.showDetail {
		t.Fatalf("esc left the detail although Back is bound to backspace")
	}
	d.Update(tea.KeyPressMsg{Code: tea.KeyBackspace})
	if d.showDetail {
		t.Errorf("backspace (Back) did not leave the detail")
	}
}

func lastLine(s string) string { return s[strings.LastIndexByte(s, '\n')+1:] }

// TestFooterKeepsHelpAndQuit: however narrow the terminal, the footer offers `? help` and
// `q quit` (bubbles' help would cut the line's tail, where they are) and never overflows; a wide
// footer shows every key.
func TestFooterKeepsHelpAndQuit(t *testing.T) {
	for _, w := range []int{60, 64, 72, 80, 100, 120, 200} {
		d := newTestDashboard(t, w, 24)
		footer := lastLine(screen(d))
		if !strings.HasSuffix(footer, "? help • q quit") {
			t.Errorf("%d columns: footer does not end in help and quit: %q", w, footer)
		}
		if fw := ansi.StringWidth(footer); fw > w {
			t.Errorf("%d columns: footer is %d cells wide: %q", w, fw, footer)
		}
		if strings.Contains(footer, "…") {
			t.Errorf("%d columns: footer was cut instead of fitted: %q", w, footer)
		}
		if w == 80 && !strings.Contains(footer, "/ filter") {
			t.Errorf("80 columns: the filter key should still fit: %q", footer)
		}
		if w == 200 {
			for _, b := range d.c.keys.ShortHelp() {
				if !b.Enabled() {
					continue // c (next context) with one cluster
				}
				if h := b.Help(); !strings.Contains(footer, h.Key+" "+h.Desc) {
					t.Errorf("200 columns: footer lacks %q: %q", h.Key+" "+h.Desc, footer)
				}
			}
		}
	}
	// The detail pane's footer keeps them too.
	d := newTestDashboard(t, 60, 24)
	d.pods.selectKey("shop/api-7d9f8b6c5-xk2lq")
	press(d, "enter")
	if footer := lastLine(screen(d)); !strings.HasSuffix(footer, "? help • q quit") || !strings.Contains(footer, "esc back/clear") {
		t.Errorf("detail footer at 60 columns: %q", footer)
	}
}

// TestEnterOnRolloutShowsExactlyItsPods: enter on a rollout shows the pods of that Deployment and
// no namesake (a StatefulSet "checkout-db", an unmanaged "checkout-debug" pod), which a text filter
// on "checkout" would catch; the status line says so and esc shows every pod again.
func TestEnterOnRolloutShowsExactlyItsPods(t *testing.T) {
	b := fixtureBatch()
	run := []corev1.ContainerStatus{running("app", "registry.example.com/app:v1", 0, nil)}
	db := mkPod(podSpec{ns: "shop", name: "checkout-db-0", node: "node-1", created: time.Hour, status: run})
	db.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "checkout-db",
		UID: "uid-sts", Controller: ptr(true)}}
	b.Pods = appendPods(b.Pods, db, mkPod(podSpec{ns: "shop", name: "checkout-debug", node: "node-2", created: time.Hour, status: run}))
	m := model.New(model.DefaultConfig())
	m.Apply(&b, t0)
	if fuzzy := m.View(model.Query{Text: "checkout"}); !slices.ContainsFunc(fuzzy, func(p *model.Pod) bool { return p.Name == "checkout-db-0" }) {
		t.Fatalf("a text filter on the name should catch the namesake, or this test proves nothing")
	}
	want := 0
	for _, p := range m.View(model.Query{}) {
		if p.Namespace == "shop" && p.Owner == "Deployment/checkout" {
			want++
		}
	}
	d := newDashboard(Options{Model: model.FleetOf("", m), Now: func() time.Time { return t0 }}, true)
	d.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	d.query.Text = "payments" // a leftover text filter must not hide the rollout's pods
	press(d, "tab", "tab")
	for d.rollouts.selected().Name != "checkout" {
		before := d.rollouts.cur.sel
		press(d, "j")
		if d.rollouts.cur.sel == before {
			t.Fatalf("no checkout rollout:\n%s", screen(d))
		}
	}
	press(d, "enter")
	s := screen(d)
	if d.focus != FocusPods || d.pods.rows.Len() != want || want < 10 {
		t.Fatalf("enter on checkout: focus %d, %d pods, want the rollout's %d:\n%s", d.focus, d.pods.rows.Len(), want, s)
	}
	for _, p := range rows(d) {
		if p.Namespace != "shop" || p.Owner != "Deployment/checkout" {
			t.Errorf("%s (owner %q) is not checkout's", p.Key, p.Owner)
		}
	}
	if !strings.Contains(s, "owner: shop/Deployment/checkout") || strings.Contains(s, "checkout-db-0") ||
		strings.Contains(s, "checkout-debug") || strings.Contains(s, "filter: ") {
		t.Errorf("screen should show only checkout's pods and say which owner:\n%s", s)
	}
	press(d, "esc")
	s = screen(d)
	if d.query.Owner != "" || d.pods.rows.Len() != d.pods.total || strings.Contains(s, "owner: ") {
		t.Errorf("esc should clear the owner filter: owner %q, %d of %d pods:\n%s", d.query.Owner, d.pods.rows.Len(), d.pods.total, s)
	}
}

// TestRolloutSelectionFollowsTheDeployment: the model lists doomed rollouts first, so when another
// Deployment turns doomed the rows move; the selection stays on the chosen Deployment, and enter
// shows its pods, not those of whichever rollout now has its row.
func TestRolloutSelectionFollowsTheDeployment(t *testing.T) {
	for _, how := range []string{"keys", "click"} {
		t.Run(how, func(t *testing.T) { testRolloutSelectionFollows(t, how) })
	}
}

func testRolloutSelectionFollows(t *testing.T, how string) {
	d := newTestDashboard(t, 160, 40)
	// zeta rolls out and sorts after checkout while it progresses.
	zeta, zetaRS := deployment("zeta", 2, 2, 0)
	d.Update(batchMsg{batches: []contract.Batch{{Workloads: contract.Workloads(zeta, zetaRS)}}})
	press(d, "tab", "tab")
	idx := slices.IndexFunc(d.rollouts.rollouts, func(r model.Rollout) bool { return r.Name == "checkout" })
	switch how {
	case "keys":
		for d.rollouts.cur.sel < idx {
			press(d, "j")
		}
	case "click":
		d.Update(tea.MouseClickMsg{X: 10, Y: d.computeFrame().bodyTop + 2 + idx, Button: tea.MouseLeft})
	}
	if got := d.rollouts.selected(); got == nil || got.Name != "checkout" {
		t.Fatalf("selecting checkout by %s selected %v:\n%s", how, got, screen(d))
	}

	// zeta exceeds its progress deadline: doomed, so it sorts ahead of checkout, onto its row.
	dep := zeta.DeepCopy()
	dep.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing,
		Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"}}
	d.Update(batchMsg{batches: []contract.Batch{{Workloads: contract.Workloads(dep)}}})
	if i := slices.IndexFunc(d.rollouts.rollouts, func(r model.Rollout) bool { return r.Name == "checkout" }); i == idx {
		t.Fatalf("checkout is still at row %d after zeta turned doomed; the test proves nothing:\n%s", idx, screen(d))
	}
	if got := d.rollouts.selected(); got == nil || got.Name != "checkout" {
		t.Fatalf("selection moved to %v, want checkout:\n%s", got, screen(d))
	}
	if !strings.Contains(screen(d), "▶ shop      checkout ") {
		t.Errorf("the marker is not on checkout:\n%s", screen(d))
	}
	press(d, "enter")
	if d.query.Owner != "shop/Deployment/checkout" {
		t.Errorf("enter filtered owner %q, want checkout's", d.query.Owner)
	}
}

// TestEnterHelpSaysWhatEnterDoes: enter opens a pod's detail but, on a node or a rollout, shows
// its pods; the footer and the full help say which, as README's key table does.
func TestEnterHelpSaysWhatEnterDoes(t *testing.T) {
	d := newTestDashboard(t, 160, 40)
	for _, want := range []string{"enter detail", "enter node's pods", "enter rollout's pods"} {
		if footer := lastLine(screen(d)); !strings.Contains(footer, want) {
			t.Errorf("focus %d: footer lacks %q: %q", d.focus, want, footer)
		}
		press(d, "?")
		if s := screen(d); !strings.Contains(s, want) {
			t.Errorf("focus %d: full help lacks %q:\n%s", d.focus, want, s)
		}
		press(d, "?", "tab")
	}
}
