package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// The pod informer of a real cluster decodes what the API server sends straight into records
// (podrec.Record): its client's content negotiation is the API's own, except that a Pod or a
// PodList, in protobuf (which doomwatch asks for), is read by podrec.Interner.PodFromProto, which
// skips every field a record does not keep. A pod is never decoded into a corev1.Pod only to be
// trimmed and dropped: that decode, and the garbage it leaves, were most of what the informer cost
// (at 10,000 pods, 0.5 of the 1.7 CPU-seconds of a start, and a third of the CPU under churn). Any
// other object (a Status on an error, a bookmark's empty Pod) and JSON answers (from a server or
// proxy that does not speak protobuf) are decoded as client-go does, a Pod then made a record by
// the transform's Interner.Pod. The demo's fake clientset has no wire; its pods go through the
// transform.

// protobufMagic starts every protobuf-encoded API object (apimachinery runtime/serializer/protobuf).
var protobufMagic = []byte{0x6b, 0x38, 0x73, 0x00}

// podCodecs is the pod client's content negotiation.
type podCodecs struct {
	runtime.NegotiatedSerializer
	t *trimmer
}

func (c podCodecs) SupportedMediaTypes() []runtime.SerializerInfo {
	infos := c.NegotiatedSerializer.SupportedMediaTypes()
	out := make([]runtime.SerializerInfo, len(infos))
	for i, info := range infos {
		info.Serializer = recordDecoder{Serializer: info.Serializer, t: c.t}
		out[i] = info
	}
	return out
}

// recordDecoder decodes pods and pod lists into records and everything else as its Serializer does.
type recordDecoder struct {
	runtime.Serializer
	t *trimmer
}

func (d recordDecoder) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	if into == nil && bytes.HasPrefix(data, protobufMagic) {
		kind, raw, err := unwrapProtobuf(data[len(protobufMagic):])
		if err != nil {
			return nil, nil, err
		}
		switch kind {
		case "Pod":
			gvk := corev1.SchemeGroupVersion.WithKind("Pod")
			d.t.mu.Lock()
			r, err := d.t.in.PodFromProto(raw)
			d.t.mu.Unlock()
			if err != nil {
				return nil, &gvk, err
			}
			return r, &gvk, nil
		case "PodList":
			gvk := corev1.SchemeGroupVersion.WithKind("PodList")
			l, err := d.podList(raw)
			return l, &gvk, err
		}
	}
	obj, gvk, err := d.Serializer.Decode(data, defaults, into)
	if err != nil || into != nil {
		return obj, gvk, err
	}
	switch o := obj.(type) {
	case *corev1.Pod:
		d.t.mu.Lock()
		r := d.t.in.Pod(o)
		d.t.mu.Unlock()
		return r, gvk, nil
	case *corev1.PodList:
		l := &metav1.List{ListMeta: o.ListMeta, Items: make([]runtime.RawExtension, len(o.Items))}
		d.t.mu.Lock()
		for i := range o.Items {
			l.Items[i].Object = d.t.in.Pod(&o.Items[i])
		}
		d.t.mu.Unlock()
		return l, gvk, nil
	}
	return obj, gvk, nil
}

// unwrapProtobuf reads the envelope of a protobuf-encoded object, a runtime.Unknown: its type meta
// (1: apiVersion 1, kind 2) and its raw message (2). The raw bytes are not copied.
func unwrapProtobuf(b []byte) (kind string, raw []byte, err error) {
	err = bytesFields(b, func(num protowire.Number, v []byte) error {
		switch num {
		case 1:
			return bytesFields(v, func(num protowire.Number, v []byte) error {
				if num == 2 {
					kind = string(v)
				}
				return nil
			})
		case 2:
			raw = v
		}
		return nil
	})
	return kind, raw, err
}

// bytesFields calls fn with the number and bytes of every length-delimited field of message b
// (strings and embedded messages), skipping the others.
func bytesFields(b []byte, fn func(num protowire.Number, v []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return errMalformedEnvelope
		}
		b = b[n:]
		if typ != protowire.BytesType {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return errMalformedEnvelope
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return errMalformedEnvelope
		}
		b = b[n:]
		if err := fn(num, v); err != nil {
			return err
		}
	}
	return nil
}

var errMalformedEnvelope = errors.New("decoding a protobuf object: malformed envelope")

// podList reads a PodList message: metadata (1: resourceVersion 2, continue 3, remainingItemCount
// 4) and items (2), each a Pod made a record. It is a metav1.List of records, which the reflector
// takes items from as from any list (meta.ExtractList).
func (d recordDecoder) podList(b []byte) (*metav1.List, error) {
	l := &metav1.List{}
	var items [][]byte
	err := bytesFields(b, func(num protowire.Number, v []byte) error {
		switch num {
		case 1:
			if err := l.ListMeta.Unmarshal(v); err != nil {
				return fmt.Errorf("decoding a pod list: %w", err)
			}
		case 2:
			items = append(items, v)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	l.Items = make([]runtime.RawExtension, len(items))
	d.t.mu.Lock()
	defer d.t.mu.Unlock()
	for i, raw := range items {
		r, err := d.t.in.PodFromProto(raw)
		if err != nil {
			return nil, err
		}
		l.Items[i].Object = r
	}
	return l, nil
}

// recordClient is a REST client for pods whose answers are records (podCodecs), from the same
// connection settings as the typed client.
func recordClient(cfg *rest.Config, t *trimmer) (rest.Interface, error) {
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &corev1.SchemeGroupVersion
	c.APIPath = "/api"
	c.NegotiatedSerializer = podCodecs{NegotiatedSerializer: scheme.Codecs.WithoutConversion(), t: t}
	rc, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("creating the pod client: %w", err)
	}
	return rc, nil
}

// recordPods lists and watches pods through a record client, as the typed client's Pods(ns).List
// and Watch do.
type recordPods struct {
	rc rest.Interface
	ns string
}

func (p recordPods) list(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
	var timeout time.Duration
	if o.TimeoutSeconds != nil {
		timeout = time.Duration(*o.TimeoutSeconds) * time.Second
	}
	return p.rc.Get().Namespace(p.ns).Resource("pods").VersionedParams(&o, scheme.ParameterCodec).Timeout(timeout).Do(ctx).Get()
}

func (p recordPods) watch(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	var timeout time.Duration
	if o.TimeoutSeconds != nil {
		timeout = time.Duration(*o.TimeoutSeconds) * time.Second
	}
	o.Watch = true
	return p.rc.Get().Namespace(p.ns).Resource("pods").VersionedParams(&o, scheme.ParameterCodec).Timeout(timeout).Watch(ctx)
}
