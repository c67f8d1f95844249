package iotemu

import (
	"context"
	_ "embed"
	"encoding/json"
	"net/http"
	"runtime/debug"
	"strconv"

	"cpesuite/internal/buildinfo"
	"cpesuite/internal/iotemu/autoupdate"
	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/httpx"
)

//go:embed openapi.json
var openAPI []byte

// OpenAPI returns the API description served at /v3/api-docs.
func OpenAPI() []byte { return openAPI }

// API is the emulator's HTTP surface.
type API struct {
	e *Emulator
	a httpx.Adapter
}

// NewAPI returns the handlers of e.
func NewAPI(e *Emulator) *API {
	return &API{e: e, a: httpx.Adapter{Errors: writeError, Log: e.log}}
}

// maxBody limits request bodies; a batch of templates is the largest.
const maxBody = 8 << 20

// Routes registers every endpoint and the API documentation.
func (api *API) Routes(mux *httpx.Mux) {
	h := func(pattern string, fn httpx.Handler) { mux.Handle(pattern, api.a.H(fn)) }
	h("GET /api/status", api.status)
	h("GET /api/version", api.version)
	h("POST /api/init", api.noContent(func(*http.Request) error { return api.e.Init() }))
	h("POST /api/start", api.noContent(func(r *http.Request) error { return api.e.Start(r.Context()) }))
	h("POST /api/stop", api.noContent(func(*http.Request) error { return api.e.Stop() }))
	h("POST /api/reset", api.noContent(func(*http.Request) error { return api.e.Reset() }))
	h("GET /api/config", func(w http.ResponseWriter, _ *http.Request) error {
		return httpx.WriteJSON(w, http.StatusOK, api.e.Settings())
	})
	h("POST /api/config", api.postConfig(api.e.Configure))
	h("POST /api/config/runtime", api.postConfig(api.e.ConfigureRuntime))
	h("GET /api/protocols", func(w http.ResponseWriter, _ *http.Request) error {
		all, _ := api.e.Protocols()
		return httpx.WriteJSON(w, http.StatusOK, all)
	})
	h("GET /api/protocols/available", func(w http.ResponseWriter, _ *http.Request) error {
		_, avail := api.e.Protocols()
		return httpx.WriteJSON(w, http.StatusOK, avail)
	})
	h("POST /api/protocol/{protocolName}", api.selectProtocol)
	h("GET /api/protocolOptions", func(w http.ResponseWriter, _ *http.Request) error {
		return httpx.WriteJSON(w, http.StatusOK, api.e.Options())
	})
	h("POST /api/protocolOptions", api.setOptions)
	h("GET /api/transportConfig", func(w http.ResponseWriter, _ *http.Request) error {
		return httpx.WriteJSON(w, http.StatusOK, api.e.Transport())
	})
	h("GET /api/devices", func(w http.ResponseWriter, _ *http.Request) error {
		return httpx.WriteJSON(w, http.StatusOK, api.e.Devices())
	})
	h("POST /api/devices", api.addDevice)
	h("POST /api/devices/batch", api.addDevices)
	h("POST /api/devices/startNew", api.startNew)
	h("POST /api/devices/heartbeat", api.heartbeatAll)
	h("GET /api/devices/{clientId}", api.device)
	h("DELETE /api/devices/{clientId}", api.noContent(func(r *http.Request) error { return api.e.DeleteDevice(r.PathValue("clientId")) }))
	h("POST /api/devices/{clientId}/heartbeat", api.noContent(func(r *http.Request) error {
		_, err := api.e.Heartbeat(r.Context(), r.PathValue("clientId"))
		return err
	}))
	h("POST /api/devices/{clientId}/start", api.startDevice)
	h("POST /api/devices/{clientId}/stop", api.noContent(func(r *http.Request) error { return api.e.StopDevice(r.PathValue("clientId")) }))
	h("POST /api/devices/{clientId}/reboot", api.bare(api.e.Reboot))
	h("POST /api/devices/{clientId}/bootstrap", api.bare(api.e.Bootstrap))
	h("GET /api/devices/{clientId}/parameters", api.parameters)
	h("PUT /api/devices/{clientId}/parameters/{paramName}", api.setParameter)
	h("GET /api/devices/{clientId}/parameters/{paramName}/autoupdate", api.getAutoupdate)
	h("POST /api/devices/{clientId}/parameters/{paramName}/autoupdate", api.setAutoupdate)
	h("GET /api/devices/{clientId}/parameters/{paramName}/history", api.history)
	h("GET /api/storedDevices", func(w http.ResponseWriter, _ *http.Request) error {
		return httpx.WriteJSON(w, http.StatusOK, api.e.StoredDevices())
	})
	h("POST /api/storedDevices/{clientId}/start", api.startStored)
	h("DELETE /api/storedDevices/{clientId}", api.noContent(func(r *http.Request) error { return api.e.DeleteStored(r.PathValue("clientId")) }))
	h("POST /api/lwm2m/deregister", api.lwm2mDeregister)
	h("POST /api/lwm2m/update", api.lwm2mUpdate)
	h("POST /api/snapshot/save", api.noContent(func(*http.Request) error { _, err := api.e.SaveSnapshot(); return err }))
	h("POST /api/snapshot/load", api.noContent(func(*http.Request) error { _, err := api.e.LoadSnapshot(); return err }))
	h("GET /api/rule", func(w http.ResponseWriter, _ *http.Request) error {
		return httpx.WriteJSON(w, http.StatusOK, api.e.Rule())
	})
	h("POST /api/rule", api.setRule)
	h("GET /api/logs", api.logs)
	httpx.ServeOpenAPI(mux.ServeMux, "/v3/api-docs", "/swagger-ui.html", "cpesuite IoT emulator", openAPI)
}

func (api *API) noContent(fn func(*http.Request) error) httpx.Handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := fn(r); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}

func (api *API) status(w http.ResponseWriter, _ *http.Request) error {
	return httpx.WriteJSON(w, http.StatusOK, api.e.Status())
}

// Version is GET /api/version; the git fields may be null.
type Version struct {
	Version        string  `json:"version"`
	ProductVersion string  `json:"productVersion"`
	BuildVersion   string  `json:"buildVersion"`
	BuildTime      *string `json:"buildTime"`
	Name           string  `json:"name"`
	Artifact       string  `json:"artifact"`
	Group          string  `json:"group"`
	Commit         *string `json:"commit"`
	CommitShort    *string `json:"commitShort"`
	CommitTime     *string `json:"commitTime"`
	Branch         *string `json:"branch"`
}

func versionInfo() Version {
	bi := buildinfo.Get()
	v := Version{Version: bi.Version, ProductVersion: bi.Version, BuildVersion: bi.Version + "+" + bi.GoVersion,
		Name: "cpesuite IoT emulator", Artifact: "iot-emulator", Group: "cpesuite"}
	str := func(s string) *string {
		if s == "" || s == "unknown" {
			return nil
		}
		return &s
	}
	v.BuildTime = str(bi.BuildTime)
	v.Commit = str(bi.Commit)
	if v.Commit != nil && len(*v.Commit) >= 7 {
		v.CommitShort = str((*v.Commit)[:7])
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.time" {
				v.CommitTime = str(s.Value)
			}
		}
	}
	// The Go toolchain does not record the branch; it stays null.
	return v
}

func (api *API) version(w http.ResponseWriter, _ *http.Request) error {
	return httpx.WriteJSON(w, http.StatusOK, versionInfo())
}

func decodeObject(r *http.Request) (map[string]json.RawMessage, error) {
	var body map[string]json.RawMessage
	if err := httpx.DecodeJSON(r, &body, httpx.DecodeOptions{MaxBytes: maxBody}); err != nil {
		return nil, err
	}
	if body == nil {
		return nil, badRequest("a JSON object is required")
	}
	return body, nil
}

func (api *API) postConfig(apply func(map[string]json.RawMessage) error) httpx.Handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		body, err := decodeObject(r)
		if err != nil {
			return err
		}
		if err := apply(body); err != nil {
			return err
		}
		return httpx.WriteJSON(w, http.StatusOK, api.e.Settings())
	}
}

func boolQuery(r *http.Request, name string) (bool, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, badRequest("query parameter %s must be true or false", name)
	}
	return b, nil
}

func (api *API) selectProtocol(w http.ResponseWriter, r *http.Request) error {
	keep, err := boolQuery(r, "keepOptions")
	if err != nil {
		return err
	}
	if err := api.e.SelectProtocol(r.PathValue("protocolName"), keep); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (api *API) setOptions(w http.ResponseWriter, r *http.Request) error {
	var raw map[string]json.RawMessage
	if err := httpx.DecodeJSON(r, &raw, httpx.DecodeOptions{MaxBytes: maxBody}); err != nil {
		return err
	}
	m, err := decodeOptionMap(raw)
	if err != nil {
		return err
	}
	if err := api.e.SetOptions(m); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func decodeTemplate(r *http.Request) (Template, error) {
	var t Template
	if err := httpx.DecodeJSON(r, &t, httpx.DecodeOptions{MaxBytes: maxBody, DisallowUnknownFields: true}); err != nil {
		return t, err
	}
	return t, nil
}

func (api *API) addDevice(w http.ResponseWriter, r *http.Request) error {
	t, err := decodeTemplate(r)
	if err != nil {
		return err
	}
	out, err := api.e.AddDevices([]Template{t})
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusCreated, out[0])
}

// maxBatch bounds POST /api/devices/batch.
const maxBatch = 10000

func (api *API) addDevices(w http.ResponseWriter, r *http.Request) error {
	var ts []Template
	if err := httpx.DecodeJSON(r, &ts, httpx.DecodeOptions{MaxBytes: maxBody, DisallowUnknownFields: true}); err != nil {
		return err
	}
	if len(ts) > maxBatch {
		return badRequest("a batch holds at most %d devices", maxBatch)
	}
	out, err := api.e.AddDevices(ts)
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusCreated, out)
}

func (api *API) startNew(w http.ResponseWriter, r *http.Request) error {
	t, err := decodeTemplate(r)
	if err != nil {
		return err
	}
	out, err := api.e.StartNew(r.Context(), t)
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusCreated, out)
}

// HeartbeatResult is the answer of POST /api/devices/heartbeat.
type HeartbeatResult struct {
	Count int `json:"count"`
}

func (api *API) heartbeatAll(w http.ResponseWriter, r *http.Request) error {
	n, err := api.e.Heartbeat(r.Context(), "")
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, HeartbeatResult{Count: n})
}

func (api *API) device(w http.ResponseWriter, r *http.Request) error {
	d, err := api.e.Device(r.PathValue("clientId"))
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, d)
}

func (api *API) startDevice(w http.ResponseWriter, r *http.Request) error {
	out, err := api.e.StartDevice(r.Context(), r.PathValue("clientId"))
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, out)
}

func (api *API) startStored(w http.ResponseWriter, r *http.Request) error {
	out, err := api.e.StartStored(r.Context(), r.PathValue("clientId"))
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, out)
}

// bare answers 404 and 409 without a body, as the spec says for reboot
// and bootstrap.
func (api *API) bare(fn func(context.Context, string) error) httpx.Handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		err := fn(r.Context(), r.PathValue("clientId"))
		if err == nil {
			w.WriteHeader(http.StatusNoContent)
			return nil
		}
		if st := apperr.Status(err); st == http.StatusNotFound || st == http.StatusConflict {
			w.WriteHeader(st)
			return nil
		}
		return err
	}
}

func (api *API) parameters(w http.ResponseWriter, r *http.Request) error {
	ps, err := api.e.Parameters(r.PathValue("clientId"))
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, ps)
}

// ParameterValue is the body of PUT .../parameters/{paramName}.
type ParameterValue struct {
	Value *string `json:"value"`
}

func (api *API) setParameter(w http.ResponseWriter, r *http.Request) error {
	var v ParameterValue
	if err := httpx.DecodeJSON(r, &v, httpx.DecodeOptions{MaxBytes: 1 << 20, DisallowUnknownFields: true}); err != nil {
		return err
	}
	if v.Value == nil {
		return badRequest("value is required (a string)")
	}
	if err := api.e.SetParameter(r.PathValue("clientId"), r.PathValue("paramName"), *v.Value); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (api *API) getAutoupdate(w http.ResponseWriter, r *http.Request) error {
	c, err := api.e.Autoupdate(r.PathValue("clientId"), r.PathValue("paramName"))
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, c)
}

func (api *API) setAutoupdate(w http.ResponseWriter, r *http.Request) error {
	var c autoupdate.Config
	if err := httpx.DecodeJSON(r, &c, httpx.DecodeOptions{MaxBytes: 1 << 20, DisallowUnknownFields: true}); err != nil {
		return err
	}
	if err := api.e.SetAutoupdate(r.PathValue("clientId"), r.PathValue("paramName"), c); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (api *API) history(w http.ResponseWriter, r *http.Request) error {
	h, err := api.e.ParameterHistory(r.PathValue("clientId"), r.PathValue("paramName"))
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, h)
}

func (api *API) lwm2mDeregister(w http.ResponseWriter, r *http.Request) error {
	details, err := boolQuery(r, "details")
	if err != nil {
		return err
	}
	res, err := api.e.LwM2MDeregister(r.Context())
	if err != nil {
		return err
	}
	if !details {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	return httpx.WriteJSON(w, http.StatusOK, res)
}

func (api *API) lwm2mUpdate(w http.ResponseWriter, r *http.Request) error {
	if _, err := api.e.LwM2MUpdate(r.Context()); err != nil {
		if apperr.Status(err) == http.StatusConflict {
			w.WriteHeader(http.StatusConflict)
			return nil
		}
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// RuleBody is the body of POST /api/rule.
type RuleBody struct {
	Code *string `json:"code"`
}

func (api *API) setRule(w http.ResponseWriter, r *http.Request) error {
	var b RuleBody
	if err := httpx.DecodeJSON(r, &b, httpx.DecodeOptions{MaxBytes: 1 << 20}); err != nil {
		return err
	}
	if b.Code == nil {
		return badRequest("code is required (use an empty string for no rule)")
	}
	ok, failed, err := api.e.SetRule(*b.Code)
	if err != nil {
		return err
	}
	if failed != nil {
		return httpx.WriteJSON(w, http.StatusBadRequest, failed)
	}
	return httpx.WriteJSON(w, http.StatusOK, ok)
}

func (api *API) logs(w http.ResponseWriter, r *http.Request) error {
	var since uint64
	if v := r.URL.Query().Get("since"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return badRequest("query parameter since must be a sequence number (0 or more)")
		}
		since = n
	}
	return httpx.WriteJSON(w, http.StatusOK, api.e.Logs(since))
}
