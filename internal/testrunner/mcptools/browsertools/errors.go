package browsertools

import (
	"context"
	"errors"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/chromedp"

	"cpesuite/internal/platform/apperr"
)

// toolError is what an MCP client sees of a failed call: a stable code and a
// message fit for a test report. The go-sdk turns it into a result with
// isError set.
type toolError struct {
	code, msg string
}

func (e *toolError) Error() string { return e.code + ": " + e.msg }

// call names the failed operation for a message and the log.
type call struct {
	tool     string
	selector string // empty when the tool waits for no element
}

// toolErr maps err to a toolError and logs the internal cause.
func (s *Server) toolErr(c call, err error) error {
	pub := s.public(c, err)
	s.cfg.Log.Info("browser tool failed", "tool", c.tool, "selector", c.selector, "code", pub.Code, "err", err)
	return &toolError{code: pub.Code, msg: pub.Message}
}

func (s *Server) public(c call, err error) *apperr.Error {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return errClosed
	}
	if e, ok := apperr.As(err); ok {
		return apperr.Public(e)
	}
	var le *chromedp.LoadError
	if errors.As(err, &le) {
		return apperr.New(apperr.ErrUpstream, "NAVIGATION_FAILED", "the page did not load: %s", le.ErrorText)
	}
	var ce *cdproto.Error
	if c.selector != "" && errors.As(err, &ce) && ce.Message == "DOM Error while querying" {
		return apperr.Invalid("INVALID_SELECTOR", "%q is not a valid CSS selector", c.selector)
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded) && c.selector != "":
		return apperr.NotFound("ELEMENT_NOT_FOUND", "no element matching CSS selector %q appeared (and became usable) within %s", c.selector, s.cfg.Timeout)
	case errors.Is(err, context.DeadlineExceeded):
		return apperr.New(apperr.ErrUnavailable, "TIMEOUT", "%s did not finish within %s", c.tool, s.cfg.Timeout)
	case errors.Is(err, context.Canceled):
		return apperr.New(apperr.ErrUnavailable, "CANCELLED", "%s was cancelled (the call or the browser tab ended)", c.tool)
	}
	// The browser's own words (a DevTools error, a page exception) help the
	// author of a case and hold nothing of this server.
	var ee *chromedp.ExceptionError
	switch {
	case errors.As(err, &ce):
		return apperr.New(apperr.ErrUpstream, "BROWSER_ERROR", "%s failed in the browser: %s", c.tool, ce.Message)
	case errors.As(err, &ee):
		return apperr.New(apperr.ErrUpstream, "BROWSER_ERROR", "%s failed in the page: %s", c.tool, ee.Error())
	}
	return apperr.New(apperr.ErrUpstream, "BROWSER_ERROR", "%s failed in the browser", c.tool)
}
