package model

import (
	"fmt"
	"slices"
	"time"

	"doomwatch/classify"
)

// Soak is --stable: once a rollout completes it is judged on for Stable, and a new pod doomed
// within that window dooms it, with the pod's reason. A rollout's own verdict does not: a
// Deployment stays complete with one pod of four crash-looping (kubectl counts ready replicas, the
// rollout rules count the new pods, and one of several is not a stall), and a pod that crashes only
// after passing its readiness probe is what the window is for (argo-rollouts#3765;
// crashloop-readiness-oscillates in ACCURACY.md). `doomwatch wait --stable` passes a rollout once
// it has stayed complete for the window (cmd/gate.go); the dashboard's rollouts panel shows the
// window on the rollout's line. One Soak judges the rollouts of one wait or one dashboard, by key.
type Soak struct {
	// Stable is the window; 0 judges every rollout as it is, and a complete one has held at once.
	Stable time.Duration
	// Gate keeps judging a rollout whose window has passed, for as long as the Soak is used: a
	// wait's targets are judged until the wait ends, each one's window past or not, so a crash
	// loop in one that has held still fails the wait while another's window runs. The dashboard's
	// windows end.
	Gate bool
	// since is when each rollout last became complete; absent while it is not. A rollout that
	// falls back to progressing starts its window again when it completes again.
	since map[string]time.Time
	// settled: the rollout has completed, and its window has not passed (a fall back to
	// progressing stays in it). soured: a doomed new pod in its window doomed it, which stands
	// while it has doomed new pods beyond what it tolerates, after the window too: no flip out of
	// doom inside a crash loop.
	settled, soured map[string]bool
	// revision is each rollout's new ReplicaSet when it was last looked at: a new one is a new
	// rollout, whose window starts afresh.
	revision map[string]string
	// primed is set once the rollouts the dashboard found complete when the cluster had synced
	// were taken as held (Prime): they completed before anyone watched.
	primed bool
}

// NewSoak is a Soak of window stable.
func NewSoak(stable time.Duration) *Soak {
	return &Soak{Stable: stable, since: map[string]time.Time{}, settled: map[string]bool{}, soured: map[string]bool{},
		revision: map[string]string{}}
}

// Soaked is what a look at one rollout found.
type Soaked struct {
	// Complete says the rollout is complete, Held for how long; Done that it has held for Stable.
	Complete bool
	Held     time.Duration
	Done     bool
	// Soured says a doomed new pod in the window doomed it.
	Soured bool
}

// Look judges rollout r, of key, at now under the window, and dooms r in place when a doomed new
// pod (beyond what its required rollout tolerates) sours it (classify.SouredVerdict): its reason
// then says so, with the pod's ("1/4 new pods doomed after the rollout completed (--stable 1m): …").
func (s *Soak) Look(key string, r *Rollout, now time.Time) Soaked {
	var out Soaked
	if rev, ok := s.revision[key]; ok && rev != r.NewReplicaSet {
		delete(s.since, key)
		delete(s.settled, key)
		delete(s.soured, key)
	}
	s.revision[key] = r.NewReplicaSet
	if r.Verdict == classify.RolloutComplete {
		at, ok := s.since[key]
		if !ok {
			at = now
			s.since[key], s.settled[key] = at, true
		}
		out.Complete, out.Held = true, now.Sub(at)
		out.Done = out.Held >= s.Stable
	} else {
		delete(s.since, key)
	}
	keep := s.Gate && s.Stable > 0
	inWindow := s.settled[key] && (!out.Done || keep)
	if out.Done && !keep {
		delete(s.settled, key)
	}
	pods := classify.NewPods{Total: r.NewPods, Doomed: r.NewDoomed}
	if r.DoomReason != "" {
		pods.Reasons = []string{r.DoomReason}
	}
	v, doomed := classify.SouredVerdict(pods, r.Tolerates, ShortDuration(s.Stable))
	switch {
	case r.Verdict != classify.RolloutDoomed && doomed && (inWindow || s.soured[key]):
		s.soured[key] = true
		r.Verdict, r.Reason = v.Class, v.Reason
		out.Soured, out.Done = true, false
	case !doomed:
		delete(s.soured, key)
	}
	return out
}

// HeldFor is how long rollout key has stayed complete at now, to the second, and false unless it
// is complete and still in its window.
func (s *Soak) HeldFor(key string, now time.Time) (time.Duration, bool) {
	at, ok := s.since[key]
	if !ok || s.Stable == 0 || now.Sub(at) >= s.Stable {
		return 0, false
	}
	return now.Sub(at).Truncate(time.Second), true
}

// Shown is the reason a complete rollout in its window shows ("complete, stable for 12s of 1m"),
// and false for any other.
func (s *Soak) Shown(key string, now time.Time) (string, bool) {
	held, ok := s.HeldFor(key, now)
	if !ok {
		return "", false
	}
	return fmt.Sprintf("complete, stable for %s of %s", ShortDuration(held), ShortDuration(s.Stable)), true
}

// Prime takes the rollouts complete in rs, once the cluster has synced, as having held: they
// completed before the dashboard watched, and a window of theirs would say so of every rollout of
// the cluster for Stable. Only the first call does anything.
func (s *Soak) Prime(rs []Rollout, now time.Time) {
	if s.primed || s.Stable == 0 {
		return
	}
	s.primed = true
	for i := range rs {
		if r := &rs[i]; r.Verdict == classify.RolloutComplete {
			key := r.Context + "/" + r.Workload()
			s.since[key], s.revision[key] = now.Add(-s.Stable), r.NewReplicaSet
		}
	}
}

// Rollouts is rs, the dashboard's rollouts, under the window at now: a rollout a doomed new pod
// soured is doomed, one in its window says for how long it has held, and the doomed come first as
// Rollouts orders them. rs itself is returned when no rollout is in a window or soured (and when
// Stable is 0); until is when the next one's text changes (a second more held, a window's end), zero
// for never. The keys of rollouts no longer in rs are forgotten.
//
// current is the rollout as its model judges it now (Fleet.Current): the list's copy may hold older
// counts of its new pods, which change without a new list.
func (s *Soak) Rollouts(rs []Rollout, current func(*Rollout) (Rollout, bool), now time.Time) (out []Rollout, until time.Time) {
	if s.Stable == 0 {
		return rs, time.Time{}
	}
	seen := make(map[string]bool, len(rs))
	for i := range rs {
		r := rs[i]
		if cur, ok := current(&r); ok {
			r.NewPods, r.NewDoomed, r.DoomReason, r.Tolerates = cur.NewPods, cur.NewDoomed, cur.DoomReason, cur.Tolerates
		}
		key := r.Context + "/" + r.Workload()
		seen[key] = true
		look := s.Look(key, &r, now)
		shown, inWindow := s.Shown(key, now)
		if !look.Soured && !inWindow {
			continue
		}
		if out == nil {
			out = slices.Clone(rs)
		}
		if inWindow && !look.Soured {
			r.Reason = shown
			next := s.since[key].Add(look.Held.Truncate(time.Second) + time.Second)
			if until.IsZero() || next.Before(until) {
				until = next
			}
		}
		out[i] = r
	}
	for _, m := range []map[string]bool{s.settled, s.soured} {
		for k := range m {
			if !seen[k] {
				delete(m, k)
			}
		}
	}
	for k := range s.since {
		if !seen[k] {
			delete(s.since, k)
		}
	}
	for k := range s.revision {
		if !seen[k] {
			delete(s.revision, k)
		}
	}
	if out == nil {
		return rs, until
	}
	slices.SortStableFunc(out, func(a, b Rollout) int {
		switch da, db := a.Verdict == classify.RolloutDoomed, b.Verdict == classify.RolloutDoomed; {
		case da && !db:
			return -1
		case db && !da:
			return 1
		}
		return 0
	})
	return out, until
}
