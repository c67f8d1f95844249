package emulatortools

import (
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"cpesuite/internal/acs"
	"cpesuite/internal/acs/acsclient"
	"cpesuite/internal/buildinfo"
	"cpesuite/internal/platform/apperr"
)

// Config says where the emulator and the ACS are.
type Config struct {
	// EmulatorURL is the TR-069 emulator's base, e.g. http://127.0.0.1:8555.
	EmulatorURL string
	// ACSURL is the ACS management API's base, e.g. http://127.0.0.1:7557;
	// a trailing /acs (the worker setting's form) is accepted.
	ACSURL string
	// HTTPClient calls both; nil: a client whose time-out outlasts the
	// longest ACS wait. A given client's time-out must do so too, or long
	// waits of acs_queue_task fail.
	HTTPClient *http.Client
	// Log receives one line per failed tool call; nil: slog.Default().
	Log *slog.Logger
}

// DefaultHTTPTimeout bounds one request of the default client: the ACS's
// longest enqueue wait plus slack for the answer.
const DefaultHTTPTimeout = acs.MaxWait + 30*time.Second

// emulatorCallTimeout bounds one emulator request; none of them waits on
// a device, so anything longer is a hung emulator.
const emulatorCallTimeout = 30 * time.Second

// Server is the emulator tool server.
type Server struct {
	mcp     *mcp.Server
	handler http.Handler
	emu     *emulator
	acs     *acsclient.Client
	acsBase string
	log     *slog.Logger
	now     func() time.Time
}

// New validates cfg and registers the tools.
func New(cfg Config) (*Server, error) {
	emuBase, err := baseURL("EmulatorURL", cfg.EmulatorURL)
	if err != nil {
		return nil, err
	}
	acsBase, err := baseURL("ACSURL", cfg.ACSURL)
	if err != nil {
		return nil, err
	}
	// acsclient's paths start with /acs; the worker setting includes it.
	acsBase = strings.TrimSuffix(acsBase, "/acs")
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: DefaultHTTPTimeout}
	}
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	s := &Server{
		emu:     &emulator{base: emuBase, http: hc},
		acs:     acsclient.New(acsBase, hc),
		acsBase: acsBase,
		log:     log.With("component", "mcp-emulator"),
		now:     time.Now,
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "cpesuite-emulator-tools", Title: "TR-069 emulator and ACS tools",
		Version: version()}, &mcp.ServerOptions{Instructions: instructions, Logger: s.log})
	s.registerEmulatorTools()
	s.registerACSTools()
	// Stateless: a restart of this server (the gateway's restart-mcp-emul)
	// leaves no client holding a dead session id. A client that hangs up
	// ends its call, so an abandoned wait does not poll on.
	s.handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true, Logger: s.log})
	return s, nil
}

// Handler is the streamable-HTTP MCP endpoint; the app mounts it at /mcp.
func (s *Server) Handler() http.Handler { return s.handler }

// MCP is the underlying server, for in-process transports.
func (s *Server) MCP() *mcp.Server { return s.mcp }

const instructions = `Drive an emulated TR-069 CPE and the ACS it talks to.
Typical case: start_device -> acs_find_device with wait_seconds (and informed_after = start_device's startedAt) ->
acs_queue_task (connection_request wakes the device; wait_seconds waits for the result) -> get_parameter on the emulator to
check what the CPE now holds. Errors start with a code such as NOT_FOUND or EMULATOR_UNREACHABLE.`

func version() string {
	if v := buildinfo.Get().Version; v != "" {
		return v
	}
	return "dev"
}

// baseURL checks an http(s) base URL and returns it without a trailing
// slash.
func baseURL(field, raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", apperr.Invalid("INVALID_CONFIG", "%s is required", field)
	}
	u, err := url.Parse(raw)
	switch {
	case err == nil && u.User != nil:
		// Neither API takes credentials; refusing them keeps them out of
		// every error text and log line.
		return "", apperr.Invalid("INVALID_CONFIG", "%s must not carry credentials", field)
	case err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https"):
		return "", apperr.Invalid("INVALID_CONFIG", "%s %q is not an http or https URL", field, raw)
	case u.RawQuery != "" || u.Fragment != "":
		return "", apperr.Invalid("INVALID_CONFIG", "%s %q must not have a query or fragment", field, raw)
	}
	return strings.TrimRight(u.String(), "/"), nil
}
