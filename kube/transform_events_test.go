package kube

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"doomwatch/classify/corpus"
	"doomwatch/contract"
	"doomwatch/model"
	"doomwatch/podrec"
	"doomwatch/report"
)

// TestTransformKeepsWhatTheModelReadsOfEvents runs the events of every classify fixture that has
// them through the informer transform: the model's snapshot of the pod with its events (its
// verdict, its events as --once prints them, the nodes' start failures) must be the same for the
// trimmed events as for the originals, and the transform must be idempotent.
func TestTransformKeepsWhatTheModelReadsOfEvents(t *testing.T) {
	tr := newTrimmer()
	all, err := corpus.Load(filepath.Join("..", "classify", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, fx := range all {
		if len(fx.Events) == 0 {
			continue
		}
		seen++
		t.Run(fx.File, func(t *testing.T) {
			p, now := fx.Pod, fx.Now
			var orig, trimmed []*corev1.Event
			for i := range fx.Events {
				e := fx.Events[i].DeepCopy()
				before := e.DeepCopy()
				out, err := tr.transform(e)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(e, before) {
					t.Errorf("transform modified its input")
				}
				if again, _ := tr.transform(out); !reflect.DeepEqual(again, out) {
					t.Errorf("transform is not idempotent")
				}
				orig, trimmed = append(orig, e), append(trimmed, out.(*corev1.Event))
			}
			if got, want := eventSnapshotOf(p, trimmed, now), eventSnapshotOf(p, orig, now); got != want {
				t.Errorf("snapshot after transform:\n%s\nwant:\n%s", got, want)
			}
		})
	}
	if seen == 0 {
		t.Fatal("no classify fixture has events")
	}
}

func eventSnapshotOf(p *corev1.Pod, events []*corev1.Event, now time.Time) string {
	m := model.New(model.DefaultConfig())
	m.Apply(&contract.Batch{Pods: []*podrec.Record{podrec.RecordOf(p)}, Events: events}, now)
	var b strings.Builder
	snap := report.NewSnapshot(m, "test", now)
	if err := report.SnapshotPrinters.Print(&b, "json", &snap); err != nil {
		return err.Error()
	}
	return b.String()
}
