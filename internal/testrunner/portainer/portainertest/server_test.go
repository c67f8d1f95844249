package portainertest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"cpesuite/internal/testrunner/portainer"
	"cpesuite/internal/testrunner/portainer/portainertest"
)

// raw sends one request and returns the status and the decoded body.
func raw(t *testing.T, method, url, auth, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case strings.HasPrefix(auth, "ptr_"):
		req.Header.Set("X-API-Key", auth)
	case auth != "":
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return resp.StatusCode, m
}

func login(t *testing.T, s *portainertest.Server) string {
	t.Helper()
	code, m := raw(t, "POST", s.URL+"/api/auth", "", `{"username":"admin","password":"`+portainertest.Password+`"}`)
	tok, _ := m["jwt"].(string)
	if code != 200 || tok == "" {
		t.Fatalf("login = %d %v", code, m)
	}
	return tok
}

func TestDoubleChecksWhatPortainerChecks(t *testing.T) {
	s := portainertest.New(t)
	jwt := login(t, s)
	const create = `{"name":"tr-worker-w1","stackFileContent":"services: {}","env":[{"name":"A","value":"1"}]}`
	if code, m := raw(t, "POST", s.URL+"/api/stacks/create/standalone/string?endpointId=1", jwt, create); code != 200 || m["Id"] != 1.0 {
		t.Fatalf("create = %d %v", code, m)
	}
	tests := []struct {
		name, method, path, auth, body string
		wantStatus                     int
		wantMessage                    string
	}{
		{"no credentials", "GET", "/api/stacks", "", "", 401, "A valid authorisation token is missing"},
		{"forged token", "GET", "/api/stacks", "eyJforged", "", 401, "A valid authorisation token is missing"},
		{"wrong api key", "GET", "/api/endpoints", "ptr_wrong", "", 401, "A valid authorisation token is missing"},
		{"api key", "GET", "/api/endpoints", portainertest.APIKey, "", 200, ""},
		{"bad credentials", "POST", "/api/auth", "", `{"username":"admin","password":"nope"}`, 422, "Invalid credentials"},
		{"missing password", "POST", "/api/auth", "", `{"username":"admin"}`, 400, "Invalid request payload"},
		{"create without endpointId", "POST", "/api/stacks/create/standalone/string", jwt, create, 400, "Invalid query parameter: endpointId"},
		{"create on unknown endpoint", "POST", "/api/stacks/create/standalone/string?endpointId=9", jwt, create, 404, "Unable to find an environment with the specified identifier inside the database"},
		{"duplicate name", "POST", "/api/stacks/create/standalone/string?endpointId=1", jwt, create, 409, "A stack with the normalized name 'tr-worker-w1' already exists"},
		{"duplicate after normalisation", "POST", "/api/stacks/create/standalone/string?endpointId=1", jwt,
			`{"Name":"TR-Worker-W1!","StackFileContent":"x"}`, 409, "A stack with the normalized name 'tr-worker-w1' already exists"},
		{"create without file", "POST", "/api/stacks/create/standalone/string?endpointId=1", jwt, `{"name":"x"}`, 400, "Invalid request payload"},
		{"update without endpointId", "PUT", "/api/stacks/1", jwt, `{"stackFileContent":"x"}`, 400, "Invalid query parameter: endpointId"},
		{"update unknown stack", "PUT", "/api/stacks/99?endpointId=1", jwt, `{"stackFileContent":"x"}`, 404, "Unable to find a stack with the specified identifier inside the database"},
		{"update without file", "PUT", "/api/stacks/1?endpointId=1", jwt, `{"env":[]}`, 400, "Invalid request payload"},
		{"file of unknown stack", "GET", "/api/stacks/99/file", jwt, "", 404, "Unable to find a stack with the specified identifier inside the database"},
		{"delete unknown stack", "DELETE", "/api/stacks/99?endpointId=1", jwt, "", 404, "Unable to find a stack with the specified identifier inside the database"},
		{"delete without endpointId looks up environment 0", "DELETE", "/api/stacks/1", jwt, "", 404, "Unable to find the endpoint associated to the stack inside the database"},
		{"delete with non-numeric endpointId", "DELETE", "/api/stacks/1?endpointId=x", jwt, "", 400, "Invalid query parameter: endpointId"},
		{"restart on unknown endpoint", "POST", "/api/endpoints/9/docker/containers/x/restart", jwt, "", 404, "Unable to find an environment with the specified identifier inside the database"},
		{"bad filters", "GET", "/api/stacks?filters=nope", jwt, "", 400, "Invalid query parameter: filters"},
		{"file", "GET", "/api/stacks/1/file", jwt, "", 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, m := raw(t, tt.method, s.URL+tt.path, tt.auth, tt.body)
			if code != tt.wantStatus {
				t.Fatalf("status = %d (%v), want %d", code, m, tt.wantStatus)
			}
			if tt.wantMessage != "" && m["message"] != tt.wantMessage {
				t.Fatalf("message = %v, want %q", m["message"], tt.wantMessage)
			}
			if tt.wantMessage != "" && m["details"] == nil {
				t.Fatalf("error body has no details: %v", m)
			}
		})
	}
	if got := s.Stacks(); len(got) != 1 || got[0].Name != "tr-worker-w1" || len(got[0].Env) != 1 {
		t.Fatalf("stacks = %+v, want the one created", got)
	}
}

func TestDoubleFailNextAndExpiry(t *testing.T) {
	s := portainertest.New(t)
	jwt := login(t, s)
	s.FailNext("GET", "/api/stacks", 503)
	if code, m := raw(t, "GET", s.URL+"/api/endpoints", jwt, ""); code != 200 {
		t.Fatalf("a non-matching request failed: %d %v", code, m)
	}
	if code, m := raw(t, "GET", s.URL+"/api/stacks", jwt, ""); code != 503 || m["message"] != "Service Unavailable" {
		t.Fatalf("injected failure = %d %v", code, m)
	}
	if code, _ := raw(t, "GET", s.URL+"/api/stacks", jwt, ""); code != 200 {
		t.Fatalf("the failure was not consumed: %d", code)
	}
	s.ExpireTokens()
	if code, _ := raw(t, "GET", s.URL+"/api/stacks", jwt, ""); code != 401 {
		t.Fatalf("an expired token still works: %d", code)
	}
	if code, _ := raw(t, "GET", s.URL+"/api/stacks", portainertest.APIKey, ""); code != 200 {
		t.Fatalf("the API key stopped working after ExpireTokens: %d", code)
	}
	if code, _ := raw(t, "GET", s.URL+"/api/stacks", login(t, s), ""); code != 200 {
		t.Fatalf("a fresh token is refused: %d", code)
	}
	want := "GET /api/stacks"
	if reqs := s.Requests(); len(reqs) < 3 || reqs[2] != want {
		t.Fatalf("request log = %v, want entry 3 to be %q", reqs, want)
	}
}

func TestDoubleContainersAndFilters(t *testing.T) {
	s := portainertest.New(t,
		portainertest.WithEndpoints(portainer.Endpoint{ID: 1, Name: "a"}, portainer.Endpoint{ID: 2, Name: "b"}),
		portainertest.WithContainers("mcp-emul"))
	k := portainertest.APIKey
	if code, _ := raw(t, "POST", s.URL+"/api/endpoints/2/docker/containers/mcp-emul/restart", k, ""); code != 204 {
		t.Fatalf("restart = %d", code)
	}
	if code, m := raw(t, "POST", s.URL+"/api/endpoints/2/docker/containers/ghost/restart", k, ""); code != 404 || m["message"] != "No such container: ghost" {
		t.Fatalf("restart of unknown container = %d %v", code, m)
	}
	for _, ep := range []string{"1", "2"} {
		raw(t, "POST", s.URL+"/api/stacks/create/standalone/string?endpointId="+ep, k, `{"name":"same","stackFileContent":"x"}`)
	}
	if got := s.Stacks(); len(got) != 2 {
		t.Fatalf("the same name on two endpoints should be allowed: %+v", got)
	}
	req, _ := http.NewRequest("GET", s.URL+`/api/stacks?filters={"EndpointID":2}`, nil)
	req.Header.Set("X-API-Key", k)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list []portainer.Stack
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || len(list) != 1 || list[0].EndpointID != 2 {
		t.Fatalf("filtered list = %+v, %v", list, err)
	}
	if got := s.Restarts(); len(got) != 1 || got[0] != "mcp-emul" {
		t.Fatalf("restarts = %v", got)
	}
}
