package model

import (
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"doomwatch/contract"
	"doomwatch/model/podtest"
)

// TestOwnedByThroughADeployment: an operator's custom resource that made a Deployment is explained
// by the Deployment's current pods, as a gate counts them: the new ReplicaSet's crash-looping pods
// are its problems; the old revision's, and another workload's, are not.
func TestOwnedByThroughADeployment(t *testing.T) {
	m := New(DefaultConfig())
	web := deployment("shop", "blue-web", 2, "2", func(d *appsv1.Deployment) {
		d.OwnerReferences = []metav1.OwnerReference{podtest.ControllerRef("Widget", "blue")}
		d.Status.ReadyReplicas, d.Status.AvailableReplicas = 0, 0
	})
	m.Apply(&contract.Batch{Workloads: contract.Workloads(web, replicaSet("shop", "blue-web-1", "blue-web", "1"),
		replicaSet("shop", "blue-web-2", "blue-web", "2"), deployment("shop", "other", 1, "1"),
		replicaSet("shop", "other-1", "other", "1"))}, t0)
	apply(m, t0,
		pod("shop", "blue-web-2-a", ownedBy("ReplicaSet", "blue-web-2"), crashLoop()),
		pod("shop", "blue-web-2-b", ownedBy("ReplicaSet", "blue-web-2")),
		pod("shop", "blue-web-1-a", ownedBy("ReplicaSet", "blue-web-1"), crashLoop()),
		pod("shop", "other-1-a", ownedBy("ReplicaSet", "other-1"), crashLoop()))

	o := m.OwnedBy("shop", "Widget-blue", nil, time.Time{}, t0)
	if len(o.Unknown) != 0 || !slices.Equal(o.Workloads, []Target{{Kind: contract.KindDeployment, Namespace: "shop", Name: "blue-web"}}) {
		t.Fatalf("workloads %v, unknown %v", o.Workloads, o.Unknown)
	}
	if o.Pods.Pods != 2 || o.Pods.Doomed != 1 || len(o.Problems) != 1 || o.Problems[0].Pod != "blue-web-2-a" ||
		!strings.HasPrefix(o.Problems[0].Reason, "Crash") {
		t.Errorf("pods %+v, problems %+v", o.Pods, o.Problems)
	}
	// Another UID of the same name is another object.
	if o := m.OwnedBy("shop", "Widget-blue-2", nil, time.Time{}, t0); len(o.Workloads)+o.Pods.Pods != 0 {
		t.Errorf("a Widget of another UID owns %+v", o)
	}
}

// TestOwnedByThroughUnknownObjects: a Knative Service's pods are five levels down (Service,
// Configuration, Revision, Deployment, ReplicaSet); the model holds the last two, and asks for the
// others' owners, one level per ask, until the chain reaches the Service or ends. A chain that is
// a cycle ends too.
func TestOwnedByThroughUnknownObjects(t *testing.T) {
	m := New(DefaultConfig())
	d := deployment("shop", "hello-00001-deployment", 1, "1", func(d *appsv1.Deployment) {
		d.OwnerReferences = []metav1.OwnerReference{podtest.ControllerRef("Revision", "hello-00001")}
	})
	m.Apply(&contract.Batch{Workloads: contract.Workloads(d, replicaSet("shop", "hello-00001-deployment-1", "hello-00001-deployment", "1"))}, t0)
	apply(m, t0, pod("shop", "hello-a", ownedBy("ReplicaSet", "hello-00001-deployment-1"), crashLoop()))

	parents := map[types.UID][]metav1.OwnerReference{}
	ask := func() Owned { return m.OwnedBy("shop", "Service-hello", parents, time.Time{}, t0) }
	o := ask()
	if len(o.Unknown) != 1 || o.Unknown[0].Kind != "Revision" || o.Unknown[0].Namespace != "shop" || o.Pods.Pods != 0 {
		t.Fatalf("first ask: %+v", o)
	}
	parents["Revision-hello-00001"] = []metav1.OwnerReference{podtest.ControllerRef("Configuration", "hello")}
	if o = ask(); len(o.Unknown) != 1 || o.Unknown[0].Kind != "Configuration" {
		t.Fatalf("second ask: %+v", o)
	}
	parents["Configuration-hello"] = []metav1.OwnerReference{podtest.ControllerRef("Service", "hello")}
	if o = ask(); len(o.Unknown) != 0 || o.Pods.Doomed != 1 || len(o.Problems) != 1 {
		t.Fatalf("third ask: %+v", o)
	}

	// A cycle (the garbage collector tolerates one) ends the walk: not owned, nothing unknown.
	parents["Configuration-hello"] = []metav1.OwnerReference{podtest.ControllerRef("Revision", "hello-00001")}
	if o = ask(); len(o.Unknown) != 0 || o.Pods.Pods != 0 {
		t.Fatalf("a cycle: %+v", o)
	}
	// An object with no owner ends it too.
	parents["Configuration-hello"] = nil
	if o = ask(); len(o.Unknown) != 0 || o.Pods.Pods != 0 {
		t.Fatalf("no owner: %+v", o)
	}
}

// TestOwnedByDirectly: pods the object controls itself (an operator that makes pods) count each by
// its verdict; one being deleted does not, and a cluster-scoped owner ("" namespace) finds its pods
// in any namespace, without asking about the nodes that control static pods' mirrors.
func TestOwnedByDirectly(t *testing.T) {
	m := New(DefaultConfig())
	gone := metav1.Now()
	apply(m, t0,
		pod("shop", "blue-0", ownedBy("Widget", "blue"), crashLoop()),
		pod("shop", "blue-1", ownedBy("Widget", "blue"), startFailed128(t0, 1)),
		pod("shop", "blue-2", ownedBy("Widget", "blue"), crashLoop(), func(p *corev1.Pod) { p.DeletionTimestamp = &gone }),
		pod("other", "blue-3", ownedBy("Widget", "blue")),
		pod("kube-system", "etcd-n1", func(p *corev1.Pod) {
			yes := true
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "n1", UID: "Node-n1", Controller: &yes}}
		}))
	o := m.OwnedBy("shop", "Widget-blue", nil, time.Time{}, t0)
	if len(o.Workloads) != 0 || o.Pods.Pods != 2 || o.Pods.Doomed != 1 || o.Pods.Transient != 1 ||
		len(o.Problems) != 1 || o.Problems[0].Pod != "blue-0" || len(o.Transient) != 1 || o.Transient[0].Pod != "blue-1" {
		t.Fatalf("in shop: %+v", o)
	}
	// A static pod's mirror, controlled by its Node, is not looked further up.
	if o := m.OwnedBy("", "Widget-blue", nil, time.Time{}, t0); o.Pods.Pods != 3 || len(o.Unknown) != 0 {
		t.Errorf("cluster-scoped: %d pods, unknown %v; want 3 and none", o.Pods.Pods, o.Unknown)
	}
}
