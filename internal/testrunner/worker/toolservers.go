package worker

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// DefaultToolServers is the mcp_servers setting's default: the emulator
// and browser tool servers of a `cpesuite up` on this host.
const DefaultToolServers = "emulator=http://127.0.0.1:8558/mcp,browser=http://127.0.0.1:8559/mcp"

// ToolServer is one entry of the mcp_servers setting.
type ToolServer struct {
	Name string
	URL  string
}

var toolServerName = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)

// ParseToolServers reads the mcp_servers setting: comma-separated
// name=url pairs, names lower case and unique, URLs http or https.
// An empty value means no tool servers.
func ParseToolServers(v string) ([]ToolServer, error) {
	var out []ToolServer
	seen := map[string]bool{}
	for _, part := range strings.Split(v, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, raw, ok := strings.Cut(part, "=")
		name, raw = strings.TrimSpace(name), strings.TrimSpace(raw)
		if !ok || name == "" || raw == "" {
			return nil, fmt.Errorf("entry %q is not name=url", part)
		}
		if !toolServerName.MatchString(name) {
			return nil, fmt.Errorf("server name %q must be lower-case letters, digits, - or _ (at most 32)", name)
		}
		if name == BuiltinServer {
			return nil, fmt.Errorf("server name %q is reserved for the worker's own tools", name)
		}
		if seen[name] {
			return nil, fmt.Errorf("server name %q is given twice", name)
		}
		seen[name] = true
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("server %q: %q is not an http or https URL", name, raw)
		}
		out = append(out, ToolServer{Name: name, URL: raw})
	}
	return out, nil
}
