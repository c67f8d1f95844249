package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
)

// BuiltinServer is the tool-server name of the worker's own tools.
const BuiltinServer = "builtin"

// builtinTool is one of the worker's own tools. A bad argument is the
// tool's own error verdict (isError), as an MCP server reports it; err is
// kept for the run's context ending.
type builtinTool func(ctx context.Context, args map[string]any) (result string, isError bool, err error)

// toolbox routes tool calls to the built-in tools or to the configured
// tool servers.
type toolbox struct {
	builtin map[string]builtinTool
	infos   []ToolInfo // the built-in tools for the language models
	extra   Tools
}

func newToolbox(extra Tools) *toolbox {
	h := newHTTPTool()
	return &toolbox{
		builtin: map[string]builtinTool{
			"wait":         waitTool,
			"http_request": h.call,
		},
		infos: []ToolInfo{
			{
				Server: BuiltinServer, Name: "http_request",
				Description: "Send one HTTP request (no redirects followed) and return \"HTTP <status>\" and the body (up to 1 MiB). A status of 400 or more is reported as a tool error.",
				InputSchema: json.RawMessage(`{"type":"object","properties":{` +
					`"method":{"type":"string","description":"HTTP method, default GET"},` +
					`"url":{"type":"string","description":"absolute http or https URL"},` +
					`"headers":{"type":"object","additionalProperties":{"type":"string"}},` +
					`"body":{"type":"string"},` +
					`"timeout_seconds":{"type":"number","minimum":0,"maximum":120,"description":"default 30"}},` +
					`"required":["url"],"additionalProperties":false}`),
			},
			{
				Server: BuiltinServer, Name: "wait",
				Description: "Wait a number of seconds (0 to 600), for example for a device to apply a change.",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"seconds":{"type":"number","minimum":0,"maximum":600}},"required":["seconds"],"additionalProperties":false}`),
			},
		},
		extra: extra,
	}
}

// List returns the built-in tools, then those of the configured servers.
func (t *toolbox) List(ctx context.Context) ([]ToolInfo, error) {
	out := append([]ToolInfo(nil), t.infos...)
	if t.extra == nil {
		return out, nil
	}
	more, err := t.extra.List(ctx)
	if err != nil {
		return out, err
	}
	for _, ti := range more {
		if ti.Server != BuiltinServer { // a server cannot shadow the built-ins
			out = append(out, ti)
		}
	}
	return out, nil
}

// Resolve checks that server/tool exists without calling it.
func (t *toolbox) Resolve(ctx context.Context, server, tool string) error {
	if server == BuiltinServer {
		if _, ok := t.builtin[tool]; !ok {
			return fmt.Errorf("unknown built-in tool %q (known: %s)", tool, strings.Join(t.builtinNames(), ", "))
		}
		return nil
	}
	if t.extra == nil {
		return fmt.Errorf("tool server %q is not configured", server)
	}
	return t.extra.Resolve(ctx, server, tool)
}

// Call runs server/tool.
func (t *toolbox) Call(ctx context.Context, server, tool string, args map[string]any) (string, bool, error) {
	if server == BuiltinServer {
		f, ok := t.builtin[tool]
		if !ok {
			return "", false, fmt.Errorf("unknown built-in tool %q (known: %s)", tool, strings.Join(t.builtinNames(), ", "))
		}
		return f(ctx, args)
	}
	if t.extra == nil {
		return "", false, fmt.Errorf("tool server %q is not configured", server)
	}
	return t.extra.Call(ctx, server, tool, args)
}

func (t *toolbox) builtinNames() []string {
	names := make([]string, 0, len(t.builtin))
	for n := range t.builtin {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// argError is the result of a built-in tool called with bad arguments.
func argError(format string, a ...any) (string, bool, error) {
	return "invalid arguments: " + fmt.Sprintf(format, a...), true, nil
}

// checkArgNames rejects arguments a tool does not take, so that a typo in
// a case ("timeout" for "timeout_seconds") is reported, not ignored.
func checkArgNames(args map[string]any, allowed ...string) error {
	for k := range args {
		found := false
		for _, a := range allowed {
			if k == a {
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("unknown argument %q (takes %s)", k, strings.Join(allowed, ", "))
		}
	}
	return nil
}

// numberArg reads a numeric argument as YAML and JSON decoders produce it.
func numberArg(args map[string]any, key string) (v float64, present bool, err error) {
	raw, ok := args[key]
	if !ok || raw == nil {
		return 0, false, nil
	}
	switch n := raw.(type) {
	case float64:
		v = n
	case float32:
		v = float64(n)
	case int:
		v = float64(n)
	case int8:
		v = float64(n)
	case int16:
		v = float64(n)
	case int32:
		v = float64(n)
	case int64:
		v = float64(n)
	case uint:
		v = float64(n)
	case uint8:
		v = float64(n)
	case uint16:
		v = float64(n)
	case uint32:
		v = float64(n)
	case uint64:
		v = float64(n)
	case json.Number:
		f, perr := n.Float64()
		if perr != nil {
			return 0, true, fmt.Errorf("%s must be a number", key)
		}
		v = f
	default:
		return 0, true, fmt.Errorf("%s must be a number, not %T", key, raw)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, true, fmt.Errorf("%s must be a finite number", key)
	}
	return v, true, nil
}

// stringArg reads an optional string argument.
func stringArg(args map[string]any, key string) (string, bool, error) {
	raw, ok := args[key]
	if !ok || raw == nil {
		return "", false, nil
	}
	s, ok := raw.(string)
	if !ok {
		return "", true, fmt.Errorf("%s must be a string, not %T", key, raw)
	}
	return s, true, nil
}
