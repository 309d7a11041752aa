package recording

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"doomwatch/contract"
	"doomwatch/podrec"
)

// The records of a segment's stream (FORMAT.md): a batch, or a snapshot of every cluster's
// objects. Each is framed as uvarint length, type byte, body.
const (
	recBatch    = 'B'
	recSnapshot = 'S'
)

var errBadRecord = errors.New("malformed record")

// slot is what the writer keeps of one object: its latest version (which the next version is
// diffed against, and a snapshot writes), the id it has in the current segment, and when it was
// first seen, which orders a snapshot as the objects first came.
type slot struct {
	id  uint64
	seq uint64
	pod *podrec.Record
	obj protoObject
}

// clusterState is the latest version of every object of one cluster, by kind and key, and its
// latest health: what the writer needs to write a snapshot, and what each new version is diffed
// against.
type clusterState struct {
	objs   [numKinds]map[nsName]*slot
	next   [numKinds]uint64 // the next id of each kind in the segment
	health *contract.Health
	// others are the objects read as unstructured, by kind name (unstructured.go), and
	// otherKinds those kinds in the order first seen, which orders a snapshot.
	others     map[contract.Kind]*otherState
	otherKinds []contract.Kind
}

func newClusterState() *clusterState {
	var s clusterState
	for k := range s.objs {
		s.objs[k] = make(map[nsName]*slot)
	}
	return &s
}

// encoder turns batches into records, keeping every cluster's state.
type encoder struct {
	clusters []*clusterState
	seq      uint64
	pods     podEncoder
	diff     differ
	prev     []byte
	cur      []byte
	// last is the time of the last record written in the segment, which the next one's is
	// written against.
	last time.Time
	// noDiff: tuning.noDiff.
	noDiff bool
	// parts are the full parts of the batch record being built, in order, when it grew past
	// recordChunk; the last part is appendBatch's result.
	parts [][]byte
}

// recordChunk is the size past which a batch record is built in parts: an initial list of 10,000
// pods is a record of about 12 MB, which one growing buffer would take about 30 MB to build.
const recordChunk = 1 << 20

// spill moves dst to the parts once it is full, and returns the next part to build on.
func (e *encoder) spill(dst []byte) []byte {
	if len(dst) < recordChunk {
		return dst
	}
	e.parts = append(e.parts, dst)
	return make([]byte, 0, recordChunk+recordChunk/4)
}

// takeParts hands over the full parts of the last batch record, to be written before its last part.
func (e *encoder) takeParts() [][]byte {
	p := e.parts
	e.parts = nil
	return p
}

func newEncoder(clusters int) *encoder {
	e := &encoder{clusters: make([]*clusterState, clusters)}
	for i := range e.clusters {
		e.clusters[i] = newClusterState()
	}
	return e
}

func (e *encoder) marshal(dst []byte, s *slot) []byte {
	if s.pod != nil {
		return e.pods.appendPod(dst, s.pod)
	}
	return appendProto(dst, s.obj)
}

// appendBatch appends b's record, at, to dst and applies b to the cluster's state. An object the
// recording cannot hold (groupOthers) is left out of both, and the error names it; the rest of the
// batch is recorded all the same.
func (e *encoder) appendBatch(dst []byte, at time.Time, b *contract.Batch) ([]byte, error) {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0, 0, recBatch) // the length, written at the end
	dst = binary.AppendVarint(dst, at.Sub(e.last).Nanoseconds())
	e.last = at
	dst, err := e.appendBody(dst, b)
	if len(e.parts) == 0 {
		return finishRecord(dst, start), err
	}
	// The length goes into the first part, the record's start.
	first := e.parts[0]
	body := len(first) - start - 5 + len(dst)
	for _, p := range e.parts[1:] {
		body += len(p)
	}
	e.parts[0] = finishRecordLen(first, start, body)
	return dst, err
}

// finishRecord writes the length of the record that starts at start, whose five bytes are kept
// for it, and closes the gap its varint leaves.
func finishRecord(dst []byte, start int) []byte { return finishRecordLen(dst, start, len(dst)-start-5) }

// finishRecordLen is finishRecord of a record of body bytes after its five, which may go on past
// dst.
func finishRecordLen(dst []byte, start, body int) []byte {
	var l [binary.MaxVarintLen32]byte
	n := binary.PutUvarint(l[:], uint64(body))
	copy(dst[start+5-n:], l[:n])
	return append(dst[:start], dst[start+5-n:]...)
}

func (e *encoder) appendBody(dst []byte, b *contract.Batch) ([]byte, error) {
	cs := e.clusters[b.Cluster]
	groups, err := groupOthers(b)
	dst = binary.AppendUvarint(dst, uint64(b.Cluster))
	// Deletes first, as the model applies them before the pods: an object deleted and made again
	// within one batch gets a new id.
	deletes := len(b.Deletes)
	for _, d := range b.Deletes {
		// A kind name a reader would refuse, and with it the rest of the segment.
		if kindOf(d.Kind) == kindOther && !validKind(string(d.Kind)) {
			err = errors.Join(err, fmt.Errorf("leaving out the delete of %s/%s: kind %q is not a kind name", d.Namespace, d.Name, d.Kind))
			deletes--
		}
	}
	dst = binary.AppendUvarint(dst, uint64(deletes))
	for _, d := range b.Deletes {
		dst = e.spill(dst)
		k := kindOf(d.Kind)
		key := nsName{d.Namespace, d.Name}
		if k != kindOther {
			if s, ok := cs.objs[k][key]; ok {
				delete(cs.objs[k], key)
				dst = append(dst, byte(k))
				dst = binary.AppendUvarint(dst, s.id+1)
				continue
			}
		}
		// An object read as unstructured, of any kind: by its id among its kind name's.
		if id, ok := cs.deleteOther(d.Kind, key); ok {
			dst = append(dst, byte(kindOther))
			dst = binary.AppendUvarint(dst, id+1)
			dst = appendString(dst, string(d.Kind))
			continue
		}
		if k == kindOther && !validKind(string(d.Kind)) {
			continue // left out, above
		}
		// An object the recording never held: by its name.
		dst = append(dst, byte(k))
		dst = append(dst, 0)
		if k == kindOther {
			dst = appendString(dst, string(d.Kind))
		}
		dst = appendString(dst, d.Namespace)
		dst = appendString(dst, d.Name)
	}
	dst = binary.AppendUvarint(dst, uint64(len(b.Pods)))
	for _, p := range b.Pods {
		key := nsName{p.GetNamespace(), p.GetName()}
		dst = e.spill(e.appendObject(dst, cs, kindPod, key, slot{pod: p}))
	}
	secs := sections(b)
	for k := kindPod + 1; k < numKinds; k++ {
		dst = binary.AppendUvarint(dst, uint64(len(secs[k])))
		for _, o := range secs[k] {
			key := nsName{o.GetNamespace(), o.GetName()}
			dst = e.spill(e.appendObject(dst, cs, k, key, slot{obj: o}))
		}
	}
	if b.Health != nil {
		h := *b.Health
		cs.health = &h
		dst = appendHealth(append(dst, 1), &h)
	} else {
		dst = append(dst, 0)
	}
	return e.appendOthers(dst, cs, groups), err
}

// appendObject writes one object's entry: uvarint id<<1|diff, then the diff against the
// object's previous version in the segment, or its whole encoding, length-prefixed, when the
// segment has none.
func (e *encoder) appendObject(dst []byte, cs *clusterState, k kind, key nsName, s slot) []byte {
	old, ok := cs.objs[k][key]
	if ok && e.noDiff {
		old.pod, old.obj = s.pod, s.obj
		dst = binary.AppendUvarint(dst, old.id<<1)
		e.cur = e.marshal(e.cur[:0], old)
		return appendBytes(dst, e.cur)
	}
	if !ok {
		old = &slot{id: cs.next[k], seq: e.seq}
		cs.next[k]++
		e.seq++
		cs.objs[k][key] = old
		old.pod, old.obj = s.pod, s.obj
		dst = binary.AppendUvarint(dst, old.id<<1)
		e.cur = e.marshal(e.cur[:0], old)
		return appendBytes(dst, e.cur)
	}
	e.prev = e.marshal(e.prev[:0], old)
	old.pod, old.obj = s.pod, s.obj
	e.cur = e.marshal(e.cur[:0], old)
	dst = binary.AppendUvarint(dst, old.id<<1|1)
	return e.diff.appendDiff(dst, e.prev, e.cur)
}

// snapshotChunk is how much of a snapshot record is built before it is handed on: a snapshot of
// 10,000 pods and their events is about 12 MB before compression, which in one buffer would stay
// live between snapshots or be allocated afresh each minute.
const snapshotChunk = 256 << 10

// writeSnapshot hands out, in chunks of about snapshotChunk, a snapshot record of every cluster's
// state at at, and numbers the objects afresh for the segment it starts. The record's length comes
// first, so the objects are marshalled twice: once to measure the record, once to hand it on.
// buf is the chunks' buffer, returned for reuse.
func (e *encoder) writeSnapshot(at time.Time, buf []byte, out func([]byte) error) ([]byte, error) {
	e.last = at
	// In the order the objects were first seen, so that a model fed the snapshot numbers its pods
	// (the views' last tie-break) as the live one did.
	order := make([][numKinds][]*slot, len(e.clusters))
	others := make([][]sgroup, len(e.clusters))
	for c, cs := range e.clusters {
		others[c] = cs.snapshotOthers()
		for k := range numKinds {
			slots := make([]*slot, 0, len(cs.objs[k]))
			for _, s := range cs.objs[k] {
				slots = append(slots, s)
			}
			slices.SortFunc(slots, func(a, b *slot) int { return cmp.Compare(a.seq, b.seq) })
			for id, s := range slots {
				s.id = uint64(id)
			}
			cs.next[k] = uint64(len(slots))
			order[c][k] = slots
		}
	}
	body := func(dst []byte, emit func([]byte) error) ([]byte, error) {
		dst = binary.AppendUvarint(dst, uint64(len(e.clusters)))
		for c, cs := range e.clusters {
			dst = binary.AppendUvarint(dst, uint64(c))
			dst = append(dst, 0) // no deletes
			for k := range numKinds {
				dst = binary.AppendUvarint(dst, uint64(len(order[c][k])))
				for _, s := range order[c][k] {
					dst = binary.AppendUvarint(dst, s.id<<1)
					e.cur = e.marshal(e.cur[:0], s)
					dst = appendBytes(dst, e.cur)
					if len(dst) >= snapshotChunk {
						if err := emit(dst); err != nil {
							return dst, err
						}
						dst = dst[:0]
					}
				}
			}
			if cs.health != nil {
				dst = appendHealth(append(dst, 1), cs.health)
			} else {
				dst = append(dst, 0)
			}
			dst = binary.AppendUvarint(dst, uint64(len(others[c])))
			for _, g := range others[c] {
				dst = appendString(dst, string(g.kind))
				dst = appendString(dst, g.apiVersion)
				dst = binary.AppendUvarint(dst, uint64(len(g.slots)))
				for _, s := range g.slots {
					dst = binary.AppendUvarint(dst, s.id<<1)
					dst = appendBytes(dst, s.enc)
					if len(dst) >= snapshotChunk {
						if err := emit(dst); err != nil {
							return dst, err
						}
						dst = dst[:0]
					}
				}
			}
		}
		return dst, emit(dst)
	}
	n := 1 // the record's type
	buf, _ = body(buf[:0], func(p []byte) error { n += len(p); return nil })
	head := binary.AppendUvarint(buf[:0], uint64(n))
	if err := out(append(head, recSnapshot)); err != nil {
		return buf, err
	}
	return body(buf[:0], out)
}

func appendHealth(dst []byte, h *contract.Health) []byte {
	dst = appendBool(dst, h.Synced)
	dst = binary.AppendUvarint(dst, uint64(h.PodsSeen))
	dst = binary.AppendUvarint(dst, uint64(h.PodsTotal))
	dst = appendTime(dst, h.LastEvent)
	dst = appendString(dst, h.WatchError)
	dst = binary.AppendUvarint(dst, uint64(len(h.Forbidden)))
	for _, k := range h.Forbidden {
		dst = appendString(dst, string(k))
	}
	dst = appendString(dst, h.Unreachable)
	return appendTime(dst, h.UnreachableSince)
}

func readHealth(d *decoder) *contract.Health {
	h := &contract.Health{Synced: d.bool(), PodsSeen: int(d.uvarint()), PodsTotal: int(d.uvarint()),
		LastEvent: d.time(), WatchError: d.string()}
	for range d.count() {
		h.Forbidden = append(h.Forbidden, contract.Kind(d.string()))
	}
	h.Unreachable = d.string()
	h.UnreachableSince = d.time()
	return h
}
