package model

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/yaml"

	"doomwatch/classify"
)

// classifyFixtures reads every pod in classify/testdata, the corpus of real statuses.
func classifyFixtures(t *testing.T) map[string]*corev1.Pod {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "classify", "testdata", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no classify fixtures: %v", err)
	}
	out := make(map[string]*corev1.Pod, len(files))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p := &corev1.Pod{}
		if err := yaml.Unmarshal(data, p); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[filepath.Base(f)] = p
	}
	return out
}

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
			if got, want := classify.Pod(fresh), classify.Pod(orig); !reflect.DeepEqual(got, want) {
				t.Errorf("classify.Pod of the rebuilt pod = %+v, want %+v", got, want)
			}
			if got, want := classify.Containers(fresh, nil), classify.Containers(orig, nil); !reflect.DeepEqual(got, want) {
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
	if s := stampOf(epoch); s == 0 || !s.time().Equal(epoch) {
		t.Errorf("the epoch became %d, %v", s, s.time())
	}
	if s := stampOf(time.Time{}); s != 0 || !s.time().IsZero() {
		t.Errorf("the zero time became %d, %v", s, s.time())
	}
	at := time.Date(2026, 3, 1, 11, 58, 0, 123, time.UTC)
	if got := stampOf(at).time(); !got.Equal(at) {
		t.Errorf("%v became %v", at, got)
	}
}
