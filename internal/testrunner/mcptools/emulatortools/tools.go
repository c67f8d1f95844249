package emulatortools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"cpesuite/internal/platform/apperr"
)

// handler is a tool body: a value rendered as the result's text (a string
// as is, anything else as JSON), or an apperr error that becomes a tool
// error.
type handler[In any] func(ctx context.Context, in In) (any, error)

// toolMeta describes a tool for tools/list.
type toolMeta struct {
	name, title, description string
	readOnly                 bool
	// destructive: may end a device's state (stop, reboot, factory reset).
	destructive bool
}

// addTool registers h under m. The input schema comes from In's fields and
// their jsonschema tags; the SDK validates arguments against it before h
// runs (missing or unknown fields, wrong types), and h checks the rest.
func addTool[In any](s *Server, m toolMeta, h handler[In]) {
	t := &mcp.Tool{Name: m.name, Title: m.title, Description: m.description,
		Annotations: &mcp.ToolAnnotations{Title: m.title, ReadOnlyHint: m.readOnly, OpenWorldHint: new(false)}}
	if !m.readOnly {
		t.Annotations.DestructiveHint = new(m.destructive)
	}
	mcp.AddTool(s.mcp, t, func(ctx context.Context, _ *mcp.CallToolRequest, in In) (res *mcp.CallToolResult, _ any, _ error) {
		defer func() {
			// A bug in one tool must not take the server (and every
			// worker's session) down with it.
			if p := recover(); p != nil {
				s.log.Error("tool panicked", "tool", m.name, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				res = errorResult(apperr.Internal(fmt.Errorf("panic: %v", p)))
			}
		}()
		out, err := h(ctx, in)
		if err != nil {
			s.logFailure(m.name, err)
			return errorResult(err), nil, nil
		}
		return textResult(out), nil, nil
	})
}

// textResult renders a tool's answer.
func textResult(out any) *mcp.CallToolResult {
	text, ok := out.(string)
	if !ok {
		b, err := json.Marshal(out)
		if err != nil {
			return errorResult(apperr.Internal(err))
		}
		text = string(b)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// errorResult is a tool error whose text is "CODE: message" with the
// public part of err only.
func errorResult(err error) *mcp.CallToolResult {
	pub := apperr.Public(err)
	res := &mcp.CallToolResult{}
	res.SetError(errors.New(pub.Code + ": " + pub.Message))
	return res
}

// logFailure logs what the client does not see (causes of upstream and
// internal failures); a caller's own mistakes and calls the caller gave up
// on are only worth debug.
func (s *Server) logFailure(tool string, err error) {
	code := apperr.Code(err)
	if apperr.Status(err)/100 == 5 && code != "CANCELLED" {
		s.log.Warn("tool failed", "tool", tool, "code", code, "err", err.Error())
		return
	}
	s.log.Debug("tool refused", "tool", tool, "code", code, "err", err.Error())
}
