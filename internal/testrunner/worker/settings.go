package worker

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"sort"
	"strconv"
	"sync"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/fsx"
)

// settingsFileName holds the UI overrides under DataDir as a flat JSON
// object of key to string value.
const settingsFileName = "settings.json"

// maskedValue stands for a secret setting's value in GET /api/settings;
// PUT of this value keeps the secret's current override.
const maskedValue = "********"

// maxSettingValue bounds one setting value.
const maxSettingValue = 4096

// Sources of an effective setting value.
const (
	sourceUI      = "ui"
	sourceEnv     = "env"
	sourceDefault = "default"
)

// settingDef is one known setting. To add a setting, add a line to
// defaultSettingDefs.
type settingDef struct {
	key    string
	env    string
	def    string
	secret bool
	// check validates a UI override; nil accepts any string.
	check func(string) error
}

func defaultSettingDefs() []settingDef {
	return []settingDef{
		{key: "emulator_url", env: "EMULATOR_URL", def: "http://127.0.0.1:8555", check: checkHTTPURL},
		{key: "acs_url", env: "ACS_URL", def: "http://127.0.0.1:7557/acs", check: checkHTTPURL},
		{key: "default_model", env: "DEFAULT_MODEL", def: "deterministic", check: checkNonEmpty},
		// env_name is the env profile the worker is configured for; the
		// gateway sets it when it applies a profile.
		{key: "env_name", env: "ENV_NAME", def: ""},
		// mcp_servers names the MCP tool servers a case's steps address.
		{key: "mcp_servers", env: "MCP_SERVERS", def: DefaultToolServers, check: checkToolServers},
		// Language-model executors: "anthropic" (Messages API) and "openai"
		// (any OpenAI-compatible chat-completions endpoint).
		{key: "anthropic_base_url", env: "ANTHROPIC_BASE_URL", def: "https://api.anthropic.com", check: checkHTTPURL},
		{key: "anthropic_api_key", env: "ANTHROPIC_API_KEY", secret: true},
		{key: "anthropic_model", env: "ANTHROPIC_MODEL", def: "claude-sonnet-4-5", check: checkNonEmpty},
		{key: "openai_base_url", env: "OPENAI_BASE_URL", def: "https://api.openai.com/v1", check: checkHTTPURL},
		{key: "openai_api_key", env: "OPENAI_API_KEY", secret: true},
		{key: "openai_model", env: "OPENAI_MODEL", def: "gpt-4o", check: checkNonEmpty},
		{key: "llm_timeout_seconds", env: "LLM_TIMEOUT_SECONDS", def: "120", check: checkIntRange(1, 600)},
		{key: "llm_max_turns", env: "LLM_MAX_TURNS", def: "40", check: checkIntRange(1, 200)},
		// jira_base_url is the issue tracker's address the UI links
		// references to (GET /api/ui-config).
		{key: "jira_base_url", env: "JIRA_BASE_URL", def: "", check: checkHTTPURL},
		// The knowledge service's refresh endpoint, called on every note
		// save and reindex; empty means none is configured.
		{key: "knowledge_refresh_url", env: "KNOWLEDGE_REFRESH_URL", def: "", check: checkHTTPURL},
		{key: "knowledge_refresh_token", env: "KNOWLEDGE_REFRESH_TOKEN", secret: true},
	}
}

func checkIntRange(lo, hi int) func(string) error {
	return func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < lo || n > hi {
			return fmt.Errorf("must be a whole number from %d to %d", lo, hi)
		}
		return nil
	}
}

func checkToolServers(v string) error {
	_, err := ParseToolServers(v)
	return err
}

// validate checks a value given for d, from the UI or the environment.
func (d settingDef) validate(v string) error {
	if len(v) > maxSettingValue {
		return fmt.Errorf("is longer than %d bytes", maxSettingValue)
	}
	if d.check != nil {
		return d.check(v)
	}
	return nil
}

func checkHTTPURL(v string) error {
	if v == "" {
		return nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("must be an http or https URL")
	}
	return nil
}

func checkNonEmpty(v string) error {
	if v == "" {
		return errors.New("must not be empty")
	}
	return nil
}

// settings resolves setting values: UI override, then environment, then
// built-in default. An environment variable set to the empty string counts
// as unset, because container tooling often passes empty variables for
// values the operator did not give.
type settings struct {
	path  string
	defs  []settingDef
	byKey map[string]settingDef
	env   func(string) (string, bool)
	log   *slog.Logger

	mu        sync.RWMutex
	overrides map[string]string
	// envChecks memoises the check of each environment value seen
	// ("VAR=value" to its error or nil): settings are read on every tool
	// call, and a bad variable is logged once, not on every read.
	envChecks sync.Map
}

// loadSettings reads the overrides at path. A missing file means none; a
// corrupt one is an error, so a worker never silently loses its
// configuration. Overrides of keys no longer known are dropped with a
// warning.
func loadSettings(path string, defs []settingDef, env func(string) (string, bool), log *slog.Logger) (*settings, error) {
	s := &settings{path: path, defs: defs, byKey: map[string]settingDef{}, env: env, log: log, overrides: map[string]string{}}
	for _, d := range defs {
		s.byKey[d.key] = d
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", settingsFileName, err)
	}
	var stored map[string]string
	if err := json.Unmarshal(b, &stored); err != nil {
		return nil, fmt.Errorf("%s is not a JSON object of strings: %w", settingsFileName, err)
	}
	for k, v := range stored {
		if _, ok := s.byKey[k]; !ok {
			log.Warn("dropping an override of an unknown setting", "key", k)
			continue
		}
		s.overrides[k] = v
	}
	return s, nil
}

// resolve returns key's effective value and its source; ok is false for
// an unknown key.
func (s *settings) resolve(key string) (value, source string, ok bool) {
	d, known := s.byKey[key]
	if !known {
		return "", "", false
	}
	s.mu.RLock()
	v, over := s.overrides[key]
	s.mu.RUnlock()
	if over {
		return v, sourceUI, true
	}
	if d.env != "" {
		if v, set := s.env(d.env); set && v != "" {
			// An environment value gets the same check as a UI override;
			// a bad one is ignored (with a warning) rather than handed to
			// an executor.
			if s.envValid(d, v) {
				return v, sourceEnv, true
			}
		}
	}
	return d.def, sourceDefault, true
}

// envValid checks an environment value once per distinct value.
func (s *settings) envValid(d settingDef, v string) bool {
	key := d.env + "=" + v
	if res, ok := s.envChecks.Load(key); ok {
		return res == nil
	}
	err := d.validate(v)
	if _, loaded := s.envChecks.LoadOrStore(key, err); !loaded && err != nil {
		s.log.Warn("ignoring an invalid environment setting; using the built-in default", "var", d.env, "problem", err.Error())
	}
	return err == nil
}

func (s *settings) get(key string) string {
	v, _, _ := s.resolve(key)
	return v
}

// settingsView is GET /api/settings.
type settingsView struct {
	Settings map[string]string `json:"settings"`
	Sources  map[string]string `json:"sources"`
}

// view returns every effective value, secrets masked when set.
func (s *settings) view() settingsView {
	v := settingsView{Settings: map[string]string{}, Sources: map[string]string{}}
	for _, d := range s.defs {
		val, src, _ := s.resolve(d.key)
		if d.secret && val != "" {
			val = maskedValue
		}
		v.Settings[d.key] = val
		v.Sources[d.key] = src
	}
	return v
}

// replace makes in the complete set of UI overrides. Every key must be
// known and every value a string; a secret given as the mask keeps its
// current override (and stays without one when it had none). Nothing
// changes unless all of in is valid and persisted.
func (s *settings) replace(in map[string]any) error {
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the first bad key named is the same on every try
	s.mu.Lock()
	defer s.mu.Unlock()
	next := make(map[string]string, len(in))
	for _, k := range keys {
		d, ok := s.byKey[k]
		if !ok {
			return apperr.Invalid("UNKNOWN_SETTING", "unknown setting %q", k)
		}
		v, ok := in[k].(string)
		if !ok {
			return apperr.Invalid("INVALID_SETTING", "setting %q must be a string", k)
		}
		if d.secret && v == maskedValue {
			if cur, has := s.overrides[k]; has {
				next[k] = cur
			}
			continue
		}
		if err := d.validate(v); err != nil {
			return apperr.Invalid("INVALID_SETTING", "setting %q %s", k, err.Error())
		}
		next[k] = v
	}
	if err := s.persistLocked(next); err != nil {
		return err
	}
	s.overrides = next
	return nil
}

// clear removes every UI override.
func (s *settings) clear() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.persistLocked(map[string]string{}); err != nil {
		return err
	}
	s.overrides = map[string]string{}
	return nil
}

func (s *settings) persistLocked(m map[string]string) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := fsx.WriteFileAtomic(s.path, b); err != nil {
		return fmt.Errorf("writing %s: %w", settingsFileName, err)
	}
	return nil
}
