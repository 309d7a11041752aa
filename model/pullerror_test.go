package model

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"doomwatch/classify"
	"doomwatch/contract"
)

// Docker Hub's rate limit as containerd reports it, verbatim from truenas/charts#2805 (the kubelet's
// Failed event for nextcloud:29.0.6; classify/testdata/pull-backoff-rate-limit-event.yaml). The
// kubelet puts the same error in the ErrImagePull waiting message (kubernetes/kubernetes
// pkg/kubelet/images/image_manager.go evalCRIPullErr) and in its event, `Failed to pull image %q:
// %v` (pullImage, FailedToPullImage); while it backs off, a kubelet before v1.32 writes only
// `Back-off pulling image %q`, the text of the BackOff event.
const (
	rateLimitImage = "nextcloud:29.0.6"
	rateLimitMsg   = `rpc error: code = Unknown desc = failed to pull and unpack image "docker.io/library/nextcloud:29.0.6": ` +
		`failed to copy: httpReadSeeker: failed open: unexpected status code ` +
		`https://registry-1.docker.io/v2/library/nextcloud/manifests/sha256:c437d628c117e0508e45c6d1d89f5fba236c092ade7d0cc28d629d581bea161c: ` +
		`429 Too Many Requests - Server message: toomanyrequests: You have reached your pull rate limit. ` +
		`You may increase the limit by authenticating and upgrading: https://www.docker.com/increase-rate-limit`
	rateLimitBackOff = `Back-off pulling image "nextcloud:29.0.6"`
	// rateLimitReason is how the reason must begin while the pull is rate-limited: the cause, and
	// the registry's own words from the error.
	rateLimitCause = "Image pull rate-limited by the registry"
	rateLimitWords = "toomanyrequests: You have reached your pull rate limit"
)

// failedPull is the kubelet's Warning event for a failed pull of img (image_manager.go pullImage:
// reason Failed, `Failed to pull image %q: %v`); failedErr its `Error: %v` events of the same reason
// (kuberuntime_container.go startContainer), which say nothing about the cause.
func failedPull(p *corev1.Pod, name, img, err string, count int32, last time.Time) *corev1.Event {
	return podEvent(p, name, "Failed", `Failed to pull image "`+img+`": `+err, count, last)
}

func failedErr(p *corev1.Pod, name, reason string, count int32, last time.Time) *corev1.Event {
	return podEvent(p, name, "Failed", "Error: "+reason, count, last)
}

// TestPullBackOffKeepsTheRateLimit: the kubelet alternates ErrImagePull, whose message names
// Docker Hub's rate limit, with an ImagePullBackOff whose message (before v1.32) does not. The
// reason names the rate limit throughout, and the pod stays transient: the pull succeeds once the
// limit resets.
func TestPullBackOffKeepsTheRateLimit(t *testing.T) {
	m := New(DefaultConfig())
	img := image(rateLimitImage)
	steps := []struct {
		name string
		opt  podOpt
		rule classify.Rule
	}{
		{"ErrImagePull", waiting("ErrImagePull", rateLimitMsg), classify.RuleImagePull},
		{"ImagePullBackOff", waiting("ImagePullBackOff", rateLimitBackOff), classify.RuleImagePullBackOff},
		{"ErrImagePull again", waiting("ErrImagePull", rateLimitMsg), classify.RuleImagePull},
		{"ImagePullBackOff again", waiting("ImagePullBackOff", rateLimitBackOff), classify.RuleImagePullBackOff},
	}
	for i, s := range steps {
		apply(m, t0.Add(time.Duration(i)*10*time.Second), pod("shop", "cloud-1", img, s.opt))
		p := m.Pod("shop/cloud-1")
		v, c := p.Verdict, p.Containers[0]
		if v.Class != classify.Transient || v.Rule != s.rule || v.Container != "app" {
			t.Errorf("%s: %v %v (container %q), want transient %v", s.name, v.Class, v.Rule, v.Container, s.rule)
		}
		if !strings.HasPrefix(v.Reason, rateLimitCause) || !strings.Contains(v.Reason, rateLimitWords) || c.Reason != v.Reason {
			t.Errorf("%s: reason %q (container %q), want the rate limit", s.name, v.Reason, c.Reason)
		}
		if cnt := m.Counts(); cnt.Transient != 1 || cnt.Doomed != 0 {
			t.Errorf("%s: counts %+v", s.name, cnt)
		}
	}
	if r := m.Pod("shop/cloud-1").Verdict.Reason; !strings.Contains(r, "(back-off)") {
		t.Errorf("back-off: reason %q does not say the kubelet backs off", r)
	}

	// The pull succeeds: the memory goes with the pull states, and a later back-off (another
	// image) says only what its status says.
	apply(m, t0.Add(time.Minute), pod("shop", "cloud-1", img))
	if p := m.Pod("shop/cloud-1"); p.Verdict.Class != classify.Healthy || len(p.sticky) != 0 {
		t.Fatalf("running: %v %q, %d memories; want healthy, none", p.Verdict.Class, p.Verdict.Reason, len(p.sticky))
	}
	apply(m, t0.Add(2*time.Minute), pod("shop", "cloud-1", img, waiting("ImagePullBackOff", rateLimitBackOff)))
	if v := m.Pod("shop/cloud-1").Verdict; v.Class != classify.Transient || strings.Contains(v.Reason, rateLimitWords) {
		t.Errorf("a back-off after the container ran: %v %q, want transient without the old error", v.Class, v.Reason)
	}
}

// TestPullBackOffRateLimitFromEvents: a pod first seen in the back-off (`--once`, or the dashboard
// opened mid-incident) has no ErrImagePull status behind it; the kubelet's Failed event, which
// arrives in the same batch after the pod, names the rate limit. Its `Error: ...` events and an
// event about another image do not count.
func TestPullBackOffRateLimitFromEvents(t *testing.T) {
	m := New(DefaultConfig())
	p := pod("shop", "cloud-1", onNode("node-1"), image(rateLimitImage), waiting("ImagePullBackOff", rateLimitBackOff))
	pull := failedPull(p, "a", rateLimitImage, rateLimitMsg, 3, t0.Add(-20*time.Second))
	// Newer, but about another image: imageNotFound's error.
	other := failedPull(p, "b", "registry.example/app:v9", `rpc error: code = NotFound desc = failed to pull and unpack image "registry.example/app:v9": `+
		`failed to resolve reference "registry.example/app:v9": registry.example/app:v9: not found`, 1, t0.Add(-5*time.Second))
	m.Apply(&contract.Batch{
		Pods: records(p),
		Events: []*corev1.Event{pull, other, failedErr(p, "c", "ErrImagePull", 3, t0.Add(-20*time.Second)),
			failedErr(p, "d", "ImagePullBackOff", 4, t0.Add(-time.Second))},
	}, t0)
	v := m.Pod("shop/cloud-1").Verdict
	if v.Class != classify.Transient || v.Rule != classify.RuleImagePullBackOff ||
		!strings.HasPrefix(v.Reason, rateLimitCause+" (back-off): ") || !strings.Contains(v.Reason, rateLimitWords) {
		t.Errorf("first seen in back-off: %v %v %q, want transient with the rate limit", v.Class, v.Rule, v.Reason)
	}

	// The API deletes the event after its TTL: nothing says why any more.
	m.Apply(&contract.Batch{Deletes: []contract.Ref{{Kind: contract.KindEvent, Namespace: "shop", Name: pull.Name}}}, t0.Add(time.Hour))
	if v := m.Pod("shop/cloud-1").Verdict; v.Class != classify.Transient || v.Reason != "Back-off pulling image "+rateLimitImage {
		t.Errorf("after the event's delete: %v %q, want the bare back-off", v.Class, v.Reason)
	}
}

// TestPullBackOffNewestErrorWins: the error the model saw last decides, whether it came as the
// container's ErrImagePull status or as the kubelet's event: after a rate limit the kubelet's event
// says the tag is gone (its ErrImagePull status fell between two batches), and the back-off is
// doomed; then the status says the rate limit again (the tag was pushed back), newer than the
// event, and the back-off is transient again.
func TestPullBackOffNewestErrorWins(t *testing.T) {
	m := New(DefaultConfig())
	p := pod("shop", "cloud-1", onNode("node-1"), image(rateLimitImage), waiting("ErrImagePull", rateLimitMsg))
	apply(m, t0, p)
	backOff := pod("shop", "cloud-1", onNode("node-1"), image(rateLimitImage), waiting("ImagePullBackOff", rateLimitBackOff))
	// containerd's tag-not-found for this image (imageNotFound's format: containerd/containerd
	// pkg/cri/server/image_pull.go, release/1.7, its placeholders filled with this image), in the
	// kubelet's event: its ErrImagePull status fell between two batches.
	notFound := `rpc error: code = NotFound desc = failed to pull and unpack image "docker.io/library/nextcloud:29.0.6": ` +
		`failed to resolve reference "docker.io/library/nextcloud:29.0.6": docker.io/library/nextcloud:29.0.6: not found`
	m.Apply(&contract.Batch{Pods: records(backOff), Events: []*corev1.Event{failedPull(p, "a", rateLimitImage, notFound, 1, t0.Add(30*time.Second))}},
		t0.Add(30*time.Second))
	v := m.Pod("shop/cloud-1").Verdict
	if v.Class != classify.Doomed || v.Reason != "Image not found: "+rateLimitImage {
		t.Errorf("the newer event says not found: %v %v %q, want doomed", v.Class, v.Rule, v.Reason)
	}
	apply(m, t0.Add(time.Minute), pod("shop", "cloud-1", onNode("node-1"), image(rateLimitImage), waiting("ErrImagePull", rateLimitMsg)))
	apply(m, t0.Add(70*time.Second), backOff)
	if v := m.Pod("shop/cloud-1").Verdict; v.Class != classify.Transient || !strings.Contains(v.Reason, rateLimitWords) {
		t.Errorf("the newer status says the rate limit: %v %q, want transient", v.Class, v.Reason)
	}
}

// TestPullBackOffNotFoundStaysDoomed: an image that does not exist stays doomed through the
// back-off with its cause, from the status the model saw and, for a pod first seen in the back-off,
// from the kubelet's event.
func TestPullBackOffNotFoundStaysDoomed(t *testing.T) {
	img := image("registry.example/app:v9")
	notFound := "Image not found: registry.example/app:v9"
	m := New(DefaultConfig())
	for i, opt := range []podOpt{imageNotFound(), imageBackOff(), imageNotFound(), imageBackOff()} {
		apply(m, t0.Add(time.Duration(i)*10*time.Second), pod("shop", "pay-1", img, opt))
		if v := m.Pod("shop/pay-1").Verdict; v.Class != classify.Doomed || v.Reason != notFound {
			t.Errorf("status step %d: %v %v %q, want doomed %q", i, v.Class, v.Rule, v.Reason, notFound)
		}
	}

	m = New(DefaultConfig())
	p := pod("shop", "pay-2", onNode("node-1"), img, imageBackOff())
	msg := p.Status.ContainerStatuses[0].State.Waiting.Message
	notFoundErr := pod("shop", "pay-2", img, imageNotFound()).Status.ContainerStatuses[0].State.Waiting.Message
	m.Apply(&contract.Batch{Pods: records(p), Events: []*corev1.Event{
		failedPull(p, "a", "registry.example/app:v9", notFoundErr, 2, t0.Add(-10*time.Second)),
		failedErr(p, "b", "ImagePullBackOff", 2, t0.Add(-5*time.Second)),
	}}, t0)
	v := m.Pod("shop/pay-2").Verdict
	if v.Class != classify.Doomed || v.Rule != classify.RuleStickyImageNotFound || v.Reason != notFound || v.Message != notFoundErr {
		t.Errorf("first seen in back-off (%q) with the Failed event: %v %v %q (message %q), want doomed %q",
			msg, v.Class, v.Rule, v.Reason, v.Message, notFound)
	}
	if c := m.Counts(); c.Doomed != 1 || c.Transient != 0 {
		t.Errorf("counts %+v", c)
	}
}

// TestPullErrorMemoryIsForPullingContainersOnly: the model remembers a pull error only while the
// container is in the pull states, for the image the spec asks for.
func TestPullErrorMemoryIsForPullingContainersOnly(t *testing.T) {
	m := New(DefaultConfig())
	apply(m, t0, pod("shop", "web-1"), pod("shop", "cloud-1", image(rateLimitImage), waiting("ErrImagePull", rateLimitMsg)))
	if n := len(m.Pod("shop/web-1").sticky); n != 0 {
		t.Errorf("a running pod keeps %d memories", n)
	}
	if n := len(m.Pod("shop/cloud-1").sticky); n != 1 {
		t.Fatalf("a rate-limited pull keeps %d memories, want 1", n)
	}
	// The spec's image changed: the old image's error says nothing about the new one's back-off.
	apply(m, t0.Add(10*time.Second), pod("shop", "cloud-1", image("nextcloud:29.0.7"),
		waiting("ImagePullBackOff", `Back-off pulling image "nextcloud:29.0.7"`)))
	p := m.Pod("shop/cloud-1")
	if v := p.Verdict; strings.Contains(v.Reason, rateLimitWords) || len(p.sticky) != 0 {
		t.Errorf("another image's back-off: %q, %d memories; want the bare back-off, none", v.Reason, len(p.sticky))
	}
}
