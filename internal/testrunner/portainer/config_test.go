package portainer_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/testrunner/portainer"
)

func TestConfigValidate(t *testing.T) {
	const pw = "hunter2-secret"
	tests := []struct {
		name    string
		cfg     portainer.Config
		wantErr string // "" = valid
	}{
		{"empty is off, not wrong", portainer.Config{}, ""},
		{"user and password", portainer.Config{URL: "https://portainer:9443", Username: "admin", Password: pw}, ""},
		{"api key with path prefix", portainer.Config{URL: "http://proxy/portainer/", APIKey: "ptr_x"}, ""},
		{"explicit endpoint and timeout", portainer.Config{URL: "http://p", APIKey: "k", EndpointID: 3, Timeout: time.Second}, ""},
		{"credentials without URL", portainer.Config{Username: "admin", Password: pw}, "URL is required"},
		{"URL without credentials", portainer.Config{URL: "http://p"}, "APIKey or Username and Password are required"},
		{"both auth methods", portainer.Config{URL: "http://p", APIKey: "k", Username: "a", Password: pw}, "not both"},
		{"username without password", portainer.Config{URL: "http://p", Username: "a"}, "set Username and Password together"},
		{"password without username", portainer.Config{URL: "http://p", Password: pw}, "set Username and Password together"},
		{"relative URL", portainer.Config{URL: "portainer:9443", APIKey: "k"}, "http:// or https://"},
		{"other scheme", portainer.Config{URL: "ftp://p", APIKey: "k"}, "http:// or https://"},
		{"no host", portainer.Config{URL: "http://", APIKey: "k"}, "must name a host"},
		{"credentials in URL", portainer.Config{URL: "http://admin:" + pw + "@p", APIKey: "k"}, "must not carry credentials"},
		{"query in URL", portainer.Config{URL: "http://p/?x=1", APIKey: "k"}, "query or a fragment"},
		{"negative endpoint", portainer.Config{URL: "http://p", APIKey: "k", EndpointID: -1}, "must not be negative"},
		{"negative timeout", portainer.Config{URL: "http://p", APIKey: "k", Timeout: -time.Second}, "negative Timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate() = %v, want an error containing %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), pw) {
				t.Fatalf("Validate() leaks the password: %v", err)
			}
		})
	}
}

func TestNewNotConfigured(t *testing.T) {
	for _, cfg := range []portainer.Config{
		{},
		{URL: "http://p"},
		{URL: "http://p", Username: "admin"},
		{Username: "admin", Password: "x"},
	} {
		c, err := portainer.New(cfg)
		if c != nil || !errors.Is(err, portainer.ErrNotConfigured) {
			t.Fatalf("New(%+v) = %v, %v; want ErrNotConfigured", cfg, c, err)
		}
		if got := apperr.Status(err); got != http.StatusServiceUnavailable {
			t.Fatalf("status = %d, want 503", got)
		}
		if got := apperr.PublicMessage(err); got != "container management (Portainer) is not configured" {
			t.Fatalf("message = %q", got)
		}
	}
}

func TestNewInvalidConfig(t *testing.T) {
	_, err := portainer.New(portainer.Config{URL: "ftp://p", APIKey: "k"})
	if got := apperr.Status(err); got != http.StatusBadRequest {
		t.Fatalf("New(bad URL) = %v (status %d), want 400", err, got)
	}
}
