package worker

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/coder/websocket"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/testrunner/identity"
)

// wsWriteTimeout bounds one message to a watcher; a watcher that cannot
// take a message within it is disconnected.
const wsWriteTimeout = 10 * time.Second

// watchRun is WS /ws/run/{run_id}. The identity and the owner are checked
// before the upgrade, so a stranger gets a JSON 401/404, never a socket.
//
// Origin: the upgrade is accepted when the request has no Origin header
// (the gateway's proxy, scripts) or when the Origin's host equals the
// request's Host (a page served by the same address); any other origin is
// 403, which keeps other sites' pages from riding a browser's access.
//
// Messages: first the whole run detail, then on every change a run detail
// with delta true whose output holds only the text appended since the
// previous message and whose mcpLog holds only the new entries (steps,
// status and phase are whole). Changes that arrive while a message is
// being written are coalesced into the next one. After the run has ended
// the final state is sent and the socket closed with 1000 (normal).
func (w *Worker) watchRun(rw http.ResponseWriter, r *http.Request, id identity.Identity) error {
	run, ok := w.ownedRun(id.Username, r.PathValue("run_id"))
	if !ok {
		return runNotFound(r.PathValue("run_id"))
	}
	if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		return apperr.Invalid("WEBSOCKET_REQUIRED", "this endpoint needs a WebSocket upgrade")
	}
	if err := checkOrigin(r); err != nil {
		return err
	}
	w.mu.Lock()
	if w.shuttingDown {
		w.mu.Unlock()
		return apperr.New(apperr.ErrUnavailable, "SHUTTING_DOWN", "the worker is shutting down")
	}
	w.wsWG.Add(1)
	w.mu.Unlock()
	defer w.wsWG.Done()

	// The origin was checked above, in the JSON error shape.
	c, err := websocket.Accept(rw, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		// Accept has answered the client already.
		w.log.Debug("websocket upgrade failed", "run_id", run.id, "error", err)
		return nil
	}
	w.stream(r.Context(), c, run)
	return nil
}

func checkOrigin(r *http.Request) error {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return nil
	}
	u, err := url.Parse(origin)
	if err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host) {
		return nil
	}
	return apperr.New(apperr.ErrForbidden, "ORIGIN_FORBIDDEN", "origin %q may not open this WebSocket", origin)
}

// stream sends run's state to one watcher until the run ends, the watcher
// goes away or the worker shuts down.
func (w *Worker) stream(ctx context.Context, c *websocket.Conn, run *run) {
	// Subscribing before the first snapshot means no change can fall
	// between the two.
	wake := run.subscribe()
	defer run.unsubscribe(wake)
	// Watchers only listen; CloseRead handles pings and the close frame
	// and ends ctx when the peer goes away.
	ctx = c.CloseRead(ctx)

	var cur cursor
	msg, final := run.full(&cur, w.now())
	if !w.send(ctx, c, msg) {
		return
	}
	for !final {
		select {
		case <-wake:
		case <-ctx.Done():
			_ = c.CloseNow()
			return
		case <-w.closing:
			msg, final = run.delta(&cur, w.now())
			if w.send(ctx, c, msg) {
				if final {
					_ = c.Close(websocket.StatusNormalClosure, "run finished")
				} else {
					_ = c.Close(websocket.StatusGoingAway, "worker shutting down")
				}
			}
			return
		}
		msg, final = run.delta(&cur, w.now())
		if !w.send(ctx, c, msg) {
			return
		}
	}
	_ = c.Close(websocket.StatusNormalClosure, "run finished")
}

// send writes one message; on failure the socket is dropped.
func (w *Worker) send(ctx context.Context, c *websocket.Conn, msg any) bool {
	b, err := json.Marshal(msg)
	if err != nil {
		w.log.Error("encoding a run update failed", "error", err)
		_ = c.Close(websocket.StatusInternalError, "encoding failed")
		return false
	}
	wctx, cancel := context.WithTimeout(ctx, wsWriteTimeout)
	defer cancel()
	if err := c.Write(wctx, websocket.MessageText, b); err != nil {
		_ = c.CloseNow()
		return false
	}
	return true
}
