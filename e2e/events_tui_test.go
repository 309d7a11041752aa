package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestTUIShowsPodEvents: a Warning event posted through the API for a pod (a classify fixture's
// FailedMount for a secret that does not exist) reaches the dashboard in a pty: the pod is doomed
// by it, and its detail pane lists the event with its reason and message.
func TestTUIShowsPodEvents(t *testing.T) {
	e := newEnv(t)
	var fx *eventFixture
	all := eventFixtures(t)
	for i := range all {
		if all[i].pod.Name == "ev-volume-secret-not-found" {
			fx = &all[i]
		}
	}
	if fx == nil {
		t.Fatal("no classify fixture of a missing secret's FailedMount")
	}
	now, err := time.Parse(time.RFC3339, fx.pod.Annotations["test.doomwatch.io/now"])
	if err != nil {
		t.Fatal(err)
	}
	p := loadFixture(t, e, &fx.pod)
	tty := startTerminal(t, "--kubeconfig", adminKubeconfig(t), "-n", e.ns)
	tty.waitScreen("the pod", 30*time.Second, func(s string) bool { return strings.Contains(s, p.Name) })
	for _, ev := range fx.events {
		e.postEvent(ev, p, time.Now().Truncate(time.Second).Sub(now))
	}
	tty.waitScreen("the pod doomed by its event", 10*time.Second, func(s string) bool {
		l := lineWith(s, p.Name)
		return strings.Contains(l, "doomed") || strings.Contains(l, "✖")
	})
	if _, err := tty.ptmx.Write([]byte("\r")); err != nil { // enter: the detail of the top row
		t.Fatal(err)
	}
	ev := fx.events[0]
	for _, x := range fx.events {
		if strings.HasSuffix(x.Message, "not found") {
			ev = x // the one that names the secret, short enough to show whole
		}
	}
	words := strings.Fields(ev.Message)
	tail := strings.Join(words[len(words)-3:], " ") // the message's end, which names the secret
	s := tty.waitScreen("the event in the detail", 10*time.Second, func(s string) bool {
		return strings.Contains(s, "Events") && strings.Contains(s, ev.Reason) && strings.Contains(s, tail)
	})
	if !strings.Contains(s, "POD "+e.ns+"/"+p.Name) {
		t.Errorf("the detail is not the pod's:\n%s", s)
	}
	tty.quit(t)
}
