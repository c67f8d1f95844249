package configsvc

import (
	"encoding/json"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"cpesuite/internal/platform/health"
	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/platform/httpx/openapitest"
)

// TestOpenAPIMatchesRoutes holds openapi.json to the routes: every
// documented operation is routed to the same pattern, and every API and
// actuator route is documented. The mux is built as Service.Mount builds
// it, without a database: the handlers are never called.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	mux := httpx.NewMux()
	NewAPI(&Service{log: slog.New(slog.DiscardHandler)}).Routes(mux)
	MountActuator(mux, prometheus.NewRegistry(), ErrorWriter())
	health.Mount(mux.ServeMux, Base+"/actuator/health", health.NewRegistry())
	openapitest.Check(t, OpenAPI(), mux)

	// Health and the document itself are mounted on the embedded ServeMux,
	// which Check does not list; they must be documented all the same.
	ops, err := openapitest.Operations(OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"GET " + Base + "/actuator/health",
		"GET " + Base + "/actuator/health/{name}",
		"GET " + Base + "/v3/api-docs",
	} {
		if !slices.Contains(ops, want) {
			t.Errorf("%s is not in the OpenAPI document", want)
		}
	}
}

// TestOpenAPIDocument checks the document's shape: OpenAPI 3.x, every
// operation with responses and a security decision that matches the
// route's protection, and error codes that the catalogue knows.
func TestOpenAPIDocument(t *testing.T) {
	var doc struct {
		OpenAPI  string                                `json:"openapi"`
		Security []map[string][]string                 `json:"security"`
		Paths    map[string]map[string]json.RawMessage `json:"paths"`
		Comps    struct {
			Schemas         map[string]json.RawMessage `json:"schemas"`
			SecuritySchemes map[string]json.RawMessage `json:"securitySchemes"`
			ErrorCodes      []struct {
				Code   string `json:"code"`
				Status int    `json:"status"`
			} `json:"x-error-codes"`
		} `json:"components"`
	}
	if err := json.Unmarshal(OpenAPI(), &doc); err != nil {
		t.Fatalf("openapi.json is not valid JSON: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("openapi = %q, want 3.x", doc.OpenAPI)
	}
	if _, ok := doc.Comps.SecuritySchemes["bearerAuth"]; !ok {
		t.Fatal("components.securitySchemes.bearerAuth is missing")
	}
	if len(doc.Security) != 1 || doc.Security[0]["bearerAuth"] == nil {
		t.Fatalf("top-level security = %v, want bearerAuth", doc.Security)
	}
	for _, name := range []string{"ErrorBody", "TokenPair", "UserView", "UserInput", "AccountResult",
		"DeletionRequestResult", "DeletionConfirm", "FirstLoginInput", "AuditPage", "AuditEvent",
		"GroupInput", "ProductClassGroup", "Snapshot", "HealthComposite"} {
		if _, ok := doc.Comps.Schemas[name]; !ok {
			t.Errorf("components.schemas.%s is missing", name)
		}
	}
	known := map[string]int{}
	for _, c := range doc.Comps.ErrorCodes {
		known[c.Code] = c.Status
	}

	public := []string{"/environment/snapshot", "/actuator/", "/auth/login", "/auth/refresh", "/auth/first-login", "/v3/api-docs", "/swagger-ui.html"}
	n := 0
	for path, item := range doc.Paths {
		if !strings.HasPrefix(path, Base+"/") {
			t.Errorf("path %s is outside %s", path, Base)
		}
		isPublic := false
		for _, p := range public {
			isPublic = isPublic || strings.HasPrefix(path, Base+p)
		}
		for method, raw := range item {
			if method == "parameters" || method == "summary" || method == "description" {
				continue
			}
			n++
			var op struct {
				Security  *[]map[string][]string     `json:"security"`
				Responses map[string]json.RawMessage `json:"responses"`
				Codes     []struct {
					Status int    `json:"status"`
					Code   string `json:"code"`
				} `json:"x-codes"`
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Errorf("%s %s: %v", method, path, err)
				continue
			}
			if len(op.Responses) == 0 {
				t.Errorf("%s %s has no responses", method, path)
			}
			switch {
			case isPublic && (op.Security == nil || len(*op.Security) != 0):
				t.Errorf("%s %s is public and needs security: []", method, path)
			case !isPublic && op.Security != nil:
				t.Errorf("%s %s is protected and must inherit bearerAuth", method, path)
			}
			for _, c := range op.Codes {
				st, ok := known[c.Code]
				if !ok || st != c.Status {
					t.Errorf("%s %s: x-codes %s %d is not in components.x-error-codes as such", method, path, c.Code, c.Status)
				}
				if _, ok := op.Responses[strconv.Itoa(c.Status)]; !ok {
					t.Errorf("%s %s: code %s has no %d response", method, path, c.Code, c.Status)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no operations")
	}
}
