package kube

import (
	"context"
	"errors"
	"strconv"
	"time"

	"doomwatch/contract"
	"doomwatch/sanitize"
)

// maxSettle bounds how long Settle waits for a busy cluster to go quiet once synced: a snapshot of
// a cluster that never stops changing is still a snapshot.
const maxSettle = 2 * time.Second

// ErrNotSynced is returned by Settle when the source did not sync before its context ended.
var ErrNotSynced = errors.New("informers did not sync")

// Settle hands every batch to apply until the source has synced and then delivered nothing for a
// few intervals (or maxSettle has passed since it synced), for one-shot output such as --once. It
// returns an error wrapping ErrNotSynced, naming what is still missing, when ctx ends first.
func (s *Source) Settle(ctx context.Context, apply func(contract.Batch)) error {
	quiet := max(3*s.interval, 200*time.Millisecond)
	var health contract.Health
	var syncedAt time.Time
	timer := time.NewTimer(quiet)
	defer timer.Stop()
	for {
		select {
		case b, ok := <-s.Batches():
			if !ok {
				if err := s.Err(); err != nil {
					return err
				}
				if health.Synced {
					return nil
				}
				return &lineError{msg: "the source stopped before the informers synced", err: ErrNotSynced}
			}
			apply(b)
			if b.Health != nil {
				health = *b.Health
			}
			if health.Synced && syncedAt.IsZero() {
				syncedAt = time.Now()
			}
			if health.Synced && time.Since(syncedAt) >= maxSettle {
				return nil
			}
			timer.Reset(quiet)
		case <-timer.C:
			if health.Synced {
				return nil
			}
			timer.Reset(quiet)
		case <-ctx.Done():
			if health.Synced {
				return nil
			}
			return notSynced(health)
		}
	}
}

func notSynced(h contract.Health) error {
	msg := "timed out waiting for the informers to sync"
	if h.WatchError != "" {
		msg += ": " + h.WatchError
	} else if h.PodsSeen > 0 {
		msg += " (" + strconv.Itoa(h.PodsSeen) + " pods so far)"
	}
	return &lineError{msg: sanitize.Text(msg), err: ErrNotSynced}
}
