package app

import (
	"strings"
)

// Listener is one listen address of a target. The table below is the port
// table of docs/architecture.md and the single source of default addresses.
type Listener struct {
	Target  string
	Key     string // "addr", or e.g. "api-addr" for a second port
	Default string
	Paths   string // what is served there, for `cpesuite targets`
}

// Listeners lists every planned target's addresses, implemented or not, so
// that a malformed address fails start-up even before its target exists,
// and the port plan lives in one place.
var Listeners = []Listener{
	{"acs", "addr", ":7547", "/ (CWMP)"},
	{"acs", "api-addr", ":7557", "/acs"},
	{"speedtest", "addr", ":7580", "/download, /upload"},
	{"fcc", "addr", ":8080", "/FCC"},
	{"configs", "addr", ":8081", "/configs-service"},
	{"nbi", "addr", ":8082", "/iot-webservice"},
	{"worker", "addr", ":8083", "/api"},
	{"portal", "addr", ":8084", "/prov-portal"},
	{"gateway", "addr", ":8088", "/api, /health"},
	{"tr069-emulator", "addr", ":8555", "/api, /apiV2"},
	{"iot-emulator", "addr", ":8556", "/api"},
	{"mcp-emulator", "addr", ":8558", "/mcp"},
	{"mcp-browser", "addr", ":8559", "/mcp"},
}

// Flag returns the flag name, e.g. "tr069-emulator.addr".
func (l Listener) Flag() string { return l.Target + "." + l.Key }

// Env returns the environment name, e.g. CPESUITE_TR069_EMULATOR_ADDR.
func (l Listener) Env() string {
	up := func(s string) string { return strings.ToUpper(strings.ReplaceAll(s, "-", "_")) }
	return "CPESUITE_" + up(l.Target) + "_" + up(l.Key)
}
