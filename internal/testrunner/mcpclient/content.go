package mcpclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// resultText turns a tool result into the text a step checks and a model
// reads; binary parts become markers, since their bytes help neither.
func resultText(r *mcp.CallToolResult) string {
	parts := make([]string, 0, len(r.Content))
	for _, c := range r.Content {
		parts = append(parts, contentText(c))
	}
	text := strings.Join(parts, "\n")
	if r.StructuredContent == nil {
		return text
	}
	js, err := json.Marshal(r.StructuredContent)
	if err != nil {
		return joinText(text, fmt.Sprintf("[structured content that is not JSON: %v]", err))
	}
	// Servers with typed output also put the same JSON into a text part
	// (the go-sdk does so by default); showing it twice helps nobody.
	for _, p := range parts {
		if sameJSON(p, js) {
			return text
		}
	}
	return joinText(text, string(js))
}

func contentText(c mcp.Content) string {
	switch v := c.(type) {
	case *mcp.TextContent:
		return v.Text
	case *mcp.ImageContent:
		return binaryMarker(v.MIMEType, "image", len(v.Data))
	case *mcp.AudioContent:
		return binaryMarker(v.MIMEType, "audio", len(v.Data))
	case *mcp.ResourceLink:
		if v.Name != "" && v.Name != v.URI {
			return fmt.Sprintf("[resource link %s (%s)]", v.URI, v.Name)
		}
		return fmt.Sprintf("[resource link %s]", v.URI)
	case *mcp.EmbeddedResource:
		res := v.Resource
		switch {
		case res == nil:
			return "[empty resource]"
		case res.Text != "":
			return res.Text
		default:
			mime := res.MIMEType
			if mime == "" {
				mime = "binary"
			}
			return fmt.Sprintf("[resource %s, %s, %d bytes]", res.URI, mime, len(res.Blob))
		}
	case nil:
		return ""
	default:
		return fmt.Sprintf("[%T content]", c)
	}
}

// binaryMarker is "[image/png, 5120 bytes]".
func binaryMarker(mime, kind string, n int) string {
	if mime == "" {
		mime = kind
	}
	return fmt.Sprintf("[%s, %d bytes]", mime, n)
}

func joinText(a, b string) string {
	if a == "" {
		return b
	}
	return a + "\n" + b
}

// sameJSON reports whether text holds the JSON value js.
func sameJSON(text string, js []byte) bool {
	var a, b any
	if json.Unmarshal([]byte(text), &a) != nil || json.Unmarshal(js, &b) != nil {
		return false
	}
	return reflect.DeepEqual(a, b)
}

// jsonArgs makes a case's arguments JSON-ready: YAML decoders may produce
// maps with non-string keys, which encoding/json refuses.
func jsonArgs(args map[string]any) (map[string]any, error) {
	if args == nil {
		return map[string]any{}, nil
	}
	out, ok := plainJSON(args).(map[string]any)
	if !ok {
		return nil, fmt.Errorf("not an object")
	}
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(out); err != nil {
		return nil, err
	}
	return out, nil
}

func plainJSON(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[k] = plainJSON(e)
		}
		return m
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[fmt.Sprint(k)] = plainJSON(e)
		}
		return m
	case []any:
		s := make([]any, len(t))
		for i, e := range t {
			s[i] = plainJSON(e)
		}
		return s
	}
	return v
}
