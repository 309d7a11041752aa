package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/vt"
	"github.com/creack/pty"
	corev1 "k8s.io/api/core/v1"
)

// terminal is the real doomwatch binary in a pseudo-terminal, its output fed to a terminal
// emulator so the test reads the screen a user would see.
type terminal struct {
	t    *testing.T
	cmd  *exec.Cmd
	ptmx *os.File

	mu      sync.Mutex
	emu     *vt.Emulator
	raw     bytes.Buffer // every byte the program wrote, for the escape sequences it sent
	alt     bool         // the emulator is on the alternate screen
	changed chan struct{}
	readEnd chan struct{} // closed when the pty has no more output
	exited  chan struct{} // closed when the program has exited
	waitErr error
}

const termW, termH = 140, 40

func startTerminal(t *testing.T, args ...string) *terminal {
	t.Helper()
	cmd := exec.Command(doomwatchBinary(t), args...)
	cmd.Env = append(os.Environ(), "TERM=xterm-256color", "COLORTERM=truecolor")
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: termW, Rows: termH})
	if err != nil {
		t.Fatalf("starting doomwatch in a pty: %v", err)
	}
	tty := &terminal{
		t: t, cmd: cmd, ptmx: ptmx, emu: vt.NewEmulator(termW, termH),
		changed: make(chan struct{}), readEnd: make(chan struct{}), exited: make(chan struct{}),
	}
	tty.emu.SetCallbacks(vt.Callbacks{AltScreen: func(on bool) { tty.alt = on }})
	go func() {
		tty.waitErr = cmd.Wait()
		close(tty.exited)
	}()
	go tty.pump()
	// The program asks its terminal questions (device attributes, colours, modes); the emulator
	// answers on its input side, which goes back to the program like a real terminal's replies.
	replies := make(chan struct{})
	go func() {
		defer close(replies)
		_, _ = io.Copy(ptmx, tty.emu)
	}()
	t.Cleanup(func() {
		select {
		case <-tty.exited:
		default:
			_ = cmd.Process.Kill()
			<-tty.exited
		}
		ptmx.Close()
		// End the replies copy by closing the emulator's input pipe rather than calling
		// Emulator.Close, whose unsynchronised closed flag races with the Read in that copy.
		if c, ok := tty.emu.InputPipe().(io.Closer); ok {
			_ = c.Close()
			<-replies
		}
		if t.Failed() {
			t.Logf("last screen:\n%s", tty.screen())
		}
	})
	return tty
}

// pump copies the program's output into the emulator until the pty closes.
func (tty *terminal) pump() {
	defer close(tty.readEnd)
	buf := make([]byte, 64<<10)
	for {
		n, err := tty.ptmx.Read(buf)
		if n > 0 {
			tty.mu.Lock()
			tty.raw.Write(buf[:n])
			_, _ = tty.emu.Write(buf[:n])
			close(tty.changed)
			tty.changed = make(chan struct{})
			tty.mu.Unlock()
		}
		if err != nil {
			return // EIO once the program has exited and closed the pty
		}
	}
}

func (tty *terminal) screen() string {
	tty.mu.Lock()
	defer tty.mu.Unlock()
	return tty.emu.String()
}

// waitScreen waits until cond holds on the screen, re-checking after every output, or fails after
// timeout. It returns the screen that satisfied cond.
func (tty *terminal) waitScreen(what string, timeout time.Duration, cond func(screen string) bool) string {
	tty.t.Helper()
	s, ok := tty.awaitScreen(timeout, cond)
	if !ok {
		tty.t.Fatalf("waiting %s for %s: %s; screen:\n%s", timeout, what, tty.why(), s)
	}
	return s
}

// expectScreen is waitScreen that records the failure and lets the test go on, so the exit checks
// still run.
func (tty *terminal) expectScreen(what string, timeout time.Duration, cond func(screen string) bool) {
	tty.t.Helper()
	if s, ok := tty.awaitScreen(timeout, cond); !ok {
		tty.t.Errorf("waiting %s for %s: %s; screen:\n%s", timeout, what, tty.why(), s)
	}
}

func (tty *terminal) why() string {
	select {
	case <-tty.exited:
		return fmt.Sprintf("doomwatch exited (%v)", tty.waitErr)
	default:
		return "timed out"
	}
}

func (tty *terminal) awaitScreen(timeout time.Duration, cond func(screen string) bool) (string, bool) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		tty.mu.Lock()
		changed := tty.changed
		s := tty.emu.String()
		tty.mu.Unlock()
		if cond(s) {
			return s, true
		}
		select {
		case <-changed:
		case <-tty.readEnd:
			return s, false
		case <-deadline.C:
			return s, false
		}
	}
}

// lineWith returns the screen line that contains s.
func lineWith(screen, s string) string {
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}

// TestTUIInAPseudoTerminal runs the real binary against the API server in a pty: a pod flipped to
// CrashLoopBackOff shows the doomed badge within 2 s, a broken connection shows "reconnecting",
// and q quits with exit code 0, leaving the alternate screen and showing the cursor again.
func TestTUIInAPseudoTerminal(t *testing.T) {
	e := newEnv(t)
	node := e.nodeName("n1")
	e.node(node, true)
	e.pod(podSpec{name: "web-ok", node: node, status: podStatus(corev1.PodRunning, running("app", true, 0, nil))})
	e.pod(podSpec{name: "web-flip", node: node, status: podStatus(corev1.PodRunning, running("app", true, 0, nil))})

	proxy, err := NewProxy(e.c.APIAddr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Close)
	admin, err := e.c.ca.issue(certSpec{commonName: "pty-admin", groups: []string{"system:masters"}})
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := e.c.path("kubeconfig-pty-" + e.ns)
	if err := WriteKubeconfig(kubeconfig, "https://"+proxy.Addr, e.c.ca.certPEM, admin.certPEM, admin.keyPEM, "pty"); err != nil {
		t.Fatal(err)
	}

	tty := startTerminal(t, "--kubeconfig", kubeconfig, "-n", e.ns)
	tty.waitScreen("both pods on screen", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "web-ok") && strings.Contains(s, "web-flip")
	})
	if l := lineWith(tty.screen(), "web-flip"); strings.Contains(l, "✖") || strings.Contains(l, "doomed") {
		t.Fatalf("web-flip is doomed before the flip: %q", l)
	}

	e.setStatus("web-flip", podStatus(corev1.PodRunning,
		waiting("app", "CrashLoopBackOff", backOff("40s", "app", "web-flip", e.ns), 3, term0("Error", 1))))
	// The doomed badge appears within 2 s of the kubelet's status write.
	s := tty.waitScreen("the doomed badge on web-flip", 2*time.Second, func(s string) bool {
		l := lineWith(s, "web-flip")
		return strings.Contains(l, "✖") || strings.Contains(l, "doomed")
	})
	if l := lineWith(s, "web-ok"); strings.Contains(l, "✖") || strings.Contains(l, "doomed") {
		t.Errorf("web-ok shows doomed too: %q", l)
	}

	// Cut the connection: the header says so. Quitting must still work while disconnected.
	proxy.Down()
	tty.expectScreen(`"reconnecting" in the header`, 20*time.Second, func(s string) bool {
		return strings.Contains(strings.ToLower(s), "reconnecting")
	})

	if _, err := tty.ptmx.Write([]byte("q")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	select {
	case <-tty.exited:
	case <-ctx.Done():
		t.Fatalf("doomwatch did not exit within 10s of q; screen:\n%s", tty.screen())
	}
	if tty.waitErr != nil {
		t.Errorf("exit after q: %v, want exit code 0", tty.waitErr)
	}
	<-tty.readEnd

	tty.mu.Lock()
	raw, alt, cursorHidden := tty.raw.String(), tty.alt, tty.emu.CursorHidden()
	tty.mu.Unlock()
	if enter := strings.LastIndex(raw, "\x1b[?1049h"); enter >= 0 && !strings.Contains(raw[enter:], "\x1b[?1049l") {
		t.Errorf("entered the alternate screen and never left it")
	}
	if alt {
		t.Errorf("the terminal is still on the alternate screen after exit")
	}
	if cursorHidden {
		t.Errorf("the cursor is still hidden after exit")
	}
}

// term0 is a terminated state from a minute ago.
func term0(reason string, code int32) *corev1.ContainerStateTerminated {
	return term(reason, code, "", time.Minute)
}
