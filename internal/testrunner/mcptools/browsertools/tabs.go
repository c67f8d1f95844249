package browsertools

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"cpesuite/internal/platform/apperr"
)

// tab is the browser tab of one MCP session.
type tab struct {
	ss    *mcp.ServerSession
	ready chan struct{} // closed once ctx or err is set
	err   error

	b      *browser
	ctx    context.Context
	cancel context.CancelFunc

	// mu serialises the actions of the session: chromedp actions on one tab
	// must not run at the same time.
	mu       sync.Mutex
	lastUsed time.Time // under mu
	idle     *time.Timer
	closed   atomic.Bool
}

// usable reports whether the tab can still run actions.
func (t *tab) usable() bool { return !t.closed.Load() && t.ctx.Err() == nil }

// withTab runs fn in the tab of the calling session, opening the tab (and the
// browser) on first use. fn gets a context bounded by the per-call timeout
// and by the caller's context.
func (s *Server) withTab(ctx context.Context, ss *mcp.ServerSession, fn func(actx context.Context) error) error {
	if ss == nil {
		return apperr.Internal(errors.New("tool call without an MCP session"))
	}
	// Two tries: the tab may be closed for idleness between look-up and lock.
	for range 2 {
		t, err := s.tabFor(ctx, ss)
		if err != nil {
			return err
		}
		t.mu.Lock()
		if !t.usable() {
			t.mu.Unlock()
			s.closeTab(t, "browser or tab went away")
			continue
		}
		t.idle.Stop()
		actx, cancel := context.WithTimeout(t.ctx, s.cfg.Timeout)
		stop := context.AfterFunc(ctx, cancel) // the client cancelled the call
		err = fn(actx)
		stop()
		cancel()
		t.lastUsed = time.Now()
		if !t.closed.Load() {
			t.idle.Reset(s.cfg.IdleTimeout)
		}
		t.mu.Unlock()
		return err
	}
	return apperr.New(apperr.ErrUnavailable, "BROWSER_UNAVAILABLE", "the browser tab of this session could not be kept open")
}

// tabFor returns the ready tab of ss, opening one if the session has none.
func (s *Server) tabFor(ctx context.Context, ss *mcp.ServerSession) (*tab, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errClosed
	}
	t := s.tabs[ss]
	if t != nil && t.readyAndStale() {
		delete(s.tabs, ss)
		t = nil
	}
	opener := t == nil
	if opener {
		if len(s.tabs) >= s.cfg.MaxSessions {
			s.mu.Unlock()
			return nil, apperr.New(apperr.ErrTooManyRequests, "TOO_MANY_SESSIONS",
				"all %d browser tabs are in use by other MCP sessions; end one of them and retry", s.cfg.MaxSessions)
		}
		t = &tab{ss: ss, ready: make(chan struct{})}
		s.tabs[ss] = t
	}
	s.mu.Unlock()

	if opener {
		s.openTab(ctx, t)
	}
	select {
	case <-t.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if t.err != nil {
		return nil, t.err
	}
	return t, nil
}

// readyAndStale reports whether t finished opening and can no longer be used.
func (t *tab) readyAndStale() bool {
	select {
	case <-t.ready:
		return t.err != nil || !t.usable()
	default:
		return false
	}
}

// openTab opens the tab of t.ss in a fresh browser context, so that sessions
// share no cookies or storage, and arranges for it to close when the session
// ends or idles.
func (s *Server) openTab(ctx context.Context, t *tab) {
	defer close(t.ready)
	fail := func(err error) {
		t.err = err
		s.mu.Lock()
		if s.tabs[t.ss] == t {
			delete(s.tabs, t.ss)
		}
		s.mu.Unlock()
	}
	b, err := s.ensureBrowser(ctx)
	if err != nil {
		fail(err)
		return
	}
	tctx, tcancel := chromedp.NewContext(b.ctx, chromedp.WithNewBrowserContext())
	if err := runBounded(ctx, s.cfg.Timeout, func() error { return chromedp.Do(tctx) }, tcancel); err != nil {
		tcancel()
		if errors.Is(err, context.DeadlineExceeded) {
			err = apperr.Wrap(apperr.ErrUnavailable, err, "BROWSER_UNAVAILABLE", fmt.Sprintf("the browser did not open a tab within %s", s.cfg.Timeout))
		} else if !errors.Is(err, context.Canceled) {
			err = apperr.Wrap(apperr.ErrUnavailable, err, "BROWSER_UNAVAILABLE", "the browser could not open a tab")
		}
		fail(err)
		return
	}
	t.b, t.ctx, t.cancel = b, tctx, tcancel
	t.lastUsed = time.Now()
	t.idle = time.AfterFunc(s.cfg.IdleTimeout, func() { s.closeIdle(t) })

	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		tcancel()
		t.closed.Store(true)
		t.err = errClosed
		return
	}
	s.cfg.Log.Info("browser tab opened", "session_id", t.ss.ID())
	go func() {
		_ = t.ss.Wait() // how the session ended does not matter here
		s.closeTab(t, "MCP session ended")
	}()
}

// closeIdle closes t if nobody used it for the idle timeout. The timer can
// fire while a call runs; the lock waits for it and lastUsed tells.
func (s *Server) closeIdle(t *tab) {
	t.mu.Lock()
	idle := time.Since(t.lastUsed) >= s.cfg.IdleTimeout
	t.mu.Unlock()
	if idle {
		s.closeTab(t, "idle")
	}
}

// closeTab closes the tab t once and forgets it.
func (s *Server) closeTab(t *tab, reason string) {
	if t.closed.Swap(true) {
		return
	}
	s.mu.Lock()
	if s.tabs[t.ss] == t {
		delete(s.tabs, t.ss)
	}
	s.mu.Unlock()
	if t.idle != nil {
		t.idle.Stop()
	}
	if t.cancel != nil {
		t.cancel() // closes the target and disposes of its browser context
	}
	s.cfg.Log.Info("browser tab closed", "session_id", t.ss.ID(), "reason", reason)
}

// openTabs is the number of tabs held by sessions, for tests and health.
func (s *Server) openTabs() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tabs)
}
