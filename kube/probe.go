package kube

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// A fleet's clusters are probed so that one that stops answering is named within seconds. The
// informers alone would not tell: a watch on a server that went silent (a partition, a stopped
// process) stays open until HTTP/2's ping gives up on it, 30 s of silence and 15 s more for the
// ping (client-go's transport: ReadIdleTimeout and PingTimeout in
// k8s.io/apimachinery/pkg/util/net/http.go), and a list in flight waits for its own timeout.
// The probe is GET /version, which every client may read (the system:public-info-viewer
// ClusterRole) and which the API server answers from memory.
const (
	probeEvery   = 2 * time.Second
	probeTimeout = 3 * time.Second
)

// probe asks the API server for /version every probeEvery and tells health whether it answered
// within probeTimeout, until ctx ends. A reply of any status is an answer.
func probe(ctx context.Context, cfg *rest.Config, health *healthTracker) {
	pc := rest.CopyConfig(cfg)
	pc.Timeout = probeTimeout
	// The probe must not wait behind the informers' requests in a shared rate limiter.
	pc.QPS, pc.Burst, pc.RateLimiter = -1, 0, nil
	dc, err := discovery.NewDiscoveryClientForConfig(pc)
	if err != nil {
		health.probed(fmt.Errorf("creating the probe's client: %w", err))
		return
	}
	t := time.NewTicker(probeEvery)
	defer t.Stop()
	for {
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		err := dc.RESTClient().Get().AbsPath("/version").Do(pctx).Error()
		cancel()
		if ctx.Err() != nil {
			return
		}
		var status apierrors.APIStatus
		switch {
		case err == nil, errors.As(err, &status):
			health.probed(nil)
		case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
			health.probed(fmt.Errorf("the API server at %s did not answer within %s", cfg.Host, probeTimeout))
		default:
			health.probed(fmt.Errorf("cannot reach the API server at %s: %v", cfg.Host, err))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
