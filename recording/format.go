package recording

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"time"
)

// The segment file (FORMAT.md): a header, then frames. The header is plain; the frames' payloads,
// concatenated, are one zstd stream, and that stream, decompressed, is the segment's records.

// magic opens every segment file.
const magic = "DOOMREC\n"

// version is the format's version, which the writer writes. A reader reads it and every version
// before it back to minVersion, and refuses any other. Version 2 added the objects read as
// unstructured (FORMAT.md, "Version 2"): a version-1 batch body is a version-2 one without them.
// Version 3 added the CronJobs' section, after the events'.
const (
	version    = 3
	minVersion = 1
)

// maxFrame bounds a frame's payload: a length above it is garbage, not a frame.
const maxFrame = 64 << 20

// window is the largest zstd window of a segment's stream (FORMAT.md): what a reader accepts.
const window = 8 << 20

// writeWindow is the window the writer uses: repeated statuses compress against the same pod's
// earlier versions as far back as this. BenchmarkRecord: 8 MiB records 36.8 B per status change
// at 10,000 pods, 4 MiB 37.0, 2 MiB 42.8 (over the 40 B target); the encoder keeps twice its
// window live, so 4 MiB saves 8 MB of the recorder's heap for 0.2 B per change.
const writeWindow = 4 << 20

// segmentExt names a segment file: seq, zero-padded so the names sort in order, and the extension.
const segmentExt = ".seg"

// crcTable is CRC-32C (Castagnoli), as ext4, iSCSI and LevelDB's log use it; the CPU computes it.
var crcTable = crc32.MakeTable(crc32.Castagnoli)

// header is a segment's header.
type header struct {
	// version is the segment's format version, which says how its records are read.
	version uint16
	seq     uint64
	// start is the time of the segment's snapshot: the state after every batch recorded before
	// the segment.
	start time.Time
	// gap is set when batches before the segment were not recorded (the previous segment could not
	// be written to its end): a player starts again from this segment's snapshot.
	gap      bool
	contexts []string
	// servers are the contexts' API servers, or none (written before version 1 had them, or not
	// known).
	servers []string
	// scope is what the recorder watched (Options.Scope).
	scope string
}

const headerGap = 1

func (h *header) marshal() []byte {
	body := binary.AppendUvarint(nil, h.seq)
	body = binary.AppendVarint(body, h.start.UnixNano())
	var flags uint64
	if h.gap {
		flags |= headerGap
	}
	body = binary.AppendUvarint(body, flags)
	body = binary.AppendUvarint(body, uint64(len(h.contexts)))
	for _, c := range h.contexts {
		body = appendString(body, c)
	}
	body = binary.AppendUvarint(body, uint64(len(h.servers)))
	for _, c := range h.servers {
		body = appendString(body, c)
	}
	body = appendString(body, h.scope)
	out := append([]byte(magic), 0, 0)
	binary.LittleEndian.PutUint16(out[len(magic):], h.version)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(body)))
	out = binary.LittleEndian.AppendUint32(out, crc32.Checksum(body, crcTable))
	return append(out, body...)
}

var errNotSegment = errors.New("not a doomwatch recording segment")

// readHeader reads a segment's header from r.
func readHeader(r io.Reader) (*header, error) {
	var fixed [len(magic) + 2 + 8]byte
	if _, err := io.ReadFull(r, fixed[:]); err != nil {
		return nil, errNotSegment
	}
	if string(fixed[:len(magic)]) != magic {
		return nil, errNotSegment
	}
	v := binary.LittleEndian.Uint16(fixed[len(magic):])
	if v < minVersion || v > version {
		return nil, fmt.Errorf("recording format version %d, this doomwatch reads versions %d to %d", v, minVersion, version)
	}
	n := binary.LittleEndian.Uint32(fixed[len(magic)+2:])
	sum := binary.LittleEndian.Uint32(fixed[len(magic)+6:])
	if n > 1<<20 {
		return nil, errNotSegment
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil || crc32.Checksum(body, crcTable) != sum {
		return nil, errNotSegment
	}
	d := decoder{b: body}
	h := &header{version: v, seq: d.uvarint(), start: time.Unix(0, d.varint()).UTC()}
	flags := d.uvarint()
	h.gap = flags&headerGap != 0
	for range d.count() {
		h.contexts = append(h.contexts, d.string())
	}
	if len(d.b) > 0 {
		for range d.count() {
			h.servers = append(h.servers, d.string())
		}
		h.scope = d.string()
	}
	if d.err != nil {
		return nil, errNotSegment
	}
	return h, nil
}

// appendFrame appends one frame holding payload to dst: its length and CRC-32C, little-endian,
// then the payload.
func appendFrame(dst, payload []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(payload)))
	dst = binary.LittleEndian.AppendUint32(dst, crc32.Checksum(payload, crcTable))
	return append(dst, payload...)
}

// frameReader reads the payloads of a segment's frames as one stream, and ends it (io.EOF) at the
// first frame that is not whole and intact: a torn tail, garbage, or the end of the file.
type frameReader struct {
	r    *bufio.Reader
	cur  []byte
	buf  []byte
	done bool
	// good is the offset, from the end of the header, just past the last intact frame.
	good int64
}

func (f *frameReader) Read(p []byte) (int, error) {
	for len(f.cur) == 0 {
		if f.done || !f.next() {
			f.done = true
			return 0, io.EOF
		}
	}
	n := copy(p, f.cur)
	f.cur = f.cur[n:]
	return n, nil
}

func (f *frameReader) next() bool {
	var fixed [8]byte
	if _, err := io.ReadFull(f.r, fixed[:]); err != nil {
		return false
	}
	n := binary.LittleEndian.Uint32(fixed[:])
	sum := binary.LittleEndian.Uint32(fixed[4:])
	if n == 0 || n > maxFrame {
		return false
	}
	if cap(f.buf) < int(n) {
		f.buf = make([]byte, n)
	}
	f.buf = f.buf[:n]
	if _, err := io.ReadFull(f.r, f.buf); err != nil {
		return false
	}
	if crc32.Checksum(f.buf, crcTable) != sum {
		return false
	}
	f.cur = f.buf
	f.good += 8 + int64(n)
	return true
}
