package recording

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"doomwatch/contract"
	"doomwatch/model"
	"doomwatch/model/podtest"
	"doomwatch/model/scaletest"
	"doomwatch/podrec"
)

// fixturePods are the pods the round trip of a record is held to: every pod of classify's corpus
// of real statuses, the shared builders' states, scaletest's in each of its states, and a
// DaemonSet's and a StatefulSet's pods with their revision labels.
func fixturePods(t *testing.T) map[string]*corev1.Pod {
	t.Helper()
	out := map[string]*corev1.Pod{}
	files, err := filepath.Glob(filepath.Join("..", "classify", "testdata", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no classify fixtures: %v", err)
	}
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
	t0 := podtest.T0
	out["podtest running"] = podtest.Pod("shop", "a", podtest.OnNode("n1"), podtest.OwnedBy("ReplicaSet", "a-1"))
	out["podtest exit 128"] = podtest.Pod("shop", "b", podtest.StartFailed128(t0, 3))
	out["podtest recovered"] = podtest.Pod("shop", "c", podtest.RecoveredAfter128(t0, 2))
	out["podtest create error"] = podtest.Pod("shop", "d", podtest.CreateError(podtest.CrioRuntimeMsg))
	deleting := podtest.Pod("shop", "e")
	deleting.DeletionTimestamp = &metav1.Time{Time: t0}
	out["podtest deleting"] = deleting
	for _, v := range []int{0, 1, 2} {
		for _, i := range []int{0, 1, 97, 89, 83 * 100} {
			out["scaletest "+string(rune('0'+v))+" "+string(rune('a'+i%26))] = scaletest.Pod(i, v)
		}
	}
	ds := podtest.Pod("kube-system", "proxy-x", podtest.OwnedBy("DaemonSet", "proxy"))
	ds.Labels = map[string]string{"pod-template-generation": "4", "controller-revision-hash": "abc"}
	out["daemonset revision"] = ds
	sts := podtest.Pod("db", "db-0", podtest.OwnedBy("StatefulSet", "db"))
	sts.Labels = map[string]string{"controller-revision-hash": "db-7f9c"}
	out["statefulset revision"] = sts
	return out
}

// TestPodRoundTrip holds the encoding of a pod record to what it must keep: the record that
// comes back from its protobuf (Record.Pod, the revision label put back, PodFromProto) has the
// same content, resource version and revision, and the model judges it the same.
func TestPodRoundTrip(t *testing.T) {
	in := podrec.NewInterner()
	var enc podEncoder
	now := podtest.T0.Add(time.Minute)
	for name, p := range fixturePods(t) {
		r := in.Pod(p)
		got, err := in.PodFromProto(enc.appendPod(nil, r))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !r.SameContent(got) || r.GetResourceVersion() != got.GetResourceVersion() || r.Revision() != got.Revision() {
			t.Errorf("%s: the record does not come back:\n  was %+v revision %q\n  got %+v revision %q", name, r.Pod(), r.Revision(), got.Pod(), got.Revision())
			continue
		}
		if a, b := judged(r, now), judged(got, now); !reflect.DeepEqual(a, b) {
			t.Errorf("%s: judged %+v, after the round trip %+v", name, a, b)
		}
	}
}

func judged(r *podrec.Record, now time.Time) model.Pod {
	m := model.New(model.DefaultConfig())
	m.Apply(&contract.Batch{Pods: []*podrec.Record{r}, Health: &contract.Health{Synced: true}}, now)
	p := *m.Pod(r.GetNamespace() + "/" + r.GetName())
	return model.Pod{Key: p.Key, Verdict: p.Verdict, Containers: p.Containers, Owner: p.Owner, Phase: p.Phase, Node: p.Node}
}

// TestPodRoundTripDropsSubSecondTimes states the encoding's one loss: the protobuf of a time is
// its seconds (apimachinery's Time.Marshal), so a record made from a pod whose times have
// nanoseconds comes back without them. An API server sends seconds only (JSON and protobuf
// alike), so an informer's records never have any; a hand-made pod can.
func TestPodRoundTripDropsSubSecondTimes(t *testing.T) {
	p := podtest.Pod("shop", "a")
	p.CreationTimestamp = metav1.NewTime(podtest.T0.Add(300 * time.Millisecond))
	in := podrec.NewInterner()
	r := in.Pod(p)
	var enc podEncoder
	got, err := in.PodFromProto(enc.appendPod(nil, r))
	if err != nil {
		t.Fatal(err)
	}
	if r.SameContent(got) {
		t.Fatal("a sub-second creation time came back: the encoding keeps more than it says")
	}
	if want := podtest.T0; !got.GetCreationTimestamp().Time.Equal(want) {
		t.Fatalf("created %s, want %s (the seconds)", got.GetCreationTimestamp().Time, want)
	}
}

// TestDiffPatch: patching an object's previous encoding with the diff gives its new encoding
// byte for byte, for consecutive versions of pods, for unrelated objects, and for bytes that are
// not messages at all.
func TestDiffPatch(t *testing.T) {
	var enc podEncoder
	var encodings [][]byte
	for _, p := range fixturePods(t) {
		encodings = append(encodings, enc.appendPod(nil, podrec.RecordOf(p)))
	}
	for v := range 6 {
		encodings = append(encodings, enc.appendPod(nil, scaletest.Record(7, v)))
	}
	messages := len(encodings)
	encodings = append(encodings, nil, []byte("not a message"), []byte{0x0a, 0xff})
	var d differ
	var p patcher
	for i, prev := range encodings {
		for j, cur := range encodings {
			diff := d.appendDiff(nil, prev, cur)
			got, rest, err := p.appendPatch(nil, prev, diff)
			if err != nil || len(rest) != 0 || !bytes.Equal(got, cur) {
				t.Fatalf("%d → %d: patched to %d bytes (err %v, %d left), want %d", i, j, len(got), err, len(rest), len(cur))
			}
			if i == j && i < messages && len(diff) > 4 {
				t.Errorf("%d unchanged: a diff of %d bytes", i, len(diff))
			}
		}
	}
	// A pod's next version is a small diff: scaletest's versions change the app container's state.
	n := messages - 6
	if diff := d.appendDiff(nil, encodings[n], encodings[n+1]); len(diff) > len(encodings[n+1])/3 {
		t.Errorf("scaletest's next version: a diff of %d bytes for a pod of %d", len(diff), len(encodings[n+1]))
	}
}

// FuzzPatch: a patch of any bytes by any bytes fails or returns, never panics; and a diff of any
// two byte strings patches back.
func FuzzPatch(f *testing.F) {
	var enc podEncoder
	a, b := enc.appendPod(nil, scaletest.Record(1, 1)), enc.appendPod(nil, scaletest.Record(1, 2))
	var d differ
	f.Add(a, b, d.appendDiff(nil, a, b))
	f.Add([]byte{}, []byte("x"), []byte{1, 2, 1, 'x'})
	f.Fuzz(func(t *testing.T, prev, cur, diff []byte) {
		var p patcher
		_, _, _ = p.appendPatch(nil, prev, diff)
		var d differ
		got, rest, err := p.appendPatch(nil, prev, d.appendDiff(nil, prev, cur))
		if err != nil || len(rest) != 0 || !bytes.Equal(got, cur) {
			t.Fatalf("diff of %x → %x does not patch back: %x, %v", prev, cur, got, err)
		}
	})
}
