package model

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"doomwatch/classify"
	"doomwatch/contract"
)

// The kubelet's event messages, verbatim from classify/testdata: sandboxMsg from
// ev-sandbox-aws-cni-no-ip.yaml (kubernetes/kubernetes#131071), secretMissingMsg from
// ev-volume-secret-not-found.yaml (tmforum-oda/oda-canvas#24).
const (
	sandboxMsg = `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox ` +
		`"40d7bc158517c6954d0e8f1ba2bbc04e376e3123ab38227d6a601b7b1bb48ccf": plugin type="aws-cni" name="aws-cni" ` +
		`failed (add): add cmd: failed to assign an IP address to container`
	secretMissingMsg = `MountVolume.SetUp failed for volume "secret-volume" : secret "compcrdwebhook-secret" not found`
)

// waitingSandbox: the pod waits for its sandbox, ContainerCreating, PodReadyToStartContainers False.
func waitingSandbox() podOpt {
	return func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodPending
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionFalse}}
		cs := &p.Status.ContainerStatuses[0]
		cs.Ready, cs.State = false, corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
	}
}

// podEvent is a Warning event about pod p (its namespace, name and UID) as the kubelet posts it.
func podEvent(p *corev1.Pod, name, reason, msg string, count int32, last time.Time) *corev1.Event {
	return &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name + "." + name},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: p.Namespace, Name: p.Name, UID: p.UID},
		Reason:         reason, Message: msg, Count: count, Type: corev1.EventTypeWarning,
		FirstTimestamp: metav1.NewTime(last.Add(-time.Duration(count-1) * 10 * time.Second)), LastTimestamp: metav1.NewTime(last),
		Source: corev1.EventSource{Component: "kubelet", Host: p.Spec.NodeName},
	}
}

func nodeEvent(node, name, reason, msg string, last time.Time) *corev1.Event {
	return &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: "default", Name: node + "." + name},
		InvolvedObject: corev1.ObjectReference{Kind: "Node", Name: node, UID: types.UID(node)},
		Reason:         reason, Message: msg, Count: 1, Type: corev1.EventTypeWarning,
		FirstTimestamp: metav1.NewTime(last), LastTimestamp: metav1.NewTime(last),
		Source: corev1.EventSource{Component: "kubelet", Host: node},
	}
}

func TestPodEventsJudgeAPodStuckCreating(t *testing.T) {
	m := New(DefaultConfig())
	p := pod("shop", "web-1", onNode("node-1"), waitingSandbox())
	apply(m, t0, p)
	if v := m.Pod("shop/web-1").Verdict; v.Rule != classify.RuleStarting {
		t.Fatalf("without events: %v %q, want starting", v.Rule, v.Reason)
	}
	mount := podEvent(p, "a", "FailedMount", secretMissingMsg+"\x1b[2J", 3, t0)
	m.Apply(&contract.Batch{Events: []*corev1.Event{mount}}, t0)
	v := m.Pod("shop/web-1").Verdict
	if v.Class != classify.Doomed || v.Rule != classify.RuleVolumeConfigMissing || v.Source != classify.FromEvents ||
		v.Reason != "Volume source does not exist: "+secretMissingMsg {
		t.Errorf("with the FailedMount: %v %v %q, want doomed volume-config-missing", v.Class, v.Rule, v.Reason)
	}
	evs := m.PodEvents("shop/web-1")
	if len(evs) != 1 || evs[0].Message != secretMissingMsg || evs[0].Count != 3 || evs[0].Source != "kubelet, node-1" || !evs[0].Last.Equal(t0) {
		t.Errorf("PodEvents = %+v, want the one event, sanitised", evs)
	}

	// The API deletes the event an hour later: nothing says why any more.
	m.Apply(&contract.Batch{Deletes: []contract.Ref{{Kind: contract.KindEvent, Namespace: "shop", Name: mount.Name}}}, t0.Add(time.Hour))
	if v := m.Pod("shop/web-1").Verdict; v.Rule != classify.RuleStarting || len(m.PodEvents("shop/web-1")) != 0 {
		t.Errorf("after the event's delete: %v %q, %d events; want starting, none", v.Rule, v.Reason, len(m.PodEvents("shop/web-1")))
	}
}

// TestEventsBounded: at most eventsPerObject events per pod, the newest; a Normal event or one
// about another kind is not kept.
func TestEventsBounded(t *testing.T) {
	m := New(DefaultConfig())
	p := pod("shop", "web-1", onNode("node-1"), crashLoop())
	apply(m, t0, p)
	var b contract.Batch
	for i := range eventsPerObject + 3 {
		b.Events = append(b.Events, podEvent(p, fmt.Sprint(i), "BackOff", "Back-off restarting failed container app in pod web-1_shop(uid)", 1, t0.Add(time.Duration(i)*time.Second)))
	}
	normal := podEvent(p, "normal", "Pulled", `Container image "registry.example/app:v1" already present on machine`, 1, t0.Add(time.Hour))
	normal.Type = corev1.EventTypeNormal
	rs := podEvent(p, "rs", "FailedCreate", "Error creating: pods is forbidden", 1, t0.Add(time.Hour))
	rs.InvolvedObject.Kind = "ReplicaSet"
	b.Events = append(b.Events, normal, rs)
	m.Apply(&b, t0.Add(time.Minute))
	evs := m.PodEvents("shop/web-1")
	if len(evs) != eventsPerObject {
		t.Fatalf("%d events kept, want %d", len(evs), eventsPerObject)
	}
	for i, e := range evs {
		if want := t0.Add(time.Duration(eventsPerObject+2-i) * time.Second); !e.Last.Equal(want) || e.Reason != "BackOff" {
			t.Errorf("event %d = %s at %s, want BackOff at %s (newest first)", i, e.Reason, e.Last, want)
		}
	}
	if n := len(m.evs.byKey); n != eventsPerObject {
		t.Errorf("the model indexes %d events, want only the %d it keeps", n, eventsPerObject)
	}

	// The pod goes, and its events with it; a new pod of that name sees none of them.
	m.Apply(&contract.Batch{Deletes: []contract.Ref{{Kind: contract.KindPod, Namespace: "shop", Name: "web-1"}}}, t0.Add(time.Minute))
	if len(m.evs.byKey) != 0 || len(m.evs.pods) != 0 {
		t.Errorf("a deleted pod's events stay: %d", len(m.evs.byKey))
	}
}

// TestEventsOfAnEarlierPodOfTheSameName: a StatefulSet's pod comes back under its name with a new
// UID; the old pod's events are not the new one's.
func TestEventsOfAnEarlierPodOfTheSameName(t *testing.T) {
	m := New(DefaultConfig())
	old := pod("shop", "db-0", onNode("node-1"), uid("old"), waitingSandbox())
	apply(m, t0, old)
	m.Apply(&contract.Batch{Events: []*corev1.Event{podEvent(old, "a", "FailedMount", secretMissingMsg, 1, t0)}}, t0)
	apply(m, t0.Add(time.Minute), pod("shop", "db-0", onNode("node-2"), uid("new"), waitingSandbox()))
	if v := m.Pod("shop/db-0").Verdict; v.Rule != classify.RuleStarting || len(m.PodEvents("shop/db-0")) != 0 {
		t.Errorf("new pod: %v, %d events; want starting without the old pod's events", v.Rule, len(m.PodEvents("shop/db-0")))
	}
}

// TestSandboxFailuresAreNodeEvidence: FailedCreatePodSandBox events on three pods of one node make
// it suspect, like exit-128 start failures; a resync repeats nothing, a higher count is one more
// failure, and an event that comes before its pod counts once the pod does.
func TestSandboxFailuresAreNodeEvidence(t *testing.T) {
	m := New(DefaultConfig())
	m.Apply(&contract.Batch{Nodes: []*corev1.Node{withUID(node("node-1", true, false), "n1"), withUID(node("node-2", true, false), "n2")},
		Health: &contract.Health{Synced: true}}, t0)
	var pods []*corev1.Pod
	for i, w := range []string{"cart", "search", "login"} {
		pods = append(pods, pod("shop", fmt.Sprintf("%s-%d", w, i), onNode("node-1"), ownedBy("ReplicaSet", w+"-7d9f"), waitingSandbox()))
	}
	apply(m, t0, pods[0], pods[1], pods[2], pod("shop", "calm", onNode("node-2")))
	// The third pod's event arrives a batch before the pod's update that the model already has;
	// the first two pods' events come with them.
	ev := func(i int, count int32) *corev1.Event {
		return podEvent(pods[i], "sandbox", "FailedCreatePodSandBox", sandboxMsg, count, t0.Add(time.Duration(count)*time.Second))
	}
	m.Apply(&contract.Batch{Events: []*corev1.Event{ev(0, 1), ev(1, 1), ev(2, 1)}}, t0.Add(10*time.Second))
	n1 := nodeNamed(t, m, "node-1", t0.Add(10*time.Second))
	if n1.Failures != 3 || n1.Failures128 != 0 || n1.FailedPods != 3 || !n1.Suspect ||
		!strings.HasPrefix(n1.Why, "3 of 3 pods that started here in the last 15m failed to start") {
		t.Errorf("node-1 = %+v, want 3 sandbox failures of 3 pods, suspect", n1)
	}
	if !strings.Contains(n1.DominantMessage, `failed to setup network for sandbox "<id>"`) || strings.Contains(n1.DominantMessage, "40d7bc") {
		t.Errorf("dominant message %q: the sandbox ID is not normalised", n1.DominantMessage)
	}
	for _, p := range pods {
		if v := m.Pod(p.Namespace + "/" + p.Name).Verdict; v.Class != classify.Transient || v.Rule != classify.RuleSandboxFailed {
			t.Errorf("%s = %v %v %q, want transient sandbox-failed", p.Name, v.Class, v.Rule, v.Reason)
		}
	}

	// A relist hands over the same events: nothing new. A count raised from 1 to 4 between two
	// batches is one more failure.
	m.Apply(&contract.Batch{Events: []*corev1.Event{ev(0, 1), ev(1, 1), ev(2, 1)}}, t0.Add(20*time.Second))
	m.Apply(&contract.Batch{Events: []*corev1.Event{ev(0, 4)}}, t0.Add(30*time.Second))
	if n := nodeNamed(t, m, "node-1", t0.Add(30*time.Second)); n.Failures != 4 || n.FailedPods != 3 {
		t.Errorf("after a relist and one count raise: %d failures of %d pods, want 4 of 3", n.Failures, n.FailedPods)
	}
	if f := m.Failures(t0.Add(30 * time.Second)); f[len(f)-1].Reason != "FailedCreatePodSandBox" || f[len(f)-1].Container != "" ||
		f[len(f)-1].NodeUID != "n1" || !f[len(f)-1].At.Equal(t0.Add(30*time.Second)) {
		t.Errorf("last failure = %+v, want the sandbox failure on n1 dated when seen", f[len(f)-1])
	}

	// An event about a pod the model has not seen yet counts once the pod arrives.
	late := pod("shop", "late-0", onNode("node-2"), ownedBy("ReplicaSet", "late-7d9f"), waitingSandbox())
	m.Apply(&contract.Batch{Events: []*corev1.Event{podEvent(late, "sandbox", "FailedCreatePodSandBox", sandboxMsg, 2, t0.Add(35*time.Second))}}, t0.Add(40*time.Second))
	if n := nodeNamed(t, m, "node-2", t0.Add(40*time.Second)); n.Failures != 0 {
		t.Errorf("node-2 counts a failure of a pod the model does not know: %+v", n)
	}
	apply(m, t0.Add(50*time.Second), late)
	if n := nodeNamed(t, m, "node-2", t0.Add(50*time.Second)); n.Failures != 1 || n.FailedPods != 1 {
		t.Errorf("node-2 after the pod arrived: %d failures of %d pods, want 1 of 1", n.Failures, n.FailedPods)
	}
	if v := m.Pod("shop/late-0").Verdict; v.Rule != classify.RuleSandboxFailed {
		t.Errorf("late-0 = %v %q, want sandbox-failed", v.Rule, v.Reason)
	}
}

// TestSandboxFailuresEscalate: one workload whose sandboxes fail on three nodes is not suffering
// one node's trouble.
func TestSandboxFailuresEscalate(t *testing.T) {
	m := New(DefaultConfig())
	m.Apply(&contract.Batch{Workloads: contract.Workloads(replicaSet("shop", "web-7d9f", "web", "2"))}, t0)
	var evs []*corev1.Event
	for i := 1; i <= 3; i++ {
		p := pod("shop", fmt.Sprintf("web-%d", i), onNode(fmt.Sprintf("node-%d", i)), ownedBy("ReplicaSet", "web-7d9f"), waitingSandbox())
		apply(m, t0, p)
		evs = append(evs, podEvent(p, "sandbox", "FailedCreatePodSandBox", sandboxMsg, 1, t0))
	}
	m.Apply(&contract.Batch{Events: evs[:2]}, t0)
	if v := m.Pod("shop/web-1").Verdict; v.Class != classify.Transient {
		t.Fatalf("on 2 nodes: %v %q, want transient", v.Class, v.Reason)
	}
	m.Apply(&contract.Batch{Events: evs[2:]}, t0)
	for i := 1; i <= 3; i++ {
		v := m.Pod(fmt.Sprintf("shop/web-%d", i)).Verdict
		if v.Class != classify.Doomed || v.Rule != classify.RuleEscalated || v.Reason != "failed to start on 3 nodes: not node-local" {
			t.Errorf("web-%d on 3 nodes: %v %v %q, want escalated", i, v.Class, v.Rule, v.Reason)
		}
	}
}

func TestNodeEvents(t *testing.T) {
	m := New(DefaultConfig())
	m.Apply(&contract.Batch{Nodes: []*corev1.Node{node("node-3", true, false)}, Events: []*corev1.Event{
		nodeEvent("node-3", "gc", "ContainerGCFailed", "rpc error: code = DeadlineExceeded desc = context deadline exceeded", t0),
	}}, t0)
	evs := m.NodeEvents("node-3")
	if len(evs) != 1 || evs[0].Reason != "ContainerGCFailed" || evs[0].Source != "kubelet, node-3" {
		t.Errorf("NodeEvents = %+v", evs)
	}
	if m.NodeEvents("node-1") != nil {
		t.Error("events of a node without any")
	}
}

func nodeNamed(t *testing.T, m *Model, name string, now time.Time) Node {
	t.Helper()
	for _, n := range m.Nodes(now) {
		if n.Name == name {
			return n
		}
	}
	t.Fatalf("no node %s", name)
	return Node{}
}

// TestListedSandboxFailuresAreDatedByTheirEvent: events the informers list when doomwatch starts
// (the batch that says synced carries them) happened before it watched: their failures are dated
// by the event's last time, so one older than the window is not evidence.
func TestListedSandboxFailuresAreDatedByTheirEvent(t *testing.T) {
	m := New(DefaultConfig())
	p := pod("shop", "web-1", onNode("node-1"), waitingSandbox())
	old := pod("shop", "web-2", onNode("node-1"), waitingSandbox())
	m.Apply(&contract.Batch{Pods: records(p, old), Health: &contract.Health{Synced: true}, Events: []*corev1.Event{
		podEvent(p, "sandbox", "FailedCreatePodSandBox", sandboxMsg, 1, t0.Add(-time.Minute)),
		podEvent(old, "sandbox", "FailedCreatePodSandBox", sandboxMsg, 1, t0.Add(-20*time.Minute)),
	}}, t0)
	f := m.Failures(t0)
	if len(f) != 1 || f[0].Pod != "shop/web-1" || !f[0].At.Equal(t0.Add(-time.Minute)) {
		t.Errorf("failures = %+v, want web-1's alone, dated a minute ago", f)
	}
}
