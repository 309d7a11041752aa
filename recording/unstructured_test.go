package recording

import (
	"bytes"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"doomwatch/contract"
	"doomwatch/model/podtest"
	"doomwatch/podrec"
)

// rollout is an Argo Rollout as the dynamic client gives it: integers int64, observedGeneration a
// string (Argo's status writes it so), a canary weight and a float.
func rollout(ns, name string, replicas, updated int64, observed string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1",
		"kind":       "Rollout",
		"metadata": map[string]any{"namespace": ns, "name": name, "generation": int64(7),
			"labels": map[string]any{"app": name}},
		"spec": map[string]any{"replicas": replicas, "paused": false,
			"strategy": map[string]any{"canary": map[string]any{"steps": []any{
				map[string]any{"setWeight": int64(20)}, map[string]any{"pause": map[string]any{}}}}}},
		"status": map[string]any{"replicas": replicas, "updatedReplicas": updated, "readyReplicas": updated,
			"observedGeneration": observed, "phase": "Progressing", "currentStepIndex": int64(1),
			"ratio": 0.25, "message": nil},
	}}
}

// widget is a made-up custom resource of example.com.
func widget(ns, name, version string, size int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/" + version,
		"kind":       "Widget",
		"metadata":   map[string]any{"namespace": ns, "name": name},
		"spec":       map[string]any{"size": size, "tags": []any{"a", "b"}},
	}}
}

func other(kind contract.Kind, u *unstructured.Unstructured) contract.Object {
	return contract.Object{Kind: kind, Obj: u}
}

// unstructuredSteps are batches of typed workloads and of two kinds read as unstructured, over two
// clusters (ids are per cluster) and two segments: new objects, new versions, deletes of objects
// the segment holds and of one it never did, a kind at two apiVersions, a delete and a re-creation
// after the snapshot.
func unstructuredSteps() []appended {
	t0 := podtest.T0
	in := podrec.NewInterner()
	dep := podtest.Deployment("shop", "web", 3, "2")
	rs := podtest.ReplicaSet("shop", "web-6d4", "web", "2")
	return []appended{
		{t0, contract.Batch{Cluster: 0,
			Pods: []*podrec.Record{in.Pod(podtest.Pod("shop", "web-6d4-a", podtest.OwnedBy("ReplicaSet", "web-6d4")))},
			Workloads: []contract.Object{contract.Workload(rs), other("Rollout", rollout("shop", "canary", 5, 1, "7")),
				contract.Workload(dep), other("Widget", widget("shop", "w0", "v1", 4)), other("Widget", widget("shop", "w1", "v1", 3)),
				other("Rollout", rollout("shop", "blue", 2, 2, "3"))},
			Health: &contract.Health{Synced: true, LastEvent: t0},
		}},
		{t0.Add(time.Second), contract.Batch{Cluster: 1,
			Workloads: []contract.Object{other("Rollout", rollout("shop", "canary", 1, 0, "1"))},
		}},
		{t0.Add(2 * time.Second), contract.Batch{Cluster: 0,
			Workloads: []contract.Object{other("Rollout", rollout("shop", "canary", 5, 3, "8")),
				other("Widget", widget("shop", "w2", "v2", 9))},
			Deletes: []contract.Ref{{Kind: "Widget", Namespace: "shop", Name: "w1"},
				{Kind: "Rollout", Namespace: "shop", Name: "never-seen"},
				{Kind: contract.KindDeployment, Namespace: "shop", Name: "web"}},
		}},
		// Past SnapshotEvery: the second segment, whose snapshot holds the objects of both.
		{t0.Add(61 * time.Second), contract.Batch{Cluster: 0,
			Workloads: []contract.Object{other("Rollout", rollout("shop", "blue", 2, 2, "4")),
				other("Widget", widget("shop", "w3", "v1", 1))},
			Deletes: []contract.Ref{{Kind: "Rollout", Namespace: "shop", Name: "canary"}},
		}},
		{t0.Add(61*time.Second + time.Second/2), contract.Batch{Cluster: 0,
			Workloads: []contract.Object{other("Rollout", rollout("shop", "canary", 5, 0, "9"))},
		}},
	}
}

// objectsOf applies b's workloads and deletes to state, by kind and key, each object described.
func objectsOf(state map[string]string, b *contract.Batch) {
	for _, d := range b.Deletes {
		delete(state, string(d.Kind)+" "+d.Namespace+"/"+d.Name)
	}
	lines := strings.Split(strings.TrimSpace(describe(&contract.Batch{Workloads: b.Workloads})), "\n")[1:]
	for i, o := range b.Workloads {
		state[string(o.Kind)+" "+o.Obj.GetNamespace()+"/"+o.Obj.GetName()] = lines[i]
	}
}

// TestUnstructuredRoundTrip records typed workloads and unstructured ones (Argo Rollouts, a
// made-up Widget): every batch reads back as appended, the unstructured objects equal to those
// appended (integers int64, as unstructured.NestedInt64 reads them), deletes by id and by name
// included; the second segment's snapshot holds each cluster's objects; a seek to the end
// restores them.
func TestUnstructuredRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rec")
	steps := unstructuredSteps()
	w, err := Create(dir, Options{Contexts: []string{"east", "west"}, Start: steps[0].at, SnapshotEvery: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	state := []map[string]string{{}, {}}
	var atSnapshot []map[string]string
	for i, s := range steps {
		if i == 3 {
			atSnapshot = []map[string]string{clone(state[0]), clone(state[1])}
		}
		objectsOf(state[s.batch.Cluster], &s.batch)
		if err := w.Append(s.at, &s.batch); err != nil {
			t.Fatalf("Append %d: %v", i, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(segments(t, dir)); n != 2 {
		t.Fatalf("%d segments, want 2", n)
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	batch := 0
	snapshot := []map[string]string{{}, {}}
	for seg := range r.segs {
		for fr, err := range r.segment(seg) {
			if err != nil {
				t.Fatal(err)
			}
			if fr.Reset {
				if seg == 1 {
					objectsOf(snapshot[fr.Batch.Cluster], fr.Batch)
				}
				continue
			}
			want := inRecordedOrder(&steps[batch].batch)
			if got, want := describe(fr.Batch), describe(want); got != want {
				t.Errorf("batch %d: %s", batch, firstDiff(want, got))
			}
			if !fr.At.Equal(steps[batch].at) {
				t.Errorf("batch %d at %s, appended at %s", batch, fr.At, steps[batch].at)
			}
			for i, o := range fr.Batch.Workloads {
				u, ok := o.Obj.(*unstructured.Unstructured)
				if _, typed := want.Workloads[i].Obj.(*unstructured.Unstructured); typed != ok {
					t.Fatalf("batch %d: a %s read back as %T", batch, o.Kind, o.Obj)
				}
				if ok && !reflect.DeepEqual(u.Object, want.Workloads[i].Obj.(*unstructured.Unstructured).Object) {
					t.Errorf("batch %d: %s %s/%s reads back as %#v", batch, o.Kind, u.GetNamespace(), u.GetName(), u.Object)
				}
			}
			batch++
		}
	}
	if batch != len(steps) {
		t.Fatalf("read %d batches, appended %d", batch, len(steps))
	}
	for c := range snapshot {
		if !reflect.DeepEqual(snapshot[c], atSnapshot[c]) {
			t.Errorf("cluster %d: the second segment's snapshot holds\n%v\nwant\n%v", c, snapshot[c], atSnapshot[c])
		}
	}
	// A seek to the end: the second segment's snapshot and its batches.
	restored := []map[string]string{{}, {}}
	var canary *unstructured.Unstructured
	if _, err := r.Restore(steps[len(steps)-1].at, func(fr Frame) {
		objectsOf(restored[fr.Batch.Cluster], fr.Batch)
		for _, o := range fr.Batch.Workloads {
			if o.Kind == "Rollout" && o.Obj.GetName() == "canary" && fr.Batch.Cluster == 0 {
				canary = o.Obj.(*unstructured.Unstructured)
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(restored, state) {
		t.Errorf("a seek to the end restores\n%v\nwant\n%v", restored, state)
	}
	// What the model will read of a Rollout: status counts as int64, observedGeneration a string.
	if canary == nil {
		t.Fatal("the seek restores no Rollout shop/canary")
	}
	if n, ok, err := unstructured.NestedInt64(canary.Object, "status", "replicas"); n != 5 || !ok || err != nil {
		t.Errorf("status.replicas: %d %v %v, want 5", n, ok, err)
	}
	if g, ok, err := unstructured.NestedString(canary.Object, "status", "observedGeneration"); g != "9" || !ok || err != nil {
		t.Errorf("status.observedGeneration: %q %v %v, want \"9\"", g, ok, err)
	}
	if f, ok, err := unstructured.NestedFloat64(canary.Object, "status", "ratio"); f != 0.25 || !ok || err != nil {
		t.Errorf("status.ratio: %v %v %v, want 0.25", f, ok, err)
	}
}

// inRecordedOrder is b with its workloads in the order the recording keeps them: the numbered
// kinds' sections, then the unstructured objects by kind and apiVersion as each first came, each
// section and group in the batch's order.
func inRecordedOrder(b *contract.Batch) *contract.Batch {
	out := *b
	out.Workloads = slices.Clone(b.Workloads)
	var groups []string
	rank := func(o contract.Object) int {
		u, ok := o.Obj.(*unstructured.Unstructured)
		if !ok {
			return int(kindOf(o.Kind))
		}
		g := string(o.Kind) + " " + u.GetAPIVersion()
		if !slices.Contains(groups, g) {
			groups = append(groups, g)
		}
		return int(numKinds) + slices.Index(groups, g)
	}
	for _, o := range b.Workloads {
		rank(o)
	}
	slices.SortStableFunc(out.Workloads, func(a, b contract.Object) int { return rank(a) - rank(b) })
	return &out
}

func clone(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// TestUnstructuredDeleteByID: a delete of an unstructured object the segment holds is written by
// its id (the record does not name it) and reads back as the object's kind and name; after it,
// an object of the same name is a new one.
func TestUnstructuredDeleteByID(t *testing.T) {
	e := newEncoder(1)
	add := contract.Batch{Workloads: []contract.Object{other("Widget", widget("shop", "widget-that-goes", "v1", 1))}}
	del := contract.Batch{Deletes: []contract.Ref{{Kind: "Widget", Namespace: "shop", Name: "widget-that-goes"}}}
	var recs [][]byte
	for _, b := range []*contract.Batch{&add, &del, &add} {
		rec, err := e.appendBatch(nil, podtest.T0, b)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	if bytes.Contains(recs[1], []byte("widget-that-goes")) {
		t.Errorf("the delete names the object: % x", recs[1])
	}
	d := newSegmentDecoder(version, 1, podtest.T0, podrec.NewInterner())
	var got []string
	for _, rec := range recs {
		r := decoder{b: rec}
		n := r.uvarint()
		_, bs, err := d.record(r.b[0], r.b[1:n])
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, describe(&bs[0]))
	}
	if want := describe(&del); got[1] != want {
		t.Errorf("the delete reads back as %s", firstDiff(want, got[1]))
	}
	if want := describe(&add); got[2] != want {
		t.Errorf("the object made again reads back as %s", firstDiff(want, got[2]))
	}
	if ids := d.others[0]["Widget"]; len(ids) != 2 || ids[0].ok || !ids[1].ok {
		t.Errorf("the reader's Widgets: %+v, want the first retired and a second", ids)
	}
}

// TestUnstructuredLeftOut: an object the recording cannot hold is left out, with an error naming
// it, and the rest of the batch is recorded and reads back.
func TestUnstructuredLeftOut(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rec")
	w, err := Create(dir, Options{Contexts: []string{"c"}, Start: podtest.T0})
	if err != nil {
		t.Fatal(err)
	}
	bad := widget("shop", "nan", "v1", 1)
	bad.Object["spec"].(map[string]any)["ratio"] = nanValue()
	good := widget("shop", "fine", "v1", 2)
	b := contract.Batch{Workloads: []contract.Object{other("Widget", bad), other("Wid get", good), other("Widget", good)},
		Deletes: []contract.Ref{{Kind: "bad kind!", Name: "x"}, {Kind: "Widget", Namespace: "shop", Name: "gone"}}}
	err = w.Append(podtest.T0, &b)
	if err == nil || !strings.Contains(err.Error(), "shop/nan") || !strings.Contains(err.Error(), `"Wid get"`) ||
		!strings.Contains(err.Error(), `"bad kind!"`) {
		t.Errorf("Append: %v, want the NaN widget, the kind with a space and the delete named", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	frames := readAll(t, dir)
	want := describe(&contract.Batch{Workloads: []contract.Object{other("Widget", good)},
		Deletes: []contract.Ref{{Kind: "Widget", Namespace: "shop", Name: "gone"}}})
	if len(frames) != 2 || !strings.HasSuffix(frames[1], want) {
		t.Errorf("read back %q, want the batch without what was left out:\n%s", frames, want)
	}
}

func nanValue() float64 {
	zero := 0.0
	return zero / zero
}

// corruptOthers are version-2 batch records (type byte and body) that are wrong in their
// unstructured part: each must read as errBadRecord, without a panic or an allocation of what
// its lengths claim.
func corruptOthers() map[string][]byte {
	body := func(others ...byte) []byte { return append(emptyBatch(), others...) }
	entry := func(kind, apiVersion, js string) []byte {
		b := appendString([]byte{1}, kind)
		b = appendString(b, apiVersion)
		b = append(b, 1, 0) // one entry, id 0 whole
		return appendString(b, js)
	}
	return map[string][]byte{
		"JSON that does not parse":   body(entry("Rollout", "argoproj.io/v1alpha1", `{"metadata":`)...),
		"JSON that is not an object": body(entry("Rollout", "argoproj.io/v1alpha1", `[1,2]`)...),
		"JSON null":                  body(entry("Rollout", "argoproj.io/v1alpha1", `null`)...),
		"an apiVersion not the group's": body(entry("Rollout", "argoproj.io/v1alpha1",
			`{"apiVersion":"example.com/v1","metadata":{"name":"x"}}`)...),
		"a kind name with a space":     body(entry("Roll out", "v1", `{}`)...),
		"an empty kind name":           body(entry("", "v1", `{}`)...),
		"a kind name too long":         body(entry(strings.Repeat("K", maxKindName+1), "v1", `{}`)...),
		"an apiVersion too long":       body(entry("Rollout", strings.Repeat("a", maxAPIVersion+1), `{}`)...),
		"a huge count of kinds":        body(0xff, 0xff, 0xff, 0xff, 0x0f),
		"a huge kind name length":      body(1, 0xff, 0xff, 0xff, 0xff, 0x0f),
		"a huge JSON length":           body(append(appendString(appendString([]byte{1}, "Rollout"), "v1"), 1, 0, 0xff, 0xff, 0xff, 0xff, 0x0f)...),
		"a diff":                       body(append(appendString(appendString([]byte{1}, "Rollout"), "v1"), 1, 1, 2, '{', '}')...),
		"an id not handed out":         body(append(appendString(appendString([]byte{1}, "Rollout"), "v1"), 1, 4, 2, '{', '}')...),
		"a delete of an id never held": {recBatch, 0, 0, 1, byte(kindOther), 1, 7, 'R', 'o', 'l', 'l', 'o', 'u', 't'},
		"a delete of a kind name too long": append([]byte{recBatch, 0, 0, 1, byte(kindOther), 0},
			appendString(nil, strings.Repeat("K", 200))...),
		"a whole part missing": body(),
	}
}

// emptyBatch is a batch record, its type byte and a version-1 body: no time passed, cluster 0, no
// deletes, every section empty, no health.
func emptyBatch() []byte {
	b := []byte{recBatch, 0, 0, 0}
	b = append(b, make([]byte, numKinds)...)
	return append(b, 0)
}

// TestUnstructuredCorrupt: every corrupt record is a clean errBadRecord (or a short record).
func TestUnstructuredCorrupt(t *testing.T) {
	for name, rec := range corruptOthers() {
		t.Run(name, func(t *testing.T) {
			d := newSegmentDecoder(version, 1, podtest.T0, podrec.NewInterner())
			_, _, err := d.record(rec[0], rec[1:])
			if !errors.Is(err, errBadRecord) && !errors.Is(err, errShort) {
				t.Errorf("%v, want a malformed or short record", err)
			}
		})
	}
	// What they start with is a whole version-1 record, and a whole version-2 one with an empty
	// last part: the errors are the last part's.
	rec := emptyBatch()
	if _, bs, err := newSegmentDecoder(1, 1, podtest.T0, nil).record(rec[0], rec[1:]); err != nil || len(bs) != 1 {
		t.Errorf("an empty version-1 batch: %v", err)
	}
	rec = append(rec, 0)
	if _, bs, err := newSegmentDecoder(version, 1, podtest.T0, nil).record(rec[0], rec[1:]); err != nil || len(bs) != 1 {
		t.Errorf("an empty version-2 batch: %v", err)
	}
}

// FuzzUnstructured: any bytes, as the JSON of an object, a kind name and an apiVersion: what
// parses as a JSON object is an Unstructured, which the recording writes and gives back equal to
// what its JSON gives back (the same JSON, and integers int64); and any bytes as the last part of a
// record decode or fail cleanly, never panic.
func FuzzUnstructured(f *testing.F) {
	for _, u := range []*unstructured.Unstructured{rollout("shop", "canary", 5, 1, "7"), widget("ns", "w", "v1", 3)} {
		js, _ := u.MarshalJSON()
		f.Add(js, "Rollout", u.GetAPIVersion())
	}
	f.Add([]byte("{\"apiVersion\":\"v1\",\"n\":9007199254740993,\"f\":1e3,\"s\":\"\\u00ff\xff\"}"), "Widget", "v1")
	f.Add([]byte(`{"metadata":{"name":1}}`), "Widget", "")
	for _, rec := range corruptOthers() {
		f.Add(rec, "", "")
	}
	f.Fuzz(func(t *testing.T, js []byte, kind, apiVersion string) {
		// Any bytes as a record's unstructured part.
		d := newSegmentDecoder(version, 1, podtest.T0, podrec.NewInterner())
		_, _, _ = d.record(recBatch, append(emptyBatch()[1:], js...))
		// Any bytes as an object's JSON under any kind and apiVersion.
		d = newSegmentDecoder(version, 1, podtest.T0, podrec.NewInterner())
		body := appendString(appendString(append(emptyBatch()[1:], 1), kind), apiVersion)
		_, _, _ = d.record(recBatch, appendBytes(append(body, 1, 0), js))

		var m map[string]any
		if utiljson.Unmarshal(js, &m) != nil || m == nil {
			return
		}
		u := &unstructured.Unstructured{Object: m}
		e := newEncoder(1)
		b := contract.Batch{Workloads: []contract.Object{other(contract.Kind(kind), u)}}
		out, err := e.appendBatch(nil, podtest.T0, &b)
		want, jerr := marshalOther(contract.Kind(kind), u)
		if (err != nil) != (jerr != nil) {
			t.Fatalf("Append: %v, the object's JSON: %v", err, jerr)
		}
		if err != nil {
			return // left out, and said so
		}
		r := decoder{b: out}
		n := r.uvarint()
		d = newSegmentDecoder(version, 1, podtest.T0, podrec.NewInterner())
		_, bs, err := d.record(r.b[0], r.b[1:n])
		if err != nil {
			t.Fatalf("%s %q: reading back: %v", kind, js, err)
		}
		got := bs[0].Workloads
		if len(got) != 1 || got[0].Kind != contract.Kind(kind) {
			t.Fatalf("read back %+v", got)
		}
		gu := got[0].Obj.(*unstructured.Unstructured)
		js2, err := gu.MarshalJSON()
		if err != nil || !bytes.Equal(bytes.TrimSuffix(js2, []byte("\n")), want) {
			t.Fatalf("%q reads back as %q (%v), want %q", js, js2, err, want)
		}
		// The recording gives back what the object's JSON gives back, as the dynamic client
		// decodes it.
		var again map[string]any
		if err := utiljson.Unmarshal(want, &again); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(gu.Object, again) {
			t.Fatalf("%q reads back as %#v, want %#v", js, gu.Object, again)
		}
	})
}
