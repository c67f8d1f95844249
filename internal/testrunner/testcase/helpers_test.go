package testcase

import (
	"errors"
	"net/http"
	"testing"

	"cpesuite/internal/platform/apperr"
)

// problemsOf checks that err is an INVALID_CASE error whose message is its
// first problem, and returns the problems.
func problemsOf(t *testing.T, err error) []Problem {
	t.Helper()
	if err == nil {
		t.Fatal("want an INVALID_CASE error, got nil")
	}
	e, ok := apperr.As(err)
	if !ok || e.Code != "INVALID_CASE" || apperr.Status(err) != http.StatusBadRequest || !errors.Is(err, apperr.ErrInvalid) {
		t.Fatalf("want a 400 INVALID_CASE error, got %v (code %q, status %d)", err, apperr.Code(err), apperr.Status(err))
	}
	d, ok := e.Details.(map[string]any)
	if !ok {
		t.Fatalf("details = %#v, want a map with problems", e.Details)
	}
	ps, ok := d["problems"].([]Problem)
	if !ok || len(ps) == 0 {
		t.Fatalf("details[problems] = %#v, want a non-empty []Problem", d["problems"])
	}
	if e.Message != ps[0].String() {
		t.Fatalf("message %q is not the first problem %q", e.Message, ps[0].String())
	}
	return ps
}

// sampleCase is a case using every field of the model.
func sampleCase() *Case {
	yes := true
	return &Case{
		ID:            "TC-001",
		Title:         "Reboot from the ACS",
		Portal:        "acs",
		BaseURL:       "http://127.0.0.1:8080/ui",
		Project:       "Regression",
		References:    "JIRA-12, JIRA-13",
		Priority:      "High",
		Type:          "Functional",
		Section:       "Device management",
		Tags:          []string{"reboot", "smoke"},
		Description:   "Reboots a device.\nTwo lines.",
		Preconditions: []string{"device online", "ACS reachable"},
		EmulatorSetup: EmulatorSetup{TreeFile: "tr181.xml", Serial: "SN1", Model: "HG8245"},
		Steps: []Step{
			{Action: "Open the device page", Expected: "The page shows the device"},
			{
				Action:   "Reboot the device",
				Expected: "The device reboots",
				Tool: &ToolCall{
					Server: "acs",
					Name:   "reboot_device",
					Arguments: map[string]any{
						"serial":  "SN1",
						"wait":    30,
						"ratio":   0.5,
						"force":   true,
						"nothing": nil,
						"list":    []any{"a", 1, map[string]any{"k": "v"}},
						"date":    "2001-12-14",
						"number":  "123",
					},
					Expect: &Expectation{Error: &yes, Contains: "ok", NotContains: "fail", Equals: "ok", Matches: `^o+k$`},
				},
			},
		},
	}
}
