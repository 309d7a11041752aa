package recording

import (
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
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
	numKinds
	// kindOther is a delete of a kind this version does not number: its name follows.
	kindOther kind = 255
)

var modelKinds = [numKinds]contract.Kind{contract.KindPod, contract.KindNode, contract.KindReplicaSet, contract.KindDeployment,
	contract.KindStatefulSet, contract.KindDaemonSet, contract.KindJob, contract.KindEvent}

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

// sectionLen is the number of objects of kind k in b.
func sectionLen(b *contract.Batch, k kind) int {
	switch k {
	case kindPod:
		return len(b.Pods)
	case kindNode:
		return len(b.Nodes)
	case kindReplicaSet:
		return len(b.ReplicaSets)
	case kindDeployment:
		return len(b.Deployments)
	case kindStatefulSet:
		return len(b.StatefulSets)
	case kindDaemonSet:
		return len(b.DaemonSets)
	case kindJob:
		return len(b.Jobs)
	case kindEvent:
		return len(b.Events)
	}
	return 0
}

// object is the i-th object of kind k in b (not for pods).
func object(b *contract.Batch, k kind, i int) protoObject {
	switch k {
	case kindNode:
		return b.Nodes[i]
	case kindReplicaSet:
		return b.ReplicaSets[i]
	case kindDeployment:
		return b.Deployments[i]
	case kindStatefulSet:
		return b.StatefulSets[i]
	case kindDaemonSet:
		return b.DaemonSets[i]
	case kindJob:
		return b.Jobs[i]
	case kindEvent:
		return b.Events[i]
	}
	return nil
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
	case kindReplicaSet:
		o := new(appsv1.ReplicaSet)
		err, b.ReplicaSets, obj = o.Unmarshal(enc), append(b.ReplicaSets, o), o
	case kindDeployment:
		o := new(appsv1.Deployment)
		err, b.Deployments, obj = o.Unmarshal(enc), append(b.Deployments, o), o
	case kindStatefulSet:
		o := new(appsv1.StatefulSet)
		err, b.StatefulSets, obj = o.Unmarshal(enc), append(b.StatefulSets, o), o
	case kindDaemonSet:
		o := new(appsv1.DaemonSet)
		err, b.DaemonSets, obj = o.Unmarshal(enc), append(b.DaemonSets, o), o
	case kindJob:
		o := new(batchv1.Job)
		err, b.Jobs, obj = o.Unmarshal(enc), append(b.Jobs, o), o
	case kindEvent:
		o := new(corev1.Event)
		err, b.Events, obj = o.Unmarshal(enc), append(b.Events, o), o
	default:
		return nsName{}, errBadRecord
	}
	if err != nil {
		return nsName{}, fmt.Errorf("decoding a %s: %w", modelKinds[k], err)
	}
	return nsName{obj.GetNamespace(), obj.GetName()}, nil
}
