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
	"net/http"
	"os"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

type counting struct {
	rt http.RoundTripper
	n  *atomic.Int64
}

func (c counting) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.rt.RoundTrip(r)
	if err == nil {
		resp.Body = body{resp.Body, c.n}
	}
	return resp, err
}

type body struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: wirebytes KUBECONFIG")
		os.Exit(2)
	}
	for _, disable := range []bool{false, true} {
		cfg, err := clientcmd.BuildConfigFromFlags("", os.Args[1])
		if err != nil {
			fmt.Fprintln(os.Stderr, "wirebytes:", err)
			os.Exit(1)
		}
		cfg.ContentType = "application/vnd.kubernetes.protobuf"
		cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf"
		var n atomic.Int64
		// Count what the server sends, after TLS and before any gunzip: the transport never
		// decompresses (DisableCompression), and when compression is measured the request asks
		// for gzip itself. The body is only counted, not decoded.
		cfg.DisableCompression = true
		cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
			return rtFunc(func(r *http.Request) (*http.Response, error) {
				if !disable {
					r.Header.Set("Accept-Encoding", "gzip")
				}
				return counting{rt, &n}.RoundTrip(r)
			})
		}
		rc, err := rest.RESTClientFor(withPods(cfg))
		if err != nil {
			fmt.Fprintln(os.Stderr, "wirebytes:", err)
			os.Exit(1)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		start := time.Now()
		res := rc.Get().Resource("pods").Param("watch", "true").Param("sendInitialEvents", "true").
			Param("resourceVersionMatch", "NotOlderThan").Param("allowWatchBookmarks", "true").Param("timeoutSeconds", "20").Do(ctx)
		cancel()
		if n.Load() == 0 {
			fmt.Fprintln(os.Stderr, "wirebytes: nothing received:", res.Error())
			os.Exit(1)
		}
		fmt.Printf("compression %v: %d bytes in %s\n", !disable, n.Load(), time.Since(start).Round(time.Millisecond))
	}
}

type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func withPods(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.APIPath = "/api"
	c.GroupVersion = &schemaGV
	c.NegotiatedSerializer = codecs
	return c
}

var schemaGV = corev1.SchemeGroupVersion
var codecs = scheme.Codecs.WithoutConversion()
