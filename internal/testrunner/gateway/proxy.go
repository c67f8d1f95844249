package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"time"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/testrunner/identity"
	"cpesuite/internal/testrunner/wire"
)

// StandHeader lets a caller pick the stand that serves a routed (not fanned
// out) worker endpoint such as the case list.
const StandHeader = "X-Stand"

// UnreachableHeader lists stands a fanned-out answer had to leave out.
const UnreachableHeader = "X-Unreachable-Stands"

// gatewayPrefixes are served by the gateway itself: a method it does not
// route there is its 404/405, never a worker's.
var gatewayPrefixes = []string{"/api/auth/", "/api/users", "/api/activity", "/api/gateway/", "/api/live/"}

type proxyTarget struct {
	stand Stand
	id    identity.Identity
}

type proxyKey struct{}

// newReverseProxy builds the one reverse proxy for worker endpoints. The
// handler puts the target stand and caller into the request context.
func (g *Gateway) newReverseProxy() *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Transport: g.transport,
		Rewrite: func(pr *httputil.ProxyRequest) {
			t := pr.In.Context().Value(proxyKey{}).(proxyTarget)
			base, _ := url.Parse(t.stand.BaseURL)
			pr.SetURL(base)
			pr.SetXForwarded()
			// The gateway's bearer token stays here; the worker gets a
			// signed identity instead.
			pr.Out.Header.Del("Authorization")
			pr.Out.Header.Del(StandHeader)
			pr.Out.Header.Del("Cookie")
			// The gateway checked the browser's Origin (sameOrigin); to
			// the worker the gateway is the client.
			pr.Out.Header.Del("Origin")
			identity.SignRequest(g.secret, pr.Out, t.id, g.now())
		},
		ModifyResponse: func(resp *http.Response) error {
			if resp.StatusCode == http.StatusUnauthorized {
				// The caller is authenticated; a worker refusing the
				// signed identity does not share our secret.
				return errWorkerSecret
			}
			resp.Header.Set("X-Stand", resp.Request.Context().Value(proxyKey{}).(proxyTarget).stand.Name)
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			t := r.Context().Value(proxyKey{}).(proxyTarget)
			g.adapter.WriteError(w, r, apperr.Wrap(apperr.ErrUpstream, err, "WORKER_UNREACHABLE",
				"worker "+t.stand.Name+" unreachable"))
		},
	}
}

// forward proxies r to stand st as the caller.
func (g *Gateway) forward(w http.ResponseWriter, r *http.Request, st Stand, id identity.Identity) {
	ctx := context.WithValue(r.Context(), proxyKey{}, proxyTarget{stand: st, id: id})
	if !isUpgrade(r) {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, g.cfg.ProxyTimeout)
		defer cancel()
	}
	g.rp.ServeHTTP(w, r.WithContext(ctx))
}

var errWorkerSecret = errors.New("worker refused the signed identity: it does not share CPESUITE_TESTRUNNER_SECRET")

// sameOrigin accepts WebSocket upgrades from no Origin (tools) or from a
// page served by the gateway's own host, so another site cannot open a
// socket with a user's credentials.
func sameOrigin(r *http.Request) error {
	o := r.Header.Get("Origin")
	if o == "" {
		return nil
	}
	u, err := url.Parse(o)
	if err != nil || !strings.EqualFold(u.Host, r.Host) {
		return apperr.New(apperr.ErrForbidden, "ORIGIN_FORBIDDEN", "WebSocket origin %q is not this gateway", o)
	}
	return nil
}

func isUpgrade(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// routed serves worker endpoints that live on one stand: the one named
// by X-Stand, else the caller's own stand, else the first enabled one.
func (g *Gateway) routed(w http.ResponseWriter, r *http.Request) error {
	for _, p := range gatewayPrefixes {
		if strings.HasPrefix(r.URL.Path, p) || r.URL.Path == strings.TrimSuffix(p, "/") {
			return apperr.NotFound("NOT_FOUND", "no such gateway endpoint: %s %s", r.Method, r.URL.Path)
		}
	}
	if isUpgrade(r) {
		if err := sameOrigin(r); err != nil {
			return err
		}
	}
	id := mustCaller(r)
	st, err := g.targetStand(r.Context(), r.Header.Get(StandHeader), id)
	if err != nil {
		return err
	}
	g.forward(w, r, st, id)
	return nil
}

func (g *Gateway) targetStand(ctx context.Context, asked string, id identity.Identity) (Stand, error) {
	if asked != "" {
		st, err := g.fleet.stand(ctx, asked)
		if err != nil {
			return Stand{}, err
		}
		if !st.Enabled {
			return Stand{}, apperr.New(apperr.ErrUnavailable, "STAND_DISABLED", "stand %q is disabled", asked)
		}
		return st, nil
	}
	if id.Stand != "" {
		if st, err := g.fleet.stand(ctx, id.Stand); err == nil && st.Enabled {
			return st, nil
		}
	}
	stands, err := g.fleet.stands(ctx)
	if err != nil {
		return Stand{}, err
	}
	for _, st := range stands {
		if st.Enabled {
			return st, nil
		}
	}
	return Stand{}, apperr.New(apperr.ErrUnavailable, "NO_WORKERS", "no enabled worker stand is registered")
}

// fanOut calls every registered stand (disabled ones too: a run may have
// started before the stand was disabled) as the caller.
func (g *Gateway) fanOut(r *http.Request, path string, q url.Values) ([]answer, error) {
	stands, err := g.fleet.stands(r.Context())
	if err != nil {
		return nil, err
	}
	if len(stands) == 0 {
		return nil, apperr.New(apperr.ErrUnavailable, "NO_WORKERS", "no worker stand is registered")
	}
	return g.wc.fanOut(r.Context(), stands, mustCaller(r), r.Method, path, q), nil
}

// reachable drops the answers of unreachable or failing workers, naming
// them in a header; it fails when no worker answered.
func reachable(w http.ResponseWriter, as []answer) ([]answer, error) {
	var ok []answer
	var down []string
	for _, a := range as {
		// A 401 from a worker means it does not share our secret.
		if a.err != nil || a.status/100 == 5 || a.status == http.StatusUnauthorized {
			down = append(down, a.stand.Name)
			continue
		}
		ok = append(ok, a)
	}
	if len(down) > 0 {
		w.Header().Set(UnreachableHeader, strings.Join(down, ","))
	}
	if len(ok) == 0 {
		return nil, upstreamError(as[0], "fanning out")
	}
	return ok, nil
}

// firstFound relays the first worker answer that is not a 404: the
// caller's run or report lives on exactly one worker.
func (g *Gateway) firstFound(path string, notFound func() error) httpx.Handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		as, err := g.fanOut(r, path, r.URL.Query())
		if err != nil {
			return err
		}
		ok, err := reachable(w, as)
		if err != nil {
			return err
		}
		for _, a := range ok {
			if a.status != http.StatusNotFound {
				return relay(w, a)
			}
		}
		return notFound()
	}
}

func relay(w http.ResponseWriter, a answer) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Stand", a.stand.Name)
	w.WriteHeader(a.status)
	_, err := w.Write(a.body)
	return err
}

func runNotFound(id string) func() error {
	return func() error { return apperr.NotFound("RUN_NOT_FOUND", "run %q not found", id) }
}

func (g *Gateway) runDetail(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("run_id")
	return g.firstFound("/api/runs/"+url.PathEscape(id), runNotFound(id))(w, r)
}

func (g *Gateway) batchReport(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("batch_id")
	return g.firstFound("/api/run/batch/reports/"+url.PathEscape(id),
		func() error { return apperr.NotFound("BATCH_NOT_FOUND", "batch report %q not found", id) })(w, r)
}

// fanDecode fans a call out and decodes every relevant answer into T,
// passing a worker's 4xx through unchanged (the same bad request fails
// everywhere). It returns the stand of each decoded answer.
func fanDecode[T any](g *Gateway, w http.ResponseWriter, r *http.Request, path string, q url.Values) ([]T, []Stand, error) {
	as, err := g.fanOut(r, path, q)
	if err != nil {
		return nil, nil, err
	}
	ok, err := reachable(w, as)
	if err != nil {
		return nil, nil, err
	}
	var out []T
	var stands []Stand
	for _, a := range ok {
		if a.status == http.StatusNotFound {
			continue
		}
		if a.status/100 != 2 {
			return nil, nil, upstreamError(a, "fanning out")
		}
		var v T
		if err := json.Unmarshal(a.body, &v); err != nil {
			return nil, nil, apperr.Wrap(apperr.ErrUpstream, err, "WORKER_FAILED", "worker "+a.stand.Name+" answered unreadable JSON")
		}
		out = append(out, v)
		stands = append(stands, a.stand)
	}
	return out, stands, nil
}

// mergeNewest joins the lists of several stands, newest first; stamp
// names the stand on a row and returns the row's start time.
func mergeNewest[T any](lists [][]T, stands []Stand, stamp func(*T, string) time.Time) []T {
	type row struct {
		v  T
		at time.Time
	}
	var rows []row
	for i, l := range lists {
		for _, v := range l {
			at := stamp(&v, stands[i].Name)
			rows = append(rows, row{v, at})
		}
	}
	slices.SortStableFunc(rows, func(a, b row) int { return b.at.Compare(a.at) })
	out := make([]T, len(rows))
	for i, r := range rows {
		out[i] = r.v
	}
	return out
}

// runs merges the caller's runs of every worker, newest first, capped at
// the spec's 100 (admins with all=true get everyone's).
func (g *Gateway) runs(w http.ResponseWriter, r *http.Request) error {
	lists, stands, err := fanDecode[[]wire.RunSummary](g, w, r, "/api/runs", r.URL.Query())
	if err != nil {
		return err
	}
	all := mergeNewest(lists, stands, func(s *wire.RunSummary, stand string) time.Time {
		s.Stand = stand
		return s.StartedAt
	})
	if len(all) > 100 {
		all = all[:100]
	}
	return httpx.WriteJSON(w, http.StatusOK, all)
}

func (g *Gateway) activeRuns(w http.ResponseWriter, r *http.Request) error {
	lists, _, err := fanDecode[[]string](g, w, r, "/api/runs/active", nil)
	if err != nil {
		return err
	}
	ids := []string{}
	for _, l := range lists {
		ids = append(ids, l...)
	}
	return httpx.WriteJSON(w, http.StatusOK, ids)
}

// sumCounts merges answers like {"cleared": n} by adding the numbers.
func (g *Gateway) sumCounts(path, key string) httpx.Handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		objs, _, err := fanDecode[map[string]any](g, w, r, path, nil)
		if err != nil {
			return err
		}
		total := 0.0
		for _, o := range objs {
			if n, ok := o[key].(float64); ok {
				total += n
			}
		}
		return httpx.WriteJSON(w, http.StatusOK, map[string]any{key: int64(total)})
	}
}

func (g *Gateway) stop(w http.ResponseWriter, r *http.Request) error {
	res, _, err := fanDecode[wire.StopResult](g, w, r, "/api/run/stop", nil)
	if err != nil {
		return err
	}
	out := wire.StopResult{Stopped: []string{}, Batches: []string{}}
	for _, s := range res {
		out.Stopped = append(out.Stopped, s.Stopped...)
		out.Batches = append(out.Batches, s.Batches...)
	}
	if len(out.Stopped)+len(out.Batches) > 0 {
		g.audit(r, "run_stop", strings.Join(slices.Concat(out.Stopped, out.Batches), ","), "", true)
	}
	return httpx.WriteJSON(w, http.StatusOK, out)
}

// batchStatus picks the caller's batch: a running one first, else a
// finished one, else none.
func (g *Gateway) batchStatus(w http.ResponseWriter, r *http.Request) error {
	sts, stands, err := fanDecode[wire.BatchStatus](g, w, r, "/api/run/batch", nil)
	if err != nil {
		return err
	}
	best := -1
	// The status carries no time: among finished batches the first
	// stand by name wins.
	rank := map[string]int{wire.BatchRunning: 3, wire.BatchDone: 2, wire.BatchIdle: 1}
	for i, s := range sts {
		if best < 0 || rank[s.Status] > rank[sts[best].Status] {
			best = i
		}
	}
	if best < 0 || sts[best].Status == wire.BatchNone || sts[best].Status == "" {
		return httpx.WriteJSON(w, http.StatusOK, wire.BatchStatus{Status: wire.BatchNone, RunIDs: []string{}, TestFiles: []string{}})
	}
	s := sts[best]
	s.Stand = stands[best].Name
	return httpx.WriteJSON(w, http.StatusOK, s)
}

// latestReport relays the newest in-memory batch report of the caller.
func (g *Gateway) latestReport(w http.ResponseWriter, r *http.Request) error {
	reps, stands, err := fanDecode[wire.BatchReport](g, w, r, "/api/run/batch/report", nil)
	if err != nil {
		return err
	}
	if len(reps) == 0 {
		return apperr.NotFound("BATCH_NOT_FOUND", "no batch report")
	}
	best := 0
	for i := range reps {
		if reps[i].StartedAt.After(reps[best].StartedAt) {
			best = i
		}
	}
	rep := reps[best]
	rep.Stand = stands[best].Name
	return httpx.WriteJSON(w, http.StatusOK, rep)
}

func (g *Gateway) reportRows(w http.ResponseWriter, r *http.Request) error {
	lists, stands, err := fanDecode[[]wire.BatchReportRow](g, w, r, "/api/run/batch/reports", nil)
	if err != nil {
		return err
	}
	rows := mergeNewest(lists, stands, func(row *wire.BatchReportRow, stand string) time.Time {
		row.Stand = stand
		return row.StartedAt
	})
	return httpx.WriteJSON(w, http.StatusOK, rows)
}

// watch attaches the caller's WebSocket to the worker running the run:
// the run is looked up as the caller first, so a foreign run id is a 404
// before any upgrade.
func (g *Gateway) watch(w http.ResponseWriter, r *http.Request) error {
	runID := r.PathValue("run_id")
	if err := sameOrigin(r); err != nil {
		return err
	}
	as, err := g.fanOut(r, "/api/runs/"+url.PathEscape(runID), nil)
	if err != nil {
		return err
	}
	ok, err := reachable(w, as)
	if err != nil {
		return err
	}
	for _, a := range ok {
		if a.status == http.StatusOK {
			g.forward(w, r, a.stand, mustCaller(r))
			return nil
		}
	}
	return runNotFound(runID)()
}

// liveStand answers which stand runs the caller's active run; stand is
// null when none does.
func (g *Gateway) liveStand(w http.ResponseWriter, r *http.Request) error {
	lists, stands, err := fanDecode[[]string](g, w, r, "/api/runs/active", nil)
	if err != nil {
		return err
	}
	for i, l := range lists {
		if len(l) > 0 {
			st := stands[i]
			return httpx.WriteJSON(w, http.StatusOK, map[string]any{
				"stand": st.Name, "display": st.Display, "run_ids": l, "novnc": st.NoVNCURL != "",
			})
		}
	}
	return httpx.WriteJSON(w, http.StatusOK, map[string]any{"stand": nil, "display": nil, "run_ids": []string{}, "novnc": false})
}
