package filexfer

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"cpesuite/internal/cwmp"
	"cpesuite/internal/platform/httpauth"
)

const password = "s3cr3t-Pw0rd" // distinctive, to be sought in fault strings

var file = bytes.Repeat([]byte("firmware"), 125) // 1000 bytes

// fileServer serves the files and upload targets of the tests, and
// remembers the uploads it accepted.
type fileServer struct {
	*httptest.Server
	mu      sync.Mutex
	uploads map[string][]byte
	done    chan struct{}
}

func newFileServer(t *testing.T) *fileServer {
	t.Helper()
	fs := &fileServer{uploads: map[string][]byte{}, done: make(chan struct{})}
	creds := httpauth.StaticCredentials{"u": password}
	basic := &httpauth.Verifier{Realm: "x", Basic: true, Creds: creds}
	digest := &httpauth.Verifier{Realm: "x", Digest: true, Creds: creds}
	serveFile := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(file)))
		_, _ = w.Write(file)
	})
	accept := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fs.mu.Lock()
		fs.uploads[r.URL.RequestURI()] = b
		fs.mu.Unlock()
		w.WriteHeader(http.StatusCreated)
	})
	stall := func(r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-fs.done:
		}
	}
	mux := http.NewServeMux()
	mux.Handle("GET /file", serveFile)
	mux.Handle("GET /basic/file", basic.Middleware(serveFile))
	mux.Handle("GET /digest/file", digest.Middleware(serveFile))
	mux.Handle("PUT /upload", accept)
	mux.Handle("PUT /basic/upload", basic.Middleware(accept))
	mux.Handle("PUT /digest/upload", digest.Middleware(accept))
	mux.HandleFunc("/forbidden", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", http.StatusForbidden) })
	mux.HandleFunc("/error", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", http.StatusInternalServerError) })
	mux.HandleFunc("GET /chunked", func(w http.ResponseWriter, r *http.Request) {
		for range 3 {
			_, _ = w.Write(make([]byte, 1000))
			_ = http.NewResponseController(w).Flush()
		}
	})
	mux.HandleFunc("GET /short", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		_, _ = w.Write(make([]byte, 500))
	})
	mux.HandleFunc("/stall", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		stall(r)
	})
	mux.HandleFunc("GET /stall-body", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		_, _ = w.Write(make([]byte, 100))
		_ = http.NewResponseController(w).Flush()
		stall(r)
	})
	mux.HandleFunc("GET /redirect/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		target := "/file"
		if n > 1 {
			target = fmt.Sprintf("/redirect/%d", n-1)
		}
		http.Redirect(w, r, target, http.StatusFound)
	})
	mux.HandleFunc("/to-ftp", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "ftp://127.0.0.1/file", http.StatusFound)
	})
	fs.Server = httptest.NewServer(mux)
	t.Cleanup(fs.Close)
	t.Cleanup(func() { close(fs.done) }) // runs first: frees stalled handlers
	return fs
}

func (fs *fileServer) upload(path string) ([]byte, bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	b, ok := fs.uploads[path]
	return b, ok
}

func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

// checkFault checks a result's code, and that a fault explains itself
// without the password.
func checkFault(t *testing.T, r Result, want cwmp.FaultCode) {
	t.Helper()
	if r.Fault.FaultCode != want {
		t.Fatalf("FaultCode %d (%q), want %d", r.Fault.FaultCode, r.Fault.FaultString, want)
	}
	if want == 0 {
		if r.Fault.FaultString != "" {
			t.Fatalf("FaultString %q on success", r.Fault.FaultString)
		}
		return
	}
	if r.Fault.FaultString == "" {
		t.Fatal("empty FaultString")
	}
	if strings.Contains(r.Fault.FaultString, password) {
		t.Fatalf("FaultString shows the password: %q", r.Fault.FaultString)
	}
}

func TestFetch(t *testing.T) {
	fs := newFileServer(t)
	tls := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(tls.Close)
	refused := "http://" + closedPort(t) + "/file"
	withPassword := strings.Replace(fs.URL, "http://", "http://u:"+password+"@", 1)
	cases := []struct {
		name, url, user, pass string
		fileSize              uint32
		maxBytes              int64
		timeout               time.Duration
		code                  cwmp.FaultCode
		bytes                 int64
	}{
		{name: "file", url: fs.URL + "/file", bytes: 1000},
		{name: "file size matches", url: fs.URL + "/file", fileSize: 1000, bytes: 1000},
		{name: "chunked", url: fs.URL + "/chunked", fileSize: 3000, bytes: 3000},
		{name: "exactly the limit", url: fs.URL + "/file", maxBytes: 1000, bytes: 1000},
		{name: "basic", url: fs.URL + "/basic/file", user: "u", pass: password, bytes: 1000},
		{name: "digest", url: fs.URL + "/digest/file", user: "u", pass: password, bytes: 1000},
		{name: "3 redirects", url: fs.URL + "/redirect/3", bytes: 1000},
		{name: "no credentials", url: fs.URL + "/basic/file", code: cwmp.FaultFileTransferAuthFailure},
		{name: "wrong password basic", url: fs.URL + "/basic/file", user: "u", pass: password + "x", code: cwmp.FaultFileTransferAuthFailure},
		{name: "wrong password digest", url: fs.URL + "/digest/file", user: "u", pass: password + "x", code: cwmp.FaultFileTransferAuthFailure},
		{name: "unknown user", url: fs.URL + "/digest/file", user: "v", pass: password, code: cwmp.FaultFileTransferAuthFailure},
		{name: "403", url: fs.URL + "/forbidden", code: cwmp.FaultFileTransferAuthFailure},
		{name: "404", url: fs.URL + "/missing", code: cwmp.FaultFileTransferFailure},
		{name: "404 with password in URL", url: withPassword + "/missing?token=" + password, code: cwmp.FaultFileTransferFailure},
		{name: "500", url: fs.URL + "/error", code: cwmp.FaultFileTransferFailure},
		{name: "refused", url: refused, user: "u", pass: password, code: cwmp.FaultFileServerUnreachable},
		{name: "dns", url: "http://nohost.invalid/file", code: cwmp.FaultFileServerUnreachable},
		{name: "ftp", url: "ftp://127.0.0.1/file", code: cwmp.FaultUnsupportedProtocol},
		{name: "tftp with password", url: "tftp://u:" + password + "@127.0.0.1/file", code: cwmp.FaultUnsupportedProtocol},
		{name: "empty URL", url: "", code: cwmp.FaultUnsupportedProtocol},
		{name: "no host", url: "http:///file", code: cwmp.FaultFileTransferFailure},
		{name: "bad escape", url: "http://u:" + password + "@127.0.0.1/%zz", code: cwmp.FaultFileTransferFailure},
		{name: "4 redirects", url: fs.URL + "/redirect/4", code: cwmp.FaultFileTransferFailure},
		{name: "redirect to ftp", url: fs.URL + "/to-ftp", code: cwmp.FaultUnsupportedProtocol},
		{name: "untrusted certificate", url: tls.URL + "/file", code: cwmp.FaultFileTransferFailure},
		{name: "truncated", url: fs.URL + "/short", code: cwmp.FaultDownloadIncomplete, bytes: 500},
		{name: "size mismatch", url: fs.URL + "/file", fileSize: 999, code: cwmp.FaultFileCorrupted},
		{name: "size mismatch chunked", url: fs.URL + "/chunked", fileSize: 2999, code: cwmp.FaultFileCorrupted, bytes: 3000},
		{name: "over the limit", url: fs.URL + "/file", maxBytes: 999, code: cwmp.FaultFileTransferFailure},
		{name: "over the limit chunked", url: fs.URL + "/chunked", maxBytes: 100, code: cwmp.FaultFileTransferFailure, bytes: 101},
		{name: "stalled answer", url: fs.URL + "/stall", timeout: 200 * time.Millisecond, code: cwmp.FaultFileTransferFailure},
		// Long enough for the first 100 bytes to arrive on a loaded machine.
		{name: "stalled body", url: fs.URL + "/stall-body", timeout: 2 * time.Second, code: cwmp.FaultDownloadIncomplete, bytes: 100},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			timeout := c.timeout
			if timeout == 0 {
				timeout = 30 * time.Second
			}
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			r := Fetch(ctx, c.url, c.user, c.pass, c.fileSize, c.maxBytes)
			checkFault(t, r, c.code)
			if r.Bytes != c.bytes {
				t.Fatalf("Bytes %d, want %d", r.Bytes, c.bytes)
			}
		})
	}
}

func TestSend(t *testing.T) {
	fs := newFileServer(t)
	refused := "http://" + closedPort(t) + "/upload"
	body := bytes.Repeat([]byte("log line\n"), 1000)
	cases := []struct {
		name, path, url, user, pass string
		body                        []byte
		timeout                     time.Duration
		code                        cwmp.FaultCode
	}{
		{name: "upload", path: "/upload", body: body},
		{name: "empty", path: "/upload", body: nil},
		// The body is sent twice: without and then with credentials.
		{name: "basic", path: "/basic/upload", user: "u", pass: password, body: body},
		{name: "digest", path: "/digest/upload", user: "u", pass: password, body: body},
		{name: "no credentials", path: "/digest/upload", body: body, code: cwmp.FaultFileTransferAuthFailure},
		{name: "wrong password", path: "/digest/upload", user: "u", pass: "nope", body: body, code: cwmp.FaultFileTransferAuthFailure},
		{name: "403", path: "/forbidden", body: body, code: cwmp.FaultFileTransferAuthFailure},
		{name: "404", path: "/missing", body: body, code: cwmp.FaultUploadFailure},
		{name: "405", path: "/file", body: body, code: cwmp.FaultUploadFailure},
		{name: "500", path: "/error", body: body, code: cwmp.FaultUploadFailure},
		{name: "refused", url: refused, user: "u", pass: password, body: body, code: cwmp.FaultFileServerUnreachable},
		{name: "dns", url: "http://nohost.invalid/upload", body: body, code: cwmp.FaultFileServerUnreachable},
		{name: "ftp", url: "ftp://u:" + password + "@127.0.0.1/upload", body: body, code: cwmp.FaultUnsupportedProtocol},
		{name: "stalled answer", path: "/stall", body: body, timeout: 200 * time.Millisecond, code: cwmp.FaultUploadFailure},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			timeout := c.timeout
			if timeout == 0 {
				timeout = 30 * time.Second
			}
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			// Each case its own URI, to find its upload among the others.
			uri := c.path + "?case=" + url.QueryEscape(c.name)
			target := c.url
			if target == "" {
				target = fs.URL + uri
			}
			r := Send(ctx, target, c.user, c.pass, c.body)
			checkFault(t, r, c.code)
			got, stored := fs.upload(uri)
			if c.code != 0 {
				if r.Bytes != 0 {
					t.Fatalf("Bytes %d after a failure", r.Bytes)
				}
				if stored {
					t.Fatal("the server stored a failed upload")
				}
				return
			}
			if r.Bytes != int64(len(c.body)) || !stored || !bytes.Equal(got, c.body) {
				t.Fatalf("Bytes %d; server stored %d bytes (%v), want %d", r.Bytes, len(got), stored, len(c.body))
			}
		})
	}
}
