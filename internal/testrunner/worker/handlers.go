package worker

import (
	"errors"
	"fmt"
	"net/http"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/testrunner/identity"
	"cpesuite/internal/testrunner/testcase"
	"cpesuite/internal/testrunner/wire"
)

// maxBatchFiles bounds one batch.
const maxBatchFiles = 500

// loadCase returns the case of file; an unknown file is 404 naming it, a
// stored file that does not parse 422 (as on the case routes), and other
// failures keep the store's kind (400 for a malformed name).
func (w *Worker) loadCase(file string) (*testcase.Case, error) {
	c, err := w.cases.Get(file)
	if errors.Is(err, apperr.ErrNotFound) {
		return nil, apperr.Wrap(apperr.ErrNotFound, err, "TEST_NOT_FOUND", fmt.Sprintf("test file %q not found", file))
	}
	if err != nil {
		return nil, testcase.StoredFileError(file, err)
	}
	if c == nil {
		return nil, apperr.Internal(errors.New("case store returned no case and no error for " + file))
	}
	return c, nil
}

func (w *Worker) postRun(rw http.ResponseWriter, r *http.Request, id identity.Identity) error {
	q := r.URL.Query()
	file := q.Get("test_file")
	if file == "" {
		return apperr.Invalid("INVALID_QUERY", "query parameter test_file is required")
	}
	dryRun, err := boolQuery(r, "dry_run")
	if err != nil {
		return err
	}
	ex, model, err := w.executor(q.Get("model"))
	if err != nil {
		return err
	}
	c, err := w.loadCase(file)
	if err != nil {
		return err
	}
	run, err := w.startRun(id.Username, file, model, ex, c, dryRun)
	if err != nil {
		return err
	}
	w.log.Info("run started", "run_id", run.id, "owner", id.Username, "test_file", file, "model", model, "dry_run", dryRun)
	return httpx.WriteJSON(rw, http.StatusOK, wire.StartRun{RunID: run.id})
}

func (w *Worker) postStop(rw http.ResponseWriter, r *http.Request, id identity.Identity) error {
	stopped, batches := w.stopOwner(r.Context(), id.Username)
	if len(stopped)+len(batches) > 0 {
		w.log.Info("runs stopped", "owner", id.Username, "run_ids", stopped, "batch_ids", batches)
	}
	return httpx.WriteJSON(rw, http.StatusOK, wire.StopResult{Stopped: stopped, Batches: batches})
}

func (w *Worker) postBatch(rw http.ResponseWriter, r *http.Request, id identity.Identity) error {
	var req wire.StartBatchRequest
	if err := httpx.DecodeJSON(r, &req, httpx.DecodeOptions{DisallowUnknownFields: true}); err != nil {
		return err
	}
	switch {
	case len(req.TestFiles) == 0:
		return apperr.Invalid("INVALID_BATCH", "test_files must not be empty")
	case len(req.TestFiles) > maxBatchFiles:
		return apperr.Invalid("INVALID_BATCH", "a batch holds at most %d test files, not %d", maxBatchFiles, len(req.TestFiles))
	}
	for i, f := range req.TestFiles {
		if f == "" {
			return apperr.Invalid("INVALID_BATCH", "test_files[%d] is empty", i)
		}
	}
	ex, model, err := w.executor(req.Model)
	if err != nil {
		return err
	}
	// Each file is checked now, so that a typo fails the request instead
	// of one test of the batch; each is loaded again at its turn.
	for _, f := range req.TestFiles {
		if _, err := w.loadCase(f); err != nil {
			return err
		}
	}
	b, err := w.startBatch(id.Username, req.TestFiles, model, ex, req.DryRun)
	if err != nil {
		return err
	}
	w.log.Info("batch started", "batch_id", b.id, "owner", id.Username, "tests", len(b.files), "model", model, "dry_run", req.DryRun)
	return httpx.WriteJSON(rw, http.StatusOK, wire.StartBatch{BatchID: b.id, TestFiles: b.files, Total: len(b.files)})
}

func (w *Worker) getBatch(rw http.ResponseWriter, _ *http.Request, id identity.Identity) error {
	return httpx.WriteJSON(rw, http.StatusOK, w.batchStatus(id.Username))
}

func (w *Worker) getBatchReport(rw http.ResponseWriter, _ *http.Request, id identity.Identity) error {
	rep, ok := w.latestReport(id.Username)
	if !ok {
		return apperr.NotFound("BATCH_NOT_FOUND", "you have no batch on this worker")
	}
	return httpx.WriteJSON(rw, http.StatusOK, rep)
}

func (w *Worker) listBatchReports(rw http.ResponseWriter, _ *http.Request, id identity.Identity) error {
	return httpx.WriteJSON(rw, http.StatusOK, w.archive.list(id.Username))
}

func (w *Worker) getArchivedReport(rw http.ResponseWriter, r *http.Request, id identity.Identity) error {
	rep, err := w.archive.get(id.Username, r.PathValue("batch_id"))
	if err != nil {
		return err
	}
	return httpx.WriteJSON(rw, http.StatusOK, rep)
}

func (w *Worker) deleteBatchReports(rw http.ResponseWriter, _ *http.Request, id identity.Identity) error {
	n, err := w.archive.deleteOwner(id.Username)
	if err != nil {
		return err
	}
	return httpx.WriteJSON(rw, http.StatusOK, map[string]int{"deleted": n})
}

func (w *Worker) listRunsHandler(rw http.ResponseWriter, r *http.Request, id identity.Identity) error {
	all, err := boolQuery(r, "all")
	if err != nil {
		return err
	}
	owner := id.Username
	if all {
		if err := requireAdmin(id, "listing every account's runs (all=true)"); err != nil {
			return err
		}
		owner = ""
	}
	now := w.now()
	runs := w.listRuns(owner)
	out := make([]wire.RunSummary, 0, len(runs))
	for _, run := range runs {
		if len(out) == maxCompleted {
			break // a running run beside 100 finished ones: still the last 100
		}
		out = append(out, run.summary(now))
	}
	return httpx.WriteJSON(rw, http.StatusOK, out)
}

func (w *Worker) activeRuns(rw http.ResponseWriter, _ *http.Request, id identity.Identity) error {
	ids := []string{}
	for _, run := range w.listRuns(id.Username) {
		if run.running() {
			ids = append(ids, run.id)
		}
	}
	return httpx.WriteJSON(rw, http.StatusOK, ids)
}

func (w *Worker) getRun(rw http.ResponseWriter, r *http.Request, id identity.Identity) error {
	run, ok := w.ownedRun(id.Username, r.PathValue("run_id"))
	if !ok {
		return runNotFound(r.PathValue("run_id"))
	}
	return httpx.WriteJSON(rw, http.StatusOK, run.detail(w.now()))
}

func runNotFound(id string) error {
	return apperr.NotFound("RUN_NOT_FOUND", "run %q not found", id)
}

// deleteRuns clears the caller's finished runs; an admin clears every
// account's. Running runs stay.
func (w *Worker) deleteRuns(rw http.ResponseWriter, _ *http.Request, id identity.Identity) error {
	owner := id.Username
	if id.IsAdmin() {
		owner = ""
	}
	return httpx.WriteJSON(rw, http.StatusOK, map[string]int{"cleared": w.clearCompleted(owner)})
}

func (w *Worker) getSettings(rw http.ResponseWriter, _ *http.Request, _ identity.Identity) error {
	return httpx.WriteJSON(rw, http.StatusOK, w.settings.view())
}

func (w *Worker) putSettings(rw http.ResponseWriter, r *http.Request, id identity.Identity) error {
	if err := requireAdmin(id, "changing settings"); err != nil {
		return err
	}
	var in map[string]any
	if err := httpx.DecodeJSON(r, &in, httpx.DecodeOptions{}); err != nil {
		return err
	}
	if in == nil {
		return apperr.Invalid("INVALID_SETTING", "the body must be a JSON object of settings")
	}
	if err := w.settings.replace(in); err != nil {
		return err
	}
	w.log.Info("settings replaced", "by", id.Username)
	return httpx.WriteJSON(rw, http.StatusOK, w.settings.view())
}

func (w *Worker) deleteSettings(rw http.ResponseWriter, _ *http.Request, id identity.Identity) error {
	if err := requireAdmin(id, "clearing settings"); err != nil {
		return err
	}
	if err := w.settings.clear(); err != nil {
		return err
	}
	w.log.Info("settings cleared", "by", id.Username)
	return httpx.WriteJSON(rw, http.StatusOK, map[string]bool{"cleared": true})
}

// uiConfig is GET /api/ui-config: read-only, non-secret values the UI needs.
type uiConfig struct {
	JiraBaseURL string `json:"jira_base_url"`
}

func (w *Worker) getUIConfig(rw http.ResponseWriter, _ *http.Request, _ identity.Identity) error {
	return httpx.WriteJSON(rw, http.StatusOK, uiConfig{JiraBaseURL: w.Setting("jira_base_url")})
}
