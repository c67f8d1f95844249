package gateway

import (
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/testrunner/wire"
)

const maxBody = 1 << 20

func decode(r *http.Request, v any) error {
	return httpx.DecodeJSON(r, v, httpx.DecodeOptions{MaxBytes: maxBody, DisallowUnknownFields: true})
}

func (g *Gateway) index(w http.ResponseWriter, _ *http.Request) error {
	return httpx.WriteJSON(w, http.StatusOK, map[string]any{
		"service": "cpesuite test-runner gateway", "version": g.version,
		"openapi": "/openapi.json", "login": "/api/auth/login",
	})
}

// workerHealth leaves base_url out: /health is open and stand addresses
// are internal.
type workerHealth struct {
	Name       string `json:"name"`
	Enabled    bool   `json:"enabled"`
	Reachable  bool   `json:"reachable"`
	Busy       bool   `json:"busy"`
	ActiveRuns int    `json:"active_runs"`
	Error      string `json:"error,omitempty"`
}

// health reports the gateway and each worker's reachability. It is open,
// so it names stands and reachability but no run or owner.
func (g *Gateway) health(w http.ResponseWriter, r *http.Request) error {
	stands, err := g.fleet.stands(r.Context())
	if err != nil {
		return err
	}
	out := make([]workerHealth, len(stands))
	var wg sync.WaitGroup
	for i, st := range stands {
		wg.Go(func() {
			h, err := g.wc.health(r.Context(), st)
			out[i] = workerHealth{Name: st.Name, Enabled: st.Enabled, Reachable: err == nil, Busy: h.Busy, ActiveRuns: h.ActiveRuns}
			if err != nil {
				out[i].Error = "unreachable"
			}
		})
	}
	wg.Wait()
	status := "ok"
	up := 0
	for _, h := range out {
		if h.Enabled && h.Reachable {
			up++
		} else if h.Enabled {
			status = "degraded"
		}
	}
	return httpx.WriteJSON(w, http.StatusOK, map[string]any{
		"status": status, "version": g.version, "workers": out, "workers_up": up,
		"provisioning": g.pt != nil,
	})
}

// --- env profiles ---

type profileRow struct {
	Name      string   `json:"name"`
	Keys      []string `json:"keys"`
	UpdatedAt string   `json:"updated_at"`
}

// listProfiles is open to every account, so it shows names and setting
// keys only; values (URLs, keys) are for admins (GET /profiles/{name}).
func (g *Gateway) listProfiles(w http.ResponseWriter, r *http.Request) error {
	ps, err := g.fleet.profiles(r.Context())
	if err != nil {
		return err
	}
	out := make([]profileRow, len(ps))
	for i, p := range ps {
		keys := make([]string, 0, len(p.Settings))
		for k := range p.Settings {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		out[i] = profileRow{Name: p.Name, Keys: keys, UpdatedAt: p.UpdatedAt.Format("2006-01-02T15:04:05Z07:00")}
	}
	return httpx.WriteJSON(w, http.StatusOK, out)
}

type profileBody struct {
	Name      string            `json:"name"`
	Settings  map[string]string `json:"settings"`
	Provision *bool             `json:"provision"`
}

func (g *Gateway) putProfile(w http.ResponseWriter, r *http.Request) error {
	var b profileBody
	if err := decode(r, &b); err != nil {
		return err
	}
	p := Profile{Name: b.Name, Settings: b.Settings}
	if err := p.validate(); err != nil {
		return err
	}
	_, err := g.fleet.profile(r.Context(), p.Name)
	isNew := apperr.Status(err) == http.StatusNotFound
	if err != nil && !isNew {
		return err
	}
	// A new env gets its emulator wrapper stack when Portainer is
	// configured, unless the body says provision=false; asking for it
	// without Portainer is a 503.
	provision := isNew && g.pt != nil
	if b.Provision != nil {
		provision = *b.Provision
	}
	var prov any
	if provision {
		stack, err := g.provisionEmulator(r.Context(), p.Name, p.Settings["acs_url"])
		if err != nil {
			g.audit(r, "profile_provision", p.Name, apperr.PublicMessage(err), false)
			return err
		}
		if _, ok := p.Settings["emulator_url"]; !ok {
			p.Settings["emulator_url"] = emulatorURL(p.Name)
		}
		if _, ok := p.Settings["mcp_servers"]; !ok {
			p.Settings["mcp_servers"] = "emulator=" + emulatorToolsURL(p.Name)
		}
		prov = stack
	}
	out, created, err := g.fleet.putProfile(r.Context(), p, g.now().UTC())
	if err != nil {
		return err
	}
	g.audit(r, "profile_upsert", p.Name, strconv.Itoa(len(p.Settings))+" settings", true)
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return httpx.WriteJSON(w, status, map[string]any{
		"name": out.Name, "settings": out.Settings, "created": created, "provisioned": prov,
		"created_at": out.CreatedAt, "updated_at": out.UpdatedAt,
	})
}

func (g *Gateway) getProfile(w http.ResponseWriter, r *http.Request) error {
	p, err := g.fleet.profile(r.Context(), r.PathValue("name"))
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, p)
}

func boolQuery(r *http.Request, name string) (bool, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, apperr.Invalid("INVALID_"+strings.ToUpper(name), "%s must be true or false", name)
	}
	return b, nil
}

type teardownResult struct {
	Requested bool   `json:"requested"`
	Stack     string `json:"stack,omitempty"`
	Removed   bool   `json:"removed"`
}

// teardown removes a stack before its record goes: when Portainer fails,
// the record stays and the call can be repeated. An absent stack is fine
// (best effort).
func (g *Gateway) teardown(r *http.Request, want bool, stack string) (teardownResult, error) {
	if !want {
		return teardownResult{}, nil
	}
	if g.pt == nil {
		return teardownResult{}, errNotConfigured
	}
	removed, err := g.pt.DeleteStackByName(r.Context(), stack)
	if err != nil {
		return teardownResult{}, err
	}
	return teardownResult{Requested: true, Stack: stack, Removed: removed}, nil
}

func (g *Gateway) deleteProfile(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	want, err := boolQuery(r, "teardown")
	if err != nil {
		return err
	}
	if _, err := g.fleet.profile(r.Context(), name); err != nil {
		return err
	}
	td, err := g.teardown(r, want, emulatorStack(name))
	if err != nil {
		g.audit(r, "profile_delete", name, apperr.PublicMessage(err), false)
		return err
	}
	if err := g.fleet.deleteProfile(r.Context(), name); err != nil {
		return err
	}
	g.audit(r, "profile_delete", name, teardownDetail(td), true)
	return httpx.WriteJSON(w, http.StatusOK, map[string]any{"deleted": name, "teardown": td})
}

func teardownDetail(td teardownResult) string {
	if !td.Requested {
		return ""
	}
	return "teardown " + td.Stack + " removed=" + strconv.FormatBool(td.Removed)
}

// --- stands ---

func (g *Gateway) listStands(w http.ResponseWriter, r *http.Request) error {
	st, err := g.fleet.stands(r.Context())
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, st)
}

type standBody struct {
	Name     string `json:"name"`
	BaseURL  string `json:"base_url"`
	Display  string `json:"display"`
	NoVNCURL string `json:"novnc_url"`
	Enabled  *bool  `json:"enabled"`
}

func (g *Gateway) putStand(w http.ResponseWriter, r *http.Request) error {
	var b standBody
	if err := decode(r, &b); err != nil {
		return err
	}
	st := Stand{Name: b.Name, BaseURL: b.BaseURL, Display: b.Display, NoVNCURL: b.NoVNCURL, Enabled: b.Enabled == nil || *b.Enabled}
	out, created, err := g.fleet.upsertStand(r.Context(), st, g.now().UTC())
	if err != nil {
		return err
	}
	g.audit(r, "stand_upsert", st.Name, st.BaseURL, true)
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return httpx.WriteJSON(w, status, out)
}

// patchStand applies the fields present in the body.
func (g *Gateway) patchStand(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		BaseURL  *string `json:"base_url"`
		Display  *string `json:"display"`
		NoVNCURL *string `json:"novnc_url"`
		Enabled  *bool   `json:"enabled"`
	}
	if err := decode(r, &b); err != nil {
		return err
	}
	if b.BaseURL == nil && b.Display == nil && b.NoVNCURL == nil && b.Enabled == nil {
		return apperr.Invalid("EMPTY_PATCH", "the body changes nothing: give base_url, display, novnc_url or enabled")
	}
	st, err := g.fleet.stand(r.Context(), r.PathValue("name"))
	if err != nil {
		return err
	}
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	set(&st.BaseURL, b.BaseURL)
	set(&st.Display, b.Display)
	set(&st.NoVNCURL, b.NoVNCURL)
	if b.Enabled != nil {
		st.Enabled = *b.Enabled
	}
	out, _, err := g.fleet.upsertStand(r.Context(), st, g.now().UTC())
	if err != nil {
		return err
	}
	detail, _ := json.Marshal(b)
	g.audit(r, "stand_update", st.Name, string(detail), true)
	return httpx.WriteJSON(w, http.StatusOK, out)
}

func (g *Gateway) deleteStand(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	want, err := boolQuery(r, "teardown")
	if err != nil {
		return err
	}
	if _, err := g.fleet.stand(r.Context(), name); err != nil {
		return err
	}
	td, err := g.teardown(r, want, workerStack(name))
	if err != nil {
		g.audit(r, "stand_delete", name, apperr.PublicMessage(err), false)
		return err
	}
	if err := g.fleet.deleteStand(r.Context(), name); err != nil {
		return err
	}
	g.audit(r, "stand_delete", name, teardownDetail(td), true)
	return httpx.WriteJSON(w, http.StatusOK, map[string]any{"deleted": name, "teardown": td})
}

// --- dispatch ---

type runBody struct {
	Env      string `json:"env"`
	TestFile string `json:"test_file"`
	Model    string `json:"model"`
	DryRun   bool   `json:"dry_run"`
}

func (g *Gateway) dispatchRun(w http.ResponseWriter, r *http.Request) error {
	var b runBody
	if err := decode(r, &b); err != nil {
		return err
	}
	if b.Env == "" {
		return apperr.Invalid("INVALID_ENV", "env is required")
	}
	if b.TestFile == "" {
		return apperr.Invalid("INVALID_TEST_FILE", "test_file is required")
	}
	caller := mustCaller(r)
	var started wire.StartRun
	st, _, err := g.disp.dispatch(r.Context(), caller, dispatchRequest{Env: b.Env, Model: b.Model, DryRun: b.DryRun},
		func(st Stand) (string, string, answer) {
			q := url.Values{"test_file": {b.TestFile}, "dry_run": {strconv.FormatBool(b.DryRun)}}
			if b.Model != "" {
				q.Set("model", b.Model)
			}
			a := g.wc.callWithin(r.Context(), g.cfg.ProxyTimeout, st, caller, http.MethodPost, "/api/run", q, nil)
			if a.ok() && json.Unmarshal(a.body, &started) != nil {
				a.status = http.StatusBadGateway
			}
			return started.RunID, "", a
		})
	g.audit(r, "run_dispatch", b.Env+"/"+b.TestFile, dispatchDetail(st, started.RunID, err), err == nil)
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, map[string]any{
		"run_id": started.RunID, "stand": st.Name, "env": b.Env, "test_file": b.TestFile,
		"model": b.Model, "dry_run": b.DryRun,
	})
}

func dispatchDetail(st Stand, id string, err error) string {
	if err != nil {
		return apperr.PublicMessage(err)
	}
	return "stand " + st.Name + " " + id
}

type batchBody struct {
	Env       string   `json:"env"`
	TestFiles []string `json:"test_files"`
	Order     string   `json:"order"`
	Model     string   `json:"model"`
	DryRun    bool     `json:"dry_run"`
}

// orderFiles applies the batch order: "given" (default) keeps the list,
// "name" sorts it, "random" shuffles it.
func orderFiles(files []string, order string) ([]string, error) {
	out := slices.Clone(files)
	switch order {
	case "", "given":
	case "name":
		slices.Sort(out)
	case "random":
		rand.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	default:
		return nil, apperr.Invalid("INVALID_ORDER", "order must be given, name or random")
	}
	return out, nil
}

func (g *Gateway) dispatchBatch(w http.ResponseWriter, r *http.Request) error {
	var b batchBody
	if err := decode(r, &b); err != nil {
		return err
	}
	if b.Env == "" {
		return apperr.Invalid("INVALID_ENV", "env is required")
	}
	if len(b.TestFiles) == 0 {
		return apperr.Invalid("INVALID_TEST_FILES", "test_files must list at least one case file")
	}
	files, err := orderFiles(b.TestFiles, b.Order)
	if err != nil {
		return err
	}
	caller := mustCaller(r)
	var started wire.StartBatch
	st, _, err := g.disp.dispatch(r.Context(), caller, dispatchRequest{Env: b.Env, Model: b.Model, DryRun: b.DryRun},
		func(st Stand) (string, string, answer) {
			a := g.wc.callWithin(r.Context(), g.cfg.ProxyTimeout, st, caller, http.MethodPost, "/api/run/batch", nil,
				wire.StartBatchRequest{TestFiles: files, Model: b.Model, DryRun: b.DryRun})
			if a.ok() && json.Unmarshal(a.body, &started) != nil {
				a.status = http.StatusBadGateway
			}
			return "", started.BatchID, a
		})
	g.audit(r, "batch_dispatch", b.Env, dispatchDetail(st, started.BatchID, err), err == nil)
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, map[string]any{
		"batch_id": started.BatchID, "test_files": started.TestFiles, "total": started.Total,
		"stand": st.Name, "env": b.Env, "model": b.Model, "dry_run": b.DryRun,
	})
}
