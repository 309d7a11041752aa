package recording

import (
	"bytes"
	"fmt"
	"time"

	"doomwatch/contract"
	"doomwatch/podrec"
)

// known is what a reader keeps of one object of the segment: its key, for a delete by id, and its
// latest encoding, which the next diff patches.
type known struct {
	key nsName
	enc []byte
	ok  bool
}

// segmentDecoder turns a segment's records back into batches. Its state is per segment: the
// objects by id, as the writer numbered them.
type segmentDecoder struct {
	// version is the segment's format version: a version-1 body ends at its health.
	version  uint16
	clusters [][numKinds][]known
	// others are each cluster's objects read as unstructured, by kind name (unstructured.go);
	// made on a cluster's first.
	others []map[contract.Kind][]known
	in     *podrec.Interner
	patch  patcher
	last   time.Time
}

func newSegmentDecoder(version uint16, clusters int, start time.Time, in *podrec.Interner) *segmentDecoder {
	return &segmentDecoder{version: version, clusters: make([][numKinds][]known, clusters),
		others: make([]map[contract.Kind][]known, clusters), in: in, last: start}
}

// record decodes one record: a batch, or a snapshot's batches (one per cluster).
func (s *segmentDecoder) record(typ byte, body []byte) (at time.Time, out []contract.Batch, err error) {
	d := decoder{b: body}
	switch typ {
	case recBatch:
		s.last = s.last.Add(time.Duration(d.varint()))
		var b contract.Batch
		if err := s.body(&d, &b); err != nil {
			return s.last, nil, err
		}
		return s.last, []contract.Batch{b}, nil
	case recSnapshot:
		n := d.count()
		out := make([]contract.Batch, 0, n)
		for range n {
			var b contract.Batch
			if err := s.body(&d, &b); err != nil {
				return s.last, nil, err
			}
			out = append(out, b)
		}
		return s.last, out, nil
	}
	return s.last, nil, fmt.Errorf("record type %q: %w", typ, errBadRecord)
}

func (s *segmentDecoder) body(d *decoder, b *contract.Batch) error {
	c := d.uvarint()
	if d.err != nil || c >= uint64(len(s.clusters)) {
		return errBadRecord
	}
	b.Cluster = int(c)
	objs := &s.clusters[c]
	for range d.count() {
		k := kind(d.byte())
		id := d.uvarint()
		if id > 0 && k == kindOther && s.version >= 2 {
			// An object read as unstructured, by its id among its kind name's.
			name := d.string()
			ids := s.others[c][contract.Kind(name)]
			if d.err != nil || id-1 >= uint64(len(ids)) || !ids[id-1].ok {
				return errBadRecord
			}
			o := &ids[id-1]
			b.Deletes = append(b.Deletes, contract.Ref{Kind: contract.Kind(name), Namespace: o.key.ns, Name: o.key.name})
			*o = known{}
			continue
		}
		if id > 0 {
			if k >= numKinds || id-1 >= uint64(len(objs[k])) || !objs[k][id-1].ok {
				return errBadRecord
			}
			o := &objs[k][id-1]
			b.Deletes = append(b.Deletes, contract.Ref{Kind: modelKinds[k], Namespace: o.key.ns, Name: o.key.name})
			*o = known{}
			continue
		}
		var mk contract.Kind
		switch {
		case k == kindOther:
			if mk = contract.Kind(d.string()); !validKind(string(mk)) {
				return errBadRecord
			}
		case k < numKinds:
			mk = modelKinds[k]
		default:
			return errBadRecord
		}
		ns := d.string()
		b.Deletes = append(b.Deletes, contract.Ref{Kind: mk, Namespace: ns, Name: d.string()})
	}
	for k := range sectionsOf(s.version) {
		for range d.count() {
			v := d.uvarint()
			if d.err != nil {
				return d.err
			}
			id, isDiff := v>>1, v&1 == 1
			var enc []byte
			if isDiff {
				if id >= uint64(len(objs[k])) || !objs[k][id].ok {
					return errBadRecord
				}
				var err error
				if enc, d.b, err = s.patch.appendPatch(nil, objs[k][id].enc, d.b); err != nil {
					return err
				}
			} else {
				// Ids are handed out in order: a new object's is the next one.
				if id > uint64(len(objs[k])) {
					return errBadRecord
				}
				// The record's buffer is reused for the next record.
				enc = bytes.Clone(d.bytes())
			}
			if d.err != nil {
				return d.err
			}
			key, err := appendObject(b, k, enc, s.in)
			if err != nil {
				return err
			}
			if id == uint64(len(objs[k])) {
				objs[k] = append(objs[k], known{})
			}
			objs[k][id] = known{key: key, enc: enc, ok: true}
		}
	}
	if d.byte() == 1 {
		b.Health = readHealth(d)
	}
	if d.err == nil && s.version >= 2 {
		return s.readOthers(d, b, int(c))
	}
	return d.err
}
