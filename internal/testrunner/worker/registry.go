package worker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"regexp"
	"sort"

	"cpesuite/internal/testrunner/wire"
)

// maxCompleted is how many finished runs the registry keeps (spec Limits:
// GET /api/runs returns the last 100 runs).
const maxCompleted = 100

// Run ids are "r-" and batch ids "b-" followed by 16 lowercase hex digits
// from crypto/rand: URL-safe, unguessable, and a batch id names a file of
// the archive, so its alphabet is checked before any path is built.
var batchIDPattern = regexp.MustCompile(`^b-[0-9a-f]{16}$`)

func newID(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return prefix + hex.EncodeToString(b[:])
}

// newRunLocked registers a running run in phase loading; w.mu is held.
func (w *Worker) newRunLocked(owner, file, model, batchID string, dryRun bool) *run {
	w.seq++
	ctx, cancel := context.WithCancelCause(w.baseCtx)
	r := &run{
		id:       newID("r-"),
		owner:    owner,
		testFile: file,
		model:    model,
		batchID:  batchID,
		dryRun:   dryRun,
		seq:      w.seq,
		started:  w.now(),
		cancel:   cancel,
		done:     make(chan struct{}),
		status:   wire.StatusRunning,
		phase:    wire.PhaseLoading,
		steps:    []wire.Step{},
	}
	r.ctx = ctx
	w.runs[r.id] = r
	return r
}

// retireLocked moves a finished run to the completed list, dropping the
// oldest completed runs beyond maxCompleted; w.mu is held.
func (w *Worker) retireLocked(r *run) {
	if w.active == r {
		w.active = nil
	}
	w.completed = append(w.completed, r)
	for len(w.completed) > maxCompleted {
		delete(w.runs, w.completed[0].id)
		w.completed[0] = nil
		w.completed = w.completed[1:]
	}
}

// ownedRun returns the caller's run id; another account's run is as
// unknown as a run that never existed, for admins too (spec Authentication
// A 4).
func (w *Worker) ownedRun(owner, id string) (*run, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	r, ok := w.runs[id]
	if !ok || r.owner != owner {
		return nil, false
	}
	return r, true
}

// listRuns returns the runs in memory, newest first, of owner or of every
// account when owner is "".
func (w *Worker) listRuns(owner string) []*run {
	w.mu.Lock()
	out := make([]*run, 0, len(w.runs))
	for _, r := range w.runs {
		if owner == "" || r.owner == owner {
			out = append(out, r)
		}
	}
	w.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].seq > out[j].seq })
	return out
}

// clearCompleted removes the finished runs of owner, or of every account
// when owner is "", and returns how many it removed. Running runs stay.
func (w *Worker) clearCompleted(owner string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	kept := w.completed[:0]
	n := 0
	for _, r := range w.completed {
		if owner == "" || r.owner == owner {
			delete(w.runs, r.id)
			n++
			continue
		}
		kept = append(kept, r)
	}
	clear(w.completed[len(kept):])
	w.completed = kept
	return n
}
