package tr069emu

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/tr069emu/cpe"
)

//go:embed openapi.json
var openAPIDoc []byte

// OpenAPI returns the emulator's OpenAPI document.
func OpenAPI() []byte { return openAPIDoc }

// API is the HTTP surface of both controllers.
type API struct {
	e *Emulator
	a httpx.Adapter
}

// NewAPI wires the handlers.
func NewAPI(e *Emulator) *API {
	return &API{e: e, a: httpx.Adapter{Errors: writeError, Log: e.log}}
}

// ErrorWriter is the emulator's error body writer, for the middleware.
func ErrorWriter() httpx.ErrorWriter { return writeError }

// Routes registers every endpoint, the connection request listener and the
// API documentation. Nothing under /actuator is served.
func (api *API) Routes(mux *httpx.Mux) {
	h := func(pattern string, fn httpx.Handler) { mux.Handle(pattern, api.a.H(fn)) }
	// Load-test controller.
	h("GET /api/properties", api.getProperties)
	h("POST /api/properties", api.setProperties)
	h("GET /api/status", api.status)
	h("GET /api/deviceCounts", api.deviceCounts)
	h("GET /api/periodic", api.getPeriodic)
	h("POST /api/periodic", api.setPeriodic)
	h("POST /api/start", api.start)
	h("POST /api/stop", api.stop)
	h("POST /api/invokeSerial", api.invokeSerial)
	h("POST /api/makeSpeedDelay", api.makeSpeedDelay)
	h("POST /api/resetDelay", api.resetDelay)
	h("POST /api/resetWifi", api.resetWifi)
	h("GET /api/paramsXmlList", api.paramsXMLList)
	h("GET /api/paramsXml", api.getParamsXML)
	h("POST /api/paramsXml", api.setParamsXML)
	h("POST /api/uploadParamsXml", api.uploadParamsXML)
	h("POST /api/deleteParamsXml", api.deleteParamsXML)
	h("GET /api/updatableParameters", api.getGlobalUpdatable)
	h("POST /api/updatableParameters", api.setGlobalUpdatable)
	api.deviceRoutes(h)
	mux.HandleFunc("GET /cr/{serial}", api.e.ConnectionRequest)
	httpx.ServeOpenAPI(mux.ServeMux, "/v3/api-docs", "/swagger-ui.html", "cpesuite TR-069 emulator", openAPIDoc)
}

// decode reads a JSON body; a malformed one is 400 with the reason.
func decode(r *http.Request, v any) error {
	if err := httpx.DecodeJSON(r, v, httpx.DecodeOptions{MaxBytes: 1 << 20}); err != nil {
		if _, ok := apperr.As(err); ok {
			return err
		}
		return errf("malformed JSON: %v", err)
	}
	return nil
}

// serialBody is the {"serial": ...} body many endpoints take.
type serialBody struct {
	Serial string `json:"serial"`
}

func decodeSerial(r *http.Request) (string, error) {
	var b serialBody
	if err := decode(r, &b); err != nil {
		return "", err
	}
	b.Serial = strings.TrimSpace(b.Serial)
	return b.Serial, checkSerial(b.Serial)
}

// bodyDevice resolves a {"serial"} body to a running device of either
// controller.
func (api *API) bodyDevice(r *http.Request) (*cpe.Device, error) {
	serial, err := decodeSerial(r)
	if err != nil {
		return nil, err
	}
	return api.e.device(serial)
}

func noContent(w http.ResponseWriter) error {
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func ok(w http.ResponseWriter, v any) error { return httpx.WriteJSON(w, http.StatusOK, v) }

func (api *API) getProperties(w http.ResponseWriter, _ *http.Request) error {
	return ok(w, api.e.Properties())
}

func (api *API) setProperties(w http.ResponseWriter, r *http.Request) error {
	// Fields left out keep their current value, as with a form that only
	// shows some of them.
	p := api.e.Properties()
	if err := decode(r, &p); err != nil {
		return err
	}
	if err := api.e.SetProperties(p); err != nil {
		return err
	}
	return noContent(w)
}

func (api *API) status(w http.ResponseWriter, _ *http.Request) error {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if api.e.Running() {
		_, err := io.WriteString(w, "Running")
		return err
	}
	_, err := io.WriteString(w, "Stopped")
	return err
}

func (api *API) deviceCounts(w http.ResponseWriter, _ *http.Request) error {
	return ok(w, api.e.DeviceCounts())
}

type periodicBody struct {
	Periodic *int `json:"periodic"`
}

func (api *API) getPeriodic(w http.ResponseWriter, _ *http.Request) error {
	n := api.e.Periodic()
	return ok(w, periodicBody{Periodic: &n})
}

func (api *API) setPeriodic(w http.ResponseWriter, r *http.Request) error {
	var b periodicBody
	if err := decode(r, &b); err != nil {
		return err
	}
	if b.Periodic == nil {
		return errf("periodic (seconds) is required")
	}
	if err := api.e.SetPeriodic(*b.Periodic); err != nil {
		return err
	}
	return noContent(w)
}

func (api *API) start(w http.ResponseWriter, _ *http.Request) error {
	if err := api.e.StartBatch(); err != nil {
		return err
	}
	return noContent(w)
}

func (api *API) stop(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		ClearCaches bool `json:"clearCaches"`
	}
	// The body is optional; an empty one (even chunked) means no options.
	raw, err := io.ReadAll(io.LimitReader(r.Body, 1<<16))
	if err != nil {
		return errf("reading the body: %v", err)
	}
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, &b); err != nil {
			return errf("malformed JSON: %v", err)
		}
	}
	api.e.StopBatch(b.ClearCaches)
	return noContent(w)
}

func (api *API) invokeSerial(w http.ResponseWriter, r *http.Request) error {
	d, err := api.bodyDevice(r)
	if err != nil {
		return err
	}
	if !d.ConnectionRequest() {
		return conflict("device %s is in a CWMP session", d.Serial())
	}
	return noContent(w)
}

func (api *API) speedDelay(w http.ResponseWriter, r *http.Request, on bool) error {
	d, err := api.bodyDevice(r)
	if err != nil {
		return err
	}
	d.SetSpeedDelay(on)
	return noContent(w)
}

func (api *API) makeSpeedDelay(w http.ResponseWriter, r *http.Request) error {
	return api.speedDelay(w, r, true)
}

func (api *API) resetDelay(w http.ResponseWriter, r *http.Request) error {
	return api.speedDelay(w, r, false)
}

func (api *API) resetWifi(w http.ResponseWriter, r *http.Request) error {
	d, err := api.bodyDevice(r)
	if err != nil {
		return err
	}
	if d.ResetWiFi() == 0 {
		return errf("device %s has no WiFi radio parameters to reset", d.Serial())
	}
	return noContent(w)
}

func (api *API) paramsXMLList(w http.ResponseWriter, _ *http.Request) error {
	names, err := api.e.files.List()
	if err != nil {
		return err
	}
	return ok(w, names)
}

type paramsXMLBody struct {
	ParamsXML string `json:"paramsXml"`
}

func (api *API) getParamsXML(w http.ResponseWriter, _ *http.Request) error {
	return ok(w, paramsXMLBody{ParamsXML: api.e.Properties().ParamsXML})
}

// setParamsXML makes a file the active tree; it is parsed now so a broken
// file is refused here rather than at the next start.
func (api *API) setParamsXML(w http.ResponseWriter, r *http.Request) error {
	var b paramsXMLBody
	if err := decode(r, &b); err != nil {
		return err
	}
	if err := checkFileName(b.ParamsXML); err != nil {
		return err
	}
	api.e.files.ClearCache()
	if _, err := api.e.files.Template(b.ParamsXML); err != nil {
		return err
	}
	if err := api.e.updateProperties(func(p *Properties) error { p.ParamsXML = b.ParamsXML; return nil }); err != nil {
		return err
	}
	return noContent(w)
}

// FileResult is the answer of tree uploads and deletions.
type FileResult struct {
	Success  bool   `json:"success"`
	Message  string `json:"message"`
	Filename string `json:"filename"`
}

// readUpload reads the multipart field "file" within the size limit.
func (api *API) readUpload(w http.ResponseWriter, r *http.Request) (string, []byte, error) {
	limit := api.e.cfg.MaxUpload
	r.Body = http.MaxBytesReader(w, r.Body, limit+64<<10)
	if err := r.ParseMultipartForm(1 << 20); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return "", nil, errf("upload larger than %d bytes", limit)
		}
		return "", nil, errf("multipart form with a field named file is required: %v", err)
	}
	defer r.MultipartForm.RemoveAll()
	f, hdr, err := r.FormFile("file")
	if errors.Is(err, http.ErrMissingFile) {
		return "", nil, errf("multipart field file is required")
	}
	if err != nil {
		return "", nil, errf("reading the uploaded file: %v", err)
	}
	defer f.Close()
	name := rawFileName(hdr)
	if err := checkFileName(name); err != nil {
		return "", nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return "", nil, errf("reading the uploaded file: %v", err)
	}
	if int64(len(data)) > limit {
		return "", nil, errf("%s is larger than %d bytes", name, limit)
	}
	return name, data, nil
}

// rawFileName is the file name as the client sent it: mime/multipart
// strips directories, which would hide a traversal attempt we must refuse.
func rawFileName(hdr *multipart.FileHeader) string {
	if cd := hdr.Header.Get("Content-Disposition"); cd != "" {
		if i := strings.Index(cd, "filename="); i >= 0 {
			v := cd[i+len("filename="):]
			if j := strings.IndexByte(v, ';'); j >= 0 {
				v = v[:j]
			}
			if u, err := strconv.Unquote(strings.TrimSpace(v)); err == nil {
				return u
			}
			return strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	return hdr.Filename
}

func (api *API) uploadParamsXML(w http.ResponseWriter, r *http.Request) error {
	name, data, err := api.readUpload(w, r)
	if err != nil {
		return err
	}
	if err := api.e.files.Upload(name, data); err != nil {
		return err
	}
	api.e.log.Info("parameter tree uploaded", "file", name, "bytes", len(data))
	return ok(w, FileResult{Success: true, Message: fmt.Sprintf("%s uploaded", name), Filename: name})
}

func (api *API) deleteParamsXML(w http.ResponseWriter, r *http.Request) error {
	var b paramsXMLBody
	if err := decode(r, &b); err != nil {
		return err
	}
	if err := checkFileName(b.ParamsXML); err != nil {
		return err
	}
	if b.ParamsXML == api.e.Properties().ParamsXML {
		return conflict("%s is the active parameter tree and cannot be deleted", b.ParamsXML)
	}
	if err := api.e.files.Delete(b.ParamsXML); err != nil {
		return err
	}
	return ok(w, FileResult{Success: true, Message: fmt.Sprintf("%s deleted", b.ParamsXML), Filename: b.ParamsXML})
}

func (api *API) getGlobalUpdatable(w http.ResponseWriter, _ *http.Request) error {
	return ok(w, api.e.GlobalUpdatable())
}

func (api *API) setGlobalUpdatable(w http.ResponseWriter, r *http.Request) error {
	var list []cpe.Updatable
	if err := decode(r, &list); err != nil {
		return err
	}
	if list == nil {
		list = []cpe.Updatable{}
	}
	if err := api.e.SetGlobalUpdatable(list); err != nil {
		return err
	}
	return noContent(w)
}

func sortBy[T any](s []T, key func(T) string) {
	slices.SortFunc(s, func(a, b T) int { return strings.Compare(key(a), key(b)) })
}
