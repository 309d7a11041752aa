package recording

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"doomwatch/contract"
	"doomwatch/model/podtest"
	"doomwatch/podrec"
)

// appended is one batch as it was appended.
type appended struct {
	at    time.Time
	batch contract.Batch
}

// v1Contexts and v1Steps are what testdata/v1 was recorded from, by the version-1 writer (the
// commit before version 2): two clusters, every section, updates written as diffs, deletes by id
// and by name (a kind version 1 does not number among them), health, and a second segment whose
// snapshot carries the first's objects. They must not change: the recording is not made again.
var v1Contexts = []string{"east", "west"}

func v1Steps() []appended {
	t0 := podtest.T0
	in := podrec.NewInterner()
	web := podtest.Pod("shop", "web-1", podtest.OnNode("n1"), podtest.OwnedBy("ReplicaSet", "web-6d4"))
	web.Labels = map[string]string{appsv1.ControllerRevisionHashLabelKey: "6d4"}
	crash := podtest.Pod("shop", "api-1", podtest.StartFailed128(t0, 3))
	rs := podtest.ReplicaSet("shop", "web-6d4", "web", "2")
	dep := podtest.Deployment("shop", "web", 3, "2")
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "db", Name: "pg", Generation: 4},
		Status: appsv1.StatefulSetStatus{ObservedGeneration: 4, Replicas: 2, ReadyReplicas: 1}}
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "proxy"},
		Status: appsv1.DaemonSetStatus{DesiredNumberScheduled: 3, NumberReady: 3}}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ci", Name: "migrate"},
		Status: batchv1.JobStatus{Active: 1}}
	ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "api-1.17a"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "shop", Name: "api-1"},
		Type:           corev1.EventTypeWarning, Reason: "BackOff", Message: "Back-off restarting failed container",
		Count: 2, LastTimestamp: metav1.NewTime(t0)}
	dep2 := podtest.Deployment("shop", "web", 3, "3")
	dep2.Status.UpdatedReplicas = 1
	crash2 := podtest.Pod("shop", "api-1", podtest.StartFailed128(t0.Add(time.Minute), 4))
	return []appended{
		{t0, contract.Batch{Cluster: 0,
			Pods:      []*podrec.Record{in.Pod(web), in.Pod(crash)},
			Nodes:     []*corev1.Node{podtest.Node("n1", true, false)},
			Workloads: contract.Workloads(rs, dep, sts, ds, job),
			Events:    []*corev1.Event{ev},
			Health:    &contract.Health{Synced: true, PodsSeen: 2, PodsTotal: 2, LastEvent: t0},
		}},
		{t0.Add(time.Second), contract.Batch{Cluster: 1,
			Nodes:  []*corev1.Node{podtest.Node("w1", false, true)},
			Health: &contract.Health{WatchError: "too old resource version", Forbidden: []contract.Kind{contract.KindJob}},
		}},
		{t0.Add(2 * time.Second), contract.Batch{Cluster: 0,
			Pods:      []*podrec.Record{in.Pod(crash2)},
			Workloads: contract.Workloads(dep2),
			Deletes: []contract.Ref{{Kind: contract.KindJob, Namespace: "ci", Name: "migrate"},
				{Kind: contract.KindPod, Namespace: "shop", Name: "never-seen"},
				{Kind: "Rollout", Namespace: "shop", Name: "canary"}},
		}},
		// Past SnapshotEvery: the second segment, its snapshot holding both clusters.
		{t0.Add(90 * time.Second), contract.Batch{Cluster: 0,
			Deletes: []contract.Ref{{Kind: contract.KindPod, Namespace: "shop", Name: "web-1"}},
		}},
	}
}

// describe is everything of a batch the recording keeps, as text: each object by its encoding
// (the protobuf the format holds, a pod's as the record rebuilds it; an unstructured object's
// JSON), for comparing a batch read back with the one appended.
func describe(b *contract.Batch) string {
	var sb strings.Builder
	var pods podEncoder
	sum := func(enc []byte) string { return fmt.Sprintf("%x", sha256.Sum256(enc))[:16] }
	fmt.Fprintf(&sb, "cluster %d\n", b.Cluster)
	for _, d := range b.Deletes {
		fmt.Fprintf(&sb, "delete %s %s/%s\n", d.Kind, d.Namespace, d.Name)
	}
	for _, p := range b.Pods {
		fmt.Fprintf(&sb, "pod %s/%s %s\n", p.GetNamespace(), p.GetName(), sum(pods.appendPod(nil, p)))
	}
	for _, n := range b.Nodes {
		fmt.Fprintf(&sb, "node %s %s\n", n.Name, sum(appendProto(nil, n)))
	}
	for _, o := range b.Workloads {
		switch obj := o.Obj.(type) {
		case protoObject:
			fmt.Fprintf(&sb, "%s %s/%s %s\n", o.Kind, obj.GetNamespace(), obj.GetName(), sum(appendProto(nil, obj)))
		case *unstructured.Unstructured:
			js, err := obj.MarshalJSON()
			fmt.Fprintf(&sb, "%s %s/%s %s %v\n", o.Kind, obj.GetNamespace(), obj.GetName(), strings.TrimSpace(string(js)), err)
		default:
			fmt.Fprintf(&sb, "%s %T\n", o.Kind, o.Obj)
		}
	}
	for _, e := range b.Events {
		fmt.Fprintf(&sb, "event %s/%s %s\n", e.Namespace, e.Name, sum(appendProto(nil, e)))
	}
	if b.Health != nil {
		fmt.Fprintf(&sb, "health %+v\n", *b.Health)
	}
	return sb.String()
}

// readAll is every frame of the recording at dir, snapshots included, described.
func readAll(t *testing.T, dir string) []string {
	t.Helper()
	r, err := Open(dir)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer r.Close()
	var out []string
	for i := range r.segs {
		for fr, err := range r.segment(i) {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("segment %d at %s reset %v\n%s", i, fr.At.Format(time.RFC3339Nano), fr.Reset, describe(fr.Batch)))
		}
	}
	return out
}

// TestVersion1 reads testdata/v1, written by the version-1 writer: this reader gives back every
// frame the version-1 reader gave (testdata/v1.golden), its batches being those appended, and a
// seek to its end restores them.
func TestVersion1(t *testing.T) {
	dir := filepath.Join("testdata", "v1")
	for _, seg := range segments(t, dir) {
		h, err := readHeaderFile(seg)
		if err != nil {
			t.Fatal(err)
		}
		if h.version != 1 {
			t.Fatalf("%s is of version %d: the test reads no version-1 segment", seg, h.version)
		}
	}
	golden, err := os.ReadFile(filepath.Join("testdata", "v1.golden"))
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, dir)
	if want := string(golden); strings.Join(got, "\n") != want {
		t.Fatalf("testdata/v1 reads differently from what version 1 read: %s", firstDiff(want, strings.Join(got, "\n")))
	}
	// The batches, snapshots aside, are those appended.
	steps := v1Steps()
	var batches []string
	for _, f := range got {
		if !strings.Contains(f, "reset true") {
			batches = append(batches, f[strings.Index(f, "\n")+1:])
		}
	}
	if len(batches) != len(steps) {
		t.Fatalf("%d batches, %d appended", len(batches), len(steps))
	}
	for i, s := range steps {
		if want := describe(&s.batch); batches[i] != want {
			t.Errorf("batch %d: %s", i, firstDiff(want, batches[i]))
		}
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := r.Contexts(); !slices.Equal(got, v1Contexts) {
		t.Errorf("contexts %v, want %v", got, v1Contexts)
	}
	end := steps[len(steps)-1].at
	var pods []string
	if _, err := r.Restore(end, func(fr Frame) {
		for _, p := range fr.Batch.Pods {
			pods = append(pods, p.GetName())
		}
		for _, d := range fr.Batch.Deletes {
			pods = slices.DeleteFunc(pods, func(n string) bool { return d.Kind == contract.KindPod && n == d.Name })
		}
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pods, []string{"api-1"}) {
		t.Errorf("a seek to the end restores pods %v, want [api-1]", pods)
	}
}
