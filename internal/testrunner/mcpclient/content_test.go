package mcpclient

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestResultText(t *testing.T) {
	size := int64(10)
	tests := []struct {
		name string
		res  *mcp.CallToolResult
		want string
	}{
		{"empty", &mcp.CallToolResult{}, ""},
		{"text parts joined", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a"}, &mcp.TextContent{Text: "b"}}}, "a\nb"},
		{"image marker", &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: make([]byte, 42), MIMEType: "image/png"}}}, "[image/png, 42 bytes]"},
		{"image without type", &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: make([]byte, 1)}}}, "[image, 1 bytes]"},
		{"audio marker", &mcp.CallToolResult{Content: []mcp.Content{&mcp.AudioContent{Data: make([]byte, 7), MIMEType: "audio/wav"}}}, "[audio/wav, 7 bytes]"},
		{"resource link", &mcp.CallToolResult{Content: []mcp.Content{&mcp.ResourceLink{URI: "file:///x.log", Name: "x.log", Size: &size}}}, "[resource link file:///x.log (x.log)]"},
		{"text resource", &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///a", Text: "hello"}}}}, "hello"},
		{"blob resource", &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///b", MIMEType: "application/zip", Blob: make([]byte, 3)}}}}, "[resource file:///b, application/zip, 3 bytes]"},
		{"structured only", &mcp.CallToolResult{StructuredContent: map[string]any{"b": 1, "a": "x"}}, `{"a":"x","b":1}`},
		{"structured repeated as text is shown once", &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: "{\n  \"a\": \"x\", \"b\": 1\n}"}},
			StructuredContent: map[string]any{"a": "x", "b": 1},
		}, "{\n  \"a\": \"x\", \"b\": 1\n}"},
		{"structured beside other text", &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: "done"}},
			StructuredContent: []any{1, 2},
		}, "done\n[1,2]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := resultText(tc.res); got != tc.want {
				t.Fatalf("resultText = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestJSONArgs(t *testing.T) {
	got, err := jsonArgs(map[string]any{"a": map[any]any{"x": 1, 2: []any{map[any]any{"y": true}}}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(got)
	if err != nil || string(b) != `{"a":{"2":[{"y":true}],"x":1}}` {
		t.Fatalf("jsonArgs = %s, %v", b, err)
	}
	if got, err := jsonArgs(nil); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("nil args = %v, %v; want an empty object", got, err)
	}
	if _, err := jsonArgs(map[string]any{"f": func() {}}); err == nil {
		t.Fatal("a function argument was accepted")
	}
}

func TestRedaction(t *testing.T) {
	r := newRedactor("http://alice:p%40ss-word@host:1/mcp")
	tests := []struct{ in, want string }{
		{`Post "http://alice:***@host:1/mcp": EOF`, `Post "http://host:1/mcp": EOF`},
		{`Post "http://alice:p%40ss-word@host:1/mcp": EOF`, `Post "http://host:1/mcp": EOF`},
		{`bad password p@ss-word given`, `bad password *** given`},
		{`user alice refused`, `user *** refused`},
		{`see https://other:x@elsewhere/`, `see https://elsewhere/`},
		{`nothing secret`, `nothing secret`},
	}
	for _, tc := range tests {
		if got := r.text(tc.in); got != tc.want {
			t.Errorf("text(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := shownURL("https://u:p@h:8/mcp?x=1"); got != "https://h:8/mcp?x=1" {
		t.Errorf("shownURL = %q", got)
	}
	cause := errors.New(`dial "http://alice:p%40ss-word@host:1/mcp"`)
	err := r.err(cause)
	if strings.Contains(err.Error(), "alice") || !errors.Is(err, cause) {
		t.Errorf("err = %q; want scrubbed text and the cause kept", err)
	}
}
