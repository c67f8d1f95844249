// Package speedtest is the TR-143 test server that diagnostics measure
// against: GET /download streams a requested number of bytes, POST /upload
// swallows a body and reports what it received.
package speedtest

import (
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/httpx"
)

// chunkSize is the write unit of downloads: large enough that syscalls do
// not dominate, small enough that a slow client holds little memory.
const chunkSize = 256 << 10

// payload is pseudo-random so that compression anywhere on the path
// cannot inflate the measured throughput; generated once per process.
var payload = func() []byte {
	b := make([]byte, chunkSize)
	r := rand.New(rand.NewPCG(0x7ec143, 0x5eed))
	for i := 0; i < len(b); i += 8 {
		v := r.Uint64()
		for j := 0; j < 8 && i+j < len(b); j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	return b
}()

// Server serves the download and upload endpoints.
type Server struct {
	cfg     Config
	log     *slog.Logger
	down    prometheus.Counter
	up      prometheus.Counter
	adapter httpx.Adapter
}

// New builds the server and registers its byte counters on reg.
func New(cfg Config, log *slog.Logger, reg prometheus.Registerer) (*Server, error) {
	s := &Server{
		cfg: cfg,
		log: log,
		down: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "speedtest_download_bytes_total", Help: "Bytes written to download clients.",
		}),
		up: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "speedtest_upload_bytes_total", Help: "Bytes read from upload clients.",
		}),
		adapter: httpx.Adapter{Errors: httpx.DefaultErrorWriter, Log: log},
	}
	for _, c := range []prometheus.Collector{s.down, s.up} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// parseSize reads the size query parameter: a decimal byte count from 0 to
// the configured maximum; absent means the default.
func (s *Server) parseSize(r *http.Request) (int64, error) {
	q := r.URL.Query()
	if !q.Has("size") {
		return s.cfg.DefaultBytes, nil
	}
	raw := q.Get("size")
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n < 0 || strings.HasPrefix(raw, "+") {
		return 0, apperr.Invalid("INVALID_SIZE", "size must be a whole number of bytes from 0 to %d, got %q", s.cfg.MaxBytes, raw)
	}
	if n > s.cfg.MaxBytes {
		return 0, apperr.Invalid("SIZE_TOO_LARGE", "size %d exceeds the maximum of %d bytes", n, s.cfg.MaxBytes)
	}
	return n, nil
}

func (s *Server) download(w http.ResponseWriter, r *http.Request) error {
	n, err := s.parseSize(r)
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Length", strconv.FormatInt(n, 10))
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return nil
	}
	for left := n; left > 0; {
		chunk := payload
		if left < int64(len(chunk)) {
			chunk = chunk[:left]
		}
		written, err := w.Write(chunk)
		s.down.Add(float64(written))
		if err != nil {
			// The client went away; the measurement is its business.
			s.log.Debug("download aborted", "sent", n-left+int64(written), "size", n, "err", err)
			return nil
		}
		left -= int64(written)
	}
	return nil
}

// UploadResult is the body answered by POST /upload.
type UploadResult struct {
	Bytes      int64   `json:"bytes"`
	DurationMs float64 `json:"durationMs"`
}

// countingDiscard counts what it swallows into the metric as it goes, so a
// dropped upload is counted too.
type countingDiscard struct {
	n int64
	c prometheus.Counter
}

func (d *countingDiscard) Write(p []byte) (int, error) {
	d.n += int64(len(p))
	d.c.Add(float64(len(p)))
	return len(p), nil
}

func (s *Server) upload(w http.ResponseWriter, r *http.Request) error {
	if r.ContentLength > s.cfg.MaxBytes {
		return apperr.New(apperr.ErrTooLarge, "BODY_TOO_LARGE", "upload of %d bytes exceeds the maximum of %d bytes", r.ContentLength, s.cfg.MaxBytes)
	}
	began := time.Now()
	body := http.MaxBytesReader(w, r.Body, s.cfg.MaxBytes)
	sink := &countingDiscard{c: s.up}
	buf := make([]byte, chunkSize)
	if _, err := io.CopyBuffer(sink, body, buf); err != nil {
		if _, ok := err.(*http.MaxBytesError); ok {
			return apperr.New(apperr.ErrTooLarge, "BODY_TOO_LARGE", "upload exceeds the maximum of %d bytes", s.cfg.MaxBytes)
		}
		return apperr.New(apperr.ErrInvalid, "UPLOAD_INTERRUPTED", "upload body could not be read after %d bytes", sink.n)
	}
	took := time.Since(began)
	return httpx.WriteJSON(w, http.StatusOK, UploadResult{Bytes: sink.n, DurationMs: float64(took.Microseconds()) / 1000})
}
