package kube

import "encoding/binary"

// internMax bounds each generation of an intern table. A cluster has far fewer distinct
// namespaces, nodes, images, reasons and pod templates than this; values that are not shared (a
// message naming its pod) only make the table rotate sooner.
const internMax = 1 << 16

// table is a bounded intern table of two generations keyed by content. A lookup promotes what it
// finds in the previous generation; when the current one is full it becomes the previous and the
// oldest is dropped. So what is still in use stays shared, and the table holds at most 2*max
// entries however many distinct values pass through it.
//
// Go's unique package does not fit: unique.Make(s).Value() yields a string whose table entry dies
// with the Handle at the next GC, so a string stored in an API object (which cannot hold the
// Handle) is shared only with the copies interned before that GC.
type table[V any] struct {
	cur, old map[string]V
	max      int
}

func newTable[V any](max int) table[V] {
	return table[V]{cur: make(map[string]V), max: max}
}

// lookup finds key. It takes bytes so that a miss costs no allocation: the compiler turns
// m[string(b)] into a lookup without a copy.
func (t *table[V]) lookup(key []byte) (V, bool) {
	if v, ok := t.cur[string(key)]; ok {
		return v, true
	}
	v, ok := t.old[string(key)]
	if ok {
		t.put(string(key), v)
	}
	return v, ok
}

func (t *table[V]) put(key string, v V) {
	if len(t.cur) >= t.max {
		t.old, t.cur = t.cur, make(map[string]V, t.max/4)
	}
	t.cur[key] = v
}

// str returns the shared copy of s.
func str(t *table[string], s string) string {
	if s == "" {
		return ""
	}
	if v, ok := t.cur[s]; ok {
		return v
	}
	if v, ok := t.old[s]; ok {
		t.put(v, v)
		return v
	}
	t.put(s, s)
	return s
}

// protoMessage is a generated API type: its protobuf encoding is its content, so equal encodings
// mean equal values.
type protoMessage[T any] interface {
	*T
	Size() int
	MarshalToSizedBuffer([]byte) (int, error)
}

// shareSlice returns a slice equal to s, shared with every other equal slice that passed through
// t: the containers of a ReplicaSet's pods, say, are then held once. Neither s nor the result may
// be modified afterwards. buf is scratch space for the key.
func shareSlice[T any, P protoMessage[T]](t *table[[]T], buf *[]byte, s []T) []T {
	if len(s) == 0 {
		return s
	}
	key := (*buf)[:0]
	for i := range s {
		n := P(&s[i]).Size()
		key = binary.AppendUvarint(key, uint64(n))
		start := len(key)
		key = append(key, make([]byte, n)...)
		if _, err := P(&s[i]).MarshalToSizedBuffer(key[start:]); err != nil {
			*buf = key
			return s // not shared, still correct
		}
	}
	*buf = key
	if v, ok := t.lookup(key); ok {
		return v
	}
	t.put(string(key), s)
	return s
}
