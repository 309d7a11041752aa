package podrec

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"doomwatch/classify"
)

// TestRecordRebuildsTheTrimmedPod: for every classify fixture, the pod rebuilt from its record
// gets the same verdicts and kubectl columns from classify as the pod itself; a record made with
// an interner rebuilds the same pod as one made without; and one Scratch reused across every
// fixture, in turn, rebuilds each as a fresh rebuild does (nothing of one pod leaks into the next).
func TestRecordRebuildsTheTrimmedPod(t *testing.T) {
	in := NewInterner()
	var s Scratch
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for name, orig := range classifyFixtures(t) {
		t.Run(name, func(t *testing.T) {
			r := RecordOf(orig)
			fresh := r.Pod()
			if got, want := classify.Pod(fresh, now), classify.Pod(orig, now); !reflect.DeepEqual(got, want) {
				t.Errorf("classify.Pod of the rebuilt pod = %+v, want %+v", got, want)
			}
			if got, want := classify.Containers(fresh, now, nil), classify.Containers(orig, now, nil); !reflect.DeepEqual(got, want) {
				t.Errorf("classify.Containers of the rebuilt pod = %+v, want %+v", got, want)
			}
			gr, gs, gx := classify.Columns(fresh, now)
			wr, ws, wx := classify.Columns(orig, now)
			if gr != wr || gs != ws || gx != wx {
				t.Errorf("columns of the rebuilt pod = %q %q %q, want %q %q %q", gr, gs, gx, wr, ws, wx)
			}
			if shared := in.Pod(orig).Pod(); !equality.Semantic.DeepEqual(shared, fresh) {
				t.Errorf("a record made with an interner rebuilds\n%+v\nwant\n%+v", shared, fresh)
			}
			if !equality.Semantic.DeepEqual(s.Pod(r), fresh) {
				t.Errorf("a reused Scratch rebuilds\n%+v\nwant\n%+v", s.Pod(r), fresh)
			}
			if !r.SameContent(in.Pod(orig)) {
				t.Errorf("SameContent is false for two records of one pod")
			}
		})
	}
}

// TestSameContentIgnoresOnlyTheResourceVersion: an update that changes only the resource version
// is the same content (the transform keeps the stored record); any status change is not.
func TestSameContentIgnoresOnlyTheResourceVersion(t *testing.T) {
	in := NewInterner()
	base := pod("shop", "web-1", crashLoop())
	base.ResourceVersion = "10"
	bumped := base.DeepCopy()
	bumped.ResourceVersion = "11"
	if !in.Pod(base).SameContent(in.Pod(bumped)) {
		t.Errorf("records differing only in resource version are not the same content")
	}
	for what, change := range map[string]func(p *corev1.Pod){
		"restart count": func(p *corev1.Pod) { p.Status.ContainerStatuses[0].RestartCount++ },
		"message":       func(p *corev1.Pod) { p.Status.ContainerStatuses[0].State.Waiting.Message += "!" },
		"condition": func(p *corev1.Pod) {
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse})
		},
		"node":     func(p *corev1.Pod) { p.Spec.NodeName = "node-9" },
		"image":    func(p *corev1.Pod) { p.Spec.Containers[0].Image = "web:v3" },
		"deletion": func(p *corev1.Pod) { p.DeletionTimestamp = &p.CreationTimestamp },
		"revision": func(p *corev1.Pod) { p.Labels = map[string]string{revisionHashLabel: "db-7c9f"} },
	} {
		changed := bumped.DeepCopy()
		change(changed)
		if in.Pod(base).SameContent(in.Pod(changed)) {
			t.Errorf("a change of %s is the same content", what)
		}
	}
}

// TestStampKeepsTheEpochApartFromZero: containerd reports a container that never started as
// started at the Unix epoch; that is a time, not the absence of one.
func TestStampKeepsTheEpochApartFromZero(t *testing.T) {
	epoch := time.Unix(0, 0)
	if s := stampOf(epoch); s == 0 || !s.Time().Equal(epoch) {
		t.Errorf("the epoch became %d, %v", s, s.Time())
	}
	if s := stampOf(time.Time{}); s != 0 || !s.Time().IsZero() {
		t.Errorf("the zero time became %d, %v", s, s.Time())
	}
	at := time.Date(2026, 3, 1, 11, 58, 0, 123, time.UTC)
	if got := stampOf(at).Time(); !got.Equal(at) {
		t.Errorf("%v became %v", at, got)
	}
}

// TestPodFromProtoMakesTheSameRecord: for every classify fixture, the record read straight from
// the pod's protobuf encoding (what the API server sends) is the record made from the decoded
// pod, with and without an interner, and a record read through a warm interner (the second pod of
// a template) shares its spec and owners with the first.
func TestPodFromProtoMakesTheSameRecord(t *testing.T) {
	in := NewInterner()
	for name, orig := range classifyFixtures(t) {
		t.Run(name, func(t *testing.T) {
			data, err := orig.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			want := RecordOf(orig)
			for _, tc := range []struct {
				what string
				in   *Interner
			}{{"without an interner", nil}, {"with an interner", in}, {"with a warm interner", in}} {
				got, err := tc.in.PodFromProto(data)
				if err != nil {
					t.Fatalf("%s: %v", tc.what, err)
				}
				if !got.SameContent(want) || got.resourceVersion != want.resourceVersion {
					t.Errorf("%s: record\n%+v\nwant\n%+v", tc.what, *got, *want)
				}
				if g, w := got.Pod(), want.Pod(); !equality.Semantic.DeepEqual(g, w) {
					gj, _ := json.Marshal(g)
					wj, _ := json.Marshal(w)
					t.Errorf("%s: rebuilds\n%s\nwant\n%s", tc.what, gj, wj)
				}
			}
			a, _ := in.PodFromProto(data)
			b, _ := in.PodFromProto(data)
			if a.spec != b.spec || len(a.owners) > 0 && &a.owners[0] != &b.owners[0] {
				t.Errorf("two records of one template do not share their spec and owners")
			}
		})
	}
}

// TestRecordKeepsTheRevisionLabel: of a pod's labels a record keeps the one that tells its
// controller's current pods: a DaemonSet pod's template generation, a StatefulSet pod's revision
// hash; the same from the pod and from its protobuf.
func TestRecordKeepsTheRevisionLabel(t *testing.T) {
	for _, tc := range []struct{ owner, want string }{{"StatefulSet", "db-7c9f6b"}, {"DaemonSet", "4"}, {"", "db-7c9f6b"}} {
		p := pod("shop", "db-0", crashLoop())
		if tc.owner != "" {
			p.OwnerReferences = []metav1.OwnerReference{controllerRef(tc.owner, "db")}
		}
		p.Labels = map[string]string{"app": "db", revisionHashLabel: "db-7c9f6b", templateGenerationLabel: "4"}
		data, err := p.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		fromProto, err := NewInterner().PodFromProto(data)
		if err != nil {
			t.Fatal(err)
		}
		for what, r := range map[string]*Record{"pod": RecordOf(p), "protobuf": fromProto} {
			if r.revision != tc.want {
				t.Errorf("%q owner, from the %s: revision %q, want %q", tc.owner, what, r.revision, tc.want)
			}
		}
	}
}

// TestPodFromProtoRejectsGarbage: a truncated or corrupt message is an error, never a panic.
func TestPodFromProtoRejectsGarbage(t *testing.T) {
	p := pod("shop", "web-1", crashLoop())
	data, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for n := range len(data) {
		r, err := NewInterner().PodFromProto(data[:n])
		if err == nil && r == nil {
			t.Fatalf("%d bytes: no record and no error", n)
		}
	}
	if _, err := NewInterner().PodFromProto([]byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f}); err == nil {
		t.Errorf("a length past the end was accepted")
	}
}

// TestPodFromProtoMergesAMessageSentTwice: protobuf merges a message whose fields arrive twice (two
// encoded pods, concatenated, are one pod: the second's metadata, spec and status merged into the
// first's), and so does the generated code; PodFromProto makes the record the generated code's pod
// makes. Through one interner, a pod with only the second spec then has only that spec's
// containers: the first spec's are not shared under the second's key.
func TestPodFromProtoMergesAMessageSentTwice(t *testing.T) {
	first := pod("shop", "web-1", crashLoop(), func(p *corev1.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{controllerRef("ReplicaSet", "web-7d9c")}
	})
	second := pod("shop", "web-1", func(p *corev1.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{controllerRef("Job", "migrate")}
		p.Spec.Containers[0] = corev1.Container{Name: "sidecar", Image: "registry.example/sidecar:v2"}
		p.Status.ContainerStatuses[0].Name = "sidecar"
	})
	a, err := first.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	b, err := second.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	in := NewInterner()
	for _, data := range [][]byte{append(a[:len(a):len(a)], b...), b} {
		var merged corev1.Pod
		if err := merged.Unmarshal(data); err != nil {
			t.Fatal(err)
		}
		want := RecordOf(&merged)
		for _, dec := range []*Interner{nil, in} {
			got, err := dec.PodFromProto(data)
			if err != nil {
				t.Fatal(err)
			}
			if !got.SameContent(want) || !equality.Semantic.DeepEqual(got.Pod(), want.Pod()) {
				gj, _ := json.Marshal(got.Pod())
				wj, _ := json.Marshal(want.Pod())
				t.Errorf("%d bytes, interner %v: rebuilds\n%s\nwant\n%s", len(data), dec != nil, gj, wj)
			}
		}
	}
}
