package browsertools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/chromedp/chromedp"

	"cpesuite/internal/platform/apperr"
)

// browser is one running chromium process with its own profile directory.
type browser struct {
	ctx         context.Context // the first tab's chromedp context; its life is the browser's
	cancel      context.CancelFunc
	allocCancel context.CancelFunc
	dir         string
	output      *tailBuffer
}

// startBrowser launches chromium and waits until it answers, for at most
// startTimeout or until ctx ends.
func startBrowser(ctx context.Context, cfg Config) (*browser, error) {
	if _, err := os.Stat(cfg.ChromiumPath); err != nil {
		return nil, apperr.Wrap(apperr.ErrUnavailable, err, "BROWSER_UNAVAILABLE",
			fmt.Sprintf("the browser is not installed at %s", cfg.ChromiumPath))
	}
	// A fresh profile per process: no cookies, cache or history survive a
	// restart, and nothing of one run of the suite leaks into the next.
	dir, err := os.MkdirTemp("", "cpesuite-chromium-")
	if err != nil {
		return nil, apperr.Wrap(apperr.ErrUnavailable, err, "BROWSER_UNAVAILABLE", "the browser profile directory could not be created")
	}
	out := &tailBuffer{max: 8 << 10}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(cfg.ChromiumPath),
		chromedp.UserDataDir(dir),
		chromedp.CombinedOutput(out),
		chromedp.WindowSize(1280, 1024),
		// The stand runs as root in a closed network: no sandbox (root
		// cannot have one), no GPU, and nothing that phones home.
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-domain-reliability", true),
	}
	// The defaults bring headless, no-first-run, disable-background-networking
	// and disable-sync.
	allocCtx, allocCancel := chromedp.NewExecAllocator(context.Background(),
		append(chromedp.DefaultExecAllocatorOptions[:], opts...)...)
	bctx, bcancel := chromedp.NewContext(allocCtx)
	b := &browser{ctx: bctx, cancel: bcancel, allocCancel: allocCancel, dir: dir, output: out}

	// The first Run binds the browser's life to its context, so it must run
	// on bctx itself, never on a context with a deadline.
	if err := runBounded(ctx, startTimeout, func() error { return chromedp.Do(bctx) }, bcancel); err != nil {
		b.shutdown()
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, apperr.Wrap(apperr.ErrUnavailable, err, "BROWSER_UNAVAILABLE",
				fmt.Sprintf("the browser did not start within %s", startTimeout))
		}
		return nil, apperr.Wrap(apperr.ErrUnavailable, fmt.Errorf("%w; last output: %s", err, out.tail(2<<10)),
			"BROWSER_UNAVAILABLE", "the browser could not be started")
	}
	return b, nil
}

// alive reports whether the browser process is still usable.
func (b *browser) alive() bool { return b.ctx.Err() == nil }

// shutdown closes the browser gracefully if it can, kills it otherwise, waits
// for the process to end and removes its profile directory.
func (b *browser) shutdown() error {
	if b.alive() {
		cctx, ccancel := context.WithTimeout(b.ctx, 10*time.Second)
		_ = chromedp.Cancel(cctx) // the kill below is the fallback
		ccancel()
	}
	b.cancel()
	b.allocCancel() // waits for the process to exit
	if err := os.RemoveAll(b.dir); err != nil {
		return fmt.Errorf("browsertools: removing the browser profile %s: %w", b.dir, err)
	}
	return nil
}

// runBounded runs start, which must not be given a deadline of its own (see
// chromedp.NewContext), and gives up after limit or when ctx ends: then it
// calls abort, waits for start to return and returns the reason.
func runBounded(ctx context.Context, limit time.Duration, start func() error, abort func()) error {
	done := make(chan error, 1)
	go func() { done <- start() }()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
		abort()
		<-done
		return context.DeadlineExceeded
	case <-ctx.Done():
		abort()
		<-done
		return ctx.Err()
	}
}

// tailBuffer keeps the last max bytes written to it: chromium's own output,
// which explains a failed start.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// tail returns the last n bytes written.
func (t *tailBuffer) tail(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf[max(0, len(t.buf)-n):])
}
