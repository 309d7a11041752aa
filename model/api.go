package model

// This file is the package's contract. The bodies are filled in by the model work (issue 3).

import "time"

// Model is doomwatch's state. It is not safe for concurrent use: one goroutine (the bubbletea
// program, or the --once printer) owns it.
type Model struct{}

// New returns an empty model.
func New(cfg Config) *Model { panic("model.New: not implemented yet") }

// Apply applies one batch at time now: classifies each changed pod once, records evidence and
// bumps the version. Classification happens here, never per frame.
func (m *Model) Apply(b *Batch, now time.Time) { panic("not implemented yet") }

// Expire drops evidence older than the window at now and re-evaluates what depended on it.
func (m *Model) Expire(now time.Time) { panic("not implemented yet") }

// Version changes whenever the model's content changes.
func (m *Model) Version() uint64 { panic("not implemented yet") }

// Health is the last connection health the source reported.
func (m *Model) Health() Health { panic("not implemented yet") }

// Counts returns pods per verdict.
func (m *Model) Counts() Counts { panic("not implemented yet") }

// Pod returns the pod with key namespace/name, or nil.
func (m *Model) Pod(key string) *Pod { panic("not implemented yet") }

// View returns the pods q selects, in q's order. The slice is cached until the model or the
// query changes; callers must not modify it.
func (m *Model) View(q Query) []*Pod { panic("not implemented yet") }

// Nodes returns every node's cluster at now: suspect nodes first, then by failures, then name.
func (m *Model) Nodes(now time.Time) []Node { panic("not implemented yet") }

// Rollouts returns every Deployment's rollout, doomed first, then by namespace/name.
func (m *Model) Rollouts() []Rollout { panic("not implemented yet") }

// Failures returns the ledger within the window at now, oldest first.
func (m *Model) Failures(now time.Time) []Failure { panic("not implemented yet") }

// Sanitize makes untrusted API text safe for a terminal: escape sequences and control characters
// are removed, newlines and tabs become spaces.
func Sanitize(s string) string { panic("not implemented yet") }
