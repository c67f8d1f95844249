package fcc

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"net/http"
	"time"

	"cpesuite/internal/fcc/fccxml"
	"cpesuite/internal/fcc/fleet"
	"cpesuite/internal/platform/httpx"
)

//go:embed openapi.json
var openAPIDoc []byte

// OpenAPI returns the service's OpenAPI document.
func OpenAPI() []byte { return openAPIDoc }

// API is the HTTP surface under /FCC.
type API struct {
	s *Service
	a httpx.Adapter
}

// NewAPI returns the handlers of s.
func NewAPI(s *Service) *API {
	return &API{s: s, a: httpx.Adapter{Errors: writeError, Log: s.log}}
}

// jsonLimit bounds JSON bodies: a campaign with ten configurations of
// 20,000 serials each fits.
const jsonLimit = 8 << 20

// Routes registers every /FCC route behind the identity filter, and the
// documentation outside it.
func (a *API) Routes(mux *httpx.Mux) {
	h := func(fn httpx.Handler) http.Handler {
		return identityFilter(a.s.log, a.a.WriteError, a.a.H(fn))
	}
	mux.RouteErrors(writeError)
	mux.Handle("PUT /FCC/item/details", h(rpc(a.s.saveRPC)))
	mux.Handle("POST /FCC/item/details", h(rpc(a.s.getRPC)))
	mux.Handle("POST /FCC/items", h(rpc(a.s.List)))
	mux.Handle("PUT /FCC/item/export", h(a.export))
	mux.Handle("PUT /FCC/item/import", h(a.importDoc))
	mux.Handle("POST /FCC/devices/resolve", h(a.resolve))
	mux.Handle("POST /FCC/devices/count", h(a.count))
	mux.Handle("PUT /FCC/devices/import", h(a.devicesImport))
	mux.Handle("POST /FCC/activate/devices/countByGroupConfigs", h(rpc(a.s.countByGroupConfigs)))
	mux.Handle("POST /FCC/activate/devices/countByGroupIds", h(rpc(a.s.countByGroupIDs)))
	mux.Handle("POST /FCC/manufacturerAndModelByTestType", h(rpc(a.s.Catalog)))
	mux.Handle("POST /FCC/admin/domain-setting/list", h(a.domainSettings))
	mux.Handle("PUT /FCC/admin/domain-setting", h(rpc(a.s.PutDomainSetting)))
	mux.Handle("POST /FCC/admin/domain-setting/delete", h(a.deleteDomainSetting))
	mux.Handle("POST /FCC/admin/model-capability/list", h(a.capabilities))
	mux.Handle("PUT /FCC/admin/model-capability", h(rpc(a.s.PutCapability)))
	a.runRoutes(mux, h)
	a.resultRoutes(mux, h)
	a.reportRoutes(mux, h)
	a.exportRoutes(mux, h)
	a.legacyRoutes(mux, h)
	httpx.ServeOpenAPI(mux.ServeMux, "/FCC/v3/api-docs", "/FCC/swagger-ui.html", "cpesuite campaign service", openAPIDoc)
}

func decode(r *http.Request, v any) error {
	return httpx.DecodeJSON(r, v, httpx.DecodeOptions{MaxBytes: jsonLimit})
}

// rpc is the shape of most /FCC operations: a JSON body in, the caller's
// identity, a JSON answer out.
func rpc[Req, Resp any](fn func(context.Context, Identity, Req) (Resp, error)) httpx.Handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req Req
		if err := decode(r, &req); err != nil {
			return err
		}
		resp, err := fn(r.Context(), identityFrom(r.Context()), req)
		if err != nil {
			return err
		}
		return httpx.WriteJSON(w, http.StatusOK, resp)
	}
}

type idBody struct {
	ID *int64 `json:"id"`
}

func (b idBody) need() (int64, error) {
	if b.ID == nil {
		return 0, invalid("id is required")
	}
	return *b.ID, nil
}

func (a *API) export(w http.ResponseWriter, r *http.Request) error {
	var b idBody
	if err := decode(r, &b); err != nil {
		return err
	}
	id, err := b.need()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(r.Context(), a.s.cfg.ExportTimeout)
	defer cancel()
	name, write, err := a.s.Export(ctx, identityFrom(ctx), id)
	if err != nil {
		return err
	}
	// Streamed: no Content-Length, and the write deadline is the export
	// time-out rather than the server's default.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(a.s.cfg.ExportTimeout))
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	w.WriteHeader(http.StatusOK)
	// Flushing the header now keeps the server from buffering a small
	// document and adding a Content-Length: the answer is always a stream.
	_ = http.NewResponseController(w).Flush()
	if err := write(w); err != nil {
		// After the first byte a failure can only truncate the document.
		a.s.log.Error("export stream failed", "campaign", id, "err", err, "request_id", httpx.RequestIDFrom(r.Context()))
	}
	return nil
}

func (a *API) importDoc(w http.ResponseWriter, r *http.Request) error {
	up, err := readUpload(w, r, a.s.cfg.SerialFileMaxSize)
	if err != nil {
		return err
	}
	if up.request != nil {
		return invalid("PUT /FCC/item/import takes a file part only")
	}
	c, err := a.s.Import(up.file)
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, c)
}

// resolveRequest reads either body form of resolve and count: JSON, or a
// multipart upload whose file is the whole selection.
func (a *API) resolveRequest(w http.ResponseWriter, r *http.Request) (ResolveRequest, error) {
	var req ResolveRequest
	if !isMultipart(r) {
		return req, decode(r, &req)
	}
	up, err := readUpload(w, r, a.s.cfg.SerialFileMaxSize)
	if err != nil {
		return req, err
	}
	if err := decodePart(up.request, &req); err != nil {
		return req, err
	}
	serials, err := fccxml.SerialList(bytes.NewReader(up.file), 0)
	if err != nil {
		return req, uploadParseError(err)
	}
	req.SourceType, req.Serials, req.SelectedDevices, req.ConditionID = string(fleet.SourceSerials), serials, nil, nil
	return req, nil
}

func uploadParseError(err error) error {
	if errors.Is(err, fccxml.ErrInvalid) {
		return invalid("%v", err)
	}
	return err
}

func (a *API) resolve(w http.ResponseWriter, r *http.Request) error {
	req, err := a.resolveRequest(w, r)
	if err != nil {
		return err
	}
	res, err := a.s.Resolve(r.Context(), identityFrom(r.Context()), req)
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, res)
}

func (a *API) count(w http.ResponseWriter, r *http.Request) error {
	req, err := a.resolveRequest(w, r)
	if err != nil {
		return err
	}
	res, err := a.s.Count(r.Context(), identityFrom(r.Context()), req)
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, res)
}

// importRequest is what PUT /FCC/devices/import reads of its request part:
// paging, onlyOnline and domainIds only.
type importRequest struct {
	PageNumbers PageNumber `json:"pageNumbers"`
	PageSize    *int       `json:"pageSize"`
	OnlyOnline  bool       `json:"onlyOnline"`
	DomainIDs   []int64    `json:"domainIds"`
}

func (a *API) devicesImport(w http.ResponseWriter, r *http.Request) error {
	up, err := readUpload(w, r, a.s.cfg.SerialFileMaxSize)
	if err != nil {
		return err
	}
	var ir importRequest
	if err := decodePart(up.request, &ir); err != nil {
		return err
	}
	serials, err := fccxml.Serials(bytes.NewReader(up.file), 0)
	if err != nil {
		return uploadParseError(err)
	}
	req := ResolveRequest{SourceType: string(fleet.SourceSerials), Serials: serials, PageNumbers: ir.PageNumbers, PageSize: ir.PageSize,
		Condition: &fleet.Condition{OnlyOnline: ir.OnlyOnline, DomainIDs: ir.DomainIDs}}
	res, err := a.s.Resolve(r.Context(), identityFrom(r.Context()), req)
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, res)
}

func (a *API) domainSettings(w http.ResponseWriter, r *http.Request) error {
	var req DomainSettingList
	if r.ContentLength != 0 {
		if err := decode(r, &req); err != nil {
			return err
		}
	}
	list, err := a.s.DomainSettings(r.Context(), identityFrom(r.Context()), req)
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, map[string]any{"items": list})
}

func (a *API) deleteDomainSetting(w http.ResponseWriter, r *http.Request) error {
	var req DomainSettingRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if err := a.s.DeleteDomainSetting(r.Context(), identityFrom(r.Context()), req); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (a *API) capabilities(w http.ResponseWriter, r *http.Request) error {
	list, err := a.s.Capabilities(r.Context(), identityFrom(r.Context()))
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, map[string]any{"items": list})
}
