package model

import (
	"time"

	"doomwatch/podrec"
)

// startIndex counts, per node, the distinct pods that started or tried to start there within the
// window: the suspect rule's denominator (classify/suspect.go). A pod counts once, at its latest start, in
// one of startBuckets time buckets of its node's ring; a pod that starts again moves to a later
// bucket. Buckets that leave the window are dropped as the ring comes round to them, so nothing is
// expired by a pass over the pods: a start costs a map lookup, and counting a node's starts the
// sum of its ring. The oldest bucket is counted whole while any of it is in the window, so a pod
// may count up to one bucket (window/startBuckets) longer than the window; never shorter, so a
// pod whose failure counts has its start counted too.
//
// Starts are dated as failures are (recordFailures): a start that appears on a pod the model
// already knew is dated when the model saw it; one already there when the pod is first seen by the
// runtime's time, no later than then. A pod deleted keeps its start for the window, as its
// failures stay evidence.
type startIndex struct {
	width int64 // bucket width in nanoseconds, window/startBuckets
	marks map[failureIdentity]startMark
	rings map[nodeID]*startRing
	total startRing // every node's starts
	// swept is the number of marks the last sweep kept: the next sweep comes once there are twice
	// as many, so dropping the marks that left the window costs O(1) per start.
	swept int
	// dirty is set by a start since the nodes view was last built: it may change a verdict.
	dirty bool
}

// startBuckets is how many buckets the window is counted in: 15 s each for the default 15m.
const startBuckets = 60

// startMark is where a pod's latest start is counted.
type startMark struct {
	ring   *startRing
	bucket int64
}

// startRing is one node's starts per bucket. Slot b%len holds bucket b while b is in the window;
// a window overlaps at most startBuckets+2 buckets (one more when the window is not a multiple of
// the width), so no two of them share a slot.
type startRing [startBuckets + 2]struct {
	bucket int64
	n      int32
}

func (r *startRing) add(bucket int64, d int32) {
	s := &r[bucket%int64(len(r))]
	if s.bucket != bucket {
		if d < 0 {
			return // counted in a bucket the ring has dropped since
		}
		s.bucket, s.n = bucket, 0
	}
	s.n += d
}

// count is the number of pods counted in buckets from..to.
func (r *startRing) count(from, to int64) int {
	n := 0
	for i := range r {
		if s := &r[i]; s.bucket >= from && s.bucket <= to {
			n += int(s.n)
		}
	}
	return n
}

// bucketsIn is the range of buckets that overlap the window ending at now.
func (x *startIndex) bucketsIn(now time.Time, window time.Duration) (from, to int64) {
	x.init(window)
	return now.Add(-window).UnixNano() / x.width, now.UnixNano() / x.width
}

func (x *startIndex) init(window time.Duration) {
	if x.marks == nil {
		x.width = max(int64(window/startBuckets), 1)
		x.marks = make(map[failureIdentity]startMark)
		x.rings = make(map[nodeID]*startRing)
	}
}

// started reports whether pod id's latest start is counted on ring within buckets from..to.
func (x *startIndex) started(id failureIdentity, ring *startRing, from, to int64) bool {
	mk, ok := x.marks[id]
	return ok && ring != nil && mk.ring == ring && mk.bucket >= from && mk.bucket <= to
}

// noteStart counts p's latest start on its node when it is new: the first record of the pod, or
// one that shows a later start than prev, the pod's previous record (nil when it is first seen).
// upsertPod calls it with every record.
func (m *Model) noteStart(p *Pod, prev *podrec.Record, now time.Time) {
	if p.Node == "" {
		return
	}
	t := lastStart(p.rec)
	if t == 0 {
		return
	}
	at := now
	if prev == nil {
		if rt := t.Time(); rt.Before(now) {
			at = rt
		}
	} else if t <= lastStart(prev) {
		return
	}
	x := &m.nodeView.starts
	from, _ := x.bucketsIn(now, m.cfg.Window)
	b := at.UnixNano() / x.width
	if b < from {
		return
	}
	id := nodeIDOf(m, p.Node)
	ring := x.rings[id]
	if ring == nil {
		ring = new(startRing)
		x.rings[id] = ring
	}
	key := failureIdentity{p.UID, p.Key}
	if old, ok := x.marks[key]; ok {
		if old.ring == ring && old.bucket == b {
			return
		}
		old.ring.add(old.bucket, -1)
		x.total.add(old.bucket, -1)
	}
	ring.add(b, 1)
	x.total.add(b, 1)
	x.marks[key] = startMark{ring: ring, bucket: b}
	x.dirty = true
	if len(x.marks) >= 2*x.swept+4096 {
		x.sweep(from)
	}
}

func nodeIDOf(m *Model, name string) nodeID { return idOf(m.nodeUID(name), name) }

// sweep drops the marks, and the rings, that hold nothing from bucket from on.
func (x *startIndex) sweep(from int64) {
	for k, mk := range x.marks {
		if mk.bucket < from {
			delete(x.marks, k)
		}
	}
	for id, r := range x.rings {
		if r.count(from, 1<<62) == 0 {
			delete(x.rings, id)
		}
	}
	x.swept = len(x.marks)
}

// nameNodeUID files the starts counted on node name while no UID was known for it under the UID,
// as the ledger's failures are (ledger.nameNodeUID).
func (x *startIndex) nameNodeUID(name, uid string) {
	r := x.rings[nodeID{name: name}]
	if r == nil {
		return
	}
	delete(x.rings, nodeID{name: name})
	if have := x.rings[nodeID{uid: uid}]; have != nil {
		// Both: the pods marked on r stay on it, and move from it when they start again; its
		// counts join the UID's ring until then.
		for i := range r {
			if s := r[i]; s.n > 0 {
				have.add(s.bucket, s.n)
			}
		}
		return
	}
	x.rings[nodeID{uid: uid}] = r
}

// lastStart is the latest moment the record shows one of its containers starting or trying to:
// the startedAt of a running or terminated state, or the finishedAt of a terminated state that
// never started (containerd reports a failed start with startedAt at the Unix epoch, and a
// hand-made status may have none). 0 when the record shows no start.
func lastStart(r *podrec.Record) podrec.Stamp {
	var t podrec.Stamp
	for _, list := range [...][]podrec.ContainerStatus{r.InitStatuses(), r.Statuses()} {
		for i := range list {
			cs := &list[i]
			t = max(t, stateStart(cs.State()), stateStart(cs.LastState()))
		}
	}
	return t
}

func stateStart(s *podrec.ContainerState) podrec.Stamp {
	switch s.Kind() {
	case podrec.StateRunning:
		if s.StartedAt() != podrec.EpochStamp {
			return s.StartedAt()
		}
	case podrec.StateTerminated:
		if started := s.StartedAt(); started != 0 && started != podrec.EpochStamp {
			return started
		}
		if s.FinishedAt() != podrec.EpochStamp {
			return s.FinishedAt()
		}
	}
	return 0
}
