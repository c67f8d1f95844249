package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Anthropic Messages API constants.
const (
	anthropicVersion = "2023-06-01"
	// anthropicMaxTokens is max_tokens of every turn (the API requires
	// one): ample for tool calls and for a verdict of many steps.
	anthropicMaxTokens = 8192
)

type anthropicProvider struct{}

func (anthropicProvider) name() string { return "anthropic" }

// endpoint accepts the documented base (https://api.anthropic.com) and,
// for proxies configured that way, a base ending in /v1.
func (anthropicProvider) endpoint(base string) string {
	if strings.HasSuffix(base, "/v1") {
		return base + "/messages"
	}
	return base + "/v1/messages"
}

func (anthropicProvider) setHeaders(h http.Header, apiKey string) {
	h.Set("x-api-key", apiKey)
	h.Set("anthropic-version", anthropicVersion)
}

// errorText reads {"type":"error","error":{"type":..., "message":...}}.
func (anthropicProvider) errorText(body []byte) (string, string, bool) {
	var e struct {
		Type  string `json:"type"`
		Error *struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || e.Error == nil {
		return "", "", false
	}
	return e.Error.Type, e.Error.Message, true
}

func (anthropicProvider) start(c *caller, ps providerSettings, system, user string, tools []toolDef) conversation {
	a := &anthropicConv{c: c, ps: ps, system: system}
	for _, t := range tools {
		a.tools = append(a.tools, anthropicTool{Name: t.name, Description: t.description, InputSchema: t.schema})
	}
	a.addUser(user)
	return a
}

type anthropicRequest struct {
	Model     string             `json:"model"`
	MaxTokens int                `json:"max_tokens"`
	System    string             `json:"system,omitempty"`
	Messages  []anthropicMessage `json:"messages"`
	Tools     []anthropicTool    `json:"tools,omitempty"`
}

// anthropicMessage's Content is a string or a list of content blocks.
type anthropicMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type anthropicTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type anthropicBlock struct {
	Type  string          `json:"type"`
	Text  string          `json:"text,omitempty"`
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
}

type anthropicToolResult struct {
	Type      string `json:"type"` // tool_result
	ToolUseID string `json:"tool_use_id"`
	Content   string `json:"content"`
	IsError   bool   `json:"is_error,omitempty"`
}

type anthropicResponse struct {
	Type       string          `json:"type"`
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	StopReason string          `json:"stop_reason"`
	Usage      struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
}

type anthropicConv struct {
	c      *caller
	ps     providerSettings
	system string
	tools  []anthropicTool
	msgs   []anthropicMessage
}

func (a *anthropicConv) next(ctx context.Context) (reply, error) {
	body, err := json.Marshal(anthropicRequest{
		Model: a.ps.model, MaxTokens: anthropicMaxTokens, System: a.system, Messages: a.msgs, Tools: a.tools,
	})
	if err != nil {
		return reply{}, fmt.Errorf("anthropic: encoding the request: %v", err)
	}
	data, err := a.c.post(ctx, a.ps.endpoint, body)
	if err != nil {
		return reply{}, err
	}
	var resp anthropicResponse
	var blocks []anthropicBlock
	if err := json.Unmarshal(data, &resp); err != nil || resp.Type != "message" || json.Unmarshal(resp.Content, &blocks) != nil {
		return reply{}, fmt.Errorf("anthropic: the answer is not a Messages API message: %s", a.c.clean(string(data)))
	}
	rep := reply{rawStop: resp.StopReason, usage: usage{in: resp.Usage.InputTokens, out: resp.Usage.OutputTokens}}
	var text []string
	for _, b := range blocks {
		switch b.Type {
		case "text":
			text = append(text, b.Text)
		case "tool_use":
			args, argErr := decodeArgs(b.Input)
			rep.calls = append(rep.calls, toolCall{id: b.ID, name: b.Name, args: args, argErr: argErr})
		}
	}
	rep.text = strings.Join(text, "\n")
	switch resp.StopReason {
	case "end_turn", "stop_sequence":
		rep.stop = stopEnd
	case "tool_use":
		rep.stop = stopTools
	case "max_tokens":
		rep.stop = stopTruncated
	default:
		rep.stop = stopOther
	}
	content := resp.Content
	if len(blocks) == 0 {
		// The API refuses an empty assistant turn in the history; one
		// happens when the model ends at once, and a follow-up message
		// must still be possible.
		content = json.RawMessage(`[{"type":"text","text":"(no answer)"}]`)
	}
	// The turn goes back verbatim: tool_use ids and any block types this
	// code does not read stay as the model sent them.
	a.msgs = append(a.msgs, anthropicMessage{Role: "assistant", Content: content})
	return rep, nil
}

// addToolResults answers all tool_use blocks of the last turn in one user
// message, as the API requires.
func (a *anthropicConv) addToolResults(results []toolResult) {
	blocks := make([]anthropicToolResult, len(results))
	for i, r := range results {
		blocks[i] = anthropicToolResult{Type: "tool_result", ToolUseID: r.id, Content: r.content, IsError: r.isError}
	}
	b, _ := json.Marshal(blocks) // strings and bools only
	a.msgs = append(a.msgs, anthropicMessage{Role: "user", Content: b})
}

func (a *anthropicConv) addUser(text string) {
	b, _ := json.Marshal(text)
	a.msgs = append(a.msgs, anthropicMessage{Role: "user", Content: b})
}
