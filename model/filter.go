package model

// A text filter over a large model runs off the UI goroutine: StartFilter copies the pointers of
// one order's rows (published rows are never written again), FilterJob.Run matches them on any
// goroutine, and AdoptFilter turns the result into a kept view, first replaying the rows that
// changed in the meantime (the journal), so the view is as current as if it had been built at
// once.

// FilterJob is the work of a text filter: q over a snapshot of the pods, taken by StartFilter.
// Run reads only the snapshot, never the model.
type FilterJob struct {
	v    *view
	rows []*row
	seq  uint64
	// parts are the jobs of a fleet's clusters (Fleet.StartFilter), each run in turn.
	parts []*FilterJob
}

// FilterResult is a FilterJob's answer, for AdoptFilter.
type FilterResult struct {
	v     *view
	rows  []*row
	seq   uint64
	parts []*FilterResult
}

// Query is the query the result answers.
func (r *FilterResult) Query() Query { return r.v.q }

// StartFilter snapshots the pods for q's filter, to be run off the model's goroutine. Only the
// last job started can be adopted; starting one abandons the previous.
func (m *Model) StartFilter(q Query) *FilterJob {
	m.flush()
	x := &m.idx
	x.jobs++
	x.journal = journal{seq: x.jobs}
	return &FilterJob{v: newView(q), rows: m.source(q).all(), seq: x.jobs}
}

// Run matches the snapshot. It is safe on any goroutine.
func (j *FilterJob) Run() *FilterResult {
	if len(j.parts) > 0 {
		res := &FilterResult{v: j.v}
		for _, p := range j.parts {
			res.parts = append(res.parts, p.Run())
		}
		return res
	}
	kept := j.rows[:0]
	for _, r := range j.rows {
		if j.v.match(r) {
			kept = append(kept, r)
		}
	}
	clear(j.rows[len(kept):])
	return &FilterResult{v: j.v, rows: kept, seq: j.seq}
}

// AdoptFilter makes res the kept view of its query, brought up to date with the changes since its
// snapshot, and reports whether it could: a result from an abandoned job, or one whose journal
// overflowed (a long job under heavy churn), is refused, and the caller starts again.
func (m *Model) AdoptFilter(res *FilterResult) bool {
	x := &m.idx
	if res == nil || res.seq != x.jobs || res.seq != x.journal.seq || x.journal.over {
		return false
	}
	m.flush()
	v := res.v
	v.rows.load(res.rows)
	for _, r := range x.journal.removed {
		if v.match(r) {
			v.rows.remove(r)
		}
	}
	var add []*row
	for _, r := range x.journal.added {
		if r.pod.row == r && v.match(r) { // still the pod's row: not replaced nor deleted since
			add = append(add, r)
		}
	}
	v.rows.insertMany(add)
	x.journal = journal{}
	if old := m.findView(v.q); old != nil {
		x.views[0] = v
	} else {
		m.pushView(v)
	}
	return true
}

// journal records the rows published and unpublished while a FilterJob runs.
type journal struct {
	seq            uint64 // the job it records for, 0 when none
	removed, added []*row
	over           bool // grew past its bound and stopped: the job's result is refused
}

// note records r's publication (added) or its removal, while a job runs. The journal is bounded
// by an eighth of the pods (at least 4,096 rows): a job that takes that long is run again.
func (j *journal) note(r *row, added bool, pods int) {
	if j.seq == 0 || j.over {
		return
	}
	if len(j.removed)+len(j.added) >= max(4096, pods/8) {
		j.over, j.removed, j.added = true, nil, nil
		return
	}
	if added {
		j.added = append(j.added, r)
	} else {
		j.removed = append(j.removed, r)
	}
}
