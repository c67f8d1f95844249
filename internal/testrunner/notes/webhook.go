package notes

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"
)

// Setting keys the store reads.
const (
	settingRefreshURL   = "knowledge_refresh_url"
	settingRefreshToken = "knowledge_refresh_token"
)

// Webhook reasons.
const (
	reasonSave    = "save"
	reasonReindex = "reindex"
)

// maxPendingIDs bounds the ids one coalesced save call names; the
// knowledge service re-pulls every note anyway, the ids are a hint.
const maxPendingIDs = 100

// saveCallTimeout bounds a call made after a save even when the
// configured HTTP client has no time-out, so the one goroutine cannot hang.
const saveCallTimeout = 30 * time.Second

// maxAnswerBytes bounds the part of the webhook's answer that is read.
const maxAnswerBytes = 1 << 20

// summaryFields are the counters of the knowledge service's answer that
// POST /api/notes/reindex passes on as knowledge_summary.
var summaryFields = []string{"added", "updated", "unchanged", "deleted", "errors", "fetched", "status"}

// refreshPayload is the webhook's JSON body. note_ids names the notes
// saved (created, updated or deleted) since the previous call, sorted, at
// most maxPendingIDs of them; it is empty for a reindex.
type refreshPayload struct {
	Source           string   `json:"source"`
	Reason           string   `json:"reason"`
	NoteIDs          []string `json:"note_ids"`
	NoteIDsTruncated bool     `json:"note_ids_truncated,omitempty"`
}

var (
	errNotConfigured = errors.New("knowledge_refresh_url is not configured")
	errBadURL        = errors.New("knowledge_refresh_url is not an http or https URL")
)

// refresher calls the knowledge service's refresh endpoint. Saves are
// announced asynchronously through at most one goroutine: saves made while
// a call is in flight are folded into one follow-up call, so a burst of
// saves costs two calls, not one goroutine each.
type refresher struct {
	client  *http.Client
	setting func(string) string
	log     *slog.Logger

	mu        sync.Mutex
	idle      *sync.Cond
	running   bool
	pending   bool
	ids       []string
	truncated bool
}

func newRefresher(c *http.Client, setting func(string) string, log *slog.Logger) *refresher {
	r := &refresher{client: c, setting: setting, log: log}
	r.idle = sync.NewCond(&r.mu)
	return r
}

// notify announces that note id was saved. It never blocks on the
// network.
func (r *refresher) notify(id string) {
	if r.setting(settingRefreshURL) == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pending = true
	if !slices.Contains(r.ids, id) {
		if len(r.ids) < maxPendingIDs {
			r.ids = append(r.ids, id)
		} else {
			r.truncated = true
		}
	}
	if !r.running {
		r.running = true
		go r.drain()
	}
}

func (r *refresher) drain() {
	for {
		r.mu.Lock()
		if !r.pending {
			r.running = false
			r.idle.Broadcast()
			r.mu.Unlock()
			return
		}
		p := refreshPayload{Source: "qa-notes", Reason: reasonSave, NoteIDs: r.ids, NoteIDsTruncated: r.truncated}
		r.pending, r.ids, r.truncated = false, nil, false
		r.mu.Unlock()
		slices.Sort(p.NoteIDs)
		ctx, cancel := context.WithTimeout(context.Background(), saveCallTimeout)
		_, err := r.call(ctx, p)
		cancel()
		if err != nil && !errors.Is(err, errNotConfigured) {
			// The notes are saved; the knowledge service catches up at
			// the next save or reindex.
			r.log.Warn("knowledge refresh after a QA note save failed", "notes", p.NoteIDs, "error", err.Error())
		}
	}
}

// wait returns once no save call is running or pending.
func (r *refresher) wait() {
	r.mu.Lock()
	for r.running {
		r.idle.Wait()
	}
	r.mu.Unlock()
}

// call posts p and returns the summary fields of the answer (nil when it
// has none). Errors never carry the token, nor the URL's query.
func (r *refresher) call(ctx context.Context, p refreshPayload) (map[string]json.RawMessage, error) {
	raw := r.setting(settingRefreshURL)
	if raw == "" {
		return nil, errNotConfigured
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errBadURL
	}
	where := u.Scheme + "://" + u.Host + u.Path
	if p.NoteIDs == nil {
		p.NoteIDs = []string{}
	}
	body, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("building the request to %s failed", where)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "cpesuite-qa-notes")
	if tok := r.setting(settingRefreshToken); tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("calling %s: %w", where, err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, &upstreamStatusError{where: where, status: resp.StatusCode}
	}
	return summaryOf(answer), nil
}

type upstreamStatusError struct {
	where  string
	status int
}

func (e *upstreamStatusError) Error() string {
	return fmt.Sprintf("%s answered HTTP %d", e.where, e.status)
}

// summaryOf picks the summary fields out of a JSON object answer that has
// all of them; the values pass through as the knowledge service wrote
// them. Any other answer has no summary.
func summaryOf(answer []byte) map[string]json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal(answer, &obj) != nil {
		return nil
	}
	out := make(map[string]json.RawMessage, len(summaryFields))
	for _, k := range summaryFields {
		v, ok := obj[k]
		if !ok {
			return nil
		}
		out[k] = v
	}
	return out
}
