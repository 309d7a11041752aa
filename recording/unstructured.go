package recording

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"doomwatch/contract"
)

// The objects kube reads through the dynamic client (*unstructured.Unstructured: Argo Rollouts,
// custom resources) are recorded in a part of the batch body of their own, after the numbered
// kinds' sections and the health, as JSON (FORMAT.md, "Version 2"). JSON because it is what they
// are: the dynamic client decodes the API server's JSON into maps, and there is no generated
// protobuf code for a custom resource (the API server serves custom resources as JSON and YAML
// only). A kind is recorded by its name, whether contract.Kinds has a row for it or not, so that a
// recording carries a kind this doomwatch does not know yet.

// maxKindName bounds a kind's name in a recording: the API server accepts a custom resource's kind
// only if, lower-cased, it is a DNS-1035 label, at most 63 characters of letters, digits and '-'
// (apiextensions-apiserver, ValidateCustomResourceDefinitionNames). The built-in kinds are such
// names too.
const maxKindName = 63

// maxAPIVersion bounds an apiVersion in a recording: a custom resource's group is a DNS-1123
// subdomain (253 characters) and its version a DNS-1035 label (63), joined by '/'
// (ValidateCustomResourceDefinitionSpec).
const maxAPIVersion = 253 + 1 + 63

// validKind says whether k can name a kind in a recording (maxKindName). The names come from the
// recording into contract.Kind and the screen: the character set rules out anything to sanitise.
func validKind(k string) bool {
	if k == "" || len(k) > maxKindName {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// uslot is what the writer keeps of one unstructured object: its id in the segment, when it was
// first seen (the snapshot's order, as slot's seq), its apiVersion and its JSON, which a snapshot
// writes again. Keeping the JSON rather than the object is smaller (a map of maps of interfaces
// is several times its JSON) and is what a diff against the previous version would need.
type uslot struct {
	id, seq    uint64
	apiVersion string
	enc        []byte
}

// otherState is one cluster's unstructured objects of one kind: ids are per kind name, as the
// numbered kinds have theirs.
type otherState struct {
	objs map[nsName]*uslot
	next uint64
}

// other is the state of kind k, made on its first object.
func (cs *clusterState) other(k contract.Kind) *otherState {
	st := cs.others[k]
	if st == nil {
		if cs.others == nil {
			cs.others = make(map[contract.Kind]*otherState)
		}
		st = &otherState{objs: make(map[nsName]*uslot)}
		cs.others[k] = st
		cs.otherKinds = append(cs.otherKinds, k)
	}
	return st
}

// ugroup is a batch's unstructured objects of one kind and apiVersion, in the batch's order: one
// group of the body's last part.
type ugroup struct {
	kind       contract.Kind
	apiVersion string
	objs       []uentry
}

type uentry struct {
	key nsName
	enc []byte
}

// groupOthers collects b's unstructured objects by kind and apiVersion, the groups in the order
// each first appears, each object with its JSON. An object the recording cannot hold (a kind name
// or apiVersion out of bounds, or no JSON encoding) is left out and named in the error.
func groupOthers(b *contract.Batch) ([]ugroup, error) {
	var groups []ugroup
	var errs []error
	for _, o := range b.Workloads {
		u, ok := o.Obj.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		enc, err := marshalOther(o.Kind, u)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		av := u.GetAPIVersion()
		i := slices.IndexFunc(groups, func(g ugroup) bool { return g.kind == o.Kind && g.apiVersion == av })
		if i < 0 {
			i = len(groups)
			groups = append(groups, ugroup{kind: o.Kind, apiVersion: av})
		}
		groups[i].objs = append(groups[i].objs, uentry{key: nsName{u.GetNamespace(), u.GetName()}, enc: enc})
	}
	return groups, errors.Join(errs...)
}

// marshalOther is u's JSON as the recording holds it.
func marshalOther(k contract.Kind, u *unstructured.Unstructured) ([]byte, error) {
	switch {
	case !validKind(string(k)):
		return nil, fmt.Errorf("leaving out %s/%s: kind %q is not a kind name", u.GetNamespace(), u.GetName(), k)
	case len(u.GetAPIVersion()) > maxAPIVersion:
		return nil, fmt.Errorf("leaving out %s %s/%s: its apiVersion is longer than %d bytes", k, u.GetNamespace(), u.GetName(), maxAPIVersion)
	case u.Object == nil:
		return nil, fmt.Errorf("leaving out a %s: no object", k)
	}
	enc, err := u.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("leaving out %s %s/%s: %w", k, u.GetNamespace(), u.GetName(), err)
	}
	// json.Encoder ends its output with a newline, which is not the object.
	return bytes.TrimSuffix(enc, []byte("\n")), nil
}

// appendOthers writes the body's last part, groups, and applies them to the cluster's state. An
// entry is as a numbered kind's, uvarint id<<1 | d, with d = 0: the object whole, its JSON
// length-prefixed. A version of an object the segment knows is written whole too, under its id.
func (e *encoder) appendOthers(dst []byte, cs *clusterState, groups []ugroup) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(groups)))
	for _, g := range groups {
		dst = appendString(dst, string(g.kind))
		dst = appendString(dst, g.apiVersion)
		dst = binary.AppendUvarint(dst, uint64(len(g.objs)))
		st := cs.other(g.kind)
		for _, o := range g.objs {
			s, ok := st.objs[o.key]
			if !ok {
				s = &uslot{id: st.next, seq: e.seq}
				st.next++
				e.seq++
				st.objs[o.key] = s
			}
			s.apiVersion, s.enc = g.apiVersion, o.enc
			dst = binary.AppendUvarint(dst, s.id<<1)
			dst = e.spill(appendBytes(dst, o.enc))
		}
	}
	return dst
}

// deleteOther retires the unstructured object of kind k at key, and returns its id; false when the
// segment does not hold it.
func (cs *clusterState) deleteOther(k contract.Kind, key nsName) (uint64, bool) {
	st := cs.others[k]
	if st == nil {
		return 0, false
	}
	s, ok := st.objs[key]
	if !ok {
		return 0, false
	}
	delete(st.objs, key)
	return s.id, true
}

// sgroup is one group of a snapshot's last part.
type sgroup struct {
	kind       contract.Kind
	apiVersion string
	slots      []*uslot
}

// snapshotOthers orders the cluster's unstructured objects for a snapshot and numbers them afresh
// for the segment it starts: the kinds as first seen (a kind with no object left is forgotten),
// each kind's objects as first seen, in groups of consecutive objects of one apiVersion.
func (cs *clusterState) snapshotOthers() []sgroup {
	var out []sgroup
	kinds := cs.otherKinds[:0]
	for _, k := range cs.otherKinds {
		st := cs.others[k]
		if len(st.objs) == 0 {
			delete(cs.others, k)
			continue
		}
		kinds = append(kinds, k)
		slots := make([]*uslot, 0, len(st.objs))
		for _, s := range st.objs {
			slots = append(slots, s)
		}
		slices.SortFunc(slots, func(a, b *uslot) int { return cmp.Compare(a.seq, b.seq) })
		for id, s := range slots {
			s.id = uint64(id)
		}
		st.next = uint64(len(slots))
		for len(slots) > 0 {
			n := 1
			for n < len(slots) && slots[n].apiVersion == slots[0].apiVersion {
				n++
			}
			out = append(out, sgroup{kind: k, apiVersion: slots[0].apiVersion, slots: slots[:n]})
			slots = slots[n:]
		}
	}
	cs.otherKinds = kinds
	return out
}

// readOthers reads a version-2 body's last part into b: the objects of cluster c's kinds read as
// unstructured.
func (s *segmentDecoder) readOthers(d *decoder, b *contract.Batch, c int) error {
	for range d.count() {
		name, apiVersion := d.string(), d.string()
		if d.err != nil {
			return d.err
		}
		if !validKind(name) || len(apiVersion) > maxAPIVersion {
			return fmt.Errorf("kind %.64q, apiVersion of %d bytes: %w", name, len(apiVersion), errBadRecord)
		}
		k := contract.Kind(name)
		if s.others[c] == nil {
			s.others[c] = make(map[contract.Kind][]known)
		}
		ids := s.others[c][k]
		for range d.count() {
			v := d.uvarint()
			enc := d.bytes()
			if d.err != nil {
				return d.err
			}
			// Ids are handed out in order: a new object's is the next one. Only whole entries
			// are written so far: a diff (d = 1) is for a later version.
			id := v >> 1
			if v&1 != 0 || id > uint64(len(ids)) {
				return errBadRecord
			}
			u, err := decodeOther(enc, apiVersion)
			if err != nil {
				return fmt.Errorf("decoding a %s: %w", name, err)
			}
			if id == uint64(len(ids)) {
				ids = append(ids, known{})
			}
			ids[id] = known{key: nsName{u.GetNamespace(), u.GetName()}, ok: true}
			b.Workloads = append(b.Workloads, contract.Object{Kind: k, Obj: u})
		}
		s.others[c][k] = ids
	}
	return d.err
}

// decodeOther decodes an unstructured object's JSON as the dynamic client does: with
// k8s.io/apimachinery's json, which keeps integers int64 (encoding/json would make every number a
// float64, and unstructured.NestedInt64, which reads a status's counts, would not find them) and
// keys case-sensitive. It is what Unstructured.UnmarshalJSON does (unstructuredJSONScheme's
// decodeToUnstructured), without its demand for a kind field: the recording gives back the object
// it was given, whatever the informer's transform left of it.
func decodeOther(enc []byte, apiVersion string) (*unstructured.Unstructured, error) {
	var m map[string]any
	if err := utiljson.Unmarshal(enc, &m); err != nil {
		return nil, fmt.Errorf("%w: %w", errBadRecord, err)
	}
	if m == nil { // JSON's null: not an object
		return nil, errBadRecord
	}
	u := &unstructured.Unstructured{Object: m}
	if u.GetAPIVersion() != apiVersion {
		return nil, fmt.Errorf("a %q object in a group of %q: %w", u.GetAPIVersion(), apiVersion, errBadRecord)
	}
	return u, nil
}
