// Command wirebytes counts the bytes an API server sends for a streamed list of every pod (a watch
// with sendInitialEvents, as client-go's WatchList asks for, held for 20 s), with and without gzip:
// what compression saves on the wire, against the CPU it costs (BENCHMARKS.md). Usage:
//
//	go run ./hack/wirebytes KUBECONFIG
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: wirebytes KUBECONFIG")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "wirebytes:", err)
		os.Exit(1)
	}
}

func run(kubeconfig string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.APIPath, cfg.GroupVersion = "/api", &corev1.SchemeGroupVersion
	cfg.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf"
	rc, err := rest.RESTClientFor(cfg)
	if err != nil {
		return err
	}
	// The request names its encoding itself, so Go's transport neither asks for gzip nor
	// decompresses: what is counted is what the server sent, after TLS.
	for _, encoding := range []string{"gzip", "identity"} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		start := time.Now()
		body, err := rc.Get().Resource("pods").SetHeader("Accept-Encoding", encoding).
			Param("watch", "true").Param("sendInitialEvents", "true").Param("resourceVersionMatch", "NotOlderThan").
			Param("allowWatchBookmarks", "true").Param("timeoutSeconds", "20").Stream(ctx)
		if err != nil {
			cancel()
			return err
		}
		n, err := io.Copy(io.Discard, body)
		body.Close()
		cancel()
		if err != nil {
			return err
		}
		fmt.Printf("Accept-Encoding %s: %d bytes in %s\n", encoding, n, time.Since(start).Round(time.Millisecond))
	}
	return nil
}
