package kube

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"doomwatch/sanitize"
)

// QuietLogs keeps klog (client-go's logger) and the API server's warnings off the terminal the
// dashboard draws on: they go to w, or nowhere when w is nil. It returns a function that flushes
// klog, to call before exiting.
func QuietLogs(w io.Writer) (flush func(), err error) {
	kfs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(kfs)
	// With logtostderr off, klog still copies messages at or above stderrthreshold to stderr.
	for name, value := range map[string]string{"logtostderr": "false", "alsologtostderr": "false", "stderrthreshold": "FATAL"} {
		if err := kfs.Set(name, value); err != nil {
			return nil, fmt.Errorf("configuring klog: %w", err)
		}
	}
	if w == nil {
		klog.SetOutput(io.Discard)
		rest.SetDefaultWarningHandler(rest.NoWarnings{})
	} else {
		klog.SetOutput(w)
		rest.SetDefaultWarningHandler(rest.NewWarningWriter(w, rest.WarningWriterOptions{Deduplicate: true}))
	}
	return klog.Flush, nil
}

// LogFunc returns the last lines of a container's log (of its previous instance when previous is
// set), at most lines of them.
type LogFunc func(ctx context.Context, namespace, pod, container string, previous bool, lines int) ([]string, error)

// Log bounds: TailLog asks for the last lines, reads at most logRead bytes of them and keeps the
// last LogBytes. The kubelet applies limitBytes from the start of what it sends, so a server-side
// byte limit would cut the end of the tail, the lines that explain a crash: the bytes are bounded
// here instead.
const (
	logRead = 1 << 20
	// LogBytes is the most of a log TailLog returns.
	LogBytes = 64 << 10
)

// TailLog returns the last lines (at most lines, LogBytes in all) of a container's log through
// the API server's pods/log subresource: of its previous instance when previous is set, as
// `kubectl logs -p` does. The log is the container's, untrusted, and enters doomwatch here: each
// line comes sanitised (sanitize.Text), as does the error's text, on one line; the caller clips
// them to its width. It only reads (get on pods/log).
func (s *Source) TailLog(ctx context.Context, namespace, pod, container string, previous bool, lines int) ([]string, error) {
	out, err := s.tailLog(ctx, namespace, pod, container, previous, lines)
	if err != nil {
		return nil, oneLine(err)
	}
	for i := range out {
		out[i] = sanitize.Text(out[i])
	}
	return out, nil
}

// tailLog is TailLog before sanitising: the lines as the container wrote them.
func (s *Source) tailLog(ctx context.Context, namespace, pod, container string, previous bool, lines int) ([]string, error) {
	if s.logs != nil {
		out, err := s.logs(ctx, namespace, pod, container, previous, lines)
		if err != nil {
			return nil, err
		}
		return tailLines([]byte(strings.Join(out, "\n")), lines), nil
	}
	n := int64(lines)
	req := s.client.CoreV1().Pods(namespace).GetLogs(pod, &corev1.PodLogOptions{
		Container: container, Previous: previous, TailLines: &n,
	})
	rc, err := req.Stream(ctx)
	switch {
	case apierrors.IsForbidden(err):
		return nil, kindErrorf(ErrForbidden, err, "not allowed to get pods/log in %s: %v", namespace, apiMessage(err))
	case err != nil:
		return nil, fmt.Errorf("getting the log of %s/%s: %s", pod, container, apiMessage(err))
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, logRead))
	if err != nil {
		return nil, fmt.Errorf("reading the log of %s/%s: %w", pod, container, err)
	}
	return tailLines(data, lines), nil
}

// tailLines splits the end of a log into lines: at most LogBytes from the end, starting at a
// whole line when the cut falls inside one, and at most lines of them.
func tailLines(data []byte, lines int) []string {
	if len(data) > LogBytes {
		data = data[len(data)-LogBytes:]
		if i := bytes.IndexByte(data, '\n'); i >= 0 && i < len(data)-1 {
			data = data[i+1:]
		}
	}
	text := strings.TrimRight(string(data), "\n")
	if text == "" {
		return nil
	}
	out := strings.Split(text, "\n")
	if len(out) > lines {
		out = out[len(out)-lines:]
	}
	return out
}
