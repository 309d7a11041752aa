package replay

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"time"

	"doomwatch/model"
	"doomwatch/recording"
	"doomwatch/report"
	"doomwatch/sanitize"
	"doomwatch/tui"
)

// Player plays a recording into the dashboard (tui.Player): from its first state (opening) at
// ×1, paused and resumed, faster or slower, seeking and jumping to the next verdict change. Its
// methods are called on the dashboard's goroutine and never block: a seek is done by the player's
// goroutine, the only one that reads the recording, and reaches the dashboard as a frame.
//
// Playing is exact: the dashboard's model gets the recorded batches at their recorded times, as
// the live one did. So is a seek forward of up to exactSeek, played as the batches up to the new
// position in one frame, and a seek to within exactSeek of the start, replayed from it. A longer
// seek rebuilds the model from the snapshot before the new position (Seek, at
// most a snapshot interval of batches to replay): what the model remembered of updates before
// that snapshot, and no object still shows, is not in it; the time bar's note says so. A seek
// anywhere in a small recording (exactBytes) is replayed from the start instead, exactly.
type Player struct {
	// exactBytes is the constant's, but in tests.
	exactBytes int64
	r          *recording.Reader
	cfg        model.Config
	of         string
	start      time.Time
	end        time.Time
	// first is where the dashboard opens the recording, seeks back to at most, and plays again
	// from: the first moment it holds every cluster's state (opening). Before it the recorder
	// had not yet been sent the clusters' lists: there is nothing to show.
	first  time.Time
	frames chan tui.Frame
	wake   chan struct{}
	// clock is the wall clock (a test's own).
	clock func() time.Time

	mu sync.Mutex
	// pos is the position at the wall time wall; while playing it moves at speed.
	pos, wall time.Time
	playing   bool
	speed     float64
	// note is what the time bar says of the position noteAt: what a jump found there, or why it
	// found nothing. It is shown until the position has moved noteHold past noteAt.
	note   string
	noteAt time.Time
	// seek is a position asked for and not yet reached (seeking), with the note to show then.
	seek     time.Time
	seeking  bool
	seekNote string
	// marks are the timeline's jump targets found so far, in time order, up to scanned; done
	// once the scan reached the end (or failed: scanErr).
	marks   []mark
	scanned time.Time
	done    bool
	scanErr error
}

// NoLogs answers the dashboard's log pane during a replay: a recording holds no logs.
type NoLogs struct{}

// TailLog implements tui.LogSource.
func (NoLogs) TailLog(context.Context, string, string, string, string, bool, int) ([]string, error) {
	return nil, errors.New("not in the recording: doomwatch records pods, nodes, Warning events and workloads, not containers' logs")
}

// mark is a moment a jump goes to: a verdict change or a suspect-node call, and what it was.
type mark struct {
	at   time.Time
	note string
}

// exactSeek is the longest seek forward the player plays exactly, and how close to the start a
// seek is replayed from it: about what a snapshot seek costs at 10,000 pods (BenchmarkSeek), so
// that no seek takes longer than a snapshot's.
const exactSeek = time.Minute

// exactBytes is how much of a recording a seek replays exactly from its start rather than seek
// from a snapshot: about what a snapshot seek costs at 10,000 pods (BenchmarkAt: 1.1 MiB of that
// churn replay in 0.39 s; BenchmarkSeek: 0.35 s). A recording of the demo is this size after
// about 45 minutes, so its seeks are all exact.
const exactBytes = 1 << 20

// speeds are the paces + and - step through.
var speeds = []float64{0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600}

// NewPlayer makes a player of r, the recording at path, paused at its first state (opening),
// which it returns for the dashboard's Options.Model: the dashboard's first frame shows it. The
// player owns r, for playing (Close closes it); Play opens another reader at path for the
// timeline's scan.
func NewPlayer(r *recording.Reader, cfg model.Config) (*Player, *model.Fleet, error) {
	start, end := r.Span()
	m, first, err := opening(r, cfg)
	if err != nil {
		r.Close()
		return nil, nil, err
	}
	p := &Player{
		r: r, cfg: cfg,
		start: start, end: end, first: first, frames: make(chan tui.Frame), wake: make(chan struct{}, 1),
		clock: time.Now, pos: first, speed: 1, exactBytes: exactBytes,
	}
	p.of = m.Name()
	return p, m, nil
}

// Play runs the player until ctx ends: it sends the batches while playing (Toggle starts it,
// before Play or after) and does the seeks; the timeline for the jumps is scanned meanwhile from
// a reader of its own at path. Frames is closed when it returns.
func (p *Player) Play(ctx context.Context, path string) {
	go p.scan(ctx, path)
	p.run(ctx)
}

// Scope is what the recorder watched, for the dashboard's header.
func (p *Player) Scope() string { return p.r.Scope() }

// Close releases the player's reader; call it after Play returned.
func (p *Player) Close() error { return p.r.Close() }

// Frames implements tui.Player.
func (p *Player) Frames() <-chan tui.Frame { return p.frames }

// Now is the position: the dashboard's clock during a replay.
func (p *Player) Now() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.position()
}

// position is the current position; p.mu is held.
func (p *Player) position() time.Time {
	if !p.playing {
		return p.pos
	}
	at := p.pos.Add(time.Duration(float64(p.clock().Sub(p.wall)) * p.speed))
	if at.After(p.end) {
		return p.end
	}
	return at
}

// hold fixes the position where it is now, so that the pace or the state can change from it;
// p.mu is held.
func (p *Player) hold() { p.pos, p.wall = p.position(), p.clock() }

// Status implements tui.Player.
func (p *Player) Status() tui.PlayStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	at := p.position()
	note := p.note
	if at.Sub(p.noteAt) > noteHold {
		note = ""
	}
	if p.seeking {
		at, note = p.seek, "seeking…"
	}
	return tui.PlayStatus{Of: p.of, Start: p.start, End: p.end, At: at, Playing: p.playing, Speed: p.speed, Note: note}
}

// noteHold is how long of the recording the time bar's note stays once the position has moved
// on from where it was said: long enough to read at ×1; after it, the state the note spoke of
// may have changed (a pod it called transient is doomed by the recording's end).
const noteHold = 10 * time.Second

// say sets the time bar's note, about the position at; p.mu is held. A note may quote an error
// about the recording, a file's text: it is sanitised here, where it enters the screen's data.
func (p *Player) say(note string, at time.Time) { p.note, p.noteAt = sanitize.Text(note), at }

// Toggle implements tui.Player: pause, or play; at the end, play again from the first state.
func (p *Player) Toggle() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hold()
	if !p.playing && !p.pos.Before(p.end) {
		p.seekLocked(p.first, "")
	}
	p.playing = !p.playing
	p.poke()
}

// Pace implements tui.Player.
func (p *Player) Pace(faster bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hold()
	i := 0
	for i < len(speeds)-1 && speeds[i] < p.speed {
		i++
	}
	if faster {
		i = min(i+1, len(speeds)-1)
	} else {
		i = max(i-1, 0)
	}
	p.speed = speeds[i]
	p.poke()
}

// Seek implements tui.Player.
func (p *Player) Seek(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	from := p.position()
	if p.seeking {
		from = p.seek
	}
	p.seekLocked(from.Add(d), "")
}

// Jump implements tui.Player: to the next (or previous) verdict change or suspect-node call that
// the timeline's scan has found.
func (p *Player) Jump(next bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	at := p.position()
	if p.seeking {
		at = p.seek
	}
	var found *mark
	if next {
		for i := range p.marks {
			if p.marks[i].at.After(at) {
				found = &p.marks[i]
				break
			}
		}
	} else {
		// A second back, so that a jump from a change just jumped to goes to the one before it.
		for i := len(p.marks) - 1; i >= 0; i-- {
			if p.marks[i].at.Before(at.Add(-time.Second)) {
				found = &p.marks[i]
				break
			}
		}
	}
	switch {
	case found != nil:
		p.seekLocked(found.at, found.note)
	case p.scanErr != nil:
		p.say("no timeline: "+p.scanErr.Error(), at)
	case !p.done && next:
		p.say("no later change found yet (timeline read to +"+p.scanned.Sub(p.start).Truncate(time.Second).String()+")", at)
	case next:
		p.say("no later change", at)
	default:
		p.say("no earlier change", at)
	}
}

// seekLocked asks the player's goroutine to go to t, not before the first state; p.mu is held.
func (p *Player) seekLocked(t time.Time, note string) {
	if t.Before(p.first) {
		t = p.first
	}
	if t.After(p.end) {
		t = p.end
	}
	p.seek, p.seeking, p.seekNote = t, true, note
	p.poke()
}

// poke wakes the player's goroutine to look at its state again.
func (p *Player) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// run is the player's goroutine: it sends the recorded batches as the position passes their
// times, and does the seeks.
func (p *Player) run(ctx context.Context) {
	defer close(p.frames)
	feed := p.feed(p.first)
	defer func() { feed.stop() }()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		p.mu.Lock()
		seeking, target, note := p.seeking, p.seek, p.seekNote
		p.mu.Unlock()
		if seeking {
			var f tui.Frame
			var from time.Time
			var err error
			f, feed, from, err = p.seekTo(feed, target)
			p.mu.Lock()
			if p.seek.Equal(target) {
				p.seeking = false
			}
			p.pos, p.wall = target, p.clock()
			p.say(note, target)
			if !from.IsZero() {
				// The snapshot's objects are exact, not what the model remembered before it.
				p.say(strings.TrimPrefix(note+" · ", " · ")+"from the snapshot at +"+
					from.Sub(p.start).Truncate(time.Second).String()+": start failures before it not counted", target)
			}
			if err != nil {
				p.say("cannot read the recording: "+err.Error(), target)
			}
			p.mu.Unlock()
			if err == nil && !p.send(ctx, f) {
				return
			}
			continue
		}
		p.mu.Lock()
		now, playing, speed := p.position(), p.playing, p.speed
		p.mu.Unlock()
		var wait time.Duration = -1 // until poked
		if playing {
			if fr, ok := feed.peek(); ok {
				if wait = time.Duration(float64(fr.At.Sub(now)) / speed); wait <= 0 {
					f := tui.Frame{}
					feed.until(now, &f)
					if !p.send(ctx, f) {
						return
					}
					continue
				}
			} else if feed.err != nil {
				p.mu.Lock()
				p.hold()
				p.playing = false
				p.say("cannot read the recording: "+feed.err.Error(), p.pos)
				p.mu.Unlock()
				continue
			} else if wait = time.Duration(float64(p.end.Sub(now)) / speed); wait <= 0 {
				p.mu.Lock()
				p.pos, p.playing = p.end, false
				p.mu.Unlock()
				continue
			}
		}
		var tick <-chan time.Time
		if wait >= 0 {
			timer.Reset(wait)
			tick = timer.C
		}
		if feed.prefetching(now.Add(prefetch)) {
			// Decode ahead a few batches at a time, looking at the keys and the clock between.
			select {
			case <-ctx.Done():
				return
			case <-p.wake:
			case <-tick:
			default:
				feed.fill(now.Add(prefetch), prefetchStep)
			}
			timer.Stop()
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
		case <-tick:
		}
		timer.Stop()
	}
}

// send hands f to the dashboard; false when ctx ended first.
func (p *Player) send(ctx context.Context, f tui.Frame) bool {
	select {
	case p.frames <- f:
		return true
	case <-ctx.Done():
		return false
	}
}

// seekTo goes from the feed's position to t: the frame that takes the dashboard there, and the
// feed that goes on from t. from is the snapshot a seek rebuilt the state from, zero when the seek
// was exact.
func (p *Player) seekTo(cur *feed, t time.Time) (f tui.Frame, next *feed, from time.Time, err error) {
	if !t.Before(cur.at) && t.Sub(cur.at) <= exactSeek {
		cur.until(t, &f)
		if cur.err == nil {
			return f, cur, time.Time{}, nil
		}
		f = tui.Frame{}
	}
	cur.stop()
	var m *model.Fleet
	if t.Sub(p.start) <= exactSeek || p.r.BytesUntil(t) <= p.exactBytes {
		m, err = At(p.r, p.cfg, t)
	} else {
		from = p.r.SnapshotBefore(t)
		m, err = Seek(p.r, p.cfg, t)
	}
	next = p.feed(t)
	if err != nil {
		return tui.Frame{}, next, time.Time{}, err
	}
	return tui.Frame{Model: m}, next, from, nil
}

// feed is the recording's batches after a position, read ahead: one when asked (peek), and up
// to prefetch of the recording's time past the position while the player waits (fill), so that a
// seek forward of a few seconds finds its batches decoded.
type feed struct {
	next  func() (recording.Frame, error, bool)
	stop  func()
	queue []recording.Frame
	// done: the recording's end was read. pulled: a batch was, so the reader has found the
	// position in its segment (the decode from the segment's snapshot up to it, as long as a
	// snapshot seek: the prefetch does not start that on its own, so that a key pressed meanwhile
	// need not wait for it).
	done, pulled bool
	// at is the position the feed has played to; err a read error that ended it.
	at  time.Time
	err error
	// fresh is the empty fleet a batch after a gap in the recording starts again from.
	fresh func() *model.Fleet
}

// prefetch is how far ahead of the position the player decodes while it waits: the `.` key's
// 10 s, the dashboard's seek step (BenchmarkSeekKey: 59 ms to decode at 10,000 pods under 500 changes a second); prefetchStep
// how many batches it decodes before it looks at the keys again (about 6 ms of them there).
const (
	prefetch     = 10 * time.Second
	prefetchStep = 10
)

func (p *Player) feed(from time.Time) *feed {
	next, stop := iter.Pull2(p.r.Batches(from, p.end))
	return &feed{next: next, stop: stop, at: from, fresh: func() *model.Fleet { return model.NewFleet(p.cfg, p.r.Contexts()) }}
}

// pull reads one more batch into the queue; false at the end or after an error.
func (f *feed) pull() bool {
	if f.done || f.err != nil {
		return false
	}
	fr, err, ok := f.next()
	switch {
	case !ok:
		f.done = true
		return false
	case err != nil:
		f.err = err
		return false
	}
	f.queue = append(f.queue, fr)
	f.pulled = true
	return true
}

// peek is the next batch, if any.
func (f *feed) peek() (recording.Frame, bool) {
	if len(f.queue) == 0 && !f.pull() {
		return recording.Frame{}, false
	}
	return f.queue[0], true
}

// wants says whether the feed has not read up to limit yet.
func (f *feed) wants(limit time.Time) bool {
	return !f.done && f.err == nil && (len(f.queue) == 0 || !f.queue[len(f.queue)-1].At.After(limit))
}

// prefetching says whether the player should read ahead while it waits: the feed wants more up to
// limit, and has found its position already.
func (f *feed) prefetching(limit time.Time) bool { return f.pulled && f.wants(limit) }

// fill reads up to n batches ahead, not past the first one after limit.
func (f *feed) fill(limit time.Time, n int) {
	for range n {
		if !f.wants(limit) || !f.pull() {
			return
		}
	}
}

// until adds to out every batch up to t. A batch that starts the recording again after a gap
// (recording.Frame.Reset) starts a fresh fleet: what came before it is dropped from out.
func (f *feed) until(t time.Time, out *tui.Frame) {
	for {
		fr, ok := f.peek()
		if !ok || fr.At.After(t) {
			break
		}
		f.queue[0] = recording.Frame{}
		f.queue = f.queue[1:]
		if fr.Reset {
			out.Model, out.Steps = f.fresh(), nil
		}
		out.Steps = append(out.Steps, tui.Step{At: fr.At, Batch: *fr.Batch})
	}
	if t.After(f.at) {
		f.at = t
	}
}

// scan reads the timeline from its own reader and keeps its jump targets.
func (p *Player) scan(ctx context.Context, path string) {
	err := func() error {
		r, err := recording.Open(path)
		if err != nil {
			return err
		}
		defer r.Close()
		var j jumps
		return Timeline(r, p.cfg, func(l report.WatchLine) bool {
			at, _ := time.Parse(time.RFC3339Nano, l.Time)
			note, ok := j.note(&l, at)
			p.mu.Lock()
			if ok {
				p.marks = append(p.marks, mark{at: at, note: note})
			}
			p.scanned = at
			p.mu.Unlock()
			return ctx.Err() == nil
		})
	}()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done = true
	if err != nil && !errors.Is(err, context.Canceled) {
		p.scanErr = err
	}
}

// jumps tells which timeline lines are jump targets: a rollout's verdict changing (or a new one
// coming doomed), a node's suspect call changing, a pod turning transient or doomed. The first look's lines (every
// object's state once synced) are not changes, nor are pods coming, going or turning healthy:
// a rollout has hundreds of those.
type jumps struct {
	first time.Time
	was   map[string]string
}

func (j *jumps) note(l *report.WatchLine, at time.Time) (string, bool) {
	if j.was == nil {
		j.was, j.first = map[string]string{}, at
	}
	name := l.Name
	if l.Namespace != "" {
		name = l.Namespace + "/" + name
	}
	if l.Context != "" {
		name += "@" + l.Context
	}
	key := l.Type + "\x00" + l.Kind + "\x00" + name
	state := l.Verdict
	if l.Suspect != nil && *l.Suspect {
		state = "suspect"
	}
	old, seen := j.was[key]
	if l.Deleted {
		delete(j.was, key)
		return "", false
	}
	j.was[key] = state
	if !at.After(j.first) || old == state {
		return "", false
	}
	switch {
	case l.Type == "rollout" && (seen || state == "doomed"):
		// A rollout first seen after the first look is a new one: a jump target if it comes doomed.
		return fmt.Sprintf("%s %s %s", l.Kind, name, l.Verdict), true
	case l.Type == "node" && state == "suspect":
		return "node " + name + " suspect", true
	case l.Type == "node" && old == "suspect":
		return "node " + name + " no longer suspect", true
	case l.Type == "pod" && (state == "doomed" || state == "transient"):
		return "pod " + name + " " + state, true
	}
	return "", false
}
