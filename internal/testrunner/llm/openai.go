package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

type openAIProvider struct{}

func (openAIProvider) name() string { return "openai" }

// endpoint appends /chat/completions to the base, which carries the API
// version (https://api.openai.com/v1, http://host:11434/v1, ...).
func (openAIProvider) endpoint(base string) string { return base + "/chat/completions" }

func (openAIProvider) setHeaders(h http.Header, apiKey string) {
	h.Set("Authorization", "Bearer "+apiKey)
}

// errorText reads {"error":{"message":..., "type":..., "code":...}}; code
// is a string, a number or null depending on the server.
func (openAIProvider) errorText(body []byte) (string, string, bool) {
	var e struct {
		Error *struct {
			Message string          `json:"message"`
			Type    string          `json:"type"`
			Code    json.RawMessage `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || e.Error == nil {
		return "", "", false
	}
	typ := e.Error.Type
	if code := looseString(e.Error.Code); code != "" && code != typ {
		if typ != "" {
			typ += "/"
		}
		typ += code
	}
	return typ, e.Error.Message, true
}

func (openAIProvider) start(c *caller, ps providerSettings, system, user string, tools []toolDef) conversation {
	o := &openAIConv{c: c, ps: ps}
	for _, t := range tools {
		o.tools = append(o.tools, openAITool{Type: "function", Function: openAIFunction{Name: t.name, Description: t.description, Parameters: t.schema}})
	}
	o.msgs = append(o.msgs, openAIMessage{Role: "system", Content: &system}, openAIMessage{Role: "user", Content: &user})
	return o
}

type openAIRequest struct {
	Model    string          `json:"model"`
	Messages []openAIMessage `json:"messages"`
	Tools    []openAITool    `json:"tools,omitempty"`
}

// openAIMessage's Content is null for an assistant turn of tool calls
// only.
type openAIMessage struct {
	Role       string           `json:"role"`
	Content    *string          `json:"content"`
	ToolCalls  []openAIToolCall `json:"tool_calls,omitempty"`
	ToolCallID string           `json:"tool_call_id,omitempty"`
}

type openAITool struct {
	Type     string         `json:"type"`
	Function openAIFunction `json:"function"`
}

type openAIFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

type openAIToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name string `json:"name"`
		// Arguments is a JSON text in a string; some compatible servers
		// send the object itself, which is read too.
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

type openAIResponse struct {
	Choices []struct {
		Message struct {
			Role string `json:"role"`
			// Content is a string, null, or (some servers) a list of
			// text parts.
			Content   json.RawMessage  `json:"content"`
			ToolCalls []openAIToolCall `json:"tool_calls"`
			Refusal   string           `json:"refusal"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

type openAIConv struct {
	c     *caller
	ps    providerSettings
	tools []openAITool
	msgs  []openAIMessage
}

func (o *openAIConv) next(ctx context.Context) (reply, error) {
	body, err := json.Marshal(openAIRequest{Model: o.ps.model, Messages: o.msgs, Tools: o.tools})
	if err != nil {
		return reply{}, fmt.Errorf("openai: encoding the request: %v", err)
	}
	data, err := o.c.post(ctx, o.ps.endpoint, body)
	if err != nil {
		return reply{}, err
	}
	var resp openAIResponse
	if err := json.Unmarshal(data, &resp); err != nil || len(resp.Choices) == 0 {
		// Some compatible servers answer 200 with an error body.
		if typ, msg, ok := (openAIProvider{}).errorText(data); ok {
			return reply{}, fmt.Errorf("openai answered an error: %s: %s", o.c.clean(typ), o.c.clean(msg))
		}
		return reply{}, fmt.Errorf("openai: the answer is not a chat completion with a choice: %s", o.c.clean(string(data)))
	}
	ch := resp.Choices[0]
	rep := reply{rawStop: ch.FinishReason, text: contentText(ch.Message.Content)}
	if rep.text == "" && ch.Message.Refusal != "" {
		rep.text = ch.Message.Refusal
	}
	if resp.Usage != nil {
		rep.usage = usage{in: resp.Usage.PromptTokens, out: resp.Usage.CompletionTokens}
	}
	echo := openAIMessage{Role: "assistant"}
	if rep.text != "" {
		t := rep.text
		echo.Content = &t
	}
	for i, tc := range ch.Message.ToolCalls {
		if tc.ID == "" {
			// Some local servers leave ids out; the tool message must
			// still name the call it answers.
			tc.ID = fmt.Sprintf("call_%d_%d", len(o.msgs), i)
		}
		tc.Type = "function"
		argText := string(tc.Function.Arguments)
		var s string
		if json.Unmarshal(tc.Function.Arguments, &s) == nil {
			argText = s
		}
		if strings.TrimSpace(argText) == "" {
			argText = "{}"
		}
		args, argErr := decodeArgs([]byte(argText))
		rep.calls = append(rep.calls, toolCall{id: tc.ID, name: tc.Function.Name, args: args, argErr: argErr})
		// Echo the arguments as the JSON string the API expects.
		tc.Function.Arguments, _ = json.Marshal(argText)
		echo.ToolCalls = append(echo.ToolCalls, tc)
	}
	switch ch.FinishReason {
	case "stop":
		rep.stop = stopEnd
	case "tool_calls", "function_call":
		rep.stop = stopTools
	case "length":
		rep.stop = stopTruncated
	case "":
		// Some compatible servers leave it out; the calls decide.
		rep.stop = stopEnd
		if len(rep.calls) > 0 {
			rep.stop = stopTools
		}
	default:
		rep.stop = stopOther
	}
	if echo.Content == nil && len(echo.ToolCalls) == 0 {
		empty := ""
		echo.Content = &empty
	}
	o.msgs = append(o.msgs, echo)
	return rep, nil
}

// contentText reads a message content: a string, null, or a list of
// {"type":"text","text":...} parts.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var out []string
	for _, p := range parts {
		if p.Type == "text" || p.Type == "" {
			out = append(out, p.Text)
		}
	}
	return strings.Join(out, "\n")
}

func (o *openAIConv) addToolResults(results []toolResult) {
	for _, r := range results {
		content := r.content
		if r.isError {
			// The tool message has no error flag; say it in the text.
			content = "ERROR: " + content
		}
		o.msgs = append(o.msgs, openAIMessage{Role: "tool", ToolCallID: r.id, Content: &content})
	}
}

func (o *openAIConv) addUser(text string) {
	o.msgs = append(o.msgs, openAIMessage{Role: "user", Content: &text})
}
