package httpx_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"cpesuite/internal/platform/httpx"
)

func TestTrackIsIdempotent(t *testing.T) {
	tw := httpx.Track(httptest.NewRecorder())
	if httpx.Track(tw) != tw {
		t.Fatal("Track must reuse an existing TrackingWriter")
	}
}

func TestTrackingWriterRecords(t *testing.T) {
	tests := []struct {
		name        string
		do          func(w http.ResponseWriter)
		wantStatus  int
		wantWritten int64
	}{
		{"nothing", func(http.ResponseWriter) {}, 0, 0},
		{"implicit 200", func(w http.ResponseWriter) { _, _ = w.Write([]byte("abc")) }, 200, 3},
		{"explicit", func(w http.ResponseWriter) { w.WriteHeader(404); _, _ = w.Write([]byte("no")) }, 404, 2},
		{"first status wins", func(w http.ResponseWriter) { w.WriteHeader(201); w.WriteHeader(500) }, 201, 0},
		{"1xx does not start", func(w http.ResponseWriter) { w.WriteHeader(103); w.WriteHeader(202) }, 202, 0},
		{"ReadFrom counts", func(w http.ResponseWriter) {
			// Hide strings.Reader's WriterTo so io.Copy uses our ReadFrom.
			_, _ = io.Copy(w, struct{ io.Reader }{strings.NewReader(strings.Repeat("x", 1000))})
		}, 200, 1000},
		{"Flush starts", func(w http.ResponseWriter) { w.(http.Flusher).Flush() }, 200, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			tw := httpx.Track(rec)
			tt.do(tw)
			if tw.Status() != tt.wantStatus || tw.Written() != tt.wantWritten || tw.Started() != (tt.wantStatus != 0) {
				t.Fatalf("status %d written %d started %v, want %d %d", tw.Status(), tw.Written(), tw.Started(),
					tt.wantStatus, tt.wantWritten)
			}
			if int64(rec.Body.Len()) != tt.wantWritten {
				t.Fatalf("underlying writer got %d bytes, want %d", rec.Body.Len(), tt.wantWritten)
			}
		})
	}
}

func TestTrackingWriterFlushReachesClient(t *testing.T) {
	rec := httptest.NewRecorder()
	httpx.Track(rec).Flush()
	if !rec.Flushed {
		t.Fatal("Flush was not forwarded")
	}
	if httpx.Track(rec).Unwrap() != rec {
		t.Fatal("Unwrap must return the underlying writer")
	}
}

func TestTrackingWriterOverRealServer(t *testing.T) {
	const size = 3 << 20
	log, logs := newLogger()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /download", func(w http.ResponseWriter, _ *http.Request) {
		rf, ok := w.(io.ReaderFrom)
		if !ok {
			t.Error("wrapped writer lost io.ReaderFrom")
			return
		}
		_, _ = rf.ReadFrom(io.LimitReader(zeros{}, size))
	})
	mux.HandleFunc("GET /hijack", func(w http.ResponseWriter, _ *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Errorf("Hijack: %v", err)
			return
		}
		defer conn.Close()
		_, _ = buf.WriteString("HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
		_ = buf.Flush()
	})
	srv := httptest.NewServer(httpx.Chain(mux, httpx.RequestID, httpx.AccessLog(log)))
	defer srv.Close()

	body, resp := get(t, srv.URL+"/download")
	if resp.StatusCode != 200 || len(body) != size {
		t.Fatalf("download: %d, %d bytes", resp.StatusCode, len(body))
	}
	if _, resp = get(t, srv.URL+"/hijack"); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("hijack: %d", resp.StatusCode)
	}
	// The access log line is written after the client has its response;
	// Close waits for the handlers to return.
	srv.Close()
	recs := logs.records(t)
	if len(recs) < 1 || recs[0]["bytes"] != float64(size) || recs[0]["request_id"] == "" {
		t.Fatalf("access log = %v, want %d bytes and a request id", recs, size)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
