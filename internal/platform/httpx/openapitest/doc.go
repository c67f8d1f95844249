package openapitest

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"testing"
)

// Doc is the part of an OpenAPI 3 document that the services' document
// tests read.
type Doc struct {
	OpenAPI string `json:"openapi"`
	Info    struct {
		Description string `json:"description"`
	} `json:"info"`
	Security   []map[string][]string                 `json:"security"`
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		SecuritySchemes map[string]SecurityScheme `json:"securitySchemes"`
		Responses       map[string]Response       `json:"responses"`
		Schemas         map[string]Schema         `json:"schemas"`
	} `json:"components"`
}

// SecurityScheme is one entry of components.securitySchemes.
type SecurityScheme struct {
	Type   string `json:"type"`
	Scheme string `json:"scheme"`
	In     string `json:"in"`
	Name   string `json:"name"`
}

// Operation is one operation of a path item.
type Operation struct {
	Summary     string `json:"summary"`
	Description string `json:"description"`
	OperationID string `json:"operationId"`
	// Access is the x-access extension (the access level a service names).
	Access     string              `json:"x-access"`
	Security   *[]map[string]any   `json:"security"`
	Parameters []map[string]any    `json:"parameters"`
	Responses  map[string]Response `json:"responses"`
}

// Response is one response, or a $ref to components.responses.
type Response struct {
	Ref         string                     `json:"$ref"`
	Description string                     `json:"description"`
	Content     map[string]json.RawMessage `json:"content"`
	// Codes is the x-error-codes extension: the error codes the answer
	// can carry.
	Codes []string `json:"x-error-codes"`
}

// Schema is the part of a schema object the tests read.
type Schema struct {
	Ref         string            `json:"$ref"`
	Type        string            `json:"type"`
	AllOf       []Schema          `json:"allOf"`
	Properties  map[string]Schema `json:"properties"`
	Required    []string          `json:"required"`
	Enum        []any             `json:"enum"`
	Items       *Schema           `json:"items"`
	Description string            `json:"description"`
}

// NamedOp is an operation with its method (upper case) and path.
type NamedOp struct {
	Method, Path string
	Op           Operation
}

// IsMethod reports whether a path item key is an HTTP method.
func IsMethod(k string) bool { return slices.Contains(methods, k) }

// Parse decodes doc and lists its operations sorted by path, then method;
// a document that does not parse or has no operations fails t.
func Parse(t testing.TB, doc []byte) (Doc, []NamedOp) {
	t.Helper()
	var d Doc
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatalf("the OpenAPI document does not parse: %v", err)
	}
	var ops []NamedOp
	for path, item := range d.Paths {
		for m, raw := range item {
			if !IsMethod(m) {
				continue
			}
			var op Operation
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatalf("%s %s: %v", m, path, err)
			}
			ops = append(ops, NamedOp{strings.ToUpper(m), path, op})
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].Path+" "+ops[i].Method < ops[j].Path+" "+ops[j].Method })
	if len(ops) == 0 {
		t.Fatal("the document has no operations")
	}
	return d, ops
}

// Resolve follows a response $ref into components.responses.
func (d Doc) Resolve(r Response) (Response, bool) {
	if r.Ref == "" {
		return r, true
	}
	name, ok := strings.CutPrefix(r.Ref, "#/components/responses/")
	c, found := d.Components.Responses[name]
	return c, ok && found
}

// Schema follows $refs into components.schemas.
func (d Doc) Schema(s Schema) Schema {
	for seen := 0; s.Ref != "" && seen < 32; seen++ {
		s = d.Components.Schemas[strings.TrimPrefix(s.Ref, "#/components/schemas/")]
	}
	return s
}

// UsesError reports whether a JSON media object's schema is the Error
// schema or a schema built on it with allOf.
func (d Doc) UsesError(media json.RawMessage) bool {
	var m struct {
		Schema Schema `json:"schema"`
	}
	if json.Unmarshal(media, &m) != nil {
		return false
	}
	const errRef = "#/components/schemas/Error"
	if m.Schema.Ref == errRef {
		return true
	}
	return slices.ContainsFunc(d.Schema(m.Schema).AllOf, func(p Schema) bool { return p.Ref == errRef })
}
