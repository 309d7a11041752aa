package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// The observers of a scenario run: the tools run to completion (`doomwatch wait`, kubectl), the
// verdict stream (`doomwatch --watch -o json`) and the API's own view of the first doomed pod.

// tool is a command the scenario runs to completion: `doomwatch wait` or kubectl.
type tool struct {
	how     string
	outcome func(code int, out string) string
	ran     bool

	done chan struct{}
	mu   sync.Mutex
	buf  bytes.Buffer
	end  time.Time
	code int
	err  error
}

func (t *tool) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf.Write(p)
}

// startTools starts `doomwatch wait` and kubectl's verdict on the target, right after the
// rollout was applied, as a pipeline's next steps would. A Job has no `doomwatch wait`; kubectl's
// analogue for a Job is `kubectl wait` for its Complete or its Failed condition, whichever comes
// first.
func (ru *run) startTools(ctx context.Context) [2]*tool {
	s := ru.s
	kind, name, _ := s.target()
	timeout := "--timeout=" + s.Timeout.Duration.String()
	common := []string{"-n", ru.ns, "--kubeconfig", ru.cp.AdminKubeconfig}
	var out [2]*tool
	args := append(append([]string{"wait", s.Expect.Target}, s.waitFlags()...), common...)
	out[0] = ru.startTool(ctx, ru.cfg.Doomwatch, waitOutcome, args...)
	switch {
	case ru.cfg.NoKubectl:
		out[1] = notRun("kubectl skipped")
	case kind == "job":
		out[1] = ru.startJobWait(ctx, name, timeout, common)
	case kind == "rollout":
		// kubectl rollout status knows no Argo Rollout; its analogue is the kubectl-argo-rollouts
		// plugin, which is not built here. The controller's own phase is in the stream's excerpt.
		out[1] = notRun("kubectl has no rollout status for an Argo Rollout")
	default:
		out[1] = ru.startTool(ctx, ru.cfg.Kubectl, rolloutStatusOutcome, append([]string{"rollout", "status", s.Expect.Target, timeout}, common...)...)
	}
	return out
}

func notRun(why string) *tool {
	t := &tool{how: why, done: make(chan struct{})}
	close(t.done)
	return t
}

func (ru *run) startTool(ctx context.Context, bin string, outcome func(int, string) string, args ...string) *tool {
	t := &tool{how: strings.Join(append([]string{baseName(bin)}, redact(args)...), " "), outcome: outcome, ran: true, done: make(chan struct{})}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = doomwatchEnv()
	cmd.Stdout, cmd.Stderr = t, t
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.err = err
		t.end = time.Now()
		close(t.done)
		return t
	}
	go func() {
		err := cmd.Wait()
		t.mu.Lock()
		t.end = time.Now()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.code = ee.ExitCode()
		} else if err != nil {
			t.err = err
		}
		t.mu.Unlock()
		close(t.done)
	}()
	return t
}

// doomwatchEnv is the environment doomwatch runs in, then extra: no colours, and not GitHub
// Actions' even on its runner, where wait would add annotations to the stderr the tests read (and
// to the CI run's own); the test of the annotations sets GITHUB_ACTIONS itself.
func doomwatchEnv(extra ...string) []string {
	return append(append(os.Environ(), "NO_COLOR=1", "GITHUB_ACTIONS="), extra...)
}

// startJobWait runs `kubectl wait --for=condition=Complete` and `--for=condition=Failed` on the
// Job at once; the first to succeed is kubectl's verdict, and the other is stopped.
func (ru *run) startJobWait(ctx context.Context, name, timeout string, common []string) *tool {
	ctx, cancel := context.WithCancel(ctx)
	job := "job/" + name
	complete := ru.startTool(ctx, ru.cfg.Kubectl, nil, append([]string{"wait", job, "--for=condition=Complete", timeout}, common...)...)
	failed := ru.startTool(ctx, ru.cfg.Kubectl, nil, append([]string{"wait", job, "--for=condition=Failed", timeout}, common...)...)
	t := &tool{how: "kubectl wait " + job + " --for=condition=Complete | --for=condition=Failed " + timeout, ran: true, done: make(chan struct{})}
	go func() {
		defer close(t.done)
		defer cancel()
		var first *tool
		outcome := "timeout"
		for range 2 {
			select {
			case <-complete.done:
				first, complete.done = complete, nil
				if complete.code == 0 && complete.err == nil {
					outcome = "complete"
				}
			case <-failed.done:
				first, failed.done = failed, nil
				if failed.code == 0 && failed.err == nil {
					outcome = "doomed"
				}
			}
			if outcome != "timeout" {
				break
			}
		}
		t.mu.Lock()
		defer t.mu.Unlock()
		t.end, t.code = first.end, first.code
		t.outcome = func(int, string) string { return outcome }
		first.mu.Lock()
		t.buf.Write(first.buf.Bytes())
		first.mu.Unlock()
	}()
	return t
}

func (t *tool) result() ToolResult {
	<-t.done
	t.mu.Lock()
	defer t.mu.Unlock()
	r := ToolResult{Ran: t.ran, At: t.end, Code: t.code, Output: tail(t.buf.String(), 12), How: t.how}
	switch {
	case !t.ran:
		r.Outcome = "not run"
	case t.err != nil:
		r.Outcome, r.Output = "error", t.err.Error()
	default:
		r.Outcome = t.outcome(t.code, t.buf.String())
	}
	return r
}

// waitOutcome reads `doomwatch wait`'s exit code (docs/wait.md): 0 complete, 1 doomed
// (when it says so; otherwise an error), 70 timeout.
func waitOutcome(code int, out string) string {
	switch {
	case code == 0:
		return "complete"
	case code == 1 && strings.Contains(out, " is doomed"):
		return "doomed"
	case code == 70:
		return "timeout"
	}
	return "error"
}

// rolloutStatusOutcome reads `kubectl rollout status`: exit 0 when rolled out; its only doom is a
// Deployment's ProgressDeadlineExceeded condition (`deployment %q exceeded its progress
// deadline`, kubectl pkg/polymorphichelpers/rollout_status.go); a --timeout ends with `timed out
// waiting for the condition`.
func rolloutStatusOutcome(code int, out string) string {
	switch {
	case code == 0:
		return "complete"
	case strings.Contains(out, "exceeded its progress deadline"):
		return "doomed"
	case strings.Contains(out, "timed out waiting for the condition"):
		return "timeout"
	}
	return "error"
}

// redact drops the kubeconfig path from a command for the report.
func redact(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if args[i] == "--kubeconfig" {
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

func baseName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// truth watches the scenario's pods (and a Job target) through the API for the first doomed pod
// as Expect.DoomedWhen defines it.
type truth struct {
	mu   sync.Mutex
	at   time.Time
	what string
	// finished is closed when a Job target has its Complete or Failed condition.
	finished chan struct{}
	once     sync.Once
}

func (t *truth) first() (time.Time, string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.at, t.what
}

func (t *truth) saw(what string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.at.IsZero() {
		t.at, t.what = time.Now(), what
	}
}

func watchTruth(ctx context.Context, cp *ControlPlane, s *Scenario) (*truth, error) {
	t := &truth{finished: make(chan struct{})}
	kind, name, _ := s.target()
	f := informers.NewSharedInformerFactoryWithOptions(cp.AdminClient, 0, informers.WithNamespace(s.Namespace()))
	pod := func(obj any) {
		p, ok := obj.(*corev1.Pod)
		if !ok {
			return
		}
		if p.Status.Phase == corev1.PodFailed && slices.Contains(s.Expect.DoomedWhen, "Failed") {
			t.saw("pod " + p.Name + " Failed")
		}
		for _, cs := range p.Status.ContainerStatuses {
			if w := cs.State.Waiting; w != nil && slices.Contains(s.Expect.DoomedWhen, w.Reason) {
				t.saw("pod " + p.Name + " " + w.Reason)
			}
		}
	}
	if _, err := f.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: pod, UpdateFunc: func(_, obj any) { pod(obj) },
	}); err != nil {
		return nil, err
	}
	if kind == "job" {
		job := func(obj any) {
			j, ok := obj.(*batchv1.Job)
			if !ok || j.Name != name {
				return
			}
			for _, c := range j.Status.Conditions {
				if c.Status != corev1.ConditionTrue {
					continue
				}
				if c.Type == batchv1.JobFailed && slices.Contains(s.Expect.DoomedWhen, "JobFailed") {
					t.saw("job " + j.Name + " Failed (" + c.Reason + ")")
				}
				if c.Type == batchv1.JobFailed || c.Type == batchv1.JobComplete {
					t.once.Do(func() { close(t.finished) })
				}
			}
		}
		if _, err := f.Batch().V1().Jobs().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: job, UpdateFunc: func(_, obj any) { job(obj) },
		}); err != nil {
			return nil, err
		}
	}
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	return t, nil
}

// verdictStream is `doomwatch --watch -o json` running on the scenario's namespace.
type verdictStream struct {
	cmd   *exec.Cmd
	mu    sync.Mutex
	lines []StreamLine
	first chan struct{} // closed at the first line
	done  chan struct{} // closed when stdout has ended
	err   error         // how the process ended, when it did not end on our signal
	errb  bytes.Buffer
}

func startStream(ctx context.Context, bin, kubeconfig, ns string) (*verdictStream, error) {
	st := &verdictStream{first: make(chan struct{}), done: make(chan struct{})}
	st.cmd = exec.CommandContext(ctx, bin, "--watch", "-o", "json", "--kubeconfig", kubeconfig, "-n", ns)
	st.cmd.Env = append(os.Environ(), "NO_COLOR=1")
	st.cmd.Stderr = &lockedWriter{mu: &st.mu, w: &st.errb}
	st.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := st.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := st.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting doomwatch --watch: %w", err)
	}
	go func() {
		defer close(st.done)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
		once := sync.Once{}
		for sc.Scan() {
			l, err := ParseStreamLine(sc.Bytes(), time.Now())
			st.mu.Lock()
			if err != nil {
				st.lines = append(st.lines, StreamLine{Received: time.Now(), Raw: sc.Text(), ParseErr: err.Error()})
			} else {
				st.lines = append(st.lines, l)
			}
			st.mu.Unlock()
			once.Do(func() { close(st.first) })
		}
	}()
	return st, nil
}

// synced waits for the stream's first lines: doomwatch prints every object once its informers
// have synced, and the scenario's nodes are always there.
func (st *verdictStream) synced(limit time.Duration) error {
	select {
	case <-st.first:
		return nil
	case <-st.done:
	case <-time.After(limit):
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return fmt.Errorf("doomwatch --watch printed nothing within %s; stderr:\n%s", limit, tail(st.errb.String(), 20))
}

// stop interrupts doomwatch (it exits 130 on SIGINT, docs/wait.md) and returns every line it printed.
func (st *verdictStream) stop() []StreamLine {
	_ = st.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-st.done:
	case <-time.After(10 * time.Second):
		_ = st.cmd.Process.Kill()
		<-st.done
	}
	err := st.cmd.Wait()
	var ee *exec.ExitError
	st.mu.Lock()
	defer st.mu.Unlock()
	if errors.As(err, &ee) && ee.ExitCode() != 130 {
		st.err = fmt.Errorf("doomwatch --watch exited %d: %s", ee.ExitCode(), tail(st.errb.String(), 5))
	}
	return slices.Clone(st.lines)
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
