package kube

import (
	"net/http"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"

	"doomwatch/podrec"
)

// codecFor is the pod client's serializer for a media type, and the API's own encoder for it.
func codecFor(t *testing.T, mediaType string) (runtime.Decoder, runtime.Encoder) {
	t.Helper()
	codecs := podCodecs{NegotiatedSerializer: scheme.Codecs.WithoutConversion(), t: newTrimmer()}
	info, ok := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), mediaType)
	if !ok {
		t.Fatalf("no %s serializer", mediaType)
	}
	base, _ := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), mediaType)
	return info.Serializer, scheme.Codecs.EncoderForVersion(base.Serializer, corev1.SchemeGroupVersion)
}

// TestRecordDecoderReadsPodsAndListsIntoRecords: what the API server sends for a pod and a pod list,
// in protobuf and in JSON, decodes into the records the transform would make of the decoded pods;
// anything else (the Status of an error) decodes as client-go decodes it.
func TestRecordDecoderReadsPodsAndListsIntoRecords(t *testing.T) {
	a, b := pod("shop", "web-1", "node-1"), pod("shop", "web-2", "node-2")
	b.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", RestartCount: 3,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}}
	rest := int64(7)
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "42", Continue: "next", RemainingItemCount: &rest},
		Items: []corev1.Pod{*a, *b}}
	forbidden := apierrors.NewForbidden(corev1.Resource("pods"), "", nil).Status()
	for _, mediaType := range []string{runtime.ContentTypeProtobuf, runtime.ContentTypeJSON} {
		t.Run(mediaType, func(t *testing.T) {
			dec, enc := codecFor(t, mediaType)
			data, err := runtime.Encode(enc, a)
			if err != nil {
				t.Fatal(err)
			}
			obj, err := runtime.Decode(dec, data)
			if err != nil {
				t.Fatal(err)
			}
			r, ok := obj.(*podrec.Record)
			if !ok {
				t.Fatalf("a pod decoded into %T", obj)
			}
			if want := podrec.RecordOf(a); !r.SameContent(want) || !equality.Semantic.DeepEqual(r.Pod(), want.Pod()) {
				t.Errorf("pod record %+v, want %+v", r.Pod(), want.Pod())
			}

			data, err = runtime.Encode(enc, list)
			if err != nil {
				t.Fatal(err)
			}
			if obj, err = runtime.Decode(dec, data); err != nil {
				t.Fatal(err)
			}
			l, ok := obj.(*metav1.List)
			if !ok || len(l.Items) != 2 || l.ResourceVersion != "42" || l.Continue != "next" || l.RemainingItemCount == nil || *l.RemainingItemCount != 7 {
				t.Fatalf("a pod list decoded into %T %+v", obj, obj)
			}
			for i, want := range []*corev1.Pod{a, b} {
				r, ok := l.Items[i].Object.(*podrec.Record)
				if !ok || !r.SameContent(podrec.RecordOf(want)) {
					t.Errorf("item %d = %T %+v, want the record of %s", i, l.Items[i].Object, l.Items[i].Object, want.Name)
				}
			}

			data, err = runtime.Encode(enc, &forbidden)
			if err != nil {
				t.Fatal(err)
			}
			if obj, err = runtime.Decode(dec, data); err != nil {
				t.Fatal(err)
			}
			if st, ok := obj.(*metav1.Status); !ok || st.Code != http.StatusForbidden || !reflect.DeepEqual(st.Details, forbidden.Details) {
				t.Errorf("a Status decoded into %T %+v", obj, obj)
			}
		})
	}
	dec, _ := codecFor(t, runtime.ContentTypeProtobuf)
	if _, err := runtime.Decode(dec, append(append([]byte{}, protobufMagic...), 0x0a, 0xff)); err == nil {
		t.Error("a truncated envelope was accepted")
	}
}
