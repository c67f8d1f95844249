package llm

import (
	"context"
	"encoding/json"
	"net/http"
)

// provider is one wire format: the Anthropic Messages API or the OpenAI
// chat-completions API.
type provider interface {
	// name is the executor's name and the prefix of its settings.
	name() string
	// endpoint is the chat URL for the base URL setting (no trailing /).
	endpoint(base string) string
	// setHeaders authenticates a request.
	setHeaders(h http.Header, apiKey string)
	// errorText reads the provider's error body; ok is false when body is
	// not in the provider's error shape (a proxy's HTML page, say).
	errorText(body []byte) (typ, msg string, ok bool)
	// start opens the conversation of one run.
	start(c *caller, ps providerSettings, system, user string, tools []toolDef) conversation
}

// conversation is one run's exchange with the model. It keeps the
// provider's own message list, so that every assistant turn goes back to
// the model exactly as the model sent it.
type conversation interface {
	// next sends the conversation so far and returns the model's turn,
	// which it appends to the conversation.
	next(ctx context.Context) (reply, error)
	// addToolResults answers every tool call of the last turn, in order.
	addToolResults(results []toolResult)
	// addUser appends a user message.
	addUser(text string)
}

// stopKind is why the model ended its turn, in provider-neutral terms.
type stopKind int

const (
	stopEnd       stopKind = iota // a final answer (end_turn, stop)
	stopTools                     // the model wants tool results
	stopTruncated                 // cut at the token limit (max_tokens, length)
	stopOther                     // refusal, content filter or a value we do not know
)

// reply is one model turn.
type reply struct {
	text    string
	calls   []toolCall
	stop    stopKind
	rawStop string // the provider's own stop value, for messages
	usage   usage
}

type usage struct {
	in, out int
}

// toolCall is a tool call of the model. argErr is set instead of args
// when the arguments are not a JSON object; the model is told so.
type toolCall struct {
	id     string
	name   string
	args   map[string]any
	argErr string
}

// toolResult answers one toolCall.
type toolResult struct {
	id      string
	content string
	isError bool
}

// toolDef is a tool as the model sees it.
type toolDef struct {
	name        string
	description string
	schema      json.RawMessage
}

// decodeArgs reads tool arguments that must be a JSON object; empty or
// null means no arguments.
func decodeArgs(raw []byte) (map[string]any, string) {
	args := map[string]any{}
	if len(raw) == 0 || string(raw) == "null" {
		return args, ""
	}
	if err := json.Unmarshal(raw, &args); err != nil || args == nil {
		return nil, "the arguments are not a JSON object: " + excerpt(string(raw), 200)
	}
	return args, ""
}
