package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"

	"doomwatch/model"
)

// `y` copies a kubectl command for the selection and `Y` on a node copies `kubectl cordon`. The
// dashboard stays read-only: it only puts text on the clipboard, through the terminal (OSC 52,
// tea.SetClipboard), and the footer shows the command so it can be selected by hand where the
// terminal does not take OSC 52 (or forbids it, as tmux does without set-clipboard).

// copyMsg asks the root to put a command on the clipboard and confirm it in the footer.
type copyMsg struct{ text string }

// copyTo is the root's answer to a copyMsg: the command goes to the clipboard and stays in the
// footer until the next key.
func (d *dashboard) copyTo(msg copyMsg) tea.Cmd {
	d.copied = msg.text
	return tea.SetClipboard(msg.text)
}

// copiedSuffixes follow the copied command in the footer, the longest that fits: the command itself
// is never cut, since it is there to be selected.
var copiedSuffixes = [...]string{" — if your terminal does not take OSC 52, select it here",
	" — no OSC 52? select it here", " — or select it here", ""}

// footer is the footer's text: the copied command after `y`, else the help.
func (d *dashboard) footer() string {
	if d.copied == "" {
		return d.help.View(d.helpKeys())
	}
	line := "copied: " + d.copied
	for _, s := range copiedSuffixes {
		if width(line+s) <= d.width {
			line += s
			break
		}
	}
	return d.c.st.ok.Render(line)
}

// kubectl is the start of a kubectl command against the cluster of context: with several
// contexts on screen, the command names its own, so it runs where the row came from whatever
// kubectl's current context is; with one ("") it has none, as the context is kubectl's own.
func kubectl(context string) string {
	if context == "" {
		return "kubectl "
	}
	return "kubectl --context " + shellWord(context) + " "
}

// describePod is `kubectl describe pod` for the pod p.
func describePod(p *model.Pod) string { return describePodNamed(p.Context, p.Namespace, p.Name) }

// describePodNamed is `kubectl describe pod` for the pod namespace/name of a cluster ("" with one).
func describePodNamed(context, namespace, name string) string {
	return kubectl(context) + "describe pod -n " + shellWord(namespace) + " " + shellWord(name)
}

// podLogs is `kubectl logs` for the container that decided p's verdict, of its previous instance
// when it has one: a crash-looping container's own log is usually empty or gone by the time one
// looks, and the previous one says why it died. The kubelet serves -p from lastState.terminated
// and refuses it otherwise ("previous terminated container %q in pod %q not found",
// kubernetes/kubernetes pkg/kubelet/kubelet_pods.go validateContainerLogStatus). ok is false when
// the verdict names no container (the pod's sandbox, its scheduling) or one that never started
// (its image cannot be pulled), which has no log: describe, with the pod's events, says more then.
func podLogs(p *model.Pod) (cmd string, ok bool) {
	name := p.Verdict.Container
	if name == "" {
		return "", false
	}
	c, _ := p.State(name, p.Verdict.Init)
	if c.NeverStarted() {
		return "", false
	}
	cmd = kubectl(p.Context) + "logs "
	if c.HasPrevious() {
		cmd += "-p "
	}
	return cmd + "-n " + shellWord(p.Namespace) + " " + shellWord(p.Name) + " -c " + shellWord(name), true
}

// describeNode is `kubectl describe node` for the node of a cluster ("" with one).
func describeNode(context, name string) string {
	return kubectl(context) + "describe node " + shellWord(name)
}

// cordonNode is `kubectl cordon`, a write: it is copied alone, by its own key, never pasted
// along with a read.
func cordonNode(context, name string) string { return kubectl(context) + "cordon " + shellWord(name) }

// shellWord is s as one word of a POSIX shell command. Names of pods, namespaces, nodes and
// containers are DNS labels or subdomains ([a-z0-9.-]) and are written as they are; anything else
// (a name is the API's to choose; the model sanitised it where it entered) is single-quoted, with
// a quote inside it ended, escaped and begun again.
func shellWord(s string) string {
	safe := s != ""
	for i := 0; i < len(s) && safe; i++ {
		c := s[i]
		safe = c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-'
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
