package llm

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

type mapSettings map[string]string

func (m mapSettings) Setting(k string) string { return m[k] }

func TestLoadSettings(t *testing.T) {
	base := func(over map[string]string) mapSettings {
		m := mapSettings{
			"anthropic_base_url": "https://api.anthropic.com", "anthropic_api_key": "k", "anthropic_model": "claude-x",
			"openai_base_url": "https://api.openai.com/v1/", "openai_api_key": "k", "openai_model": "gpt-x",
			"llm_timeout_seconds": "120", "llm_max_turns": "40",
		}
		for k, v := range over {
			m[k] = v
		}
		return m
	}
	tests := []struct {
		name     string
		p        provider
		s        mapSettings
		runModel string
		endpoint string
		model    string
		err      string
	}{
		{name: "anthropic defaults", p: anthropicProvider{}, s: base(nil), runModel: "anthropic", endpoint: "https://api.anthropic.com/v1/messages", model: "claude-x"},
		{name: "anthropic base with /v1", p: anthropicProvider{}, s: base(map[string]string{"anthropic_base_url": "http://proxy:8080/v1/"}), runModel: "anthropic", endpoint: "http://proxy:8080/v1/messages", model: "claude-x"},
		{name: "openai trailing slash", p: openAIProvider{}, s: base(nil), runModel: "openai", endpoint: "https://api.openai.com/v1/chat/completions", model: "gpt-x"},
		{name: "variant", p: openAIProvider{}, s: base(nil), runModel: "openai:gpt-4o-mini", endpoint: "https://api.openai.com/v1/chat/completions", model: "gpt-4o-mini"},
		{name: "empty variant keeps the setting", p: openAIProvider{}, s: base(nil), runModel: "openai:", endpoint: "https://api.openai.com/v1/chat/completions", model: "gpt-x"},
		{name: "missing key", p: openAIProvider{}, s: base(map[string]string{"openai_api_key": " "}), runModel: "openai", err: "no API key: set openai_api_key in the worker settings or OPENAI_API_KEY in the environment"},
		{name: "key with a line break", p: anthropicProvider{}, s: base(map[string]string{"anthropic_api_key": "a\nb"}), runModel: "anthropic", err: "contains a line break"},
		{name: "bad url", p: anthropicProvider{}, s: base(map[string]string{"anthropic_base_url": "ftp://x"}), runModel: "anthropic", err: `setting anthropic_base_url "ftp://x" is not an http or https URL`},
		{name: "no model", p: anthropicProvider{}, s: base(map[string]string{"anthropic_model": ""}), runModel: "anthropic", err: "no model id"},
		{name: "bad turns", p: anthropicProvider{}, s: base(map[string]string{"llm_max_turns": "0"}), runModel: "anthropic", err: `setting llm_max_turns "0" is not a whole number from 1 to 200`},
		{name: "bad timeout", p: anthropicProvider{}, s: base(map[string]string{"llm_timeout_seconds": "601"}), runModel: "anthropic", err: "llm_timeout_seconds"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ps, err := loadSettings(tc.p, tc.s, tc.runModel)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				if strings.Contains(err.Error(), "a\nb") {
					t.Fatalf("error echoes the key: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ps.endpoint != tc.endpoint || ps.model != tc.model || ps.timeout != 120*time.Second || ps.maxTurns != 40 {
				t.Fatalf("%+v", ps)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		headers map[string]string
		want    time.Duration
		ok      bool
	}{
		{nil, 0, false},
		{map[string]string{"Retry-After": "7"}, 7 * time.Second, true},
		{map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond, true},
		{map[string]string{"Retry-After": now.Add(20 * time.Second).Format(http.TimeFormat)}, 20 * time.Second, true},
		{map[string]string{"Retry-After": now.Add(-time.Hour).Format(http.TimeFormat)}, 0, true},
		{map[string]string{"Retry-After": "soon"}, 0, false},
		{map[string]string{"Retry-After": "-3"}, 0, false},
		{map[string]string{"retry-after-ms": "1500", "Retry-After": "2"}, 1500 * time.Millisecond, true},
		{map[string]string{"retry-after-ms": "x", "Retry-After": "2"}, 2 * time.Second, true},
	}
	for _, tc := range tests {
		h := http.Header{}
		for k, v := range tc.headers {
			h.Set(k, v)
		}
		got, ok := retryAfter(h, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%v: %s %t, want %s %t", tc.headers, got, ok, tc.want, tc.ok)
		}
	}
	for attempt, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second} {
		if got := backoff(attempt); got != want {
			t.Errorf("backoff(%d) = %s, want %s", attempt, got, want)
		}
	}
}

func TestCleanScrubsTheKey(t *testing.T) {
	c := &caller{apiKey: "sk-live-123", p: openAIProvider{}}
	got := c.clean("Incorrect API key provided: sk-live-123.\nSee docs\x00")
	if got != "Incorrect API key provided: [api key]. See docs " {
		t.Fatalf("%q", got)
	}
	if got := c.clean(strings.Repeat("é", 400)); len(got) > 504 || !strings.HasSuffix(got, "…") {
		t.Fatalf("not cut: %d bytes", len(got))
	}
}
