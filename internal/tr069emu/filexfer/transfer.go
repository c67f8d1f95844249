package filexfer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"cpesuite/internal/cwmp"
	"cpesuite/internal/platform/httpauth"
)

// MaxRedirects is how many redirects a transfer follows, each to an http
// or https URL.
const MaxRedirects = 3

const (
	userAgent = "cpesuite-tr069emu"
	// maxErrorDrain bounds how much of a refused answer is read so that
	// its connection can be reused.
	maxErrorDrain = 64 << 10
)

var (
	errTooManyRedirects    = fmt.Errorf("more than %d redirects", MaxRedirects)
	errUnsupportedRedirect = errors.New("redirected to a URL that is neither http nor https")
)

// dialError marks failures to reach the server (name resolution
// included), which are 9015 rather than a failed transfer.
type dialError struct{ err error }

func (e *dialError) Error() string { return e.err.Error() }
func (e *dialError) Unwrap() error { return e.err }

var dialer = &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}

// client is shared by every transfer: there is no per-client state, and
// the context of each request bounds it.
var client = &http.Client{
	Transport: &http.Transport{
		// A CPE reaches its file server directly, not through the
		// emulator host's proxy settings.
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dialer.DialContext(ctx, network, addr)
			if err != nil {
				return nil, &dialError{err}
			}
			return c, nil
		},
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   15 * time.Second,
		ResponseHeaderTimeout: 60 * time.Second,
		ExpectContinueTimeout: time.Second,
		// The file's bytes are what is counted and checked against
		// FileSize, not a decompressed rendering of them.
		DisableCompression: true,
	},
	CheckRedirect: checkRedirect,
}

func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > MaxRedirects {
		return errTooManyRedirects
	}
	if !supportedScheme(req.URL.Scheme) {
		return errUnsupportedRedirect
	}
	return nil
}

func supportedScheme(s string) bool { return s == "http" || s == "https" }

// checkURL validates a transfer URL; a non-zero code is the fault.
func checkURL(raw string) (cwmp.FaultCode, string) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		// url.Error quotes the URL, password included: not shown.
		return cwmp.FaultFileTransferFailure, "the URL cannot be parsed"
	case u.Scheme == "":
		return cwmp.FaultUnsupportedProtocol, "the URL names no protocol (http and https only)"
	case !supportedScheme(u.Scheme):
		return cwmp.FaultUnsupportedProtocol, fmt.Sprintf("unsupported protocol %q (http and https only)", u.Scheme)
	case u.Host == "":
		return cwmp.FaultFileTransferFailure, "the URL has no host"
	}
	return 0, ""
}

// shownURL is the URL as fault strings show it: no credentials, and no
// query, which may carry a signature or token.
func shownURL(raw string) string {
	if raw == "" {
		return "an empty URL"
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "the given URL"
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}

// do sends req, through httpauth when there are credentials.
func do(req *http.Request, username, password string) (*http.Response, error) {
	if username == "" && password == "" {
		return client.Do(req)
	}
	return (&httpauth.Client{HTTP: client, Username: username, Password: password}).Do(req)
}

// requestFault maps a failure to get an answer; fallback is the RPC's
// generic failure.
func requestFault(err error, fallback cwmp.FaultCode) cwmp.FaultCode {
	var de *dialError
	switch {
	case errors.Is(err, errUnsupportedRedirect):
		return cwmp.FaultUnsupportedProtocol
	case errors.Is(err, httpauth.ErrUnauthorized), errors.Is(err, httpauth.ErrNoSupportedChallenge):
		return cwmp.FaultFileTransferAuthFailure
	case errors.As(err, &de):
		return cwmp.FaultFileServerUnreachable
	}
	return fallback
}

// statusFault maps an answer's status; 0 is success.
func statusFault(code int, fallback cwmp.FaultCode) cwmp.FaultCode {
	switch {
	case code >= 200 && code <= 299:
		return 0
	case code == http.StatusUnauthorized, code == http.StatusForbidden, code == http.StatusProxyAuthRequired:
		return cwmp.FaultFileTransferAuthFailure
	}
	return fallback
}

// describe renders an error for a fault string: the cause without the
// request URL that url.Error adds (the fault string shows its own).
func describe(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, httpauth.ErrUnauthorized):
		return "the server refused the credentials"
	case errors.Is(err, httpauth.ErrNoSupportedChallenge):
		return "the server asks for an authentication scheme that is not supported"
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}

func fault(code cwmp.FaultCode, what, rawURL, reason string, n int64) Result {
	return Result{Bytes: n, Fault: cwmp.FaultStruct{FaultCode: code,
		FaultString: fmt.Sprintf("%s of %s failed: %s", what, shownURL(rawURL), reason)}}
}

// drain reads a little of a refused answer so that the connection can be
// reused, and closes it.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorDrain))
	_ = resp.Body.Close()
}

func fetch(ctx context.Context, rawURL, username, password string, fileSize uint32, maxBytes int64) Result {
	const what = "download"
	if code, reason := checkURL(rawURL); code != 0 {
		return fault(code, what, rawURL, reason, 0)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return fault(cwmp.FaultFileTransferFailure, what, rawURL, "the request cannot be built", 0)
	}
	req.Header.Set("User-Agent", userAgent)
	resp, err := do(req, username, password)
	if err != nil {
		return fault(requestFault(err, cwmp.FaultFileTransferFailure), what, rawURL, describe(err), 0)
	}
	if code := statusFault(resp.StatusCode, cwmp.FaultFileTransferFailure); code != 0 {
		drain(resp)
		return fault(code, what, rawURL, "server answered "+resp.Status, 0)
	}
	defer resp.Body.Close()
	limit := maxBytes
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	if resp.ContentLength > limit {
		return fault(cwmp.FaultFileTransferFailure, what, rawURL,
			fmt.Sprintf("the file has %d bytes, more than the %d allowed", resp.ContentLength, limit), 0)
	}
	if fileSize != 0 && resp.ContentLength >= 0 && resp.ContentLength != int64(fileSize) {
		return fault(cwmp.FaultFileCorrupted, what, rawURL,
			fmt.Sprintf("the server announces %d bytes, FileSize is %d", resp.ContentLength, fileSize), 0)
	}
	n, err := io.Copy(io.Discard, io.LimitReader(resp.Body, limit+1))
	switch {
	case err != nil:
		return fault(cwmp.FaultDownloadIncomplete, what, rawURL, fmt.Sprintf("stopped after %d bytes: %s", n, describe(err)), n)
	case n > limit:
		return fault(cwmp.FaultFileTransferFailure, what, rawURL, fmt.Sprintf("the file has more than the %d bytes allowed", limit), n)
	case fileSize != 0 && n != int64(fileSize):
		return fault(cwmp.FaultFileCorrupted, what, rawURL, fmt.Sprintf("received %d bytes, FileSize is %d", n, fileSize), n)
	}
	return Result{Bytes: n}
}

func send(ctx context.Context, rawURL, username, password string, body []byte) Result {
	const what = "upload"
	if code, reason := checkURL(rawURL); code != 0 {
		return fault(code, what, rawURL, reason, 0)
	}
	// A bytes.Reader body gives the request a GetBody, so that httpauth
	// can send it again with credentials and redirects can replay it.
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, rawURL, bytes.NewReader(body))
	if err != nil {
		return fault(cwmp.FaultUploadFailure, what, rawURL, "the request cannot be built", 0)
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := do(req, username, password)
	if err != nil {
		return fault(requestFault(err, cwmp.FaultUploadFailure), what, rawURL, describe(err), 0)
	}
	defer drain(resp)
	if code := statusFault(resp.StatusCode, cwmp.FaultUploadFailure); code != 0 {
		return fault(code, what, rawURL, "server answered "+resp.Status, 0)
	}
	return Result{Bytes: int64(len(body))}
}
