package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/charmbracelet/x/vt"
	"github.com/creack/pty"
)

// terminal is a program in a pseudo-terminal whose output feeds a terminal emulator, so the
// harness reads the screen a user would see and times it from outside the process (as
// e2e/pty_test.go does for the suite).
type terminal struct {
	cmd  *exec.Cmd
	ptmx *os.File

	mu      sync.Mutex
	emu     *vt.Emulator
	changed chan struct{} // closed and replaced on every output
	readEnd chan struct{} // closed when the pty has no more output
	exited  chan struct{} // closed when the program has exited
	waitErr error
	replies chan struct{}
	// kitty is set once the program pushed the kitty keyboard protocol's flags (CSI > flags u):
	// a terminal that speaks it then sends keys as the protocol encodes them (key).
	kitty bool
}

// kittyPush starts the sequence that pushes kitty keyboard flags: CSI > flags u.
var kittyPush = []byte("\x1b[>")

// startTerminal starts bin in a w×h pseudo-terminal.
func startTerminal(bin string, args, env []string, w, h int) (*terminal, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	// The program dies with the harness, however the harness ends.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: uint16(w), Rows: uint16(h)})
	if err != nil {
		return nil, err
	}
	t := &terminal{cmd: cmd, ptmx: ptmx, emu: vt.NewEmulator(w, h),
		changed: make(chan struct{}), readEnd: make(chan struct{}), exited: make(chan struct{}), replies: make(chan struct{})}
	go func() {
		t.waitErr = cmd.Wait()
		close(t.exited)
	}()
	go t.pump()
	// The program asks its terminal questions (device attributes, colours); the emulator answers
	// on its input side, which goes back to the program as a real terminal's replies would.
	go func() {
		defer close(t.replies)
		_, _ = io.Copy(ptmx, t.emu)
	}()
	return t, nil
}

func (t *terminal) pid() int { return t.cmd.Process.Pid }

// pump copies the program's output into the emulator until the pty closes.
func (t *terminal) pump() {
	defer close(t.readEnd)
	buf := make([]byte, 256<<10)
	for {
		n, err := t.ptmx.Read(buf)
		if n > 0 {
			t.mu.Lock()
			_, _ = t.emu.Write(buf[:n])
			if !t.kitty {
				t.kitty = pushesKitty(buf[:n])
			}
			close(t.changed)
			t.changed = make(chan struct{})
			t.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

func (t *terminal) screen() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.emu.String()
}

// pushesKitty reports whether out pushes kitty keyboard flags: CSI > digits u.
func pushesKitty(out []byte) bool {
	for {
		i := bytes.Index(out, kittyPush)
		if i < 0 {
			return false
		}
		out = out[i+len(kittyPush):]
		j := 0
		for j < len(out) && out[j] >= '0' && out[j] <= '9' {
			j++
		}
		if j > 0 && j < len(out) && out[j] == 'u' {
			return true
		}
	}
}

// key is how this terminal sends keys: an escape as the kitty keyboard protocol encodes it
// (CSI 27 u) once the program has asked for the protocol, as kitty, foot, WezTerm, Ghostty and
// iTerm2 do, else as the lone ESC byte of a legacy terminal.
func (t *terminal) key(keys string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if keys == "\x1b" && t.kitty {
		return "\x1b[27u"
	}
	return keys
}

// send writes keys to the program and returns the time just before the write.
func (t *terminal) send(keys string) (time.Time, error) {
	at := time.Now()
	_, err := t.ptmx.Write([]byte(keys))
	return at, err
}

// await waits until cond holds on the screen, checking after every output, for at most timeout.
// It returns when the screen that satisfied cond was read and that screen; ok is false on a
// timeout or when the program's output ended.
func (t *terminal) await(timeout time.Duration, cond func(screen string) bool) (at time.Time, screen string, ok bool) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		t.mu.Lock()
		changed := t.changed
		s := t.emu.String()
		t.mu.Unlock()
		if cond(s) {
			return time.Now(), s, true
		}
		select {
		case <-changed:
		case <-t.readEnd:
			return time.Now(), s, false
		case <-deadline.C:
			return time.Now(), s, false
		}
	}
}

// stop asks the program to quit with keys, waits up to grace, then kills it, and releases the
// pty.
func (t *terminal) stop(keys string, grace time.Duration) {
	_, _ = t.send(keys)
	select {
	case <-t.exited:
	case <-time.After(grace):
		_ = t.cmd.Process.Kill()
		<-t.exited
	}
	t.ptmx.Close()
	// Closing the emulator's input pipe ends the replies copy (Emulator.Close would race with it).
	if c, ok := t.emu.InputPipe().(io.Closer); ok {
		_ = c.Close()
		<-t.replies
	}
}
