package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// process is one server the suite runs (etcd or kube-apiserver), in its own process group so that
// stopping it also stops anything it forked, with its output appended to a log file.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{} // closed when the process has exited
	err     error         // the exit error, valid after done
}

func startProcess(name, logPath, bin string, args ...string) (*process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(logFile, "\n===== starting %s %q\n", bin, args)
	cmd := exec.Command(bin, args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	// Setpgid: kill the whole group. Pdeathsig: the server dies with the test binary even when the
	// binary itself is killed (go test -timeout, ^C) and no cleanup runs.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has exited.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// exitedOf names the processes (nil ones skipped) that have exited, with their logs.
func exitedOf(ps ...*process) error {
	var errs []error
	for _, p := range ps {
		if p != nil && p.exited() {
			errs = append(errs, fmt.Errorf("%s exited (%v); log %s", p.name, p.err, p.logPath))
		}
	}
	return errors.Join(errs...)
}

// kill stops the process group with SIGKILL, as a crash would, and waits for it.
func (p *process) kill() {
	if p == nil || p.exited() {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}

// logTail returns the last n lines of the log file, for failure messages.
func logTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(reading %s: %v)", path, err)
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// freePorts returns n distinct loopback ports that were free a moment ago. Another process may
// take one before the server binds it; the launcher then retries with fresh ports.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// errAddrInUse marks a start that failed because a port was taken meanwhile.
var errAddrInUse = errors.New("address already in use")

func loopback(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }
