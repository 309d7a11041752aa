package recording

import (
	"encoding/binary"
	"errors"
	"time"
)

// The primitives the records are written in: unsigned and zigzag varints, length-prefixed
// strings and times (FORMAT.md).

var errShort = errors.New("record ends early")

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

func appendBytes(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// appendTime writes the zero time as 0 and any other as 1 and its Unix nanoseconds, so that the
// zero time and the epoch stay apart.
func appendTime(dst []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(dst, 0)
	}
	return binary.AppendVarint(append(dst, 1), t.UnixNano())
}

func appendBool(dst []byte, b bool) []byte {
	if b {
		return append(dst, 1)
	}
	return append(dst, 0)
}

// decoder reads the primitives from b; the first error sticks and every read after it returns
// zero values.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errShort
	}
	d.b = nil
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a count of things that each take at least one byte, so that garbage cannot ask for
// a huge allocation.
func (d *decoder) count() int {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail()
		return 0
	}
	return int(n)
}

func (d *decoder) byte() byte {
	if len(d.b) == 0 {
		d.fail()
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) bytes() []byte {
	n := d.count()
	if d.err != nil {
		return nil
	}
	b := d.b[:n:n]
	d.b = d.b[n:]
	return b
}

func (d *decoder) string() string { return string(d.bytes()) }

func (d *decoder) bool() bool { return d.byte() != 0 }

func (d *decoder) time() time.Time {
	if d.byte() == 0 {
		return time.Time{}
	}
	return time.Unix(0, d.varint()).UTC()
}
