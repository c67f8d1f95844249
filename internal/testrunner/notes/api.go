package notes

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/testrunner/identity"
	"cpesuite/internal/testrunner/wire"
)

// Routes registers the QA notes API. Every route needs the caller identity
// (identity.Guard); any authenticated role may use it.
func (s *Store) Routes(mux *httpx.Mux) {
	a := httpx.Adapter{Errors: wire.ErrorWriter(), Log: s.log}
	h := func(fn identity.Handler) http.HandlerFunc { return a.H(s.guard.H(fn)) }
	mux.HandleFunc("GET /api/notes", h(s.handleList))
	mux.HandleFunc("POST /api/notes", h(s.handleCreate))
	mux.HandleFunc("GET /api/notes/raw", h(s.handleRaw))
	mux.HandleFunc("GET /api/notes/_meta/options", h(s.handleOptions))
	mux.HandleFunc("POST /api/notes/reindex", h(s.handleReindex))
	mux.HandleFunc("GET /api/notes/{id}", h(s.handleGet))
	mux.HandleFunc("PUT /api/notes/{id}", h(s.handleUpdate))
	mux.HandleFunc("DELETE /api/notes/{id}", h(s.handleDelete))
}

func decode(r *http.Request, v any) error {
	return httpx.DecodeJSON(r, v, httpx.DecodeOptions{MaxBytes: maxRequestBytes, DisallowUnknownFields: true})
}

// pathID returns the checked {id} of the path.
func pathID(r *http.Request) (string, error) {
	id := r.PathValue("id")
	return id, checkID(id)
}

func (s *Store) handleList(w http.ResponseWriter, r *http.Request, _ identity.Identity) error {
	f, err := parseFilter(r.URL.Query(), s.opts)
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, s.list(f))
}

func (s *Store) handleGet(w http.ResponseWriter, r *http.Request, _ identity.Identity) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	n, err := s.get(id)
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, n)
}

func (s *Store) handleCreate(w http.ResponseWriter, r *http.Request, caller identity.Identity) error {
	var in input
	if err := decode(r, &in); err != nil {
		return err
	}
	if in.ID != "" {
		if err := checkID(in.ID); err != nil {
			return err
		}
	}
	f, err := in.check(s.opts)
	if err != nil {
		return err
	}
	n, err := s.create(in.ID, f, caller.Username)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/api/notes/"+url.PathEscape(n.ID))
	return httpx.WriteJSON(w, http.StatusCreated, n)
}

func (s *Store) handleUpdate(w http.ResponseWriter, r *http.Request, _ identity.Identity) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	var in updateInput
	if err := decode(r, &in); err != nil {
		return err
	}
	if in.ID != "" && in.ID != id {
		return apperr.Invalid("ID_MISMATCH", "the body's id %q differs from the path's %q; a note cannot be renamed", clip(in.ID), id)
	}
	f, err := in.check(s.opts)
	if err != nil {
		return err
	}
	n, err := s.update(id, f, in.ExpectedVersion)
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, n)
}

func (s *Store) handleDelete(w http.ResponseWriter, r *http.Request, _ identity.Identity) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	hard := false
	if v := r.URL.Query().Get("hard"); v != "" {
		if hard, err = strconv.ParseBool(v); err != nil {
			return apperr.Invalid("INVALID_QUERY", "query parameter hard must be true or false, not %q", clip(v))
		}
	}
	if hard {
		if err := s.remove(id); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	n, err := s.deprecate(id)
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, n)
}

func (s *Store) handleRaw(w http.ResponseWriter, _ *http.Request, _ identity.Identity) error {
	return httpx.WriteJSON(w, http.StatusOK, s.all())
}

func (s *Store) handleOptions(w http.ResponseWriter, _ *http.Request, _ identity.Identity) error {
	return httpx.WriteJSON(w, http.StatusOK, s.opts)
}

// reindexResult is the answer of POST /api/notes/reindex.
type reindexResult struct {
	Triggered        bool                       `json:"triggered"`
	Detail           string                     `json:"detail"`
	KnowledgeSummary map[string]json.RawMessage `json:"knowledge_summary,omitempty"`
}

// handleReindex calls the webhook and waits for its answer. Without a
// configured URL there is nothing to trigger, which is not an error (200,
// triggered false); a failed call is the knowledge service's failure
// (502 KNOWLEDGE_REFRESH_FAILED, body still carrying triggered false).
func (s *Store) handleReindex(w http.ResponseWriter, r *http.Request, _ identity.Identity) error {
	summary, err := s.hook.call(r.Context(), refreshPayload{Source: "qa-notes", Reason: reasonReindex})
	switch {
	case errors.Is(err, errNotConfigured):
		return httpx.WriteJSON(w, http.StatusOK, reindexResult{Detail: "no knowledge service is configured (setting " + settingRefreshURL + " is empty)"})
	case err != nil:
		var se *upstreamStatusError
		msg := "the knowledge service could not be reached"
		if errors.As(err, &se) {
			msg = "the knowledge service answered HTTP " + strconv.Itoa(se.status)
		} else if errors.Is(err, errBadURL) {
			msg = errBadURL.Error()
		}
		return apperr.Wrap(apperr.ErrUpstream, err, "KNOWLEDGE_REFRESH_FAILED", msg).
			WithDetails(map[string]any{"triggered": false})
	}
	res := reindexResult{Triggered: true, Detail: "the knowledge service is refreshing the notes", KnowledgeSummary: summary}
	return httpx.WriteJSON(w, http.StatusOK, res)
}
