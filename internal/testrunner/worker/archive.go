package worker

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/fsx"
	"cpesuite/internal/testrunner/wire"
)

// archiveDirName is the folder of DataDir holding one <batch_id>.json
// report per ended batch.
const archiveDirName = "batch-reports"

// archive keeps ended batch reports on disk and an index of their rows in
// memory, so that listing does not read every file.
type archive struct {
	dir   string
	mu    sync.Mutex
	index map[string]wire.BatchReportRow
}

// openArchive creates dir when missing and indexes the reports in it.
// Files that are not reports of ours are skipped with a warning rather
// than stopping the worker.
func openArchive(dir string, log *slog.Logger) (*archive, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the batch report folder: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the batch report folder: %w", err)
	}
	a := &archive{dir: dir, index: map[string]wire.BatchReportRow{}}
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !e.Type().IsRegular() || !batchIDPattern.MatchString(id) {
			continue
		}
		rep, err := a.read(id)
		if err != nil || rep.BatchID != id {
			log.Warn("skipping an unreadable batch report", "file", e.Name(), "error", err)
			continue
		}
		a.index[id] = rep.BatchReportRow
	}
	return a, nil
}

func (a *archive) path(id string) string { return filepath.Join(a.dir, id+".json") }

func (a *archive) read(id string) (wire.BatchReport, error) {
	var rep wire.BatchReport
	b, err := os.ReadFile(a.path(id))
	if err != nil {
		return rep, err
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		return rep, fmt.Errorf("decoding %s: %w", id, err)
	}
	return rep, nil
}

// save writes rep atomically (mode 0600) and indexes it.
func (a *archive) save(rep wire.BatchReport) error {
	if !batchIDPattern.MatchString(rep.BatchID) {
		return fmt.Errorf("batch id %q is not ours", rep.BatchID)
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := fsx.WriteFileAtomic(a.path(rep.BatchID), b); err != nil {
		return err
	}
	a.index[rep.BatchID] = rep.BatchReportRow
	return nil
}

// list returns owner's report rows, newest first.
func (a *archive) list(owner string) []wire.BatchReportRow {
	a.mu.Lock()
	out := []wire.BatchReportRow{}
	for _, row := range a.index {
		if row.Owner == owner {
			out = append(out, row)
		}
	}
	a.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if !out[i].StartedAt.Equal(out[j].StartedAt) {
			return out[i].StartedAt.After(out[j].StartedAt)
		}
		return out[i].BatchID > out[j].BatchID
	})
	return out
}

// get returns owner's report id. A malformed id is 400; a missing report
// and another account's report are the same 404.
func (a *archive) get(owner, id string) (wire.BatchReport, error) {
	if !batchIDPattern.MatchString(id) {
		return wire.BatchReport{}, apperr.Invalid("INVALID_BATCH_ID", "batch id %q is malformed", id)
	}
	notFound := apperr.NotFound("BATCH_REPORT_NOT_FOUND", "batch report %s not found", id)
	a.mu.Lock()
	defer a.mu.Unlock()
	row, ok := a.index[id]
	if !ok || row.Owner != owner {
		return wire.BatchReport{}, notFound
	}
	rep, err := a.read(id)
	if errors.Is(err, fs.ErrNotExist) {
		delete(a.index, id)
		return wire.BatchReport{}, notFound
	}
	if err != nil {
		return wire.BatchReport{}, fmt.Errorf("reading batch report %s: %w", id, err)
	}
	return rep, nil
}

// deleteOwner removes owner's reports and returns how many it removed.
func (a *archive) deleteOwner(owner string) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for id, row := range a.index {
		if row.Owner != owner {
			continue
		}
		if err := os.Remove(a.path(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return n, fmt.Errorf("deleting batch report %s: %w", id, err)
		}
		delete(a.index, id)
		n++
	}
	return n, nil
}
