package emulatortools

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"

	"cpesuite/internal/platform/apperr"
)

// maxEmulatorBody bounds an answer read from the emulator; a whole
// parameter tree of a large CPE is a few MB.
const maxEmulatorBody = 32 << 20

// emulator calls the TR-069 emulator's single-device API.
type emulator struct {
	base string
	http *http.Client
}

// reply is a 2xx answer.
type reply struct {
	status int
	body   []byte
}

// call sends one request: query for GETs, body (JSON) for POSTs. A non-2xx
// answer is an error carrying the emulator's text.
func (e *emulator) call(ctx context.Context, method, path string, query url.Values, body any) (reply, error) {
	ctx, cancel := context.WithTimeout(ctx, emulatorCallTimeout)
	defer cancel()
	target := e.base + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return reply{}, apperr.Internal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return reply{}, apperr.Internal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := e.http.Do(req)
	if err != nil {
		return reply{}, transportError(ctx, "EMULATOR_UNREACHABLE", "the TR-069 emulator", e.base, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxEmulatorBody+1))
	if err != nil {
		return reply{}, transportError(ctx, "EMULATOR_UNREACHABLE", "the TR-069 emulator", e.base, err)
	}
	if len(data) > maxEmulatorBody {
		return reply{}, apperr.New(apperr.ErrUpstream, "EMULATOR_ERROR", "the emulator's answer to %s is larger than %d MB", path, maxEmulatorBody>>20)
	}
	if resp.StatusCode/100 != 2 {
		return reply{}, emulatorError(resp.StatusCode, data)
	}
	return reply{status: resp.StatusCode, body: data}, nil
}

// get calls a GET endpoint and decodes its JSON answer into out.
func (e *emulator) get(ctx context.Context, path string, query url.Values, out any) error {
	r, err := e.call(ctx, http.MethodGet, path, query, nil)
	if err != nil {
		return err
	}
	return decodeAnswer(path, r.body, out)
}

// post calls a POST endpoint; out (optional) receives a JSON answer.
func (e *emulator) post(ctx context.Context, path string, body, out any) (int, error) {
	r, err := e.call(ctx, http.MethodPost, path, nil, body)
	if err != nil {
		return 0, err
	}
	if out != nil && len(r.body) > 0 {
		if err := decodeAnswer(path, r.body, out); err != nil {
			return r.status, err
		}
	}
	return r.status, nil
}

func decodeAnswer(path string, body []byte, out any) error {
	if err := json.Unmarshal(body, out); err != nil {
		return apperr.Wrap(apperr.ErrUpstream, err, "EMULATOR_ERROR", "the emulator's answer to "+path+" is not the expected JSON")
	}
	return nil
}
