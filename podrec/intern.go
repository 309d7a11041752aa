package podrec

import (
	"encoding/binary"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Interner shares what objects repeat: strings (namespaces, nodes, images, reasons, condition
// messages) and read-only parts such as the containers of a ReplicaSet's pods, their owner
// references and whole pod specs. kube's informer transform holds one for every kind it trims, so
// a pod and its ReplicaSet share their containers too. Nothing it hands out may be modified: that
// is what makes sharing safe. It is not safe for concurrent use (the transform holds a lock). A nil
// *Interner shares nothing and still trims: tests build records with it.
type Interner struct {
	strs        table[string]
	conts       table[[]corev1.Container]
	owners      table[[]metav1.OwnerReference]
	gates       table[[]corev1.PodReadinessGate]
	specs       table[*specRecord]
	conds       table[*condText]
	annotations table[map[string]string]
	// specsRaw and ownersRaw share specs and owner references by their protobuf encoding, for
	// PodFromProto.
	specsRaw  table[*specRecord]
	ownersRaw table[[]metav1.OwnerReference]
	buf, key  []byte
}

// internMax bounds each generation of an intern table. A cluster has far fewer distinct
// namespaces, nodes, images, reasons and pod templates than this; values that are not shared (a
// message naming its pod) only make the table rotate sooner.
const internMax = 1 << 16

// NewInterner returns an empty Interner.
func NewInterner() *Interner {
	return &Interner{
		strs:        newTable[string](internMax),
		conts:       newTable[[]corev1.Container](internMax / 8),
		owners:      newTable[[]metav1.OwnerReference](internMax / 8),
		gates:       newTable[[]corev1.PodReadinessGate](internMax / 64),
		specs:       newTable[*specRecord](internMax / 8),
		conds:       newTable[*condText](internMax / 8),
		annotations: newTable[map[string]string](internMax / 64),
		specsRaw:    newTable[*specRecord](internMax / 8),
		ownersRaw:   newTable[[]metav1.OwnerReference](internMax / 8),
	}
}

// String returns the shared copy of s.
func (in *Interner) String(s string) string {
	if in == nil {
		return s
	}
	return str(&in.strs, s)
}

// Owners returns refs, shared with every equal list: the owner references of a ReplicaSet's pods.
func (in *Interner) Owners(refs []metav1.OwnerReference) []metav1.OwnerReference {
	if in == nil {
		return refs
	}
	return shareSlice(&in.owners, &in.buf, refs)
}

// Annotation returns the one-entry annotation map {key: value}, shared by every object whose only
// kept annotation it is: the Deployment controller's revision of a ReplicaSet or Deployment.
func (in *Interner) Annotation(key, value string) map[string]string {
	if in == nil {
		return map[string]string{key: value}
	}
	in.buf = binary.AppendUvarint(in.buf[:0], uint64(len(key)))
	in.buf = append(append(in.buf, key...), value...)
	a, ok := in.annotations.lookup(in.buf)
	if !ok {
		a = map[string]string{key: value}
		in.annotations.put(string(in.buf), a)
	}
	return a
}

// Containers keeps what the kubectl STATUS/READY printer and classify read from a container spec
// (kubernetes pkg/printers/internalversion/printers.go printPod: container count, and init
// containers' restartPolicy to recognise sidecars), the image the detail pane shows and the
// readiness and startup probes, of which classify reads whether they exist and their handler
// (classify probeText). The result is shared by every pod, ReplicaSet and Deployment with the same
// containers.
func (in *Interner) Containers(cs []corev1.Container) []corev1.Container {
	if cs == nil {
		return nil
	}
	out := make([]corev1.Container, len(cs))
	for i := range cs {
		c := &cs[i]
		out[i] = corev1.Container{
			Name:           in.String(c.Name),
			Image:          in.String(c.Image),
			RestartPolicy:  in.restartPolicy(c.RestartPolicy),
			ReadinessProbe: in.probe(c.ReadinessProbe),
			StartupProbe:   in.probe(c.StartupProbe),
		}
	}
	if in == nil {
		return out
	}
	return shareSlice(&in.conts, &in.buf, out)
}

// noSharing trims as an Interner does and shares nothing: for keys, which must not fill the tables.
var noSharing *Interner

// Shared pointers for the pointer-to-value fields that take few values.
var (
	sharedTrue, sharedFalse = true, false
	sharedAlways            = corev1.ContainerRestartPolicyAlways
)

func sharedBool(b *bool) *bool {
	switch {
	case b == nil:
		return nil
	case *b:
		return &sharedTrue
	}
	return &sharedFalse
}

func (in *Interner) restartPolicy(p *corev1.ContainerRestartPolicy) *corev1.ContainerRestartPolicy {
	switch {
	case p == nil:
		return nil
	case *p == sharedAlways:
		return &sharedAlways
	}
	v := corev1.ContainerRestartPolicy(in.String(string(*p)))
	return &v
}

// probe keeps a probe's handler as classify's probeText describes it: HTTP path and port, exec
// command, TCP port, gRPC port.
func (in *Interner) probe(p *corev1.Probe) *corev1.Probe {
	if p == nil {
		return nil
	}
	out := &corev1.Probe{}
	if h := p.HTTPGet; h != nil {
		out.HTTPGet = &corev1.HTTPGetAction{Path: in.String(h.Path), Port: h.Port}
	}
	if e := p.Exec; e != nil {
		out.Exec = &corev1.ExecAction{Command: e.Command}
	}
	if s := p.TCPSocket; s != nil {
		out.TCPSocket = &corev1.TCPSocketAction{Port: s.Port}
	}
	if g := p.GRPC; g != nil {
		out.GRPC = &corev1.GRPCAction{Port: g.Port}
	}
	return out
}

// spec returns the shared part of a pod's spec: everything the record keeps of it but the node.
// The pods of one template share one. It is looked up by the encoding of what it keeps, so a pod
// whose template the interner knows costs one encoding and no allocation.
func (in *Interner) spec(s *corev1.PodSpec) *specRecord {
	if in == nil {
		return &specRecord{init: in.Containers(s.InitContainers), containers: in.Containers(s.Containers),
			restartPolicy: s.RestartPolicy, gates: s.ReadinessGates}
	}
	key := in.key[:0]
	var ok bool
	for _, cs := range [...][]corev1.Container{s.InitContainers, s.Containers} {
		key = binary.AppendUvarint(key, uint64(len(cs)))
		for i := range cs {
			c := &cs[i]
			// What Containers keeps, as it keeps it.
			kept := corev1.Container{Name: c.Name, Image: c.Image, RestartPolicy: c.RestartPolicy,
				ReadinessProbe: noSharing.probe(c.ReadinessProbe), StartupProbe: noSharing.probe(c.StartupProbe)}
			if key, ok = appendEncoding(key, &kept); !ok {
				return &specRecord{init: in.Containers(s.InitContainers), containers: in.Containers(s.Containers),
					restartPolicy: in.restartPolicyOf(s.RestartPolicy), gates: shareSlice(&in.gates, &in.buf, s.ReadinessGates)}
			}
		}
	}
	key = binary.AppendUvarint(key, uint64(len(s.RestartPolicy)))
	key = append(key, s.RestartPolicy...)
	key = binary.AppendUvarint(key, uint64(len(s.ReadinessGates)))
	for i := range s.ReadinessGates {
		key = binary.AppendUvarint(key, uint64(len(s.ReadinessGates[i].ConditionType)))
		key = append(key, s.ReadinessGates[i].ConditionType...)
	}
	in.key = key
	if sp, ok := in.specs.lookup(key); ok {
		return sp
	}
	sp := &specRecord{
		init:          in.Containers(s.InitContainers),
		containers:    in.Containers(s.Containers),
		restartPolicy: in.restartPolicyOf(s.RestartPolicy),
		gates:         shareSlice(&in.gates, &in.buf, s.ReadinessGates),
	}
	in.specs.put(string(key), sp)
	return sp
}

func (in *Interner) restartPolicyOf(p corev1.RestartPolicy) corev1.RestartPolicy {
	return corev1.RestartPolicy(in.String(string(p)))
}

// condition returns the shared text of a pod condition: its type, status, reason and message,
// which most pods share ("containers with unready status: [app]").
func (in *Interner) condition(c *corev1.PodCondition) *condText {
	if in == nil {
		return &condText{typ: c.Type, status: c.Status, reason: c.Reason, message: c.Message}
	}
	key := in.key[:0]
	for _, s := range [...]string{string(c.Type), string(c.Status), c.Reason, c.Message} {
		key = binary.AppendUvarint(key, uint64(len(s)))
		key = append(key, s...)
	}
	in.key = key
	if t, ok := in.conds.lookup(key); ok {
		return t
	}
	t := &condText{typ: corev1.PodConditionType(in.String(string(c.Type))), status: corev1.ConditionStatus(in.String(string(c.Status))),
		reason: in.String(c.Reason), message: in.String(c.Message)}
	in.conds.put(string(key), t)
	return t
}

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

// appendEncoding appends m's length-prefixed protobuf encoding to key; false if it cannot be
// encoded.
func appendEncoding[T any, P protoMessage[T]](key []byte, m P) ([]byte, bool) {
	n := m.Size()
	key = binary.AppendUvarint(key, uint64(n))
	start := len(key)
	key = append(key, make([]byte, n)...)
	if _, err := m.MarshalToSizedBuffer(key[start:]); err != nil {
		return key, false
	}
	return key, true
}

// shareSlice returns a slice equal to s, shared with every other equal slice that passed through
// t: the containers of a ReplicaSet's pods, say, are then held once. Neither s nor the result may
// be modified afterwards. buf is scratch space for the key.
func shareSlice[T any, P protoMessage[T]](t *table[[]T], buf *[]byte, s []T) []T {
	if len(s) == 0 {
		return s
	}
	key := (*buf)[:0]
	ok := true
	for i := range s {
		if key, ok = appendEncoding(key, P(&s[i])); !ok {
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
