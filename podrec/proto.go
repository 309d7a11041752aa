package podrec

import (
	"encoding/binary"
	"fmt"
	"time"

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
// The field numbers are the API's protobuf schema (proto_fields.go). The parts a template
// repeats (containers, readiness gates, owner references) are looked up by their encoded bytes,
// and decoded with the generated code only the first time they are seen.
//
// A message that arrives more than once is merged, as protobuf defines it and the generated code
// does it: each occurrence's fields are read into the same message, a repeated field's elements
// appended, any other field's last value kept. So every part of the decoder reads its message's
// occurrences into one set of fields and makes its part of the record once all are read.
func (in *Interner) PodFromProto(b []byte) (*Record, error) {
	r := &Record{}
	var meta metaFields
	var spec specFields
	// The status is read after the spec is shared: both build their keys in in.key.
	err := eachField(b, func(f field) error {
		switch f.num {
		case podMetadata:
			return in.protoMeta(r, &meta, f.b)
		case podSpec:
			return spec.read(in, r, f.b)
		}
		return nil
	})
	if err == nil {
		err = meta.finish(in, r)
	}
	if err != nil {
		return nil, fmt.Errorf("decoding pod: %w", err)
	}
	if r.spec, err = spec.shared(in); err != nil {
		return nil, fmt.Errorf("decoding pod %s/%s spec: %w", r.namespace, r.name, err)
	}
	var status statusFields
	err = eachField(b, func(f field) error {
		if f.num == podStatus {
			return in.protoStatus(r, &status, f.b)
		}
		return nil
	})
	if err == nil {
		err = in.finishStatus(r, &status)
	}
	if err != nil {
		return nil, fmt.Errorf("decoding pod %s/%s status: %w", r.namespace, r.name, err)
	}
	return r, nil
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

// protoTime reads a meta/v1 Time message as metav1.Time.Unmarshal reads it: an empty one is the
// zero time (the generated code writes the zero time as an empty message), any other the time of
// its seconds, even the epoch. The nanoseconds are dropped, as Unmarshal drops them and Marshal
// never writes them (apimachinery pkg/apis/meta/v1/time_proto.go), so the field is not read.
func protoTime(b []byte) (Stamp, error) {
	if len(b) == 0 {
		return 0, nil
	}
	var sec int64
	err := eachField(b, func(f field) error {
		if f.num == timeSeconds {
			sec = int64(f.u)
		}
		return nil
	})
	return stampOf(time.Unix(sec, 0)), err
}

// metaFields collects what ObjectMeta's occurrences say of the record's owners and revision.
type metaFields struct {
	owners           []byte // the encoded references, each length-prefixed: the key they are shared by
	hash, generation []byte // the revision labels' values
}

// protoMeta reads ObjectMeta: name, namespace, uid, resourceVersion, generation,
// creationTimestamp, deletionTimestamp, the kept labels and annotations, and ownerReferences.
func (in *Interner) protoMeta(r *Record, m *metaFields, b []byte) error {
	return eachField(b, func(f field) error {
		var err error
		switch f.num {
		case objectMetaName:
			r.name = string(f.b)
		case objectMetaNamespace:
			r.namespace = in.bytesString(f.b)
		case objectMetaUID:
			r.uid = string(f.b)
		case objectMetaResourceVersion:
			r.resourceVersion = string(f.b)
		case objectMetaGeneration:
			r.generation = int64(f.u)
		case objectMetaCreationTimestamp:
			r.created, err = protoTime(f.b)
		case objectMetaDeletionTimestamp:
			r.deleted, err = protoTime(f.b)
			r.deleting = true
		case objectMetaLabels:
			var k, v []byte
			if k, v, err = mapEntry(b, f); err == nil {
				m.label(k, v)
			}
		case objectMetaAnnotations:
			var k, v []byte
			if k, v, err = mapEntry(b, f); err == nil {
				r.annotation(k, v)
			}
		case objectMetaOwnerReferences:
			m.owners = appendBytes(m.owners, f.b)
		}
		return err
	})
}

// finish makes the record's owners and revision once every occurrence of ObjectMeta is read.
func (m *metaFields) finish(in *Interner, r *Record) error {
	if m.owners != nil {
		var err error
		if r.owners, err = in.ownersOf(m.owners); err != nil {
			return err
		}
	}
	if m.hash != nil || m.generation != nil {
		// The owners decide which label is the pod's revision, so it is picked once all are read.
		if rev := revisionOf(r.owners, string(m.hash), string(m.generation)); rev != "" {
			r.revision = in.String(rev)
		}
	}
	return nil
}

// label notes one label if it is one of the revision labels.
func (m *metaFields) label(k, v []byte) {
	switch string(k) {
	case revisionHashLabel:
		m.hash = v
	case templateGenerationLabel:
		m.generation = v
	}
}

// annotation keeps one annotation if it is one a record keeps.
func (r *Record) annotation(k, v []byte) {
	for _, key := range keptAnnotations {
		if string(k) == key {
			if r.annotations == nil {
				r.annotations = make(map[string]string, 2)
			}
			r.annotations[key] = string(v)
		}
	}
}

// appendBytes appends b to buf, length-prefixed as the wire format writes it.
func appendBytes(buf, b []byte) []byte {
	return append(binary.AppendUvarint(buf, uint64(len(b))), b...)
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
		m, n := lengthDelimited(rest)
		if n == 0 {
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

// specFields collects what a record keeps of PodSpec: containers, restartPolicy, nodeName,
// initContainers and readinessGates. All but the node are the shared spec, looked up by their
// encoding (key).
type specFields struct {
	key              []byte
	init, containers [][]byte
	gates            [][]byte
	restartPolicy    []byte
	seen             bool
}

func (s *specFields) read(in *Interner, r *Record, b []byte) error {
	if in != nil && !s.seen {
		s.key = in.key[:0]
	}
	s.seen = true
	err := eachField(b, func(f field) error {
		switch f.num {
		case podSpecContainers, podSpecInitContainers:
			s.key = appendKept(binary.AppendUvarint(s.key, uint64(f.num)), f.b)
			if f.num == podSpecContainers {
				s.containers = append(s.containers, f.b)
			} else {
				s.init = append(s.init, f.b)
			}
		case podSpecRestartPolicy, podSpecReadinessGates:
			s.key = appendBytes(binary.AppendUvarint(s.key, uint64(f.num)), f.b)
			if f.num == podSpecRestartPolicy {
				s.restartPolicy = f.b
			} else {
				s.gates = append(s.gates, f.b)
			}
		case podSpecNodeName:
			r.node = in.bytesString(f.b)
		}
		return nil
	})
	if in != nil {
		in.key = s.key
	}
	return err
}

// appendKept appends to key, length-prefixed, the part of an encoded Container that the spec's
// key holds: the fields Interner.Containers keeps (name, image, restartPolicy, readinessProbe,
// startupProbe), each as it was sent, tag included, in the order sent, so that equal parts decode
// to equal kept fields. The rest of a container differs from pod to pod of one template: the API
// server's ServiceAccount admission mounts a volume of the pod's own, kube-api-access-<suffix>, in
// every container, and a key of the whole container never found a second pod (every pod's
// containers were decoded whole, and each key kept until the table turned over: tenfold the
// allocations of a pod, kube's BenchmarkFleetDecode). A container that cannot be read is keyed by
// its whole encoding.
func appendKept(key, b []byte) []byte {
	n := 0
	start := 0
	err := eachField(b, func(f field) error {
		if keptContainerField(f.num) {
			n += f.end - start
		}
		start = f.end
		return nil
	})
	if err != nil {
		return appendBytes(key, b)
	}
	key = binary.AppendUvarint(key, uint64(n))
	start = 0
	_ = eachField(b, func(f field) error {
		if keptContainerField(f.num) {
			key = append(key, b[start:f.end]...)
		}
		start = f.end
		return nil
	})
	return key
}

func keptContainerField(num int32) bool {
	switch num {
	case containerName, containerImage, containerRestartPolicy, containerReadinessProbe, containerStartupProbe:
		return true
	}
	return false
}

// shared returns the spec these fields describe, shared with every pod of the same template.
func (s *specFields) shared(in *Interner) (*specRecord, error) {
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

// statusFields collects the container statuses of PodStatus's occurrences.
type statusFields struct{ init, regular [][]byte }

// protoStatus reads PodStatus: phase, conditions, message, reason, containerStatuses and
// initContainerStatuses.
func (in *Interner) protoStatus(r *Record, st *statusFields, b []byte) error {
	return eachField(b, func(f field) error {
		var err error
		switch f.num {
		case podStatusPhase:
			r.phase = in.bytesString(f.b)
		case podStatusConditions:
			var c condition
			if c, err = in.protoCondition(f.b); err == nil {
				r.conds = append(r.conds, c)
			}
		case podStatusMessage:
			r.message = string(f.b)
		case podStatusReason:
			r.reason = in.bytesString(f.b)
		case podStatusContainerStatuses:
			st.regular = append(st.regular, f.b)
		case podStatusInitContainerStatuses:
			st.init = append(st.init, f.b)
		}
		return err
	})
}

// finishStatus reads the container statuses once every occurrence of PodStatus is read, into one
// allocation for both lists.
func (in *Interner) finishStatus(r *Record, st *statusFields) error {
	n, m := len(st.init), len(st.regular)
	if n+m == 0 {
		return nil
	}
	all := make([]ContainerStatus, n+m)
	var err error
	for i, b := range st.init {
		if all[i], err = in.protoContainerStatus(b); err != nil {
			return err
		}
	}
	for i, b := range st.regular {
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

// protoCondition reads a PodCondition: type, status, lastTransitionTime, reason and message; the
// text is shared.
func (in *Interner) protoCondition(b []byte) (condition, error) {
	var c condition
	var typ, status, at, reason, message []byte
	err := eachField(b, func(f field) error {
		if f.typ != wireBytes {
			return nil
		}
		switch f.num {
		case podConditionType:
			typ = f.b
		case podConditionStatus:
			status = f.b
		case podConditionLastTransitionTime:
			at = f.b
		case podConditionReason:
			reason = f.b
		case podConditionMessage:
			message = f.b
		}
		return nil
	})
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
		key = appendBytes(key, s)
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

// protoContainerStatus reads a ContainerStatus: name, state, lastState, ready, restartCount,
// image, imageID and started.
func (in *Interner) protoContainerStatus(b []byte) (ContainerStatus, error) {
	var s ContainerStatus
	var state, last stateFields
	err := eachField(b, func(f field) error {
		var err error
		switch f.num {
		case containerStatusName:
			s.name = in.bytesString(f.b)
		case containerStatusState:
			err = in.protoState(&state, f.b)
		case containerStatusLastState:
			err = in.protoState(&last, f.b)
		case containerStatusReady:
			s.ready = f.u != 0
		case containerStatusRestartCount:
			s.restarts = int32(f.u)
		case containerStatusImage:
			s.image = in.bytesString(f.b)
		case containerStatusImageID:
			s.imageID = in.bytesString(f.b)
		case containerStatusStarted:
			s.started = boolFalse
			if f.u != 0 {
				s.started = boolTrue
			}
		}
		return err
	})
	s.state, s.last = state.state(), last.state()
	return s, err
}

// stateFields collects a ContainerState's occurrences: each of waiting, running and terminated
// that any of them holds, merged.
type stateFields struct{ waiting, running, terminated ContainerState }

// state is the container state the fields describe: of several, the first of waiting, running and
// terminated, as Pod keeps it.
func (s *stateFields) state() ContainerState {
	switch {
	case s.waiting.kind != stateNone:
		return s.waiting
	case s.running.kind != stateNone:
		return s.running
	}
	return s.terminated
}

// protoState reads a ContainerState into s: waiting (reason, message), running (startedAt) or
// terminated (exitCode, signal, reason, message, startedAt, finishedAt).
func (in *Interner) protoState(s *stateFields, b []byte) error {
	return eachField(b, func(f field) error {
		if f.typ != wireBytes {
			return nil
		}
		switch f.num {
		case containerStateWaiting:
			st := &s.waiting
			st.kind = StateWaiting
			return eachField(f.b, func(f field) error {
				if f.typ != wireBytes {
					return nil
				}
				switch f.num {
				case waitingReason:
					st.reason = in.bytesString(f.b)
				case waitingMessage:
					st.message = string(f.b)
				}
				return nil
			})
		case containerStateRunning:
			st := &s.running
			st.kind = StateRunning
			return eachField(f.b, func(f field) error {
				var err error
				if f.num == runningStartedAt {
					st.started, err = protoTime(f.b)
				}
				return err
			})
		case containerStateTerminated:
			st := &s.terminated
			st.kind = StateTerminated
			return eachField(f.b, func(f field) error {
				var err error
				switch f.num {
				case terminatedExitCode:
					st.exitCode = int32(f.u)
				case terminatedSignal:
					st.signal = int32(f.u)
				case terminatedReason:
					st.reason = in.bytesString(f.b)
				case terminatedMessage:
					st.message = string(f.b)
				case terminatedStartedAt:
					st.started, err = protoTime(f.b)
				case terminatedFinishedAt:
					st.finished, err = protoTime(f.b)
				}
				return err
			})
		}
		return nil
	})
}
