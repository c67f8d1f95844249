package worker

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cpesuite/internal/testrunner/identity"
)

func envMap(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

func (e *env) settingsView(id identity.Identity) settingsView {
	e.t.Helper()
	var v settingsView
	e.call(id, "GET", "/api/settings", nil, 200, &v)
	return v
}

func TestSettingsPrecedence(t *testing.T) {
	environ := map[string]string{"ACS_URL": "http://acs.env:7557/acs", "ENV_NAME": ""}
	e := newEnv(t, func(c *Config) { c.Env = envMap(environ) })

	v := e.settingsView(alice)
	want := map[string][2]string{
		"emulator_url":  {"http://127.0.0.1:8555", sourceDefault},
		"acs_url":       {"http://acs.env:7557/acs", sourceEnv},
		"default_model": {"deterministic", sourceDefault},
		"env_name":      {"", sourceDefault}, // an empty variable counts as unset
	}
	for k, w := range want {
		if v.Settings[k] != w[0] || v.Sources[k] != w[1] {
			t.Fatalf("%s = %q from %q, want %q from %q", k, v.Settings[k], v.Sources[k], w[0], w[1])
		}
	}
	if n := len(defaultSettingDefs()); len(v.Settings) != n || len(v.Sources) != n {
		t.Fatalf("keys: %v, want all %d registered", v.Settings, n)
	}

	e.call(root, "PUT", "/api/settings", map[string]any{"acs_url": "https://acs.ui/acs", "env_name": "lab-2"}, 200, nil)
	v = e.settingsView(alice)
	if v.Settings["acs_url"] != "https://acs.ui/acs" || v.Sources["acs_url"] != sourceUI || v.Settings["env_name"] != "lab-2" ||
		v.Sources["emulator_url"] != sourceDefault {
		t.Fatalf("after PUT: %+v", v)
	}
	if e.w.Setting("acs_url") != "https://acs.ui/acs" || e.w.Setting("nope") != "" {
		t.Fatal("Setting does not follow the override")
	}

	// PUT replaces every override: acs_url falls back to the environment.
	e.call(root, "PUT", "/api/settings", map[string]any{"emulator_url": "http://emu:8555"}, 200, nil)
	v = e.settingsView(alice)
	if v.Sources["acs_url"] != sourceEnv || v.Sources["emulator_url"] != sourceUI || v.Sources["env_name"] != sourceDefault {
		t.Fatalf("after the second PUT: %+v", v.Sources)
	}

	// Overrides survive a restart, in a 0600 file.
	path := filepath.Join(e.dir, settingsFileName)
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("settings file: %v %v", st, err)
	}
	e.start(Config{DataDir: e.dir, Secret: testSecret, Env: envMap(environ)})
	if got := e.w.Setting("emulator_url"); got != "http://emu:8555" {
		t.Fatalf("after restart: %q", got)
	}

	var cleared map[string]bool
	e.call(root, "DELETE", "/api/settings", nil, 200, &cleared)
	v = e.settingsView(alice)
	if !cleared["cleared"] || v.Sources["emulator_url"] != sourceDefault || v.Sources["acs_url"] != sourceEnv {
		t.Fatalf("after DELETE: %v %+v", cleared, v.Sources)
	}
}

func TestSettingsValidation(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		name   string
		body   any
		code   string
		detail string
	}{
		{"unknown key", map[string]any{"emulator_url": "http://x", "llm_key": "x"}, "UNKNOWN_SETTING", `"llm_key"`},
		{"number", map[string]any{"env_name": 3}, "INVALID_SETTING", `"env_name" must be a string`},
		{"null", map[string]any{"env_name": nil}, "INVALID_SETTING", "must be a string"},
		{"bad url", map[string]any{"acs_url": "ftp://acs"}, "INVALID_SETTING", "http or https"},
		{"empty model", map[string]any{"default_model": ""}, "INVALID_SETTING", "default_model"},
		{"too long", map[string]any{"env_name": strings.Repeat("x", maxSettingValue+1)}, "INVALID_SETTING", "longer"},
		{"array body", []string{"x"}, "INVALID", "object"},
		{"null body", "null", "INVALID_SETTING", "JSON object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, detail := e.errorCode(&root, "PUT", "/api/settings", tc.body, 400)
			if code != tc.code || !strings.Contains(detail, tc.detail) {
				t.Fatalf("%s %q, want %s mentioning %s", code, detail, tc.code, tc.detail)
			}
		})
	}
	if v := e.settingsView(alice); v.Sources["emulator_url"] != sourceDefault {
		t.Fatalf("a rejected PUT changed settings: %+v", v)
	}
	for _, m := range []string{"PUT", "DELETE"} {
		if code, _ := e.errorCode(&alice, m, "/api/settings", map[string]any{}, 403); code != "FORBIDDEN" {
			t.Fatalf("editor %s: %s", m, code)
		}
	}
}

func TestSecretSettingsAreMasked(t *testing.T) {
	defs := append(defaultSettingDefs(), settingDef{key: "api_key", env: "API_KEY", secret: true})
	environ := map[string]string{}
	e := newEnv(t, func(c *Config) {
		c.settingDefs = defs
		c.Env = envMap(environ)
	})
	if v := e.settingsView(alice); v.Settings["api_key"] != "" {
		t.Fatalf("an unset secret shows %q", v.Settings["api_key"])
	}
	e.call(root, "PUT", "/api/settings", map[string]any{"api_key": "sk-123", "env_name": "a"}, 200, nil)
	code, body := e.do(&alice, "GET", "/api/settings", nil)
	if code != 200 || strings.Contains(string(body), "sk-123") {
		t.Fatalf("GET shows the secret: %s", body)
	}
	var v settingsView
	_ = json.Unmarshal(body, &v)
	if v.Settings["api_key"] != maskedValue || v.Sources["api_key"] != sourceUI {
		t.Fatalf("masked view: %+v", v)
	}
	// Sending back what GET showed keeps the secret.
	e.call(root, "PUT", "/api/settings", map[string]any{"api_key": maskedValue, "env_name": "b"}, 200, nil)
	if got := e.w.Setting("api_key"); got != "sk-123" {
		t.Fatalf("masked PUT changed the secret to %q", got)
	}
	e.call(root, "PUT", "/api/settings", map[string]any{"api_key": "sk-456"}, 200, nil)
	if got := e.w.Setting("api_key"); got != "sk-456" {
		t.Fatalf("new secret: %q", got)
	}
	e.call(root, "DELETE", "/api/settings", nil, 200, nil)
	// A mask for a secret without an override leaves it without one.
	e.call(root, "PUT", "/api/settings", map[string]any{"api_key": maskedValue}, 200, nil)
	if got := e.w.Setting("api_key"); got != "" {
		t.Fatalf("mask became a value: %q", got)
	}
}

func TestCorruptSettingsFileFailsStart(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, settingsFileName), []byte("{nope"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{DataDir: dir, Secret: testSecret}, &mapCases{}, nil); err == nil {
		t.Fatal("a corrupt settings file was ignored")
	}
	if _, err := New(Config{DataDir: t.TempDir(), Secret: []byte("short")}, &mapCases{}, nil); err == nil {
		t.Fatal("a short secret was accepted")
	}
}

func TestUIConfigAndNewSettings(t *testing.T) {
	environ := map[string]string{"JIRA_BASE_URL": "https://jira.example/browse/", "OPENAI_API_KEY": "sk-env-secret"}
	e := newEnv(t, func(c *Config) { c.Env = envMap(environ) })

	var ui map[string]any
	e.call(alice, "GET", "/api/ui-config", nil, 200, &ui)
	if len(ui) != 1 || ui["jira_base_url"] != "https://jira.example/browse/" {
		t.Fatalf("ui-config %v", ui)
	}
	// An API key from the environment is masked and never echoed.
	v := e.settingsView(alice)
	if v.Settings["openai_api_key"] != maskedValue || v.Sources["openai_api_key"] != sourceEnv {
		t.Fatalf("openai_api_key shown as %q from %q", v.Settings["openai_api_key"], v.Sources["openai_api_key"])
	}
	if e.w.Setting("openai_api_key") != "sk-env-secret" {
		t.Fatal("the executor does not see the key")
	}
	bad := []map[string]any{
		{"mcp_servers": "emu"},
		{"llm_timeout_seconds": "0"},
		{"llm_max_turns": "many"},
		{"jira_base_url": "javascript:alert(1)"},
		{"knowledge_refresh_url": "ftp://kb/"},
	}
	for _, b := range bad {
		e.call(root, "PUT", "/api/settings", b, 400, nil)
	}
	e.call(root, "PUT", "/api/settings", map[string]any{"jira_base_url": "", "mcp_servers": "emu=http://127.0.0.1:1/mcp"}, 200, nil)
	e.call(alice, "GET", "/api/ui-config", nil, 200, &ui)
	if ui["jira_base_url"] != "" || e.w.Setting("mcp_servers") != "emu=http://127.0.0.1:1/mcp" {
		t.Fatalf("after PUT: ui-config %v, mcp_servers %q", ui, e.w.Setting("mcp_servers"))
	}
}

func TestInvalidEnvironmentSettingsFallBackToDefaults(t *testing.T) {
	environ := map[string]string{"LLM_TIMEOUT_SECONDS": "abc", "OPENAI_BASE_URL": "ftp://x", "LLM_MAX_TURNS": "7", "ACS_URL": strings.Repeat("h", maxSettingValue+1)}
	e := newEnv(t, func(c *Config) { c.Env = envMap(environ) })
	cases := []struct{ key, want, source string }{
		{"llm_timeout_seconds", "120", sourceDefault},
		{"openai_base_url", "https://api.openai.com/v1", sourceDefault},
		{"llm_max_turns", "7", sourceEnv},
		{"acs_url", "http://127.0.0.1:7557/acs", sourceDefault},
	}
	v := e.settingsView(alice)
	for _, c := range cases {
		if v.Settings[c.key] != c.want || v.Sources[c.key] != c.source {
			t.Errorf("%s = %q from %s, want %q from %s", c.key, v.Settings[c.key], v.Sources[c.key], c.want, c.source)
		}
	}
	e.settingsView(alice) // read again: still one warning per variable
	logs := e.logs.String()
	if n := strings.Count(logs, "var=LLM_TIMEOUT_SECONDS"); n != 1 || strings.Contains(logs, "ftp://x") {
		t.Fatalf("%d warnings for LLM_TIMEOUT_SECONDS, or a value logged:\n%s", n, logs)
	}
}
