package httpx

import (
	"bufio"
	"io"
	"net"
	"net/http"
)

// TrackingWriter wraps a ResponseWriter and records the status and the
// number of body bytes written, so middleware can log them and the error
// adapter can tell whether a response has already started.
type TrackingWriter struct {
	http.ResponseWriter
	status  int
	written int64
}

// Track wraps w. If w already is a *TrackingWriter it is returned as is, so
// stacked middleware share one record instead of nesting wrappers.
func Track(w http.ResponseWriter) *TrackingWriter {
	if tw, ok := w.(*TrackingWriter); ok {
		return tw
	}
	return &TrackingWriter{ResponseWriter: w}
}

// WriteHeader records the status and forwards it. Informational (1xx)
// statuses other than 101 do not start the response, so they are not
// recorded.
func (w *TrackingWriter) WriteHeader(status int) {
	if w.status == 0 && (status >= 200 || status == http.StatusSwitchingProtocols) {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

// Write records an implicit 200 and the byte count.
func (w *TrackingWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(p)
	w.written += int64(n)
	return n, err
}

// ReadFrom keeps the underlying writer's io.ReaderFrom fast path (sendfile
// for large downloads) while still counting bytes.
func (w *TrackingWriter) ReadFrom(r io.Reader) (int64, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	var n int64
	var err error
	if rf, ok := w.ResponseWriter.(io.ReaderFrom); ok {
		n, err = rf.ReadFrom(r)
	} else {
		// writerOnly hides our own ReadFrom so io.Copy cannot recurse.
		n, err = io.Copy(writerOnly{w.ResponseWriter}, r)
	}
	w.written += n
	return n, err
}

// Flush sends buffered data to the client; streaming handlers (speed test,
// server-sent events) type-assert http.Flusher, so the wrapper must keep it.
func (w *TrackingWriter) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Hijack forwards to the underlying writer for protocol upgrades.
func (w *TrackingWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *TrackingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Status returns the status sent so far, or 0 if the response has not
// started.
func (w *TrackingWriter) Status() int { return w.status }

// Written returns the number of body bytes written.
func (w *TrackingWriter) Written() int64 { return w.written }

// Started reports whether the status line has been sent, after which the
// status can no longer change.
func (w *TrackingWriter) Started() bool { return w.status != 0 }

type writerOnly struct{ io.Writer }

var (
	_ http.Flusher  = (*TrackingWriter)(nil)
	_ http.Hijacker = (*TrackingWriter)(nil)
	_ io.ReaderFrom = (*TrackingWriter)(nil)
)
