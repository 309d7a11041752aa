package recording

import (
	"bytes"
	"encoding/binary"
	"errors"

	"google.golang.org/protobuf/encoding/protowire"
)

// An object's new version is stored as a structural diff against its previous version in the
// segment: the fields of its protobuf encoding that are the same as the previous version's are
// referred to, the ones that changed are written, and a changed field that is itself a message is
// diffed in turn, down to diffDepth levels (pod → status → container status → state → waiting).
// A pod whose kubelet wrote a new status keeps its metadata and spec byte for byte, and of its
// status only a container's state, its restart count and a condition or two change: the diff is
// those and a few bytes that say where they go. zstd then compresses what is left across the
// segment.
//
// The diff is of bytes, not of meaning: patching the previous encoding with it gives the new
// encoding exactly, whatever the fields hold, so a string that happens to parse as a message is
// diffed as one and still comes back byte for byte.

// diffDepth is how many levels of nested messages a diff descends into.
const diffDepth = 4

// The operations of a diff, each an uvarint of count<<2 | op: opSame keeps the next count fields
// of the previous version at the same places; opNested (count 1) diffs the field at the same place,
// a nested diff follows; opLiteral (count 1) is a new field, its encoding's length and the
// encoding follow; opCopy (count = the index of a field of the previous version) is a field that
// moved.
const (
	opSame = iota
	opNested
	opLiteral
	opCopy
)

var errBadDiff = errors.New("malformed diff")

// wireField is one field of a message's encoding: its number and wire type, and the field's whole
// encoding (tag included) and its value's (for a length-delimited field, the bytes inside).
type wireField struct {
	num   protowire.Number
	typ   protowire.Type
	raw   []byte
	value []byte
}

// fields splits b into its fields; ok is false when b is not a message's encoding.
func fields(b []byte, out []wireField) ([]wireField, bool) {
	out = out[:0]
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return out, false
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return out, false
		}
		f := wireField{num: num, typ: typ, raw: b[:n+m]}
		if typ == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(b[n:])
			f.value = v
		}
		out = append(out, f)
		b = b[n+m:]
	}
	return out, true
}

// differ holds the scratch space of diffs, one slice of fields per level.
type differ struct {
	prev, cur [diffDepth + 1][]wireField
}

// appendDiff appends to dst the diff that turns prev into cur. Both must be messages' encodings.
func (d *differ) appendDiff(dst, prev, cur []byte) []byte {
	out, ok := d.diff(dst, prev, cur, 0)
	if !ok {
		// Not messages after all: the whole of cur, as one literal "field".
		dst = binary.AppendUvarint(dst, 1)
		dst = binary.AppendUvarint(dst, opLiteral)
		dst = binary.AppendUvarint(dst, uint64(len(cur)))
		return append(dst, cur...)
	}
	return out
}

func (d *differ) diff(dst, prev, cur []byte, level int) ([]byte, bool) {
	var ok bool
	if d.prev[level], ok = fields(prev, d.prev[level]); !ok {
		return dst, false
	}
	if d.cur[level], ok = fields(cur, d.cur[level]); !ok {
		return dst, false
	}
	p, c := d.prev[level], d.cur[level]
	dst = binary.AppendUvarint(dst, uint64(len(c)))
	same := 0
	flush := func() {
		if same > 0 {
			dst = binary.AppendUvarint(dst, uint64(same)<<2) // | opSame, which is 0
			same = 0
		}
	}
	for i := range c {
		if i < len(p) && bytes.Equal(p[i].raw, c[i].raw) {
			same++
			continue
		}
		flush()
		if i < len(p) && level < diffDepth && p[i].num == c[i].num && c[i].typ == protowire.BytesType &&
			p[i].typ == protowire.BytesType && len(c[i].value) > 8 &&
			// The patch writes the field's tag and length back canonically, so only a field
			// encoded canonically (as every protobuf encoder does) is diffed inside.
			len(c[i].raw) == protowire.SizeTag(c[i].num)+protowire.SizeBytes(len(c[i].value)) {
			mark := len(dst)
			dst = binary.AppendUvarint(dst, opNested)
			var ok bool
			if dst, ok = d.diff(dst, p[i].value, c[i].value, level+1); ok {
				// The nested diff reused the deeper levels' scratch; this level's is intact.
				continue
			}
			dst = dst[:mark]
		}
		if j := index(p, c[i].raw); j >= 0 {
			dst = binary.AppendUvarint(dst, uint64(j)<<2|opCopy)
			continue
		}
		dst = binary.AppendUvarint(dst, opLiteral)
		dst = binary.AppendUvarint(dst, uint64(len(c[i].raw)))
		dst = append(dst, c[i].raw...)
	}
	flush()
	return dst, true
}

func index(fs []wireField, raw []byte) int {
	for j := range fs {
		if bytes.Equal(fs[j].raw, raw) {
			return j
		}
	}
	return -1
}

// patcher applies diffs; it holds the scratch space of each level.
type patcher struct {
	prev [diffDepth + 1][]wireField
	buf  [diffDepth + 1][]byte
}

// appendPatch appends to dst prev patched by diff, and returns the rest of diff after it.
func (p *patcher) appendPatch(dst, prev, diff []byte) ([]byte, []byte, error) {
	return p.patch(dst, prev, diff, 0)
}

func (p *patcher) patch(dst, prev, diff []byte, level int) ([]byte, []byte, error) {
	if level > diffDepth {
		return dst, diff, errBadDiff
	}
	n, k := binary.Uvarint(diff)
	if k <= 0 {
		return dst, diff, errBadDiff
	}
	diff = diff[k:]
	pf, ok := fields(prev, p.prev[level])
	p.prev[level] = pf
	if !ok {
		pf = nil
	}
	for i := uint64(0); i < n; {
		v, k := binary.Uvarint(diff)
		if k <= 0 {
			return dst, diff, errBadDiff
		}
		diff = diff[k:]
		count := v >> 2
		switch v & 3 {
		case opSame:
			if count == 0 || i+count > n || i+count > uint64(len(pf)) {
				return dst, diff, errBadDiff
			}
			for j := i; j < i+count; j++ {
				dst = append(dst, pf[j].raw...)
			}
			i += count
		case opNested:
			if i >= uint64(len(pf)) || pf[i].typ != protowire.BytesType {
				return dst, diff, errBadDiff
			}
			f := pf[i]
			inner := p.buf[level+1][:0]
			var err error
			if inner, diff, err = p.patch(inner, f.value, diff, level+1); err != nil {
				return dst, diff, err
			}
			p.buf[level+1] = inner
			dst = protowire.AppendTag(dst, f.num, protowire.BytesType)
			dst = protowire.AppendBytes(dst, inner)
			i++
		case opLiteral:
			l, k := binary.Uvarint(diff)
			if k <= 0 || l > uint64(len(diff)-k) {
				return dst, diff, errBadDiff
			}
			dst = append(dst, diff[k:k+int(l)]...)
			diff = diff[k+int(l):]
			i++
		case opCopy:
			if count >= uint64(len(pf)) {
				return dst, diff, errBadDiff
			}
			dst = append(dst, pf[count].raw...)
			i++
		}
	}
	return dst, diff, nil
}
