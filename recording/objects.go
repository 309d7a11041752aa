package recording

import (
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"doomwatch/contract"
	"doomwatch/podrec"
)

// kind numbers the kinds of a batch in the records, in the order a batch's sections are written.
type kind uint8

const (
	kindPod kind = iota
	kindNode
	kindReplicaSet
	kindDeployment
	kindStatefulSet
	kindDaemonSet
	kindJob
	kindEvent
	kindCronJob
	numKinds
	// kindOther is a delete of a kind this version does not number: its name follows.
	kindOther kind = 255
)

var modelKinds = [numKinds]contract.Kind{contract.KindPod, contract.KindNode, contract.KindReplicaSet, contract.KindDeployment,
	contract.KindStatefulSet, contract.KindDaemonSet, contract.KindJob, contract.KindEvent, contract.KindCronJob}

// sectionsOf is how many kinds' sections a batch body of format version v has: version 3 added
// the CronJobs'.
func sectionsOf(v uint16) kind {
	if v < 3 {
		return kindCronJob
	}
	return numKinds
}

func kindOf(k contract.Kind) kind {
	if i := slices.Index(modelKinds[:], k); i >= 0 {
		return kind(i)
	}
	return kindOther
}

// nsName is an object's key: namespace and name (namespace "" for a node).
type nsName struct{ ns, name string }

// protoObject is a typed API object as the generated protobuf code handles it.
type protoObject interface {
	GetNamespace() string
	GetName() string
	Size() int
	MarshalToSizedBuffer([]byte) (int, error)
}

// appendProto appends m's protobuf encoding to dst.
func appendProto(dst []byte, m protoObject) []byte {
	n := m.Size()
	dst = slices.Grow(dst, n)
	buf := dst[len(dst) : len(dst)+n]
	// The generated code fails only on a buffer too small, which Size rules out.
	if _, err := m.MarshalToSizedBuffer(buf); err != nil {
		panic(fmt.Sprintf("recording: marshaling %T: %v", m, err))
	}
	return dst[:len(dst)+n]
}

// The revision labels a pod record keeps one of (podrec: Record.Revision), which Record.Pod does
// not write back: the encoder sets the one the record's revision came from, so that PodFromProto
// reads the same revision again.
const (
	revisionHashLabel       = appsv1.ControllerRevisionHashLabelKey
	templateGenerationLabel = "pod-template-generation"
)

// podEncoder encodes pod records as the protobuf of the pods they rebuild.
type podEncoder struct {
	scratch podrec.Scratch
	labels  map[string]string
}

func (e *podEncoder) appendPod(dst []byte, r *podrec.Record) []byte {
	p := e.scratch.Pod(r)
	if rev := r.Revision(); rev != "" {
		if e.labels == nil {
			e.labels = make(map[string]string, 1)
		}
		clear(e.labels)
		e.labels[revisionLabel(r.GetOwnerReferences())] = rev
		p.Labels = e.labels
	}
	return appendProto(dst, p)
}

// revisionLabel is the label podrec reads a pod's revision from (podrec's revisionOf): a
// DaemonSet's pods' template generation, any other pod's revision hash.
func revisionLabel(owners []metav1.OwnerReference) string {
	for i := range owners {
		if c := owners[i].Controller; c != nil && *c && owners[i].Kind == "DaemonSet" {
			return templateGenerationLabel
		}
	}
	return revisionHashLabel
}

// sections are b's objects by kind, but for the pods, in the order the records write them. A
// workload of a kind this version does not number is left out.
func sections(b *contract.Batch) *[numKinds][]protoObject {
	var out [numKinds][]protoObject
	for _, n := range b.Nodes {
		out[kindNode] = append(out[kindNode], n)
	}
	for _, o := range b.Workloads {
		k := kindOf(o.Kind)
		if p, ok := o.Obj.(protoObject); ok && k != kindOther {
			out[k] = append(out[k], p)
		}
	}
	for _, e := range b.Events {
		out[kindEvent] = append(out[kindEvent], e)
	}
	return &out
}

// appendObject adds the object decoded from its encoding to b's section of kind k, and returns
// its key.
func appendObject(b *contract.Batch, k kind, enc []byte, in *podrec.Interner) (nsName, error) {
	var obj interface {
		GetNamespace() string
		GetName() string
	}
	var err error
	switch k {
	case kindPod:
		var r *podrec.Record
		if r, err = in.PodFromProto(enc); err == nil {
			b.Pods, obj = append(b.Pods, r), r
		}
	case kindNode:
		o := new(corev1.Node)
		err, b.Nodes, obj = o.Unmarshal(enc), append(b.Nodes, o), o
	case kindEvent:
		o := new(corev1.Event)
		err, b.Events, obj = o.Unmarshal(enc), append(b.Events, o), o
	default:
		// The workload kinds, from their rows of contract.Kinds.
		if k >= numKinds {
			return nsName{}, errBadRecord
		}
		info := contract.Info(modelKinds[k])
		if info == nil || info.New == nil {
			return nsName{}, errBadRecord
		}
		o := info.New()
		u, ok := o.(interface{ Unmarshal([]byte) error })
		if !ok {
			return nsName{}, errBadRecord
		}
		err = u.Unmarshal(enc)
		b.Workloads, obj = append(b.Workloads, contract.Object{Kind: info.Kind, Obj: o}), o
	}
	if err != nil {
		return nsName{}, fmt.Errorf("decoding a %s: %w", modelKinds[k], err)
	}
	return nsName{obj.GetNamespace(), obj.GetName()}, nil
}
