package notes

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"cpesuite/internal/testutil"
)

// Every save calls the knowledge service once, with the token.
func TestWebhookOnEverySave(t *testing.T) {
	tests := []struct {
		name   string
		save   func(e *env)
		noteID string
	}{
		{"create", func(e *env) { e.create(note("Hooked")) }, "hooked"},
		{"update", func(e *env) { e.call("PUT", "/api/notes/existing", note("Changed"), http.StatusOK) }, "existing"},
		{"soft delete", func(e *env) { e.call("DELETE", "/api/notes/existing", nil, http.StatusOK) }, "existing"},
		{"hard delete", func(e *env) { e.call("DELETE", "/api/notes/existing?hard=true", nil, http.StatusNoContent) }, "existing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.create(note("Existing"))
			e.store.hook.wait()
			already := len(e.hook.received())
			tt.save(e)
			e.store.hook.wait()
			calls := e.hook.received()[already:]
			if len(calls) != 1 {
				t.Fatalf("%d webhook calls, want 1: %+v", len(calls), calls)
			}
			c := calls[0]
			if c.Method != "POST" || c.Auth != "Bearer "+hookToken || c.ContentType != "application/json" {
				t.Fatalf("webhook request: %s, Authorization %q, Content-Type %q", c.Method, c.Auth, c.ContentType)
			}
			want := refreshPayload{Source: "qa-notes", Reason: "save", NoteIDs: []string{tt.noteID}}
			if !reflect.DeepEqual(c.Payload, want) {
				t.Fatalf("payload %s, want %+v", c.raw, want)
			}
		})
	}
}

func TestNoWebhookCalls(t *testing.T) {
	e := newEnv(t)
	e.create(note("First"))
	e.store.hook.wait()
	already := len(e.hook.received())
	// Refused writes and reads do not call it.
	e.fail("POST", "/api/notes", note(""), http.StatusBadRequest, "TITLE_REQUIRED")
	e.fail("PUT", "/api/notes/first", note("x", "expected_version", 9), http.StatusConflict, "VERSION_CONFLICT")
	e.call("GET", "/api/notes", nil, http.StatusOK)
	e.call("DELETE", "/api/notes/first", nil, http.StatusOK)
	e.store.hook.wait()
	e.call("DELETE", "/api/notes/first", nil, http.StatusOK) // deprecated already: no change
	e.store.hook.wait()
	if n := len(e.hook.received()) - already; n != 1 {
		t.Fatalf("%d calls, want 1 (the first soft delete)", n)
	}
	// Without a URL nothing is called and saves still work.
	e.settings.set(settingRefreshURL, "")
	e.create(note("Second"))
	e.store.hook.wait()
	if n := len(e.hook.received()) - already; n != 1 {
		t.Fatalf("a save without a URL called the webhook")
	}
}

func TestWebhookWithoutToken(t *testing.T) {
	e := newEnv(t)
	e.settings.set(settingRefreshToken, "")
	e.create(note("Tokenless"))
	e.store.hook.wait()
	if c := e.hook.received(); len(c) != 1 || c[0].Auth != "" {
		t.Fatalf("calls %+v, want one without Authorization", c)
	}
}

// A failing knowledge service never fails a save; the failure is logged
// without the token.
func TestWebhookFailureDoesNotFailTheSave(t *testing.T) {
	tests := []struct {
		name  string
		setup func(e *env)
		log   string
	}{
		{"500", func(e *env) { e.hook.respond(http.StatusInternalServerError, `{"error":"boom"}`) }, "answered HTTP 500"},
		{"unreachable", func(e *env) { e.settings.set(settingRefreshURL, "http://"+testutil.FreeAddr(e.t)+"/refresh") }, "calling http://"},
		{"not http", func(e *env) { e.settings.set(settingRefreshURL, "ftp://kb/refresh") }, "not an http or https URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			tt.setup(e)
			n := e.create(note("Still saved"))
			e.call("PUT", "/api/notes/still-saved", note("Still saved", "expected_version", n.Version), http.StatusOK)
			e.store.hook.wait()
			logs := e.logs.String()
			if !strings.Contains(logs, "knowledge refresh after a QA note save failed") || !strings.Contains(logs, tt.log) {
				t.Fatalf("failure not logged with %q:\n%s", tt.log, logs)
			}
			if strings.Contains(logs, hookToken) {
				t.Fatal("the token is in the logs")
			}
			if got, err := e.store.get("still-saved"); err != nil || got.Version != 2 {
				t.Fatalf("note after failed webhooks: %+v, %v", got, err)
			}
		})
	}
}

// Saves made while a call is in flight are folded into one more call, so
// a burst never piles up goroutines or requests.
func TestWebhookCoalescesSavesDuringACall(t *testing.T) {
	e := newEnv(t)
	gate := make(chan struct{})
	e.hook.mu.Lock()
	e.hook.gate = gate
	e.hook.mu.Unlock()

	e.create(note("First"))
	testutil.Eventually(t, testutil.MinDeadline, "the first webhook call", func() bool { return len(e.hook.received()) == 1 })
	var later []string
	for _, title := range []string{"Delta", "Bravo", "Charlie"} {
		later = append(later, e.create(note(title)).ID)
	}
	e.call("PUT", "/api/notes/bravo", note("Bravo again"), http.StatusOK)
	if n := len(e.hook.received()); n != 1 {
		t.Fatalf("%d calls while the first is in flight, want 1", n)
	}
	close(gate)
	e.store.hook.wait()
	calls := e.hook.received()
	if len(calls) != 2 {
		t.Fatalf("%d calls, want 2: %+v", len(calls), calls)
	}
	if want := []string{"first"}; !reflect.DeepEqual(calls[0].Payload.NoteIDs, want) {
		t.Fatalf("first call ids %v, want %v", calls[0].Payload.NoteIDs, want)
	}
	if want := []string{"bravo", "charlie", "delta"}; !reflect.DeepEqual(calls[1].Payload.NoteIDs, want) {
		t.Fatalf("second call ids %v, want %v (later %v)", calls[1].Payload.NoteIDs, want, later)
	}
}

func TestWebhookCoalescingIsBounded(t *testing.T) {
	e := newEnv(t)
	gate := make(chan struct{})
	e.hook.mu.Lock()
	e.hook.gate = gate
	e.hook.mu.Unlock()
	e.create(note("Opener"))
	testutil.Eventually(t, testutil.MinDeadline, "the first webhook call", func() bool { return len(e.hook.received()) == 1 })
	for i := range maxPendingIDs + 5 {
		e.store.hook.notify(fmt.Sprintf("n%03d", i))
	}
	close(gate)
	e.store.hook.wait()
	calls := e.hook.received()
	if len(calls) != 2 || len(calls[1].Payload.NoteIDs) != maxPendingIDs || !calls[1].Payload.NoteIDsTruncated {
		t.Fatalf("second call names %d ids, truncated %v; want %d and true",
			len(calls[1].Payload.NoteIDs), calls[1].Payload.NoteIDsTruncated, maxPendingIDs)
	}
}

func TestReindex(t *testing.T) {
	summary := `{"added":1,"updated":2,"unchanged":3,"deleted":0,"errors":[],"fetched":6,"status":"ok","took_ms":12}`
	tests := []struct {
		name   string
		setup  func(e *env)
		status int
		want   map[string]any
	}{
		{
			name: "summary passed on", status: 200,
			setup: func(e *env) { e.hook.respond(http.StatusOK, summary) },
			want: map[string]any{"triggered": true, "detail": "the knowledge service is refreshing the notes",
				"knowledge_summary": map[string]any{"added": 1.0, "updated": 2.0, "unchanged": 3.0, "deleted": 0.0,
					"errors": []any{}, "fetched": 6.0, "status": "ok"}},
		},
		{
			name: "answer without the summary fields", status: 200,
			setup: func(e *env) { e.hook.respond(http.StatusAccepted, `{"added":1,"status":"queued"}`) },
			want:  map[string]any{"triggered": true, "detail": "the knowledge service is refreshing the notes"},
		},
		{
			name: "answer not JSON", status: 200,
			setup: func(e *env) { e.hook.respond(http.StatusOK, `refreshing`) },
			want:  map[string]any{"triggered": true, "detail": "the knowledge service is refreshing the notes"},
		},
		{
			name: "no URL configured", status: 200,
			setup: func(e *env) { e.settings.set(settingRefreshURL, "") },
			want:  map[string]any{"triggered": false, "detail": "no knowledge service is configured (setting knowledge_refresh_url is empty)"},
		},
		{
			name: "knowledge service fails", status: 502,
			setup: func(e *env) { e.hook.respond(http.StatusServiceUnavailable, `{"detail":"down"}`) },
			want: map[string]any{"triggered": false, "code": "KNOWLEDGE_REFRESH_FAILED",
				"detail": "the knowledge service answered HTTP 503"},
		},
		{
			name: "knowledge service unreachable", status: 502,
			setup: func(e *env) { e.settings.set(settingRefreshURL, "http://"+testutil.FreeAddr(e.t)+"/refresh?key=k") },
			want: map[string]any{"triggered": false, "code": "KNOWLEDGE_REFRESH_FAILED",
				"detail": "the knowledge service could not be reached"},
		},
		{
			name: "URL not http", status: 502,
			setup: func(e *env) { e.settings.set(settingRefreshURL, "file:///etc/passwd") },
			want: map[string]any{"triggered": false, "code": "KNOWLEDGE_REFRESH_FAILED",
				"detail": "knowledge_refresh_url is not an http or https URL"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			tt.setup(e)
			var got map[string]any
			decodeInto(t, e.call("POST", "/api/notes/reindex", nil, tt.status), &got)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("answer %v, want %v", got, tt.want)
			}
			if !tt.want["triggered"].(bool) {
				return
			}
			calls := e.hook.received()
			if len(calls) != 1 || calls[0].Auth != "Bearer "+hookToken ||
				!reflect.DeepEqual(calls[0].Payload, refreshPayload{Source: "qa-notes", Reason: "reindex", NoteIDs: []string{}}) {
				t.Fatalf("webhook calls %+v", calls)
			}
			if !strings.Contains(string(calls[0].raw), `"note_ids":[]`) {
				t.Fatalf("payload %s: note_ids must be an array", calls[0].raw)
			}
		})
	}
}

func TestSummaryOf(t *testing.T) {
	full := `{"added":1,"updated":0,"unchanged":0,"deleted":0,"errors":0,"fetched":1,"status":"done"}`
	tests := []struct {
		answer string
		fields int
	}{
		{full, 7},
		{`{"added":1}`, 0},
		{`[]`, 0},
		{``, 0},
		{`{"summary":` + full + `}`, 0},
	}
	for _, tt := range tests {
		got := summaryOf([]byte(tt.answer))
		if len(got) != tt.fields {
			t.Errorf("summaryOf(%s) = %v, want %d fields", tt.answer, got, tt.fields)
		}
	}
	var m map[string]any
	b, _ := json.Marshal(summaryOf([]byte(full)))
	if err := json.Unmarshal(b, &m); err != nil || m["status"] != "done" {
		t.Fatalf("summary re-encodes as %s", b)
	}
}
