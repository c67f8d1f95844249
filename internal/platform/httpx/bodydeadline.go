package httpx

import (
	"errors"
	"io"
	"net"
	"net/http"
	"time"
)

// Body read limits. A server-wide ReadTimeout would bound the whole body
// transfer (and cancel long-polls once the body is read), so instead the
// body must keep moving: every BodyProgressBytes that arrive, or the end of
// the body, buy another BodyStallTimeout. A client that trickles a byte every
// few seconds never earns an extension and is cut off, while a speed-test
// upload of gigabytes at any real rate runs as long as it needs.
const (
	DefaultBodyStallTimeout  = 30 * time.Second
	DefaultBodyProgressBytes = 4 << 10
)

// BodyDeadline cuts off request bodies that stall: the connection's read
// deadline is set to stall from the first byte of the handler, moved forward
// whenever progress bytes have arrived since it was last set, and cleared
// when the body ends, so that a handler which then waits (a long-poll) is
// not cancelled by it. Requests without a body (GET, WebSocket upgrades)
// are left alone. It must wrap the raw server ResponseWriter: it is
// installed by NewServer.
func BodyDeadline(stall time.Duration, progress int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, guarded := r.Body.(*stallBody); guarded || r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
			// Bodiless, or already guarded (one server's handler reused by
			// another, as the configuration service's dual HTTP/HTTPS mode does).
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		if err := rc.SetReadDeadline(time.Now().Add(stall)); err != nil {
			// Not a plain connection (a test recorder): nothing to bound.
			next.ServeHTTP(w, r)
			return
		}
		r.Body = &stallBody{ReadCloser: r.Body, w: w, rc: rc, stall: stall, progress: progress, left: r.ContentLength}
		next.ServeHTTP(w, r)
	})
}

type stallBody struct {
	io.ReadCloser
	w        http.ResponseWriter
	rc       *http.ResponseController
	stall    time.Duration
	progress int64
	// left counts down a declared Content-Length (-1 when chunked): net/http
	// starts its background read as soon as the last byte is in, often before
	// the handler asks for EOF, and that read must not inherit our deadline.
	left  int64
	since int64
	done  bool
}

func (b *stallBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if b.done {
		return n, err
	}
	b.since += int64(n)
	if b.left > 0 {
		b.left -= int64(n)
	}
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		// net/http would keep the connection and read the rest of the
		// trickle as the next request's header: make it hang up instead.
		b.done = true
		b.w.Header().Set("Connection", "close")
	case err != nil || b.left == 0:
		// The end (or a failure the handler will see): no deadline past it.
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	case b.since >= b.progress:
		b.since = 0
		_ = b.rc.SetReadDeadline(time.Now().Add(b.stall))
	}
	return n, err
}

func (b *stallBody) Close() error {
	if !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return b.ReadCloser.Close()
}
