package classify

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestEventOfReadsBothAPIs: a kubelet's legacy event and a scheduler's events.k8s.io event, as the
// core/v1 API returns them, give kubectl's COUNT and LAST SEEN.
func TestEventOfReadsBothAPIs(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 11, 50, 0, 0, time.UTC)
	legacy := &corev1.Event{Reason: "FailedMount", Count: 16,
		FirstTimestamp: metav1.NewTime(t0), LastTimestamp: metav1.NewTime(t0.Add(8 * time.Minute)),
		Source: corev1.EventSource{Component: "kubelet", Host: "node-a"}}
	if e := EventOf(legacy); e.Count != 16 || !e.First.Equal(t0) || !e.Last.Equal(t0.Add(8*time.Minute)) {
		t.Errorf("legacy event = %+v", e)
	}
	if s := EventSource(legacy); s != "kubelet, node-a" {
		t.Errorf("EventSource = %q, want kubectl's \"kubelet, node-a\"", s)
	}
	single := &corev1.Event{Reason: "FailedScheduling", EventTime: metav1.NewMicroTime(t0),
		ReportingController: "default-scheduler", ReportingInstance: "default-scheduler-cp-1"}
	if e := EventOf(single); e.Count != 1 || !e.First.Equal(t0) || !e.Last.Equal(t0) {
		t.Errorf("singleton events.k8s.io event = %+v, want count 1 at eventTime", e)
	}
	if s := EventSource(single); s != "default-scheduler, default-scheduler-cp-1" {
		t.Errorf("EventSource = %q", s)
	}
	series := single.DeepCopy()
	series.Series = &corev1.EventSeries{Count: 7, LastObservedTime: metav1.NewMicroTime(t0.Add(time.Minute))}
	if e := EventOf(series); e.Count != 7 || !e.Last.Equal(t0.Add(time.Minute)) {
		t.Errorf("series event = %+v, want the series' count and last time", e)
	}
}

func TestMissingVolumeSource(t *testing.T) {
	tests := []struct {
		msg  string
		want bool
	}{
		{`MountVolume.SetUp failed for volume "certs" : secret "coturn" not found`, true},
		{`MountVolume.SetUp failed for volume "cfg" : configmap "app" not found`, true},
		{`MountVolume.SetUp failed for volume "cfg" : configmaps "app" not found`, true},
		// A projected volume aggregates its sources' errors.
		{`MountVolume.SetUp failed for volume "all" : [object "ns"/"a" not registered, secret "b" not found]`, true},
		{`MountVolume.SetUp failed for volume "kube-api-access-x" : configmap "kube-root-ca.crt" not found`, false},
		{`MountVolume.SetUp failed for volume "x" : object "ns"/"x" not registered`, false},
		{`MountVolume.SetUp failed for volume "x" : failed to sync secret cache: timed out waiting for the condition`, false},
		// A CSI driver's error that happens to say "not found" is the driver's, not a missing object.
		{`MountVolume.SetUp failed for volume "s" : rpc error: code = NotFound desc = secret "x" not found in vault`, false},
		{`MountVolume.MountDevice failed for volume "pvc-1" : rpc error: code = DeadlineExceeded desc = context deadline exceeded`, false},
		{`secret "x" not found`, false},
	}
	for _, tt := range tests {
		if got := missingVolumeSource(tt.msg); got != tt.want {
			t.Errorf("missingVolumeSource(%q) = %v, want %v", tt.msg, got, tt.want)
		}
	}
}

// TestPodEventsOnlyWhileStarting: events decide only for a pod whose verdict is starting and
// whose sandbox is not ready; a pod without the PodReadyToStartContainers condition (kubelets
// before v1.29) has a ready sandbox once it has an IP.
func TestPodEventsOnlyWhileStarting(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 11, 50, 0, 0, time.UTC)
	events := []Event{{Reason: "FailedCreatePodSandBox", Count: 1, First: t0, Last: t0,
		Message: `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "0a": plugin type="calico" failed (add): Unauthorized`}}
	pod := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending}}
	starting := Verdict{Class: Progressing, Rule: RuleStarting, Reason: "Creating container"}
	v, ok := PodEvents(pod, starting, events)
	if !ok || v.Rule != RuleSandboxFailed || v.Source != FromEvents || v.Container != "" ||
		v.Reason != `Failed to create pod sandbox, will retry: rpc error: code = Unknown desc = failed to setup network for sandbox "0a": plugin type="calico" failed (add): Unauthorized` {
		t.Errorf("no condition, no IP: %v %+v", ok, v)
	}
	pod.Status.PodIP = "10.244.1.7"
	if v, ok := PodEvents(pod, starting, events); ok || v != starting {
		t.Errorf("no condition, an IP: %v %+v, want the verdict unchanged", ok, v)
	}
	pod.Status.PodIP = ""
	crash := Verdict{Class: Doomed, Rule: RuleCrashLoop, Reason: "Crashing repeatedly"}
	if v, ok := PodEvents(pod, crash, events); ok || v != crash {
		t.Errorf("a crash loop: %v %+v, want the verdict unchanged", ok, v)
	}
	other := []Event{{Reason: "BackOff", Message: "Back-off restarting failed container", Count: 3, First: t0, Last: t0}}
	if _, ok := PodEvents(pod, starting, other); ok {
		t.Error("an event PodEvents does not read decided")
	}
	for _, r := range []string{"FailedCreatePodSandBox", "FailedMount", "FailedAttachVolume"} {
		if !EventReason(r) {
			t.Errorf("EventReason(%q) = false", r)
		}
	}
	if EventReason("BackOff") {
		t.Error("EventReason(BackOff) = true")
	}
}

// TestPullFailure reads the kubelet's Failed event for a pull (truenas/charts#2805, in the fixture
// pull-backoff-rate-limit-event) and nothing else, its `Error: …` events included.
func TestPullFailure(t *testing.T) {
	fx := fixtureNamed(t, "pull-backoff-rate-limit-event.yaml")
	pull := fx.events[0]
	tests := []struct {
		name            string
		reason, message string
		img, err        string
	}{
		{"the pull", pull.Reason, pull.Message, "nextcloud:29.0.6", strings.TrimPrefix(pull.Message, `Failed to pull image "nextcloud:29.0.6": `)},
		// client-go's correlator folds similar events (tools/record/events_cache.go EventAggregate).
		{"combined", pull.Reason, "(combined from similar events): " + pull.Message, "nextcloud:29.0.6", strings.TrimPrefix(pull.Message, `Failed to pull image "nextcloud:29.0.6": `)},
		{"Error: ErrImagePull", fx.events[1].Reason, fx.events[1].Message, "", ""},
		{"Error: ImagePullBackOff", fx.events[2].Reason, fx.events[2].Message, "", ""},
		{"another reason", "BackOff", pull.Message, "", ""},
	}
	for _, tt := range tests {
		img, err, ok := PullFailure(tt.reason, tt.message)
		if img != tt.img || err != tt.err || ok != (tt.img != "") {
			t.Errorf("%s: %q %q %v, want %q %q", tt.name, img, err, ok, tt.img, tt.err)
		}
	}
	if !strings.Contains(pull.Message, "toomanyrequests") {
		t.Fatalf("the fixture's first event is not the pull's: %q", pull.Message)
	}
}
