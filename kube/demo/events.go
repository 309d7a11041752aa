package demo

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
)

// The demo's Warning events: what the kubelets, the scheduler and the controllers of the scenario
// post about its pods and nodes. Every message is formatted as the upstream code formats it, or
// verbatim from an upstream report; only names, UIDs and IDs are the demo's own.

// kubeletSource is the source the kubelet's recorder puts on its events (pkg/kubelet/kubelet.go:
// the event broadcaster's recorder for component "kubelet" on the node's hostname).
func kubeletSource(node string) corev1.EventSource {
	return corev1.EventSource{Component: "kubelet", Host: node}
}

// podRef is the kubelet's reference to a pod (client-go tools/reference GetReference).
func podRef(p *corev1.Pod) corev1.ObjectReference {
	return corev1.ObjectReference{Kind: "Pod", Namespace: p.Namespace, Name: p.Name, UID: p.UID, APIVersion: "v1"}
}

// containerRef is the kubelet's reference to a pod's container, for the events about it
// (pkg/kubelet/container/ref.go GenerateContainerRef: the pod's, with a field path).
func containerRef(p *corev1.Pod, container string) corev1.ObjectReference {
	ref := podRef(p)
	ref.FieldPath = "spec.containers{" + container + "}"
	return ref
}

// nodeRef is the kubelet's reference to its node, whose UID it sets to the node's name
// (pkg/kubelet/kubelet.go NewMainKubelet: nodeRef).
func nodeRef(node string) corev1.ObjectReference {
	return corev1.ObjectReference{Kind: "Node", Name: node, UID: types.UID(node)}
}

// warning plans a Warning event about ref from src at t, as client-go's legacy recorder posts it
// (tools/record/event.go makeEvent: named after the object and the time, "%v.%x" of its name and
// UnixNano, in the object's namespace or "default" for a cluster-scoped one, count 1, reporting
// component and instance from the source). An event identical to an earlier one (same object,
// field path, reason and message) is folded into it by the correlator: count+1 and a new
// lastTimestamp (tools/record/events_cache.go eventLogger.eventObserve).
func (b *builder) warning(t time.Duration, ref corev1.ObjectReference, src corev1.EventSource, reason, msg string) {
	id := ref.Namespace + "/" + ref.Name + "/" + ref.FieldPath + "/" + reason + "/" + msg
	name, ok := b.eventNames[id]
	if !ok {
		// One nanosecond apart for events planned at the same instant, as a real clock would be.
		b.eventSeq++
		name = fmt.Sprintf("%s.%x", ref.Name, Epoch.Add(t).UnixNano()+int64(b.eventSeq))
		b.eventNames[id] = name
	}
	ns := ref.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	key := objectKey(ns, name)
	b.at(t, func(w *world, at time.Duration) {
		if e := w.events[key]; e != nil {
			e.Count++
			e.LastTimestamp = timestamp(at)
			return
		}
		w.events[key] = newWarning(ns, name, ref, src, reason, msg, at)
	})
}

// newWarning is a new Warning event as makeEvent builds it.
func newWarning(ns, name string, ref corev1.ObjectReference, src corev1.EventSource, reason, msg string, at time.Duration) *corev1.Event {
	return &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: timestamp(at)},
		InvolvedObject: ref, Reason: reason, Message: msg, Source: src, Type: corev1.EventTypeWarning,
		FirstTimestamp: timestamp(at), LastTimestamp: timestamp(at), Count: 1,
		ReportingController: src.Component, ReportingInstance: src.Host,
	}
}

// eventName is makeEvent's name for an event about the object named name posted at at.
func eventName(name string, at time.Duration) string {
	return fmt.Sprintf("%s.%x", name, Epoch.Add(at).UnixNano())
}

// schedulerWarning plans the scheduler's FailedScheduling event about p at t, as the events.k8s.io
// recorder writes it and the core API returns it (client-go tools/events: eventTime, action,
// reportingController and reportingInstance "<controller>-<hostname>", no count; each repeat
// within a series' window adds to series.count and moves series.lastObservedTime).
func (b *builder) schedulerWarning(t time.Duration, p *corev1.Pod, msg string, repeats []time.Duration) {
	ns, name := p.Namespace, fmt.Sprintf("%s.%x", p.Name, Epoch.Add(t).UnixNano())
	key := objectKey(ns, name)
	ref := podRef(p)
	b.at(t, func(w *world, at time.Duration) {
		w.events[key] = &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: timestamp(at)},
			InvolvedObject: ref, Reason: "FailedScheduling", Message: msg, Type: corev1.EventTypeWarning, Action: "Scheduling",
			EventTime:           metav1.NewMicroTime(Epoch.Add(at).Truncate(time.Second)),
			ReportingController: "default-scheduler", ReportingInstance: "default-scheduler-cp-1",
		}
	})
	for i, r := range repeats {
		count := int32(i + 2)
		b.at(r, func(w *world, at time.Duration) {
			w.events[key].Series = &corev1.EventSeries{Count: count, LastObservedTime: metav1.NewMicroTime(Epoch.Add(at).Truncate(time.Second))}
		})
	}
}

// eventClient is the demo's writer of Events. Events have no status subresource, so the world's
// events never differ in status (parts) and UpdateStatus is never called.
type eventClient struct{ typedcorev1.EventInterface }

func (eventClient) UpdateStatus(context.Context, *corev1.Event, metav1.UpdateOptions) (*corev1.Event, error) {
	return nil, errors.New("events have no status")
}
