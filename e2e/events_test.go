package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"doomwatch/classify"
	"doomwatch/classify/corpus"
	"doomwatch/kube"
	"doomwatch/model"
)

// eventFixture is a classify fixture with the Warning events after its pod.
type eventFixture struct {
	pod    corev1.Pod
	events []corev1.Event
}

// eventFixtures reads the classify fixtures that carry events (classify/testdata/README.md).
func eventFixtures(t *testing.T) []eventFixture {
	t.Helper()
	all, err := corpus.Load("../classify/testdata")
	if err != nil {
		t.Fatal(err)
	}
	var out []eventFixture
	for _, fx := range all {
		if len(fx.Events) > 0 {
			out = append(out, eventFixture{pod: *fx.Pod, events: fx.Events})
		}
	}
	if len(out) == 0 {
		t.Fatal("no classify fixture carries events")
	}
	return out
}

// postEvent creates ev in the test's namespace about pod p, as the kubelet's recorder would, with
// its times shifted by shift (a fixture's "now" becomes the test's).
func (e *env) postEvent(ev corev1.Event, p *corev1.Pod, shift time.Duration) {
	e.t.Helper()
	ev.Namespace, ev.ResourceVersion, ev.UID = e.ns, "", ""
	ev.InvolvedObject.Namespace, ev.InvolvedObject.UID = e.ns, p.UID
	ev.FirstTimestamp = metav1.NewTime(ev.FirstTimestamp.Add(shift))
	ev.LastTimestamp = metav1.NewTime(ev.LastTimestamp.Add(shift))
	if _, err := e.client.CoreV1().Events(e.ns).Create(e.ctx, &ev, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("creating event %s: %v", ev.Name, err)
	}
}

// TestEventFixturesJudged loads every classify fixture that has events into the API server, pod
// and events as the kubelet would have written them, and checks that `--once -o json` shows each
// pod's Warning events and judges it as the fixture says: a FailedMount for a missing secret or
// configmap dooms it, a sandbox failure or a Multi-Attach error is transient, and their look-alikes
// are not doomed.
func TestEventFixturesJudged(t *testing.T) {
	e := newEnv(t)
	fixtures := eventFixtures(t)
	for i := range fixtures {
		fx := &fixtures[i]
		now, err := time.Parse(time.RFC3339, fx.pod.Annotations["test.doomwatch.io/now"])
		if err != nil {
			t.Fatal(err)
		}
		p := loadFixture(t, e, &fx.pod)
		shift := time.Now().Truncate(time.Second).Sub(now)
		for _, ev := range fx.events {
			e.postEvent(ev, p, shift)
		}
	}
	snap := onceJSON(t, "--kubeconfig", adminKubeconfig(t), "-n", e.ns)
	for i := range fixtures {
		fx := &fixtures[i]
		ann := fx.pod.Annotations
		got, ok := snap.pod(fx.pod.Name)
		if !ok {
			t.Errorf("--once: pod %s missing", fx.pod.Name)
			continue
		}
		if got.Verdict != ann["test.doomwatch.io/kind"] || !strings.Contains(got.Reason, ann["test.doomwatch.io/reason"]) {
			t.Errorf("%s: --once says %s %q, the fixture %s %q", fx.pod.Name, got.Verdict, got.Reason,
				ann["test.doomwatch.io/kind"], ann["test.doomwatch.io/reason"])
		}
		if len(got.Events) != len(fx.events) {
			t.Errorf("%s: --once shows %d events, %d were posted: %+v", fx.pod.Name, len(got.Events), len(fx.events), got.Events)
			continue
		}
		for _, ev := range got.Events {
			posted := false
			for _, want := range fx.events {
				src := want.Source.Component // kubectl's SOURCE, as classify.EventSource prints it
				if want.Source.Host != "" {
					src += ", " + want.Source.Host
				}
				posted = posted || ev.Reason == want.Reason && ev.Message == want.Message && int32(ev.Count) == want.Count && ev.Source == src
			}
			if !posted || ev.LastSeen == "" {
				t.Errorf("%s: --once shows event %+v, which was not posted so", fx.pod.Name, ev)
			}
		}
	}
}

// sandboxMessage is the kubelet's FailedCreatePodSandBox for the AWS VPC CNI out of addresses,
// verbatim from kubernetes/kubernetes#131071 (classify fixture ev-sandbox-aws-cni-no-ip).
const sandboxMessage = `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox ` +
	`"40d7bc158517c6954d0e8f1ba2bbc04e376e3123ab38227d6a601b7b1bb48ccf": plugin type="aws-cni" name="aws-cni" ` +
	`failed (add): add cmd: failed to assign an IP address to container`

// waitingForSandbox is a pod the kubelet has not created a sandbox for: ContainerCreating,
// PodReadyToStartContainers False, no pod IP (pkg/kubelet/status/generate.go).
func waitingForSandbox() corev1.PodStatus {
	st := podStatus(corev1.PodPending, waiting("app", "ContainerCreating", "", 0, nil))
	st.PodIP = ""
	st.Conditions = append(st.Conditions, corev1.PodCondition{Type: corev1.PodReadyToStartContainers,
		Status: corev1.ConditionFalse, LastTransitionTime: metav1.NewTime(time.Now().Add(-2 * time.Minute).Truncate(time.Second))})
	return st
}

// TestSandboxFailuresMakeNodeSuspect: three pods of three workloads on one node wait for their
// sandboxes while the CNI fails them, which only their FailedCreatePodSandBox events say. They are
// transient, and the node is suspect, in the live model (events posted while doomwatch watches)
// and in `--once -o json` (events listed at startup); the calm node is not.
func TestSandboxFailuresMakeNodeSuspect(t *testing.T) {
	e := newEnv(t)
	flaky, calm := e.nodeName("flaky"), e.nodeName("calm")
	e.node(flaky, true)
	e.node(calm, true)
	var pods []*corev1.Pod
	for _, name := range []string{"cart", "search", "login"} {
		_, owner := e.deployment(name, 1, 0)
		pods = append(pods, e.pod(podSpec{name: name + "-a", node: flaky, owner: &owner, status: waitingForSandbox()}))
	}
	e.pod(podSpec{name: "web-a", node: calm, status: podStatus(corev1.PodRunning, running("app", true, 0, nil))})

	w := startWatcher(t, e.c.Admin, kube.Options{Namespace: e.ns})
	w.waitFor("the pods synced, starting", waitTimeout, func(m *model.Model, _ time.Time) bool {
		return synced(m) && verdictIs(e.ns+"/cart-a", classify.Progressing)(m)
	})
	for i, p := range pods {
		at := time.Now().Truncate(time.Second)
		e.postEvent(corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", p.Name, at.UnixNano()+int64(i))},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: p.Name, APIVersion: "v1"},
			Reason:         "FailedCreatePodSandBox", Message: sandboxMessage, Type: corev1.EventTypeWarning, Count: 1,
			FirstTimestamp: metav1.NewTime(at), LastTimestamp: metav1.NewTime(at),
			Source: corev1.EventSource{Component: "kubelet", Host: flaky}, ReportingController: "kubelet", ReportingInstance: flaky,
		}, p, 0)
	}
	w.waitFor("the flaky node suspect", waitTimeout, func(m *model.Model, now time.Time) bool {
		n, ok := nodeOf(m, now, flaky)
		return ok && n.Suspect && n.FailedPods == 3
	})
	w.read(func(m *model.Model, now time.Time) {
		for _, p := range pods {
			if v := m.Pod(e.ns + "/" + p.Name).Verdict; v.Class != classify.Transient || v.Rule != classify.RuleSandboxFailed {
				t.Errorf("%s = %s %s %q, want transient sandbox-failed", p.Name, v.Class, v.Rule, v.Reason)
			}
		}
		if n, _ := nodeOf(m, now, flaky); n.Failures128 != 0 || !strings.HasPrefix(n.Why, "3 of ") || !strings.Contains(n.Why, "that started here in the last 15m failed to start;") {
			t.Errorf("flaky node = %+v, want 3 sandbox failures, none of them exit 128", n)
		}
	})

	snap := onceJSON(t, "--kubeconfig", adminKubeconfig(t), "-n", e.ns)
	if n, ok := snap.node(flaky); !ok || !n.Suspect || n.StartFailures128 != 0 {
		t.Errorf("--once: node %s = %+v, want suspect on sandbox failures alone", flaky, n)
	}
	if n, ok := snap.node(calm); !ok || n.Suspect {
		t.Errorf("--once: node %s = %+v, want not suspect", calm, n)
	}
	for _, p := range pods {
		sp, ok := snap.pod(p.Name)
		if !ok || sp.Verdict != "transient" || len(sp.Events) != 1 || sp.Events[0].Reason != "FailedCreatePodSandBox" ||
			sp.Events[0].Source != "kubelet, "+flaky {
			t.Errorf("--once: pod %s = %+v, want transient with its FailedCreatePodSandBox event", p.Name, sp)
		}
	}
}
