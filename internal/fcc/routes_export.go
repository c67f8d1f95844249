package fcc

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"cpesuite/internal/fcc/export"
	"cpesuite/internal/fcc/results"
	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/httpx"
)

// ExportRequest is the body of POST /FCC/reports/export: the report
// filters (flat, or nested under "filters" as the other report endpoints
// take them) and the file format.
type ExportRequest struct {
	ReportFilterBody
	Filters *ReportFilterBody `json:"filters"`
	// Format is XLSX or CSV, required, exactly as spelled.
	Format *string `json:"format"`
}

func (r *ExportRequest) filter() ReportFilterBody {
	if r.Filters != nil {
		return *r.Filters
	}
	return r.ReportFilterBody
}

func (a *API) exportRoutes(mux *httpx.Mux, h func(httpx.Handler) http.Handler) {
	mux.Handle("POST /FCC/reports/export", h(a.exportReport))
}

// exportReport answers every refusal (400, 404, 503) as a JSON error
// before the first byte of the file. The file's header goes out with its
// first buffered bytes (about 64 KiB in), so a store failure before then
// is still a proper error answer; after it, a failure aborts the response
// (the chunked stream ends without its last chunk, so the client sees an
// error rather than a short file that looks whole).
func (a *API) exportReport(w http.ResponseWriter, r *http.Request) error {
	// The store gate comes first, as on the other report endpoints.
	if err := a.s.requireResultStore(); err != nil {
		return err
	}
	var req ExportRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if req.Format == nil {
		return invalid("format is required (XLSX or CSV)")
	}
	format := export.Format(*req.Format)
	if !format.Valid() {
		return invalid("format %q is not one of XLSX, CSV", *req.Format)
	}
	reports, ok := a.s.results.store.(results.Reports)
	if !ok {
		return apperr.New(apperr.ErrUnavailable, "", "the result store answers no reports")
	}
	ctx, cancel := context.WithTimeout(r.Context(), a.s.cfg.ExportTimeout)
	defer cancel()
	id := identityFrom(ctx)
	body := req.filter()
	f, err := a.s.reportFilter(ctx, id, body)
	if err != nil {
		return err
	}

	// The run id when one run is exported, else the campaign's.
	name := "fcc-report"
	switch {
	case body.RunID != nil:
		name += "-" + strconv.FormatInt(*body.RunID, 10)
	case body.CampaignID != nil:
		name += "-" + strconv.FormatInt(*body.CampaignID, 10)
	}
	name += "-" + a.s.now().UTC().Format("20060102-150405") + format.Ext()

	out := &lazyResponse{w: w, start: func() {
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(a.s.cfg.ExportTimeout))
		w.Header().Set("Content-Type", format.ContentType())
		w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusOK)
	}}
	xw, err := export.New(format, out)
	if err != nil {
		return err
	}
	if !f.MatchesNothing() {
		err = reports.Stream(ctx, f, xw.Write)
	}
	if err == nil {
		err = xw.Close()
	}
	if err == nil {
		// Sent chunked even when small: the answer is always a stream.
		_ = http.NewResponseController(w).Flush()
		return nil
	}
	if !out.started {
		if errors.Is(err, context.DeadlineExceeded) {
			return apperr.New(apperr.ErrUnavailable, "", "the export did not start within FCC_EXPORT_REQUEST_TIMEOUT (%s)", a.s.cfg.ExportTimeout)
		}
		return err
	}
	a.s.log.Error("report export truncated", "format", format, "file", name, "rows", xw.Rows(), "err", err,
		"request_id", httpx.RequestIDFrom(r.Context()))
	panic(http.ErrAbortHandler)
}

// lazyResponse commits the 200 and the file headers on the first write,
// so an error before any byte of the file still gets an error answer.
type lazyResponse struct {
	w       http.ResponseWriter
	start   func()
	started bool
}

func (l *lazyResponse) Write(p []byte) (int, error) {
	if !l.started {
		l.started = true
		l.start()
	}
	return l.w.Write(p)
}
