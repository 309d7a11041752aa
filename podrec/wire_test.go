package podrec

import (
	"encoding/binary"
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// sameAsGenerated decodes data with the generated code and with PodFromProto (through in, which
// may be nil) and fails the test if the generated code accepts it and PodFromProto does not, or
// makes another record than Interner.Pod makes of the generated code's pod. It reports whether the
// generated code accepted data.
func sameAsGenerated(t *testing.T, what string, in *Interner, data []byte) bool {
	t.Helper()
	var p corev1.Pod
	genErr := p.Unmarshal(data)
	got, err := in.PodFromProto(data) // whatever the generated code says, it must not panic
	if genErr != nil {
		return false
	}
	if err != nil {
		t.Fatalf("%s: the generated code decodes the pod, PodFromProto fails: %v", what, err)
	}
	want := RecordOf(&p)
	if !got.SameContent(want) || got.GetResourceVersion() != want.GetResourceVersion() {
		t.Fatalf("%s: record\n%+v\nwant (from the generated code's pod)\n%+v", what, *got, *want)
	}
	if g, w := got.Pod(), want.Pod(); !equality.Semantic.DeepEqual(g, w) {
		gj, _ := json.Marshal(g)
		wj, _ := json.Marshal(w)
		t.Fatalf("%s: rebuilds\n%s\nwant (from the generated code's pod)\n%s", what, gj, wj)
	}
	return true
}

// Wire-format helpers for hand-made messages.
func tag(num uint64, typ wireType) []byte { return binary.AppendUvarint(nil, num<<3|uint64(typ)) }

func bytesField(num uint64, parts ...[]byte) []byte {
	var v []byte
	for _, p := range parts {
		v = append(v, p...)
	}
	return appendBytes(tag(num, wireBytes), v)
}

func strField(num uint64, s string) []byte { return bytesField(num, []byte(s)) }

// TestPodFromProtoReadsTheWireAsTheGeneratedCodeDoes: bytes the generated code accepts though the
// protobuf specification would not, or reads its own way, make the record of the pod it makes.
// The API server never sends them; the decoder must still agree with the code every other client
// decodes pods with.
func TestPodFromProtoReadsTheWireAsTheGeneratedCodeDoes(t *testing.T) {
	name := strField(objectMetaName, "web-1")
	varintField := func(num, v uint64) []byte { return binary.AppendUvarint(tag(num, wireVarint), v) }
	for _, tc := range []struct {
		what string
		data []byte
	}{{
		// metav1.Time.Unmarshal drops the nanoseconds, as its Marshal never writes them
		// (apimachinery pkg/apis/meta/v1/time_proto.go: "our JSON only handled seconds").
		what: "a time with nanoseconds",
		data: bytesField(podMetadata, name, bytesField(objectMetaCreationTimestamp,
			varintField(timeSeconds, uint64(t0.Unix())), varintField(timeNanos, 500))),
	}, {
		// A varint's tenth byte may be anything below 0x80: the bits past the 64th are dropped.
		what: "a ten-byte varint",
		data: bytesField(podMetadata, name, tag(objectMetaGeneration, wireVarint),
			[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}),
	}, {
		// The field number is the tag shifted right by three as an int32: 2^32+1 is metadata.
		what: "a field number past 32 bits",
		data: bytesField(1<<32|podMetadata, name),
	}, {
		// A group is skipped by counting its start and end tags: field 8's group ends with
		// field 4's end tag.
		what: "a group ended by another field's end tag",
		data: append(bytesField(podMetadata, name), tag(8, wireStartGroup)[0], tag(4, wireEndGroup)[0]),
	}, {
		// A map entry's key is read as length-delimited whatever its wire type.
		what: "a label whose key is tagged as a varint",
		data: bytesField(podMetadata, name, bytesField(objectMetaLabels,
			tag(mapEntryKey, wireVarint), appendBytes(nil, []byte(revisionHashLabel)), strField(mapEntryValue, "web-7c9f"))),
	}, {
		// A map entry's key may run past the entry, up to the end of the metadata.
		what: "a label whose key runs past its entry",
		data: bytesField(podMetadata, bytesField(objectMetaLabels, tag(mapEntryKey, wireBytes), []byte{byte(len(name))}), name),
	}} {
		if !sameAsGenerated(t, tc.what, nil, tc.data) {
			t.Errorf("%s: the generated code rejects the bytes; the case tests nothing", tc.what)
		}
	}
}
