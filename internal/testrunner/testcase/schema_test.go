package testcase

import (
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"testing"
)

type schemaNode struct {
	Schema               string                 `json:"$schema"`
	Ref                  string                 `json:"$ref"`
	Type                 string                 `json:"type"`
	Properties           map[string]*schemaNode `json:"properties"`
	Required             []string               `json:"required"`
	AdditionalProperties *bool                  `json:"additionalProperties"`
	Items                *schemaNode            `json:"items"`
	Pattern              string                 `json:"pattern"`
	MaxLength            int                    `json:"maxLength"`
	Defs                 map[string]*schemaNode `json:"$defs"`
}

func loadSchema(t *testing.T) *schemaNode {
	t.Helper()
	var root schemaNode
	if err := json.Unmarshal(Schema(), &root); err != nil {
		t.Fatalf("Schema() is not valid JSON: %v", err)
	}
	if root.Schema != "https://json-schema.org/draft/2020-12/schema" {
		t.Fatalf("$schema = %q, want draft 2020-12", root.Schema)
	}
	return &root
}

// deref follows a "#/$defs/x" reference.
func deref(t *testing.T, root, n *schemaNode) *schemaNode {
	t.Helper()
	if n.Ref == "" {
		return n
	}
	const prefix = "#/$defs/"
	d, ok := root.Defs[n.Ref[len(prefix):]]
	if !ok {
		t.Fatalf("dangling $ref %q", n.Ref)
	}
	return d
}

// TestSchemaMatchesModel keeps schema.json and the Go types from drifting:
// every yaml field of every model struct is a schema property and the other
// way round, objects refuse unknown properties like Parse does, and the
// patterns and limits are the ones Validate uses.
func TestSchemaMatchesModel(t *testing.T) {
	root := loadSchema(t)
	var walk func(typ reflect.Type, n *schemaNode, path string)
	walk = func(typ reflect.Type, n *schemaNode, path string) {
		n = deref(t, root, n)
		for typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		switch typ.Kind() {
		case reflect.Struct:
			if n.Type != "object" || n.AdditionalProperties == nil || *n.AdditionalProperties {
				t.Errorf("%s: schema must be an object with additionalProperties false", path)
			}
			fields := yamlFields(typ)
			var goNames, schemaNames []string
			for name := range fields {
				goNames = append(goNames, name)
			}
			for name := range n.Properties {
				schemaNames = append(schemaNames, name)
			}
			sort.Strings(goNames)
			sort.Strings(schemaNames)
			if !slices.Equal(goNames, schemaNames) {
				t.Errorf("%s: Go fields %v, schema properties %v", path, goNames, schemaNames)
				return
			}
			for name, i := range fields {
				walk(typ.Field(i).Type, n.Properties[name], path+"."+name)
			}
		case reflect.Slice:
			if n.Type != "array" || n.Items == nil {
				t.Errorf("%s: schema must be an array with items", path)
				return
			}
			walk(typ.Elem(), n.Items, path+"[]")
		case reflect.Map:
			if n.Type != "object" {
				t.Errorf("%s: schema type %q, want object", path, n.Type)
			}
		case reflect.String:
			if n.Type != "string" {
				t.Errorf("%s: schema type %q, want string", path, n.Type)
			}
		case reflect.Bool:
			if n.Type != "boolean" {
				t.Errorf("%s: schema type %q, want boolean", path, n.Type)
			}
		default:
			t.Errorf("%s: no schema check for %s", path, typ)
		}
	}
	walk(reflect.TypeOf(Case{}), root, "case")

	step := root.Defs["step"]
	tool := root.Defs["tool"]
	checks := []struct {
		what      string
		got, want any
	}{
		{"id pattern", root.Properties["id"].Pattern, idPattern},
		{"server pattern", tool.Properties["server"].Pattern, serverPattern},
		{"tool name pattern", tool.Properties["name"].Pattern, toolNamePattern},
		{"title maxLength", root.Properties["title"].MaxLength, maxTitleRunes},
		{"tag maxLength", root.Properties["tags"].Items.MaxLength, maxTagRunes},
		{"section maxLength", root.Properties["section"].MaxLength, maxOrgFieldRunes},
		{"tree_file maxLength", root.Defs["emulator_setup"].Properties["tree_file"].MaxLength, maxTreeFileLength},
		{"case required", root.Required, []string{"id", "title", "steps"}},
		{"step required", step.Required, []string{"action"}},
		{"tool required", tool.Required, []string{"server", "name"}},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: schema has %v, code has %v", c.what, c.got, c.want)
		}
	}
	for _, f := range []string{"project", "references", "priority", "type", "section"} {
		if root.Properties[f].MaxLength != maxOrgFieldRunes {
			t.Errorf("%s maxLength = %d, want %d", f, root.Properties[f].MaxLength, maxOrgFieldRunes)
		}
	}
}

func TestSchemaReturnsACopy(t *testing.T) {
	s := Schema()
	s[0] = 'x'
	if Schema()[0] != '{' {
		t.Fatal("changing the returned bytes changed the schema")
	}
}
