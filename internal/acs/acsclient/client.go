// Package acsclient is the typed Go client of the ACS management API.
// Other services (campaigns, northbound API, portal) use it instead of
// reaching into the ACS's internals.
package acsclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"cpesuite/internal/acs"
)

// Client calls one ACS.
type Client struct {
	base string
	http *http.Client
}

// New returns a client for the API at baseURL (e.g. http://acs:7557).
// A nil hc uses a client with a 2-minute time-out (longer than the
// longest enqueue wait).
func New(baseURL string, hc *http.Client) *Client {
	if hc == nil {
		hc = &http.Client{Timeout: 2*acs.MaxWait + 10*time.Second}
	}
	return &Client{base: strings.TrimSuffix(baseURL, "/"), http: hc}
}

// Error is an error answer of the API.
type Error struct {
	Status  int
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string {
	return fmt.Sprintf("acs: %d %s: %s", e.Status, e.Code, e.Message)
}

// IsNotFound reports whether err is a 404 from the ACS.
func IsNotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusNotFound
}

// do sends a request and decodes a 2xx JSON answer into out.
func (c *Client) do(ctx context.Context, method, path string, body, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return 0, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, fmt.Errorf("acs: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return resp.StatusCode, fmt.Errorf("acs: reading answer: %w", err)
	}
	if resp.StatusCode >= 300 {
		e := &Error{Status: resp.StatusCode}
		if json.Unmarshal(raw, e) != nil || e.Code == "" {
			e.Code, e.Message = http.StatusText(resp.StatusCode), strings.TrimSpace(string(raw))
		}
		return resp.StatusCode, e
	}
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			return resp.StatusCode, fmt.Errorf("acs: decoding answer of %s %s: %w", method, path, err)
		}
	}
	return resp.StatusCode, nil
}

// DeviceQuery filters GET /acs/devices; zero fields do not filter.
type DeviceQuery struct {
	Serial, SerialPrefix, SoftwareVersion, ProductClass, OUI string
	ModelIDs, ManufacturerIDs, DomainIDs                     []int64
	Online                                                   *bool
	Page, PageSize                                           int
}

func (q DeviceQuery) values() url.Values {
	v := url.Values{}
	set := func(k, s string) {
		if s != "" {
			v.Set(k, s)
		}
	}
	ids := func(k string, list []int64) {
		if len(list) > 0 {
			parts := make([]string, len(list))
			for i, id := range list {
				parts[i] = strconv.FormatInt(id, 10)
			}
			v.Set(k, strings.Join(parts, ","))
		}
	}
	set("serial", q.Serial)
	set("serialPrefix", q.SerialPrefix)
	set("softwareVersion", q.SoftwareVersion)
	set("productClass", q.ProductClass)
	set("oui", q.OUI)
	ids("modelId", q.ModelIDs)
	ids("manufacturerId", q.ManufacturerIDs)
	ids("domainId", q.DomainIDs)
	if q.Online != nil {
		v.Set("online", strconv.FormatBool(*q.Online))
	}
	if q.Page > 0 {
		v.Set("page", strconv.Itoa(q.Page))
	}
	if q.PageSize > 0 {
		v.Set("pageSize", strconv.Itoa(q.PageSize))
	}
	return v
}

// Devices lists one page of devices.
func (c *Client) Devices(ctx context.Context, q DeviceQuery) (acs.DevicePage, error) {
	var out acs.DevicePage
	_, err := c.do(ctx, http.MethodGet, "/acs/devices?"+q.values().Encode(), nil, &out)
	return out, err
}

// Device returns one device with parameters and open tasks.
func (c *Client) Device(ctx context.Context, id int64) (acs.DeviceDetail, error) {
	var out acs.DeviceDetail
	_, err := c.do(ctx, http.MethodGet, "/acs/devices/"+strconv.FormatInt(id, 10), nil, &out)
	return out, err
}

// UpdateDevice changes a device's domain or credentials.
func (c *Client) UpdateDevice(ctx context.Context, id int64, u acs.DeviceUpdate) (acs.Device, error) {
	var out acs.Device
	_, err := c.do(ctx, http.MethodPatch, "/acs/devices/"+strconv.FormatInt(id, 10), u, &out)
	return out, err
}

// DeleteDevice removes a device.
func (c *Client) DeleteDevice(ctx context.Context, id int64) error {
	_, err := c.do(ctx, http.MethodDelete, "/acs/devices/"+strconv.FormatInt(id, 10), nil, nil)
	return err
}

// Enqueue queues tasks for one device. finished is true when the
// transaction ended within req.WaitSeconds (HTTP 200), false when it is
// still pending (HTTP 202).
func (c *Client) Enqueue(ctx context.Context, deviceID int64, req acs.EnqueueRequest) (resp acs.EnqueueResponse, finished bool, err error) {
	status, err := c.do(ctx, http.MethodPost, "/acs/devices/"+strconv.FormatInt(deviceID, 10)+"/tasks", req, &resp)
	return resp, status == http.StatusOK, err
}

// EnqueueGroup queues the same tasks for many devices.
func (c *Client) EnqueueGroup(ctx context.Context, req acs.GroupRequest) (acs.EnqueueResponse, error) {
	var out acs.EnqueueResponse
	_, err := c.do(ctx, http.MethodPost, "/acs/tasks", req, &out)
	return out, err
}

// Transaction returns a transaction and its tasks.
func (c *Client) Transaction(ctx context.Context, id int64) (acs.Transaction, error) {
	var out acs.Transaction
	_, err := c.do(ctx, http.MethodGet, "/acs/transactions/"+strconv.FormatInt(id, 10), nil, &out)
	return out, err
}

// Task returns one task.
func (c *Client) Task(ctx context.Context, id int64) (acs.Task, error) {
	var out acs.Task
	_, err := c.do(ctx, http.MethodGet, "/acs/tasks/"+strconv.FormatInt(id, 10), nil, &out)
	return out, err
}

// CancelTask ends an open task.
func (c *Client) CancelTask(ctx context.Context, id int64) (acs.Task, error) {
	var out acs.Task
	_, err := c.do(ctx, http.MethodDelete, "/acs/tasks/"+strconv.FormatInt(id, 10), nil, &out)
	return out, err
}

// ConnectionRequest asks a device to open a session now.
func (c *Client) ConnectionRequest(ctx context.Context, id int64) error {
	_, err := c.do(ctx, http.MethodPost, "/acs/devices/"+strconv.FormatInt(id, 10)+"/connection-request", nil, nil)
	return err
}

// Domains lists the location tree.
func (c *Client) Domains(ctx context.Context) ([]acs.Domain, error) {
	var out []acs.Domain
	_, err := c.do(ctx, http.MethodGet, "/acs/domains", nil, &out)
	return out, err
}

// CreateDomain adds a domain.
func (c *Client) CreateDomain(ctx context.Context, name string, parent *int64) (acs.Domain, error) {
	var out acs.Domain
	_, err := c.do(ctx, http.MethodPost, "/acs/domains", acs.DomainRequest{Name: name, ParentID: parent}, &out)
	return out, err
}

// ProductClasses lists the device models.
func (c *Client) ProductClasses(ctx context.Context) ([]acs.ProductClass, error) {
	var out []acs.ProductClass
	_, err := c.do(ctx, http.MethodGet, "/acs/product-classes", nil, &out)
	return out, err
}

// Conditions lists saved conditions (nil domainIDs: all).
func (c *Client) Conditions(ctx context.Context, domainIDs []int64) ([]acs.Condition, error) {
	var out []acs.Condition
	_, err := c.do(ctx, http.MethodGet, "/acs/conditions?"+DeviceQuery{DomainIDs: domainIDs}.values().Encode(), nil, &out)
	return out, err
}

// Condition returns one saved condition.
func (c *Client) Condition(ctx context.Context, id int64) (acs.Condition, error) {
	var out acs.Condition
	_, err := c.do(ctx, http.MethodGet, "/acs/conditions/"+strconv.FormatInt(id, 10), nil, &out)
	return out, err
}

// SaveCondition creates (id 0) or replaces a condition.
func (c *Client) SaveCondition(ctx context.Context, id int64, req acs.ConditionRequest) (acs.Condition, error) {
	var out acs.Condition
	if id == 0 {
		_, err := c.do(ctx, http.MethodPost, "/acs/conditions", req, &out)
		return out, err
	}
	_, err := c.do(ctx, http.MethodPut, "/acs/conditions/"+strconv.FormatInt(id, 10), req, &out)
	return out, err
}

// Stats returns registry and queue counts.
func (c *Client) Stats(ctx context.Context) (acs.Stats, error) {
	var out acs.Stats
	_, err := c.do(ctx, http.MethodGet, "/acs/stats", nil, &out)
	return out, err
}
