package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"cpesuite/internal/testrunner/identity"
	"cpesuite/internal/testrunner/wire"
	"cpesuite/internal/testutil"
)

// TestOwnerIsolationAcrossWorkers: alice's and bob's runs land on two
// workers; each reaches only their own run through the gateway (reads,
// lists, WebSocket, stop, live stand), the admin too, except the admin's
// GET /api/runs?all=true.
func TestOwnerIsolationAcrossWorkers(t *testing.T) {
	e := newEnv(t, envOpts{workers: []string{"w1", "w2"}})
	alice, bob := e.user("alice", "editor"), e.user("bob", "editor")
	e.profile("enva", map[string]string{})
	e.profile("envb", map[string]string{})
	aRun, aStand := e.dispatch(alice, "enva", "slow.yaml")
	bRun, bStand := e.dispatch(bob, "envb", "slow.yaml")
	if aStand == bStand {
		t.Fatalf("both runs on %s", aStand)
	}
	e.waitRunning(alice, aRun)
	e.waitRunning(bob, bRun)

	// Reads.
	if r := e.must(e.do(alice, "GET", "/api/runs/"+aRun, nil), 200); r.header.Get("X-Stand") != aStand {
		t.Errorf("alice's run answered by %q, want %s", r.header.Get("X-Stand"), aStand)
	}
	e.must(e.do(bob, "GET", "/api/runs/"+aRun, nil), 404)
	e.must(e.do(e.admin, "GET", "/api/runs/"+aRun, nil), 404)
	e.must(e.do(alice, "GET", "/api/runs/"+bRun, nil), 404)

	// Lists.
	ids := func(tok, q string) []string {
		var rows []wire.RunSummary
		e.must(e.do(tok, "GET", "/api/runs"+q, nil), 200).decode(t, &rows)
		var out []string
		for _, r := range rows {
			out = append(out, r.RunID+"@"+r.Stand)
		}
		return out
	}
	if got := ids(alice, ""); len(got) != 1 || got[0] != aRun+"@"+aStand {
		t.Errorf("alice lists %v", got)
	}
	if got := ids(e.admin, ""); len(got) != 0 {
		t.Errorf("admin without all=true lists %v", got)
	}
	if got := ids(e.admin, "?all=true"); len(got) != 2 {
		t.Errorf("admin with all=true lists %v, want both runs", got)
	}
	e.must(e.do(bob, "GET", "/api/runs?all=true", nil), 403)
	var active []string
	e.must(e.do(bob, "GET", "/api/runs/active", nil), 200).decode(t, &active)
	if len(active) != 1 || active[0] != bRun {
		t.Errorf("bob's active runs %v", active)
	}

	// Live stand.
	var live struct {
		Stand  *string  `json:"stand"`
		RunIDs []string `json:"run_ids"`
	}
	e.must(e.do(alice, "GET", "/api/live/stand", nil), 200).decode(t, &live)
	if live.Stand == nil || *live.Stand != aStand {
		t.Errorf("alice's live stand %v, want %s", live.Stand, aStand)
	}
	e.must(e.do(e.admin, "GET", "/api/live/stand", nil), 200).decode(t, &live)
	if live.Stand != nil || len(live.RunIDs) != 0 {
		t.Errorf("admin without a run: live stand %v %v, want null", live.Stand, live.RunIDs)
	}

	// WebSocket: the owner attaches; others get 404 before any upgrade.
	ws := func(tok, id string) (*websocket.Conn, *http.Response, error) {
		ctx, cancel := context.WithTimeout(context.Background(), testutil.MinDeadline)
		defer cancel()
		return websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.url, "http")+"/ws/run/"+id,
			&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + tok}}})
	}
	c, _, err := ws(alice, aRun)
	if err != nil {
		t.Fatalf("alice attaches to her run: %v", err)
	}
	defer c.CloseNow()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.MinDeadline)
	defer cancel()
	_, msg, err := c.Read(ctx)
	var first wire.RunDetail
	if err != nil || json.Unmarshal(msg, &first) != nil || first.RunID != aRun || first.Delta {
		t.Fatalf("first WebSocket message: %v %s", err, msg)
	}
	for _, who := range []string{bob, e.admin} {
		if _, res, err := ws(who, aRun); err == nil || res == nil || res.StatusCode != 404 {
			t.Errorf("foreign WebSocket attach: err %v, response %v", err, res)
		}
	}
	if _, res, err := ws("", aRun); err == nil || res == nil || res.StatusCode != 401 {
		t.Errorf("anonymous WebSocket attach: err %v, response %v", err, res)
	}

	// Stop: bob stops his own run only.
	var stopped wire.StopResult
	e.must(e.do(bob, "POST", "/api/run/stop", nil), 200).decode(t, &stopped)
	if len(stopped.Stopped) != 1 || stopped.Stopped[0] != bRun {
		t.Fatalf("bob stopped %v", stopped.Stopped)
	}
	if st := e.runStatus(alice, aRun); st != wire.StatusRunning {
		t.Fatalf("alice's run is %s after bob's stop", st)
	}
	e.must(e.do(e.admin, "POST", "/api/run/stop", nil), 200).decode(t, &stopped)
	if len(stopped.Stopped) != 0 {
		t.Fatalf("admin's stop ended %v", stopped.Stopped)
	}
	// Alice stops hers; her socket sees the end and closes normally.
	e.must(e.do(alice, "POST", "/api/run/stop", nil), 200)
	var last wire.RunDetail
	for {
		_, msg, err := c.Read(ctx)
		if err != nil {
			if websocket.CloseStatus(err) != websocket.StatusNormalClosure {
				t.Fatalf("socket ended with %v", err)
			}
			break
		}
		_ = json.Unmarshal(msg, &last)
	}
	if last.Status != wire.StatusError {
		t.Fatalf("last WebSocket state %q, want error (stopped)", last.Status)
	}
	e.must(e.do(alice, "GET", "/api/live/stand", nil), 200).decode(t, &live)
	if live.Stand != nil {
		t.Errorf("live stand after stop: %s", *live.Stand)
	}
}

// TestWorkerTrustsOnlyTheGatewaysSignature: a client that reaches a
// worker directly cannot claim an identity.
func TestWorkerTrustsOnlyTheGatewaysSignature(t *testing.T) {
	e := newEnv(t, envOpts{workers: []string{"w1"}})
	w := e.workers["w1"]
	alice := identity.Identity{Username: "alice", Role: identity.RoleAdmin}
	e.must(direct(t, w, nil, identity.Identity{}, "GET", "/api/runs", nil), 401)
	e.must(direct(t, w, []byte("not-the-shared-secret-not-the-shared"), alice, "GET", "/api/runs", nil), 401)
	e.must(direct(t, w, testSecret, alice, "GET", "/api/runs", nil), 200)
	// A bearer token is not an identity to a worker either.
	req, _ := http.NewRequest("GET", w.url+"/api/runs", nil)
	req.Header.Set("Authorization", "Bearer "+e.admin)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 401 {
		t.Fatalf("worker accepted a gateway token: %d", res.StatusCode)
	}
}

// TestWebSocketFromABrowser: a browser page served by the gateway sends
// its own Origin and cannot set Authorization, so it passes the token as
// access_token; another site's Origin is refused.
func TestWebSocketFromABrowser(t *testing.T) {
	e := newEnv(t, envOpts{workers: []string{"w1"}})
	e.profile("lab", map[string]string{})
	run, _ := e.dispatch(e.admin, "lab", "slow.yaml")
	ctx, cancel := context.WithTimeout(context.Background(), testutil.MinDeadline)
	defer cancel()
	base := "ws" + strings.TrimPrefix(e.url, "http") + "/ws/run/" + run
	origin := func(o string) *websocket.DialOptions {
		return &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {o}}}
	}
	c, _, err := websocket.Dial(ctx, base+"?access_token="+e.admin, origin(e.url))
	if err != nil {
		t.Fatalf("same-origin socket with access_token: %v", err)
	}
	_, msg, err := c.Read(ctx)
	if err != nil || !strings.Contains(string(msg), run) {
		t.Fatalf("first message %s %v", msg, err)
	}
	c.CloseNow()
	if _, res, err := websocket.Dial(ctx, base+"?access_token="+e.admin, origin("https://evil.example")); err == nil || res == nil || res.StatusCode != 403 {
		t.Fatalf("foreign origin: %v %v", err, res)
	}
	if _, res, err := websocket.Dial(ctx, base+"?access_token=trg_bogus", origin(e.url)); err == nil || res == nil || res.StatusCode != 401 {
		t.Fatalf("bad access_token: %v %v", err, res)
	}
	e.must(e.do(e.admin, "POST", "/api/run/stop", nil), 200)
}
