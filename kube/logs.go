package kube

import (
	"flag"
	"fmt"
	"io"

	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
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
