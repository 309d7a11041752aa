// Package replay plays a recording (package recording) back into the model: the state at a moment
// as a live doomwatch had it (At), the verdict changes and suspect-node calls over the recording
// (Timeline), and the Player that the dashboard drives (tui.Player).
package replay

import (
	"time"

	"doomwatch/model"
	"doomwatch/recording"
	"doomwatch/report"
)

// At returns the fleet at t as a doomwatch that ran while the recording was made had it: the
// recording's first snapshot, every batch after it up to t applied at the time it was delivered,
// then aged to t as the dashboard's clock ages it. It is exact where a seek is not
// (Seek rebuilds from the nearest snapshot the objects hold, not what the model
// remembered of updates before it: a container's first back-off after a start failure, an image
// the registry refused before the kubelet's back-off hid why), at a cost linear in t's offset.
func At(r *recording.Reader, cfg model.Config, t time.Time) (*model.Fleet, error) {
	var m *model.Fleet
	err := play(r, cfg, t, func(f *model.Fleet, _ time.Time) bool { m = f; return true })
	if err != nil {
		return nil, err
	}
	m.Expire(t)
	return m, nil
}

// Seek returns the state at t fast: a fresh fleet of the recorded contexts fed the last snapshot at
// or before t and the batches after it up to t (recording.Reader.Restore), then aged to t as the
// dashboard's clock ages it (Fleet.Expire). A t before the span is its start; after it, its end.
// It costs at most a segment's batches, where At costs every batch before t, and it loses what
// the snapshot's objects no longer show (At says what).
func Seek(r *recording.Reader, cfg model.Config, t time.Time) (*model.Fleet, error) {
	f := model.NewFleet(cfg, r.Contexts())
	at, err := r.Restore(t, func(fr recording.Frame) { f.Apply(fr.Batch, fr.At) })
	if err != nil {
		return nil, err
	}
	f.Expire(at)
	return f, nil
}

// opening returns where the replay dashboard opens r, and the fleet there: the first moment the
// recording holds every cluster's state, as the live dashboard's "syncing pods" ended. A
// recording starts when its recorder did (a recording of the demo at the story's start), before
// the informers' first lists came: its first snapshot is empty, and the lists are its first
// batches, seconds later (of the story, with --demo: 4 s at --speed 10, more at higher speeds and
// on a loaded machine). Opened at its start, the dashboard showed nothing until it had played
// them, with the time bar already moving.
//
// A cluster has its state once it has synced, or is unreachable (as the live header then says
// so rather than "syncing"). opening looks for that moment as far as a seek replays exactly from
// the start (within exactSeek of it, or in its first exactBytes), so that it costs no more than
// such a seek; a recording that does not get there so soon opens at its start, and what it holds
// of the clusters comes in as it plays.
func opening(r *recording.Reader, cfg model.Config) (*model.Fleet, time.Time, error) {
	start, end := r.Span()
	m, err := Seek(r, cfg, start)
	if err != nil {
		return nil, time.Time{}, err
	}
	if settled(m) {
		m.Expire(start)
		return m, start, nil
	}
	at, found := start, false
	for fr, err := range r.Batches(start, end) {
		if err != nil {
			return nil, time.Time{}, err
		}
		if found && fr.At.After(at) {
			// Every batch of the moment it settled, and none after.
			break
		}
		if fr.At.Sub(start) > exactSeek && r.BytesUntil(fr.At) > exactBytes {
			break
		}
		if fr.Reset {
			m = model.NewFleet(cfg, r.Contexts())
		}
		m.Apply(fr.Batch, fr.At)
		at = fr.At
		found = found || settled(m)
	}
	if !found {
		if m, err = Seek(r, cfg, start); err != nil {
			return nil, time.Time{}, err
		}
		at = start
	}
	m.Expire(at)
	return m, at, nil
}

// settled says whether every cluster of m has its state: synced, or unreachable.
func settled(m *model.Fleet) bool {
	for _, c := range m.Clusters() {
		if h := c.Health(); !h.Synced && h.Unreachable == "" {
			return false
		}
	}
	return true
}

// play replays the recording from its start up to to into a fresh fleet, calling each with the
// fleet after the start's snapshot and after every batch (a fleet started over after a gap in
// the recording is a new one), until each returns false.
func play(r *recording.Reader, cfg model.Config, to time.Time, each func(*model.Fleet, time.Time) bool) error {
	start, _ := r.Span()
	m, err := Seek(r, cfg, start)
	if err != nil {
		return err
	}
	if !each(m, start) {
		return nil
	}
	for fr, err := range r.Batches(start, to) {
		if err != nil {
			return err
		}
		if fr.Reset {
			m = model.NewFleet(cfg, r.Contexts())
		}
		m.Apply(fr.Batch, fr.At)
		if !each(m, fr.At) {
			return nil
		}
	}
	return nil
}

// Timeline yields what `doomwatch --watch` would have printed had it run while the recording was
// made: once every cluster has synced (as --watch waits for), a line for every rollout, pod and
// node, then a line each time a verdict, a reason or a suspect call changes, each at the time it
// changed. Time alone changes verdicts too (evidence leaving the window, a crash loop's hold
// ending): between batches the model is aged a second at a time, as --watch looks every second.
func Timeline(r *recording.Reader, cfg model.Config, yield func(report.WatchLine) bool) error {
	_, end := r.Span()
	var state report.WatchState
	var version uint64
	var last time.Time
	stopped := false
	look := func(m *model.Fleet, at time.Time) bool {
		if !m.Health().Synced && at.Before(end) {
			return true
		}
		if v := m.Version(); version != 0 && v == version {
			return true
		}
		version = m.Version()
		snap := report.NewFleetSnapshot(m, nil, nil, at)
		for _, l := range state.Diff(&snap, at) {
			if !yield(l) {
				stopped = true
				return false
			}
		}
		return true
	}
	var prev *model.Fleet
	err := play(r, cfg, end, func(m *model.Fleet, at time.Time) bool {
		if prev == m && !last.IsZero() {
			for t := last.Add(watchPoll); t.Before(at); t = t.Add(watchPoll) {
				m.Expire(t)
				if !look(m, t) {
					return false
				}
			}
		}
		prev, last = m, at
		return look(m, at)
	})
	if stopped {
		return nil
	}
	return err
}

// watchPoll is how often the timeline ages the model between batches: --watch's look.
const watchPoll = time.Second
