// Package identitytest sends requests to worker routes in tests, signed
// the way the gateway signs them.
package identitytest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/testrunner/identity"
)

// Do sends method url signed for id with secret (unsigned when id is nil)
// and returns the response with its body read. A string body is sent as
// is, any other non-nil body as JSON; both with Content-Type
// application/json. Transport failures fail t.
func Do(t testing.TB, c *http.Client, secret []byte, id *identity.Identity, method, url string, body any) (*http.Response, []byte) {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if id != nil {
		identity.SignRequest(secret, req, *id, time.Now())
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, out
}
