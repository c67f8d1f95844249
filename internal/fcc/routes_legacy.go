package fcc

import (
	"bytes"
	"io"
	"net/http"

	"cpesuite/internal/fcc/legacy"
	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/httpx"
)

func (a *API) legacyRoutes(mux *httpx.Mux, h func(httpx.Handler) http.Handler) {
	mux.Handle("POST /FCC/admin/legacy-import/start", h(a.legacyStart))
	mux.Handle("POST /FCC/admin/legacy-import/status", h(a.legacyStatus))
	mux.Handle("POST /FCC/admin/legacy-import/stop", h(a.legacyStop))
}

// legacyImporter applies the rules every legacy endpoint shares: scope ALL
// (9403) first, then an importer must be wired.
func (a *API) legacyImporter(r *http.Request) (*legacy.Importer, error) {
	if !identityFrom(r.Context()).All {
		return nil, denied("the legacy import needs scope ALL")
	}
	if a.s.legacy == nil {
		return nil, apperr.New(apperr.ErrUnavailable, "", "the legacy import is not configured")
	}
	return a.s.legacy, nil
}

// decodeOptional reads a JSON body that may be absent or empty ({} and
// nothing mean the same).
func decodeOptional(r *http.Request, v any) error {
	b, err := io.ReadAll(io.LimitReader(r.Body, jsonLimit+1))
	if err != nil {
		return invalid("reading the body: %v", err)
	}
	if len(b) > jsonLimit {
		return invalid("body larger than %d bytes", jsonLimit)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.ContentLength = int64(len(b))
	return decode(r, v)
}

func (a *API) legacyStart(w http.ResponseWriter, r *http.Request) error {
	imp, err := a.legacyImporter(r)
	if err != nil {
		return err
	}
	var req legacy.StartRequest
	if err := decodeOptional(r, &req); err != nil {
		return err
	}
	st, err := imp.Start(r.Context(), req)
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, st)
}

func (a *API) legacyStatus(w http.ResponseWriter, r *http.Request) error {
	imp, err := a.legacyImporter(r)
	if err != nil {
		return err
	}
	st, err := imp.Status(r.Context())
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, st)
}

func (a *API) legacyStop(w http.ResponseWriter, r *http.Request) error {
	imp, err := a.legacyImporter(r)
	if err != nil {
		return err
	}
	var req legacy.StopRequest
	if err := decodeOptional(r, &req); err != nil {
		return err
	}
	st, err := imp.Stop(r.Context(), req)
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, st)
}
