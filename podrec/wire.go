package podrec

import "errors"

// The protobuf wire format as the API's generated code reads it: the Unmarshal methods and
// skipGenerated of k8s.io/api and k8s.io/apimachinery (core/v1 and meta/v1 generated.pb.go, made
// by gogo protobuf). PodFromProto must accept whatever that code accepts and read it the same way,
// and the generated code is laxer than the protobuf specification, and than a parser that follows
// it (google.golang.org/protobuf's protowire), in four ways:
//   - a varint is at most ten bytes, and the bits of the tenth past the 64th are dropped;
//   - a field's number is its tag shifted right by three, truncated to 32 bits;
//   - a group (a deprecated wire type no API field has) is skipped by counting its start and end
//     tags, whatever their field numbers;
//   - a map entry's key and value are read as length-delimited whatever their wire type, and may
//     run past the end of the entry, up to the end of the message that holds the map (mapEntry).

// wireType is a field's wire type, the low three bits of its tag.
type wireType uint8

const (
	wireVarint     wireType = 0
	wireFixed64    wireType = 1
	wireBytes      wireType = 2
	wireStartGroup wireType = 3
	wireEndGroup   wireType = 4
	wireFixed32    wireType = 5
)

// field is one field of a protobuf message: its number and wire type, and its value as a varint
// (u) or as bytes (b, for strings and embedded messages, never nil; nil for the other wire types).
// end is the offset just past it in the message.
type field struct {
	num int32
	typ wireType
	u   uint64
	b   []byte
	end int
}

var errMalformed = errors.New("malformed protobuf")

// varint reads the varint that b starts with: its value and length, 0 if b ends before it does or
// it runs past ten bytes.
func varint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < len(b) && i < 10; i++ {
		c := b[i]
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, i + 1
		}
	}
	return 0, 0
}

// lengthDelimited reads the length-prefixed bytes b starts with and their length with the prefix,
// 0 if they run past the end of b.
func lengthDelimited(b []byte) ([]byte, int) {
	l, n := varint(b)
	if n == 0 || l > uint64(len(b)-n) {
		return nil, 0
	}
	end := n + int(l)
	return b[n:end:end], end
}

// eachField calls fn for every field of message b, in order.
func eachField(b []byte, fn func(f field) error) error {
	for i := 0; i < len(b); {
		start := i
		tag, n := varint(b[i:])
		if n == 0 {
			return errMalformed
		}
		i += n
		f := field{num: int32(tag >> 3), typ: wireType(tag & 7)}
		if f.typ == wireEndGroup || f.num <= 0 {
			return errMalformed
		}
		switch f.typ {
		case wireVarint:
			f.u, n = varint(b[i:])
		case wireBytes:
			f.b, n = lengthDelimited(b[i:])
		default:
			n = skip(b[start:])
			i = start
		}
		if n == 0 {
			return errMalformed
		}
		i += n
		f.end = i
		if err := fn(f); err != nil {
			return err
		}
	}
	return nil
}

// skip is the length of the field b starts with, tag included, as skipGenerated measures it; 0 if
// it is malformed or runs past the end of b.
func skip(b []byte) int {
	depth := 0
	for i := 0; i < len(b); {
		tag, n := varint(b[i:])
		if n == 0 {
			return 0
		}
		i += n
		switch wireType(tag & 7) {
		case wireVarint:
			if _, n = varint(b[i:]); n == 0 {
				return 0
			}
			i += n
		case wireFixed64:
			i += 8
		case wireBytes:
			if _, n = lengthDelimited(b[i:]); n == 0 {
				return 0
			}
			i += n
		case wireStartGroup:
			depth++
		case wireEndGroup:
			if depth == 0 {
				return 0
			}
			depth--
		case wireFixed32:
			i += 4
		default:
			return 0
		}
		if depth == 0 {
			if i > len(b) {
				return 0
			}
			return i
		}
	}
	return 0
}

// mapEntry reads the key and value of the map<string, string> entry that is field f of message b
// (ObjectMeta's labels and annotations), as ObjectMeta.Unmarshal reads one: the key and value as
// length-delimited whatever their wire type, each bounded by the end of b rather than of the
// entry; any other field skipped within the entry; of a repeated key or value, the last.
func mapEntry(b []byte, f field) (k, v []byte, err error) {
	end := f.end
	for i := end - len(f.b); i < end; {
		start := i
		tag, n := varint(b[i:])
		if n == 0 {
			return nil, nil, errMalformed
		}
		i += n
		switch int32(tag >> 3) {
		case mapEntryKey:
			k, n = lengthDelimited(b[i:])
		case mapEntryValue:
			v, n = lengthDelimited(b[i:])
		default:
			if n = skip(b[start:]); n > end-start {
				n = 0
			}
			i = start
		}
		if n == 0 {
			return nil, nil, errMalformed
		}
		i += n
	}
	return k, v, nil
}
