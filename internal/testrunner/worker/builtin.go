package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// maxWait is the longest built-in wait.
const maxWait = 600 * time.Second

// waitTool waits args.seconds (0..600), or until the run is stopped.
func waitTool(ctx context.Context, args map[string]any) (string, bool, error) {
	if err := checkArgNames(args, "seconds"); err != nil {
		return argError("%v", err)
	}
	secs, present, err := numberArg(args, "seconds")
	if err != nil {
		return argError("%v", err)
	}
	if !present {
		return argError("seconds is required")
	}
	if secs < 0 || secs > maxWait.Seconds() {
		return argError("seconds must be between 0 and %d", int(maxWait.Seconds()))
	}
	t := time.NewTimer(time.Duration(secs * float64(time.Second)))
	defer t.Stop()
	select {
	case <-t.C:
		return "waited " + strconv.FormatFloat(secs, 'f', -1, 64) + "s", false, nil
	case <-ctx.Done():
		return "", false, context.Cause(ctx)
	}
}

// Limits of the built-in http_request tool.
const (
	httpDefaultTimeout = 30 * time.Second
	httpMaxTimeout     = 120 * time.Second
	httpMaxBody        = 1 << 20
)

// httpTool is the built-in http_request: deterministic checks against HTTP
// APIs such as the ACS management API. It does not follow redirects, so a
// case sees exactly the status the server answered.
type httpTool struct {
	client *http.Client
}

func newHTTPTool() *httpTool {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	return &httpTool{client: &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// call sends one request. The result is "HTTP <code>\n<body>" with the
// body cut at 1 MiB; the verdict is an error for a status of 400 or more
// and for a request that got no response (refused, timed out), whose
// result says why. Only the run's own end is returned as err.
func (h *httpTool) call(ctx context.Context, args map[string]any) (string, bool, error) {
	req, timeout, bad := h.request(ctx, args)
	if bad != "" {
		return argError("%s", bad)
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := h.client.Do(req.WithContext(tctx))
	if err != nil {
		if ctx.Err() != nil {
			return "", false, context.Cause(ctx)
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Sprintf("request failed: no response within %s", timeout), true, nil
		}
		return "request failed: " + err.Error(), true, nil
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, httpMaxBody+1))
	if err != nil {
		if ctx.Err() != nil {
			return "", false, context.Cause(ctx)
		}
		return fmt.Sprintf("HTTP %d\nreading the body failed: %v", resp.StatusCode, err), true, nil
	}
	text := string(body)
	if len(body) > httpMaxBody {
		text = clip(text, httpMaxBody) + "\n[body truncated at 1 MiB]"
	}
	return fmt.Sprintf("HTTP %d\n%s", resp.StatusCode, text), resp.StatusCode >= 400, nil
}

// request builds the request from args; bad says what is wrong with them.
func (h *httpTool) request(ctx context.Context, args map[string]any) (req *http.Request, timeout time.Duration, bad string) {
	if err := checkArgNames(args, "method", "url", "headers", "body", "timeout_seconds"); err != nil {
		return nil, 0, err.Error()
	}
	method, _, err := stringArg(args, "method")
	if err != nil {
		return nil, 0, err.Error()
	}
	method = strings.ToUpper(method)
	if method == "" {
		method = http.MethodGet
	}
	if !isToken(method) {
		return nil, 0, fmt.Sprintf("method %q is not an HTTP method", method)
	}
	raw, present, err := stringArg(args, "url")
	if err != nil {
		return nil, 0, err.Error()
	}
	if !present || raw == "" {
		return nil, 0, "url is required"
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, 0, "url must be an absolute http or https URL"
	}
	body, _, err := stringArg(args, "body")
	if err != nil {
		return nil, 0, err.Error()
	}
	timeout = httpDefaultTimeout
	if secs, present, err := numberArg(args, "timeout_seconds"); err != nil {
		return nil, 0, err.Error()
	} else if present {
		if secs <= 0 || secs > httpMaxTimeout.Seconds() {
			return nil, 0, fmt.Sprintf("timeout_seconds must be more than 0 and at most %d", int(httpMaxTimeout.Seconds()))
		}
		timeout = time.Duration(secs * float64(time.Second))
	}
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err = http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, 0, "the request cannot be built: " + err.Error()
	}
	headers, err := headerArg(args["headers"])
	if err != nil {
		return nil, 0, err.Error()
	}
	for k, v := range headers {
		if !isToken(k) || strings.ContainsAny(v, "\r\n\x00") {
			return nil, 0, fmt.Sprintf("header %q is not a valid header", k)
		}
		req.Header.Set(k, v)
	}
	if host := req.Header.Get("Host"); host != "" {
		req.Host = host
	}
	return req, timeout, ""
}

// headerArg reads the headers argument: an object of string values.
func headerArg(raw any) (map[string]string, error) {
	switch m := raw.(type) {
	case nil:
		return nil, nil
	case map[string]string:
		return m, nil
	case map[string]any:
		out := make(map[string]string, len(m))
		for k, v := range m {
			s, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("header %q must be a string, not %T", k, v)
			}
			out[k] = s
		}
		return out, nil
	}
	return nil, fmt.Errorf("headers must be an object of strings, not %T", raw)
}

// isToken reports whether s is an RFC 9110 token (method and header names).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			continue
		}
		if !strings.ContainsRune("!#$%&'*+-.^_`|~", rune(c)) {
			return false
		}
	}
	return true
}
