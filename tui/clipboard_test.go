package tui

import (
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	corev1 "k8s.io/api/core/v1"

	"doomwatch/contract"
	"doomwatch/model"
)

// clipboardOf runs cmd and returns the text of the tea.SetClipboard it is (or batches), and
// whether it is one. Only a cmd made by a key is run here: none of those sleeps.
func clipboardOf(cmd tea.Cmd) (string, bool) {
	if cmd == nil {
		return "", false
	}
	want := reflect.TypeOf(tea.SetClipboard("")())
	switch msg := cmd().(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			if s, ok := clipboardOf(c); ok {
				return s, true
			}
		}
		return "", false
	default:
		if reflect.TypeOf(msg) == want {
			return reflect.ValueOf(msg).String(), true
		}
		return "", false
	}
}

// hasHelp reports whether the help on screen s offers key with desc: "y copy logs" on the footer,
// or the key and its description in the columns of the full help.
func hasHelp(s, key, desc string) bool {
	return regexp.MustCompile(`(^|\s)` + regexp.QuoteMeta(key) + `\s+` + regexp.QuoteMeta(desc) + `(\s|$)`).MatchString(s)
}

func eventsDashboard(t *testing.T, w, h int) *dashboard {
	t.Helper()
	d := newDashboard(Options{Model: model.FleetOf("", eventsModel()), Now: func() time.Time { return t0 }}, true)
	d.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return d
}

// TestCopyPodCommands: y puts the kubectl command for what is selected on the clipboard, through
// bubbletea's SetClipboard (OSC 52), and the footer shows it whole, to be selected by hand where
// the terminal does not take OSC 52; the next key brings the help back.
func TestCopyPodCommands(t *testing.T) {
	d := eventsDashboard(t, 120, 30)
	d.pods.selectKey("shop/api-7d9f8b6c5-xk2lq")
	want := "kubectl describe pod -n shop api-7d9f8b6c5-xk2lq"
	if got, ok := clipboardOf(press(d, "y")); !ok || got != want {
		t.Fatalf("y on the pod table copied %q (clipboard %v), want %q", got, ok, want)
	}
	footer := lastLine(screen(d))
	if footer != "copied: "+want+" — if your terminal does not take OSC 52, select it here" {
		t.Errorf("footer after y: %q", footer)
	}
	press(d, "j")
	if footer := lastLine(screen(d)); strings.Contains(footer, "copied") || !strings.Contains(footer, "? help") {
		t.Errorf("the next key should bring the help back: %q", footer)
	}

	for _, c := range []struct{ pod, want string }{
		// Crash-looping, with a last state: the previous instance's log says why it died.
		{"shop/api-7d9f8b6c5-xk2lq", "kubectl logs -p -n shop api-7d9f8b6c5-xk2lq -c api"},
		// Failed to start once, no instance before: no -p (the kubelet would refuse it).
		{"shop/checkout-7d9f8b6c5-f00", "kubectl logs -n shop checkout-7d9f8b6c5-f00 -c checkout"},
		// Never started (its image cannot be pulled): it has no log, describe has its events.
		{"shop/payments-7d9f8b6c5-p00", "kubectl describe pod -n shop payments-7d9f8b6c5-p00"},
		// The verdict is the pod's own (its volume, from events): describe shows the events.
		{"shop/web-5c9d7f6b8-m2x4k", "kubectl describe pod -n shop web-5c9d7f6b8-m2x4k"},
	} {
		press(d, "esc")
		d.pods.selectKey(c.pod)
		press(d, "enter")
		if !d.showDetail || d.detail.key != c.pod {
			t.Fatalf("enter did not open %s", c.pod)
		}
		if got, ok := clipboardOf(press(d, "y")); !ok || got != c.want {
			t.Errorf("y in %s's detail copied %q (clipboard %v), want %q", c.pod, got, ok, c.want)
		}
		if footer := lastLine(screen(d)); !strings.HasPrefix(footer, "copied: "+c.want+" — ") {
			t.Errorf("%s: footer after y: %q", c.pod, footer)
		}
		// The help says which command y copies.
		press(d, "?")
		desc := "copy logs"
		if strings.Contains(c.want, "describe") {
			desc = "copy describe"
		}
		if s := screen(d); !hasHelp(s, "y", desc) {
			t.Errorf("%s: the full help lacks y %q:\n%s", c.pod, desc, s)
		}
		press(d, "?")
	}
}

// TestCopyNodeCommands: on a node y copies `kubectl describe node` and Y `kubectl cordon`, each
// alone: a write is never pasted along with a read.
func TestCopyNodeCommands(t *testing.T) {
	d := eventsDashboard(t, 120, 30)
	press(d, "tab")
	for _, c := range []struct{ key, want string }{
		{"y", "kubectl describe node node-3"},
		{"Y", "kubectl cordon node-3"},
	} {
		got, ok := clipboardOf(press(d, c.key))
		if !ok || got != c.want {
			t.Errorf("%s on node-3 copied %q (clipboard %v), want %q", c.key, got, ok, c.want)
		}
		if strings.ContainsAny(got, ";&|\n") {
			t.Errorf("%s copied more than one command: %q", c.key, got)
		}
		if footer := lastLine(screen(d)); !strings.HasPrefix(footer, "copied: "+c.want+" — ") {
			t.Errorf("footer after %s: %q", c.key, footer)
		}
	}
	press(d, "?")
	for _, h := range [][2]string{{"y", "copy describe"}, {"Y", "copy cordon"}} {
		if s := screen(d); !hasHelp(s, h[0], h[1]) {
			t.Errorf("the nodes panel's help lacks %s %q:\n%s", h[0], h[1], s)
		}
	}
	// The rollouts have nothing to copy: y does nothing there.
	press(d, "?", "tab")
	if _, ok := clipboardOf(press(d, "y")); ok || d.copied != "" {
		t.Errorf("y on the rollouts copied %q", d.copied)
	}
}

// TestCopyIsTextWhileTyping: in the `/` filter, y is a letter of the filter.
func TestCopyIsTextWhileTyping(t *testing.T) {
	d := eventsDashboard(t, 120, 30)
	press(d, "/")
	if _, ok := clipboardOf(press(d, "y")); ok || d.query.Text != "y" {
		t.Errorf("y while typing: copied %v, filter %q", ok, d.query.Text)
	}
}

// TestCopiedFooterFits: the footer keeps the command whole and drops the explanation first.
func TestCopiedFooterFits(t *testing.T) {
	for _, w := range []int{60, 80, 100, 200} {
		d := eventsDashboard(t, w, 24)
		d.pods.selectKey("shop/api-7d9f8b6c5-xk2lq")
		press(d, "enter", "y")
		footer := lastLine(screen(d))
		if !strings.HasPrefix(footer, "copied: kubectl logs -p -n shop api-7d9f8b6c5-xk2lq -c api") {
			t.Errorf("%d columns: the command is not whole: %q", w, footer)
		}
		if fw := ansi.StringWidth(footer); fw > w || strings.Contains(footer, "…") {
			t.Errorf("%d columns: footer is %d cells or cut: %q", w, fw, footer)
		}
	}
}

// TestShellWord: DNS names go as they are; anything else is one quoted word.
func TestShellWord(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"web-1", "web-1"},
		{"ip-10-0-1-12.eu-west-1.compute.internal", "ip-10-0-1-12.eu-west-1.compute.internal"},
		{"Web_1", "'Web_1'"},
		{"a b", "'a b'"},
		{"it's", `'it'\''s'`},
		{"$(reboot)", "'$(reboot)'"},
		{"", "''"},
	} {
		if got := shellWord(c.in); got != c.want {
			t.Errorf("shellWord(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	p := &model.Pod{Namespace: "team a", Name: "web-1"}
	if got := describePod(p); got != "kubectl describe pod -n 'team a' web-1" {
		t.Errorf("describePod = %q", got)
	}
	// The names come from the model, which sanitised them where the pod entered it: the escape
	// sequence is gone, what is left is a DNS name.
	m := model.New(model.DefaultConfig())
	b := contract.Batch{Pods: appendPods(nil, mkPod(podSpec{ns: "shop", name: "we\x1b[2Jb-1",
		status: []corev1.ContainerStatus{running("app", "registry.example.com/app:v1", 0, nil)}}))}
	m.Apply(&b, t0)
	if got := describePod(m.View(model.Query{})[0]); got != "kubectl describe pod -n shop web-1" {
		t.Errorf("describePod of a pod named with an escape sequence = %q", got)
	}
}

// TestCopyNamesTheContextInAFleet: with several contexts a copied command names the row's own,
// so it runs against the cluster the row came from; with one it names none.
func TestCopyNamesTheContextInAFleet(t *testing.T) {
	p := &model.Pod{Key: "shop/web-1", Namespace: "shop", Name: "web-1", Context: "prod-eu"}
	if got, want := describePod(p), "kubectl --context prod-eu describe pod -n shop web-1"; got != want {
		t.Errorf("describe: %q, want %q", got, want)
	}
	if got, want := cordonNode("prod eu", "node-3"), "kubectl --context 'prod eu' cordon node-3"; got != want {
		t.Errorf("cordon: %q, want %q", got, want)
	}
	if got, want := describeNode("", "node-3"), "kubectl describe node node-3"; got != want {
		t.Errorf("describe node of one cluster: %q, want %q", got, want)
	}
}
