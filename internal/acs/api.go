package acs

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/httpx"
)

//go:embed openapi.json
var openAPIDoc []byte

// OpenAPI returns the management API document.
func OpenAPI() []byte { return openAPIDoc }

// API limits.
const (
	DefaultPageSize = 50
	MaxPageSize     = 1000
	MaxWait         = 120 * time.Second
	MaxGroupDevices = 100_000
	maxAPIBody      = 1 << 20
)

// API is the management API.
type API struct {
	acs *ACS
	h   httpx.Adapter
}

// NewAPI returns the management API of a.
func NewAPI(a *ACS) *API {
	return &API{acs: a, h: httpx.Adapter{Errors: httpx.DefaultErrorWriter, Log: a.log}}
}

// Routes registers the API on mux under /acs.
func (api *API) Routes(mux *httpx.Mux) {
	h := api.h.H
	mux.HandleFunc("GET /acs/devices", h(api.listDevices))
	mux.HandleFunc("GET /acs/devices/{id}", h(api.getDevice))
	mux.HandleFunc("PATCH /acs/devices/{id}", h(api.patchDevice))
	mux.HandleFunc("DELETE /acs/devices/{id}", h(api.deleteDevice))
	mux.HandleFunc("GET /acs/devices/{id}/parameters", h(api.deviceParams))
	mux.HandleFunc("GET /acs/devices/{id}/tasks", h(api.deviceTasks))
	mux.HandleFunc("POST /acs/devices/{id}/tasks", h(api.enqueueDevice))
	mux.HandleFunc("POST /acs/devices/{id}/connection-request", h(api.connectionRequest))
	mux.HandleFunc("POST /acs/tasks", h(api.enqueueGroup))
	mux.HandleFunc("GET /acs/tasks/{id}", h(api.getTask))
	mux.HandleFunc("DELETE /acs/tasks/{id}", h(api.cancelTask))
	mux.HandleFunc("GET /acs/transactions/{id}", h(api.getTransaction))
	mux.HandleFunc("GET /acs/domains", h(api.listDomains))
	mux.HandleFunc("POST /acs/domains", h(api.createDomain))
	mux.HandleFunc("DELETE /acs/domains/{id}", h(api.deleteDomain))
	mux.HandleFunc("GET /acs/manufacturers", h(api.listManufacturers))
	mux.HandleFunc("GET /acs/product-classes", h(api.listClasses))
	mux.HandleFunc("PATCH /acs/product-classes/{id}", h(api.patchClass))
	mux.HandleFunc("GET /acs/conditions", h(api.listConditions))
	mux.HandleFunc("POST /acs/conditions", h(api.createCondition))
	mux.HandleFunc("GET /acs/conditions/{id}", h(api.getCondition))
	mux.HandleFunc("PUT /acs/conditions/{id}", h(api.putCondition))
	mux.HandleFunc("DELETE /acs/conditions/{id}", h(api.deleteCondition))
	mux.HandleFunc("GET /acs/stats", h(api.stats))
	httpx.ServeOpenAPI(mux.ServeMux, "/acs/openapi.json", "/acs/docs/", "cpesuite ACS management API", openAPIDoc)
}

func decode(r *http.Request, v any) error {
	return httpx.DecodeJSON(r, v, httpx.DecodeOptions{MaxBytes: maxAPIBody, DisallowUnknownFields: true})
}

func pathID(r *http.Request) (int64, error) {
	raw := r.PathValue("id")
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id < 1 {
		return 0, apperr.Invalid("INVALID_ID", "id %q is not a positive integer", raw)
	}
	return id, nil
}

func queryInt(r *http.Request, name string, def, lo, hi int) (int, error) {
	raw := r.URL.Query().Get(name)
	if raw == "" {
		return def, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < lo || n > hi {
		return 0, apperr.Invalid("INVALID_QUERY", "%s must be a whole number from %d to %d, got %q", name, lo, hi, raw)
	}
	return n, nil
}

func queryIDs(r *http.Request, name string) ([]int64, error) {
	var out []int64
	for _, raw := range r.URL.Query()[name] {
		for _, part := range strings.Split(raw, ",") {
			if part = strings.TrimSpace(part); part == "" {
				continue
			}
			id, err := strconv.ParseInt(part, 10, 64)
			if err != nil || id < 1 {
				return nil, apperr.Invalid("INVALID_QUERY", "%s: %q is not a positive integer", name, part)
			}
			out = append(out, id)
		}
	}
	return out, nil
}

// DevicePage is the answer of GET /acs/devices.
type DevicePage struct {
	Items      []Device `json:"items"`
	Page       int      `json:"page"`
	PageSize   int      `json:"pageSize"`
	Total      int64    `json:"total"`
	TotalPages int64    `json:"totalPages"`
}

func (api *API) listDevices(w http.ResponseWriter, r *http.Request) error {
	page, err := queryInt(r, "page", 1, 1, 1<<30)
	if err != nil {
		return err
	}
	size, err := queryInt(r, "pageSize", DefaultPageSize, 1, MaxPageSize)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := DeviceFilter{Serial: q.Get("serial"), SerialPrefix: q.Get("serialPrefix"), SoftwareVersion: q.Get("softwareVersion"),
		ProductClass: q.Get("productClass"), OUI: q.Get("oui")}
	if f.ModelIDs, err = queryIDs(r, "modelId"); err != nil {
		return err
	}
	if f.ManufacturerIDs, err = queryIDs(r, "manufacturerId"); err != nil {
		return err
	}
	if f.DomainIDs, err = queryIDs(r, "domainId"); err != nil {
		return err
	}
	if v := q.Get("online"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return apperr.Invalid("INVALID_QUERY", "online must be true or false, got %q", v)
		}
		f.Online = &b
	}
	items, total, err := api.acs.store.ListDevices(r.Context(), f, Page{Number: page, Size: size})
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, DevicePage{Items: items, Page: page, PageSize: size, Total: total,
		TotalPages: (total + int64(size) - 1) / int64(size)})
}

// DeviceDetail is a device with its cached parameters and open tasks.
type DeviceDetail struct {
	Device
	Parameters Params `json:"parameters"`
	OpenTasks  []Task `json:"openTasks"`
}

func (api *API) getDevice(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	d, err := api.acs.store.Device(r.Context(), id)
	if err != nil {
		return err
	}
	p, err := api.acs.store.Params(r.Context(), id)
	if err != nil {
		return err
	}
	open, err := api.acs.store.OpenTasks(r.Context(), id)
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, DeviceDetail{Device: d, Parameters: p, OpenTasks: open})
}

func (api *API) patchDevice(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	var u DeviceUpdate
	if err := decode(r, &u); err != nil {
		return err
	}
	if err := api.acs.store.UpdateDevice(r.Context(), id, u); err != nil {
		return err
	}
	d, err := api.acs.store.Device(r.Context(), id)
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, d)
}

func (api *API) deleteDevice(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if err := api.acs.store.DeleteDevice(r.Context(), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (api *API) deviceParams(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	p, err := api.acs.store.Params(r.Context(), id)
	if err != nil {
		return err
	}
	if prefix := r.URL.Query().Get("prefix"); prefix != "" {
		for name := range p {
			if !strings.HasPrefix(name, prefix) {
				delete(p, name)
			}
		}
	}
	return httpx.WriteJSON(w, http.StatusOK, p)
}

func (api *API) deviceTasks(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	limit, err := queryInt(r, "limit", 100, 1, 1000)
	if err != nil {
		return err
	}
	if _, err := api.acs.store.Device(r.Context(), id); err != nil {
		return err
	}
	tasks, err := api.acs.store.DeviceTasks(r.Context(), id, limit)
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, tasks)
}

// TaskSpec is one task of an enqueue request.
type TaskSpec struct {
	Kind TaskKind        `json:"kind"`
	Args json.RawMessage `json:"args,omitempty"`
}

// EnqueueRequest is the body of POST /acs/devices/{id}/tasks.
type EnqueueRequest struct {
	Tasks             []TaskSpec `json:"tasks"`
	Label             string     `json:"label,omitempty"`
	ConnectionRequest bool       `json:"connectionRequest,omitempty"`
	// WaitSeconds waits for the transaction to finish: 200 with the result
	// when it does in time, 202 otherwise.
	WaitSeconds int `json:"waitSeconds,omitempty"`
}

// EnqueueResponse answers an enqueue.
type EnqueueResponse struct {
	Transaction
	ConnectionRequest *ConnRequestOutcome `json:"connectionRequest,omitempty"`
}

// ConnRequestOutcome reports the connection request made for an enqueue.
type ConnRequestOutcome struct {
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

func validateSpecs(specs []TaskSpec) ([]TaskSpec, error) {
	if len(specs) == 0 {
		return nil, apperr.Invalid("NO_TASKS", "tasks must list at least one task")
	}
	if len(specs) > 100 {
		return nil, apperr.Invalid("TOO_MANY_TASKS", "at most 100 tasks per request, got %d", len(specs))
	}
	out := make([]TaskSpec, len(specs))
	for i, s := range specs {
		if !slices.Contains(TaskKinds, s.Kind) {
			return nil, apperr.Invalid("INVALID_TASK", "tasks[%d].kind %q is not one of %v", i, s.Kind, TaskKinds)
		}
		args, err := ValidateArgs(s.Kind, s.Args)
		if err != nil {
			return nil, apperr.Invalid("INVALID_TASK", "tasks[%d]: %v", i, err)
		}
		out[i] = TaskSpec{Kind: s.Kind, Args: args}
	}
	return out, nil
}

func (api *API) enqueueDevice(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	var req EnqueueRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if req.WaitSeconds < 0 || time.Duration(req.WaitSeconds)*time.Second > MaxWait {
		return apperr.Invalid("INVALID_WAIT", "waitSeconds must be from 0 to %d", int(MaxWait/time.Second))
	}
	specs, err := validateSpecs(req.Tasks)
	if err != nil {
		return err
	}
	if _, err := api.acs.store.Device(r.Context(), id); err != nil {
		return err
	}
	tasks := make([]NewTask, len(specs))
	for i, s := range specs {
		tasks[i] = NewTask{DeviceID: id, Kind: s.Kind, Args: s.Args}
	}
	// The wait loop reads the state after subscribing, so a task that
	// finishes in between is not missed.
	txn, err := api.acs.store.Enqueue(r.Context(), req.Label, tasks)
	if err != nil {
		return err
	}
	wake, unsubscribe := api.acs.notify.subscribe(txn.ID)
	defer unsubscribe()
	resp := EnqueueResponse{Transaction: txn}
	if req.ConnectionRequest {
		if req.WaitSeconds == 0 {
			go func() { _ = api.acs.ConnectionRequest(context.WithoutCancel(r.Context()), id) }()
		} else {
			o := &ConnRequestOutcome{OK: true}
			if err := api.acs.ConnectionRequest(r.Context(), id); err != nil {
				o.OK, o.Error = false, err.Error()
			}
			resp.ConnectionRequest = o
		}
	}
	if req.WaitSeconds > 0 {
		// A failed connection request leaves nothing to wait for; the
		// transaction is still read again for the failure it recorded.
		expired := resp.ConnectionRequest != nil && !resp.ConnectionRequest.OK
		deadline, stop := api.acs.waitDeadline(time.Duration(req.WaitSeconds) * time.Second)
		defer stop()
		for {
			cur, err := api.acs.store.Transaction(r.Context(), txn.ID)
			if err != nil {
				return err
			}
			resp.Transaction = cur
			if cur.State != TaskPending || expired {
				break
			}
			select {
			case <-wake:
			case <-deadline:
				// Tasks start running without a wake-up, so the last
				// read may be old: read once more before answering.
				expired = true
			case <-r.Context().Done():
				return r.Context().Err()
			}
		}
	}
	w.Header().Set("Location", "/acs/transactions/"+strconv.FormatInt(txn.ID, 10))
	status := http.StatusAccepted
	if resp.State != TaskPending {
		status = http.StatusOK
	}
	return httpx.WriteJSON(w, status, resp)
}

// GroupRequest is the body of POST /acs/tasks: the same tasks for many
// devices, chosen by ids or by a saved condition.
type GroupRequest struct {
	DeviceIDs         []int64    `json:"deviceIds,omitempty"`
	ConditionID       int64      `json:"conditionId,omitempty"`
	Tasks             []TaskSpec `json:"tasks"`
	Label             string     `json:"label,omitempty"`
	ConnectionRequest bool       `json:"connectionRequest,omitempty"`
}

func (api *API) enqueueGroup(w http.ResponseWriter, r *http.Request) error {
	var req GroupRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if (len(req.DeviceIDs) == 0) == (req.ConditionID == 0) {
		return apperr.Invalid("INVALID_SELECTION", "give either deviceIds or conditionId")
	}
	specs, err := validateSpecs(req.Tasks)
	if err != nil {
		return err
	}
	ids := req.DeviceIDs
	if req.ConditionID != 0 {
		c, err := api.acs.store.Condition(r.Context(), req.ConditionID)
		if err != nil {
			return err
		}
		if ids, err = api.acs.store.ConditionDeviceIDs(r.Context(), c, MaxGroupDevices+1); err != nil {
			return err
		}
	}
	if len(ids) > MaxGroupDevices {
		return apperr.Invalid("TOO_MANY_DEVICES", "at most %d devices per group request", MaxGroupDevices)
	}
	if len(ids) == 0 {
		return apperr.Invalid("NO_DEVICES", "the selection matches no device")
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	var tasks []NewTask
	for _, id := range ids {
		for _, s := range specs {
			tasks = append(tasks, NewTask{DeviceID: id, Kind: s.Kind, Args: s.Args})
		}
	}
	txn, err := api.acs.store.Enqueue(r.Context(), req.Label, tasks)
	if err != nil {
		return err
	}
	if req.ConnectionRequest {
		go func() {
			for _, id := range ids {
				_ = api.acs.ConnectionRequest(context.WithoutCancel(r.Context()), id)
			}
		}()
	}
	w.Header().Set("Location", "/acs/transactions/"+strconv.FormatInt(txn.ID, 10))
	return httpx.WriteJSON(w, http.StatusAccepted, EnqueueResponse{Transaction: txn})
}

func (api *API) connectionRequest(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if err := api.acs.ConnectionRequest(r.Context(), id); err != nil {
		if _, ok := apperr.As(err); ok {
			return err
		}
		if errors.Is(err, ErrNoConnectionRequestURL) {
			return apperr.Conflict("NO_CONNECTION_REQUEST_URL", "device %d has not reported a connection request URL yet", id)
		}
		return apperr.Wrap(apperr.ErrUpstream, err, "CONNECTION_REQUEST_FAILED", "connection request failed: "+err.Error())
	}
	return httpx.WriteJSON(w, http.StatusOK, ConnRequestOutcome{OK: true})
}

func (api *API) getTask(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	t, err := api.acs.store.Task(r.Context(), id)
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, t)
}

func (api *API) cancelTask(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	t, err := api.acs.store.CancelTask(r.Context(), id)
	if err != nil {
		return err
	}
	api.acs.notify.notify(t.TransactionID)
	return httpx.WriteJSON(w, http.StatusOK, t)
}

func (api *API) getTransaction(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	txn, err := api.acs.store.Transaction(r.Context(), id)
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, txn)
}

func (api *API) listDomains(w http.ResponseWriter, r *http.Request) error {
	d, err := api.acs.store.Domains(r.Context())
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, d)
}

// DomainRequest creates a domain.
type DomainRequest struct {
	Name     string `json:"name"`
	ParentID *int64 `json:"parentId"`
}

func (api *API) createDomain(w http.ResponseWriter, r *http.Request) error {
	var req DomainRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	d, err := api.acs.store.CreateDomain(r.Context(), req.Name, req.ParentID)
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusCreated, d)
}

func (api *API) deleteDomain(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if err := api.acs.store.DeleteDomain(r.Context(), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (api *API) listManufacturers(w http.ResponseWriter, r *http.Request) error {
	m, err := api.acs.store.Manufacturers(r.Context())
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, m)
}

func (api *API) listClasses(w http.ResponseWriter, r *http.Request) error {
	c, err := api.acs.store.ProductClasses(r.Context())
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, c)
}

func (api *API) patchClass(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	var u ProductClassUpdate
	if err := decode(r, &u); err != nil {
		return err
	}
	c, err := api.acs.store.UpdateProductClass(r.Context(), id, u)
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, c)
}

func (api *API) listConditions(w http.ResponseWriter, r *http.Request) error {
	ids, err := queryIDs(r, "domainId")
	if err != nil {
		return err
	}
	c, err := api.acs.store.Conditions(r.Context(), ids)
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, c)
}

// ConditionRequest creates or replaces a saved condition.
type ConditionRequest struct {
	Name     string   `json:"name"`
	DomainID *int64   `json:"domainId"`
	Criteria Criteria `json:"criteria"`
}

func (api *API) createCondition(w http.ResponseWriter, r *http.Request) error {
	var req ConditionRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	c, err := api.acs.store.SaveCondition(r.Context(), Condition{Name: req.Name, DomainID: req.DomainID, Criteria: req.Criteria})
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusCreated, c)
}

func (api *API) getCondition(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	c, err := api.acs.store.Condition(r.Context(), id)
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, c)
}

func (api *API) putCondition(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	var req ConditionRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	c, err := api.acs.store.SaveCondition(r.Context(), Condition{ID: id, Name: req.Name, DomainID: req.DomainID, Criteria: req.Criteria})
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, c)
}

func (api *API) deleteCondition(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if err := api.acs.store.DeleteCondition(r.Context(), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// Stats is the answer of GET /acs/stats.
type Stats struct {
	Devices        int64 `json:"devices"`
	Online         int64 `json:"online"`
	ActiveSessions int   `json:"activeSessions"`
	TasksPending   int64 `json:"tasksPending"`
	TasksRunning   int64 `json:"tasksRunning"`
}

func (api *API) stats(w http.ResponseWriter, r *http.Request) error {
	total, online, err := api.acs.store.CountDevices(r.Context())
	if err != nil {
		return err
	}
	pending, running, err := api.acs.store.QueueDepth(r.Context())
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, Stats{Devices: total, Online: online, ActiveSessions: api.acs.sessions.active(),
		TasksPending: pending, TasksRunning: running})
}

// newAPIMux returns a mux with the API routes (tests and the module).
func newAPIMux(a *ACS) *httpx.Mux {
	mux := httpx.NewMux()
	NewAPI(a).Routes(mux)
	return mux
}
