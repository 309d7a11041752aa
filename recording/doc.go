// Package recording is the flight recorder's store: what `doomwatch record` writes and `doomwatch
// replay` reads. The model is fed only by batches (contract.Batch) at the source's clock, so a
// recording of (time, batch) pairs and the clusters' names, replayed into a fresh model, gives that
// model exactly. A Writer appends batches (Create, Append, Close); a Reader gives the span, the
// state at any moment (Restore) and the batches after it (Batches).
//
// The recording is a directory of segments, each a snapshot of every object followed by the
// batches after it, compressed as one zstd stream in checksummed frames; an object's new version
// is a diff against its previous one. FORMAT.md describes the format; BENCHMARKS.md says why it is
// this one (a journal, not SQLite) and what each part of it buys.
package recording
