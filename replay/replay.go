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
// (recording.Reader.Seek rebuilds from the nearest snapshot the objects hold, not what the model
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

// play replays the recording from its start up to to into a fresh fleet, calling each with the
// fleet after the start's snapshot and after every batch (a fleet started over after a gap in
// the recording is a new one), until each returns false.
func play(r *recording.Reader, cfg model.Config, to time.Time, each func(*model.Fleet, time.Time) bool) error {
	start, _ := r.Span()
	m, err := r.Seek(cfg, start)
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
