package classify

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"doomwatch/classify/corpus"
)

// expectPrefix is the annotation prefix under which each fixture states its expected verdict and
// kubectl columns; testdata/README.md documents the keys.
const expectPrefix = corpus.ExpectPrefix

// fixture is one pod from testdata/ with its expectations.
type fixture struct {
	file string
	pod  *corev1.Pod
	// events are the Warning events posted about the pod, the documents after it in the file.
	events []corev1.Event
	now    time.Time
	want   map[string]string // annotation key without prefix -> value
}

// eventsOf is the fixture's events as PodEvents takes them.
func (fx *fixture) eventsOf() []Event {
	out := make([]Event, len(fx.events))
	for i := range fx.events {
		out[i] = EventOf(&fx.events[i])
	}
	return out
}

// verdict is the pod's verdict with its events, as the model judges it: PodEvents for a pod that
// waits for its sandbox or volumes, and pullBackOff for the container that decided.
func (fx *fixture) verdict() Verdict {
	v, _ := PodEvents(fx.pod, Pod(fx.pod, fx.now), fx.eventsOf())
	if v.Rule != RuleImagePullBackOff {
		return v
	}
	return fx.pullBackOff(ContainerVerdict{Name: v.Container, Init: v.Init, Verdict: v}).Verdict
}

// pullBackOff is c after PullBackOff, as the model judges a container that backs off a pull its
// message does not explain: with the error of the newest Failed event for the container's image.
func (fx *fixture) pullBackOff(c ContainerVerdict) ContainerVerdict {
	specs := fx.pod.Spec.Containers
	if c.Init {
		specs = fx.pod.Spec.InitContainers
	}
	img := ""
	for i := range specs {
		if specs[i].Name == c.Name {
			img = specs[i].Image
		}
	}
	var last Event
	lastErr := ""
	for _, e := range fx.eventsOf() {
		if pulled, err, ok := PullFailure(e.Reason, e.Message); ok && pulled == img && (lastErr == "" || e.Last.After(last.Last)) {
			last, lastErr = e, err
		}
	}
	c, _ = PullBackOff(c, img, lastErr)
	return c
}

// loadFixtures decodes every testdata/*.yaml pod and the events after it (corpus.Load). It fails
// the test on a malformed fixture, or one that does not state what it expects.
func loadFixtures(tb testing.TB) []fixture {
	tb.Helper()
	all, err := corpus.Load("testdata")
	if err != nil {
		tb.Fatal(err)
	}
	out := make([]fixture, 0, len(all))
	for _, c := range all {
		for _, k := range []string{"kind", "rule", "container", "status", "ready", "restarts"} {
			if _, ok := c.Want[k]; !ok {
				tb.Fatalf("%s: missing annotation %s%s", c.File, expectPrefix, k)
			}
		}
		out = append(out, fixture{file: c.File, pod: c.Pod, events: c.Events, now: c.Now, want: c.Want})
	}
	return out
}

func TestFixtures(t *testing.T) {
	for _, fx := range loadFixtures(t) {
		t.Run(strings.TrimSuffix(fx.file, ".yaml"), func(t *testing.T) {
			pod, w := fx.pod, fx.want
			if pod.Name+".yaml" != fx.file {
				t.Errorf("metadata.name %q does not match the file name", pod.Name)
			}
			v := fx.verdict()
			t.Logf("%s %s %q", v.Class, v.Rule, v.Reason)
			if v.Class.String() != w["kind"] {
				t.Errorf("kind = %s, want %s (reason %q)", v.Class, w["kind"], v.Reason)
			}
			if v.Rule.String() != w["rule"] {
				t.Errorf("rule = %s, want %s", v.Rule, w["rule"])
			}
			if !strings.Contains(v.Reason, w["reason"]) {
				t.Errorf("reason = %q, want it to contain %q", v.Reason, w["reason"])
			}
			if v.Container != w["container"] {
				t.Errorf("container = %q, want %q", v.Container, w["container"])
			}
			if s, ok := w["source"]; ok && v.Source.String() != s {
				t.Errorf("source = %q, want %q", v.Source, s)
			}
			if s, ok := w["exit"]; ok {
				if !v.HasExitCode || strconv.Itoa(int(v.ExitCode)) != s {
					t.Errorf("exit code = %d (has %v), want %s", v.ExitCode, v.HasExitCode, s)
				}
			}
			if s, ok := w["init"]; ok && strconv.FormatBool(v.Init) != s {
				t.Errorf("init = %v, want %s", v.Init, s)
			}
			if strings.ContainsAny(v.Reason, "\r\n") {
				t.Errorf("reason is not one line: %q", v.Reason)
			}
			if v.Class != Healthy && v.Class != Completed && v.Reason == "" {
				t.Errorf("%s verdict without a reason", v.Class)
			}
			if got := Status(pod, fx.now); got != w["status"] {
				t.Errorf("Status = %q, want %q", got, w["status"])
			}
			if got := Ready(pod); got != w["ready"] {
				t.Errorf("Ready = %q, want %q", got, w["ready"])
			}
			if got := Restarts(pod, fx.now); got != w["restarts"] {
				t.Errorf("Restarts = %q, want %q", got, w["restarts"])
			}

			// The pod's verdict is one of its containers' (or its own): Containers agrees with Pod.
			cvs := Containers(pod, fx.now, nil)
			if n := len(pod.Spec.InitContainers) + len(pod.Spec.Containers); len(cvs) != n {
				t.Fatalf("Containers returned %d verdicts, want %d", len(cvs), n)
			}
			if v.Container != "" {
				found := false
				for _, cv := range cvs {
					if cv.Name == v.Container && cv.Init == v.Init {
						found = true
						cv = fx.pullBackOff(cv)
						if cv.Class != v.Class || cv.Reason != v.Reason {
							t.Errorf("Containers[%s] = %s %q, Pod says %s %q", cv.Name, cv.Class, cv.Reason, v.Class, v.Reason)
						}
					}
				}
				if !found {
					t.Errorf("Pod names container %q, which Containers does not list", v.Container)
				}
			}
		})
	}
}

// TestFixturesCoverEveryRule fails when a rule the classifier can produce has no fixture, so a
// new rule cannot land untested.
func TestFixturesCoverEveryRule(t *testing.T) {
	seen := map[string]bool{}
	for _, fx := range loadFixtures(t) {
		seen[fx.want["rule"]] = true
		seen[fx.verdict().Rule.String()] = true
		for _, cv := range Containers(fx.pod, fx.now, nil) {
			seen[cv.Rule.String()] = true
		}
	}
	modelOnly := map[Rule]bool{RuleNone: true, RuleEscalated: true, RuleStickyImageNotFound: true,
		RuleNodeNotReady: true, RuleJobRetrying: true, RuleJobFailed: true, RuleJobSucceeded: true,
		RuleStartFailureRepeated: true}
	for r := RuleNone; int(r) < len(ruleNames); r++ {
		if !modelOnly[r] && !seen[r.String()] {
			t.Errorf("no fixture exercises rule %s", r)
		}
	}
}

// dns1123 is the API server's pod name rule (apimachinery validation IsDNS1123Subdomain).
var dns1123 = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

// TestFixturesAreAPIValid checks what the e2e suite needs to POST each fixture to a real API
// server: fixed names, a node for scheduled pods, statuses that name spec containers.
func TestFixturesAreAPIValid(t *testing.T) {
	for _, fx := range loadFixtures(t) {
		p := fx.pod
		if p.APIVersion != "v1" || p.Kind != "Pod" || p.Name == "" || p.Namespace == "" {
			t.Errorf("%s: not a named v1 Pod", fx.file)
		}
		if !dns1123.MatchString(p.Name) {
			t.Errorf("%s: name %q is not a lower-case RFC 1123 subdomain; the API server rejects it", fx.file, p.Name)
		}
		if p.ResourceVersion != "" || p.UID != "" {
			t.Errorf("%s: resourceVersion/uid would be rejected or ignored on create", fx.file)
		}
		scheduled := true
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
				scheduled = false
			}
		}
		if scheduled && p.Spec.NodeName == "" {
			t.Errorf("%s: scheduled pod without spec.nodeName", fx.file)
		}
		if p.DeletionTimestamp != nil && len(p.Finalizers) == 0 {
			t.Errorf("%s: terminating fixture needs a finalizer so e2e can keep it Terminating", fx.file)
		}
		check := func(specs []corev1.Container, sts []corev1.ContainerStatus) {
			for _, s := range sts {
				ok := false
				for _, c := range specs {
					ok = ok || c.Name == s.Name
				}
				if !ok {
					t.Errorf("%s: status for unknown container %q", fx.file, s.Name)
				}
			}
		}
		check(p.Spec.InitContainers, p.Status.InitContainerStatuses)
		check(p.Spec.Containers, p.Status.ContainerStatuses)
		for i := range fx.events {
			ev := &fx.events[i]
			io := &ev.InvolvedObject
			if ev.APIVersion != "v1" || ev.Kind != "Event" || ev.Name == "" || ev.Namespace != p.Namespace {
				t.Errorf("%s: event %d is not a named v1 Event in the pod's namespace", fx.file, i)
			}
			if io.Kind != "Pod" || io.Name != p.Name || io.Namespace != p.Namespace || io.UID != "" {
				t.Errorf("%s: event %d is not about the pod (involvedObject %+v; e2e sets the uid)", fx.file, i, *io)
			}
			if ev.Type != corev1.EventTypeWarning || ev.Reason == "" || ev.Message == "" || ev.Source.Component == "" {
				t.Errorf("%s: event %d: doomwatch watches Warning events with a reason, a message and a source", fx.file, i)
			}
			if ev.FirstTimestamp.IsZero() || ev.LastTimestamp.Before(&ev.FirstTimestamp) || ev.Count < 1 {
				t.Errorf("%s: event %d: a legacy event has firstTimestamp <= lastTimestamp and a count", fx.file, i)
			}
		}
	}
}
