package podrec

import (
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodFromProto makes the record of a pod straight from its protobuf encoding (a v1.Pod message, the
// runtime envelope already taken off), as Pod makes it from the decoded pod: the same fields, the
// same sharing. It reads only what a record keeps and skips the rest unparsed, so the pod's
// managedFields, volumes, env, resources and the rest of its spec are never decoded into Go
// values: decoding a realistic pod into a corev1.Pod costs about 50 allocations, most of them
// garbage the moment the transform has trimmed it, and most of the informer's CPU and memory
// churn with them. kube's pod informer decodes with it (kube/podcodec.go).
//
// The field numbers are the API's protobuf schema (k8s.io/api core/v1 generated.proto and
// k8s.io/apimachinery meta/v1 generated.proto), which Kubernetes never renumbers: a field's
// number is part of the wire compatibility every client relies on. The parts a template
// repeats (containers, readiness gates, owner references) are looked up by their encoded bytes,
// and decoded with the generated code only the first time they are seen.
func (in *Interner) PodFromProto(b []byte) (*Record, error) {
	r := &Record{}
	var spec specFields
	var status []byte
	err := eachField(b, func(f field) error {
		switch f.num {
		case 1:
			return in.protoMeta(r, f.b)
		case 2:
			return spec.read(in, r, f.b)
		case 3:
			status = f.b
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("decoding pod: %w", err)
	}
	if r.spec, err = spec.shared(in); err != nil {
		return nil, fmt.Errorf("decoding pod %s/%s spec: %w", r.namespace, r.name, err)
	}
	if status != nil {
		if err := in.protoStatus(r, status); err != nil {
			return nil, fmt.Errorf("decoding pod %s/%s status: %w", r.namespace, r.name, err)
		}
	}
	return r, nil
}

// field is one field of a protobuf message: its number, and its value as a varint (u) or as bytes
// (b, for strings and embedded messages; nil for other wire types).
type field struct {
	num protowire.Number
	u   uint64
	b   []byte
	typ protowire.Type
}

var errMalformed = errors.New("malformed protobuf")

// eachField calls fn for every field of message b, in order.
func eachField(b []byte, fn func(f field) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return errMalformed
		}
		b = b[n:]
		f := field{num: num, typ: typ}
		switch typ {
		case protowire.VarintType:
			f.u, n = protowire.ConsumeVarint(b)
		case protowire.BytesType:
			f.b, n = protowire.ConsumeBytes(b)
			if f.b == nil {
				f.b = []byte{}
			}
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return errMalformed
		}
		b = b[n:]
		if err := fn(f); err != nil {
			return err
		}
	}
	return nil
}

// byNumber sets *into[n-1] to the bytes of field n of message b, for n from 1 to len(into) (a nil
// pointer skips its field; of a repeated field the last is kept).
func byNumber(b []byte, into ...*[]byte) error {
	return eachField(b, func(f field) error {
		if f.typ == protowire.BytesType && f.num >= 1 && int(f.num) <= len(into) && into[f.num-1] != nil {
			*into[f.num-1] = f.b
		}
		return nil
	})
}

// bytesString is b as a shared string (no allocation when it is already in the table).
func (in *Interner) bytesString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if in == nil {
		return string(b)
	}
	t := &in.strs
	if v, ok := t.cur[string(b)]; ok {
		return v
	}
	if v, ok := t.old[string(b)]; ok {
		t.put(v, v)
		return v
	}
	s := string(b)
	t.put(s, s)
	return s
}

// protoTime reads a meta/v1 Time message: seconds (1) and nanos (2). An empty one is the zero time,
// as metav1.Time.Unmarshal reads it (the generated code writes the zero time as an empty message);
// any other is a time, even the epoch.
func protoTime(b []byte) (Stamp, error) {
	if len(b) == 0 {
		return 0, nil
	}
	var sec int64
	var nsec int32
	err := eachField(b, func(f field) error {
		switch f.num {
		case 1:
			sec = int64(f.u)
		case 2:
			nsec = int32(f.u)
		}
		return nil
	})
	return stampOf(time.Unix(sec, int64(nsec))), err
}

// protoMeta reads ObjectMeta: name (1), namespace (3), uid (5), resourceVersion (6), generation
// (7), creationTimestamp (8), deletionTimestamp (9), labels (11, only the kept ones), annotations
// (12, only the kept ones) and
// ownerReferences (13).
func (in *Interner) protoMeta(r *Record, b []byte) error {
	var owners []byte // the encoded references, tags included: the key they are shared by
	var hash, generation []byte
	err := eachField(b, func(f field) error {
		var err error
		switch f.num {
		case 1:
			r.name = string(f.b)
		case 3:
			r.namespace = in.bytesString(f.b)
		case 5:
			r.uid = string(f.b)
		case 6:
			r.resourceVersion = string(f.b)
		case 7:
			r.generation = int64(f.u)
		case 8:
			r.created, err = protoTime(f.b)
		case 9:
			r.deleted, err = protoTime(f.b)
			r.deleting = true
		case 11:
			err = protoLabel(f.b, &hash, &generation)
		case 12:
			err = r.protoAnnotation(f.b)
		case 13:
			owners = protowire.AppendBytes(owners, f.b)
		}
		return err
	})
	if err != nil {
		return err
	}
	if owners != nil {
		if r.owners, err = in.ownersOf(owners); err != nil {
			return err
		}
	}
	if hash != nil || generation != nil {
		// The owners decide which label is the pod's revision; both came before them (11 < 13).
		if rev := revisionOf(r.owners, string(hash), string(generation)); rev != "" {
			r.revision = in.String(rev)
		}
	}
	return nil
}

// protoLabel reads one label map entry (key 1, value 2) into hash or generation if it is one of
// the revision labels.
func protoLabel(b []byte, hash, generation *[]byte) error {
	var k, v []byte
	if err := byNumber(b, &k, &v); err != nil {
		return err
	}
	switch string(k) {
	case revisionHashLabel:
		*hash = v
	case templateGenerationLabel:
		*generation = v
	}
	return nil
}

// protoAnnotation keeps one annotation map entry (key 1, value 2) if it is one a record keeps.
func (r *Record) protoAnnotation(b []byte) error {
	var k, v []byte
	if err := byNumber(b, &k, &v); err != nil {
		return err
	}
	for _, key := range keptAnnotations {
		if string(k) == key {
			if r.annotations == nil {
				r.annotations = make(map[string]string, 2)
			}
			r.annotations[key] = string(v)
		}
	}
	return nil
}

// ownersOf returns the owner references encoded in b (each one length-prefixed), shared with every
// pod whose references are encoded the same.
func (in *Interner) ownersOf(b []byte) ([]metav1.OwnerReference, error) {
	if in != nil {
		if v, ok := in.ownersRaw.lookup(b); ok {
			return v, nil
		}
	}
	var refs []metav1.OwnerReference
	for rest := b; len(rest) > 0; {
		m, n := protowire.ConsumeBytes(rest)
		if n < 0 {
			return nil, errMalformed
		}
		rest = rest[n:]
		var ref metav1.OwnerReference
		if err := ref.Unmarshal(m); err != nil {
			return nil, err
		}
		ref.Controller, ref.BlockOwnerDeletion = sharedBool(ref.Controller), sharedBool(ref.BlockOwnerDeletion)
		refs = append(refs, ref)
	}
	refs = in.Owners(refs)
	if in != nil {
		in.ownersRaw.put(string(b), refs)
	}
	return refs, nil
}

// specFields collects what a record keeps of PodSpec: containers (2), restartPolicy (3), nodeName
// (10), initContainers (20) and readinessGates (28). All but the node are the shared spec, looked
// up by their encoding (key).
type specFields struct {
	key              []byte
	init, containers [][]byte
	gates            [][]byte
	restartPolicy    []byte
	seen             bool
}

func (s *specFields) read(in *Interner, r *Record, b []byte) error {
	s.seen = true
	if in != nil {
		s.key = in.key[:0]
	}
	err := eachField(b, func(f field) error {
		switch f.num {
		case 2, 3, 20, 28:
			s.key = protowire.AppendTag(s.key, f.num, protowire.BytesType)
			s.key = protowire.AppendBytes(s.key, f.b)
			switch f.num {
			case 2:
				s.containers = append(s.containers, f.b)
			case 3:
				s.restartPolicy = f.b
			case 20:
				s.init = append(s.init, f.b)
			case 28:
				s.gates = append(s.gates, f.b)
			}
		case 10:
			r.node = in.bytesString(f.b)
		}
		return nil
	})
	if in != nil {
		in.key = s.key
	}
	return err
}

// shared returns the spec these fields describe, shared with every pod of the same template.
func (s *specFields) shared(in *Interner) (*podSpec, error) {
	if in != nil && s.seen {
		if sp, ok := in.specsRaw.lookup(s.key); ok {
			return sp, nil
		}
	}
	decode := func(list [][]byte) ([]corev1.Container, error) {
		if list == nil {
			return nil, nil
		}
		out := make([]corev1.Container, len(list))
		for i, b := range list {
			if err := out[i].Unmarshal(b); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	var ps corev1.PodSpec
	var err error
	if ps.InitContainers, err = decode(s.init); err != nil {
		return nil, err
	}
	if ps.Containers, err = decode(s.containers); err != nil {
		return nil, err
	}
	ps.RestartPolicy = corev1.RestartPolicy(s.restartPolicy)
	for _, b := range s.gates {
		var g corev1.PodReadinessGate
		if err := g.Unmarshal(b); err != nil {
			return nil, err
		}
		ps.ReadinessGates = append(ps.ReadinessGates, g)
	}
	key := string(s.key) // before in.spec, which reuses the buffer s.key is in
	sp := in.spec(&ps)
	if in != nil && s.seen {
		in.specsRaw.put(key, sp)
	}
	return sp, nil
}

// protoStatus reads PodStatus: phase (1), conditions (2), message (3), reason (4), containerStatuses
// (8) and initContainerStatuses (10).
func (in *Interner) protoStatus(r *Record, b []byte) error {
	var init, regular [][]byte
	err := eachField(b, func(f field) error {
		var err error
		switch f.num {
		case 1:
			r.phase = in.bytesString(f.b)
		case 2:
			var c condition
			if c, err = in.protoCondition(f.b); err == nil {
				r.conds = append(r.conds, c)
			}
		case 3:
			r.message = string(f.b)
		case 4:
			r.reason = in.bytesString(f.b)
		case 8:
			regular = append(regular, f.b)
		case 10:
			init = append(init, f.b)
		}
		return err
	})
	if err != nil {
		return err
	}
	n, m := len(init), len(regular)
	if n+m == 0 {
		return nil
	}
	all := make([]ContainerStatus, n+m)
	for i, b := range init {
		if all[i], err = in.protoContainerStatus(b); err != nil {
			return err
		}
	}
	for i, b := range regular {
		if all[n+i], err = in.protoContainerStatus(b); err != nil {
			return err
		}
	}
	if n > 0 {
		r.init = all[:n:n]
	}
	if m > 0 {
		r.statuses = all[n:]
	}
	return nil
}

// protoCondition reads a PodCondition: type (1), status (2), lastTransitionTime (4), reason (5)
// and message (6); the text is shared.
func (in *Interner) protoCondition(b []byte) (condition, error) {
	var c condition
	var typ, status, at, reason, message []byte
	err := byNumber(b, &typ, &status, nil, &at, &reason, &message)
	if err == nil {
		c.at, err = protoTime(at)
	}
	if err != nil {
		return c, err
	}
	if in == nil {
		pc := corev1.PodCondition{Type: corev1.PodConditionType(typ), Status: corev1.ConditionStatus(status),
			Reason: string(reason), Message: string(message)}
		c.text = in.condition(&pc)
		return c, nil
	}
	key := in.key[:0]
	for _, s := range [...][]byte{typ, status, reason, message} {
		key = protowire.AppendBytes(key, s)
	}
	in.key = key
	if t, ok := in.conds.lookup(key); ok {
		c.text = t
		return c, nil
	}
	t := &condText{typ: corev1.PodConditionType(in.bytesString(typ)), status: corev1.ConditionStatus(in.bytesString(status)),
		reason: in.bytesString(reason), message: in.bytesString(message)}
	in.conds.put(string(key), t)
	c.text = t
	return c, nil
}

// protoContainerStatus reads a ContainerStatus: name (1), state (2), lastState (3), ready (4),
// restartCount (5), image (6), imageID (7) and started (9).
func (in *Interner) protoContainerStatus(b []byte) (ContainerStatus, error) {
	var s ContainerStatus
	err := eachField(b, func(f field) error {
		var err error
		switch f.num {
		case 1:
			s.name = in.bytesString(f.b)
		case 2:
			s.state, err = in.protoState(f.b)
		case 3:
			s.last, err = in.protoState(f.b)
		case 4:
			s.ready = f.u != 0
		case 5:
			s.restarts = int32(f.u)
		case 6:
			s.image = in.bytesString(f.b)
		case 7:
			s.imageID = in.bytesString(f.b)
		case 9:
			s.started = boolFalse
			if f.u != 0 {
				s.started = boolTrue
			}
		}
		return err
	})
	return s, err
}

// protoState reads a ContainerState: waiting (1: reason 1, message 2), running (2: startedAt 1) or
// terminated (3: exitCode 1, signal 2, reason 3, message 4, startedAt 5, finishedAt 6). Of several,
// the first of waiting, running and terminated is kept, as Pod keeps it.
func (in *Interner) protoState(b []byte) (ContainerState, error) {
	var waiting, running, terminated []byte
	if err := byNumber(b, &waiting, &running, &terminated); err != nil {
		return ContainerState{}, err
	}
	var st ContainerState
	var err error
	switch {
	case waiting != nil:
		st.kind = StateWaiting
		var reason, message []byte
		err = byNumber(waiting, &reason, &message)
		st.reason, st.message = in.bytesString(reason), string(message)
	case running != nil:
		st.kind = StateRunning
		err = eachField(running, func(f field) error {
			var err error
			if f.num == 1 {
				st.started, err = protoTime(f.b)
			}
			return err
		})
	case terminated != nil:
		st.kind = StateTerminated
		err = eachField(terminated, func(f field) error {
			var err error
			switch f.num {
			case 1:
				st.exitCode = int32(f.u)
			case 2:
				st.signal = int32(f.u)
			case 3:
				st.reason = in.bytesString(f.b)
			case 4:
				st.message = string(f.b)
			case 5:
				st.started, err = protoTime(f.b)
			case 6:
				st.finished, err = protoTime(f.b)
			}
			return err
		})
	}
	return st, err
}
