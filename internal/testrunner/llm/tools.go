package llm

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"cpesuite/internal/testrunner/worker"
)

// maxToolName is the providers' limit on a tool name; both accept
// ^[a-zA-Z0-9_-]{1,64}$.
const maxToolName = 64

// toolRef is the worker's address of a tool.
type toolRef struct {
	server, tool string
}

// toolSet maps the worker's tools to provider tool names and back. A name
// is <server>__<tool>, with characters the providers refuse replaced by
// '_' and cut to 64; a name taken already gets a _2, _3, ... suffix, so
// every tool stays reachable under a name of its own.
type toolSet struct {
	defs   []toolDef
	byName map[string]toolRef
	byRef  map[toolRef]string
}

func newToolSet(infos []worker.ToolInfo) *toolSet {
	ts := &toolSet{byName: map[string]toolRef{}, byRef: map[toolRef]string{}}
	for _, ti := range infos {
		ref := toolRef{ti.Server, ti.Name}
		if _, dup := ts.byRef[ref]; dup {
			continue
		}
		name := uniqueName(toolName(ti.Server, ti.Name), ts.byName)
		ts.byName[name] = ref
		ts.byRef[ref] = name
		desc := strings.TrimSpace(ti.Description)
		if desc == "" {
			desc = fmt.Sprintf("Tool %q of tool server %q.", ti.Name, ti.Server)
		}
		ts.defs = append(ts.defs, toolDef{name: name, description: desc, schema: objectSchema(ti.InputSchema)})
	}
	return ts
}

// toolName is the provider name of server/tool before de-duplication.
func toolName(server, tool string) string {
	clean := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
				return r
			}
			return '_'
		}, s)
	}
	name := clean(server) + "__" + clean(tool)
	if len(name) > maxToolName {
		name = name[:maxToolName]
	}
	return name
}

func uniqueName(name string, taken map[string]toolRef) string {
	if _, ok := taken[name]; !ok {
		return name
	}
	for i := 2; ; i++ {
		suffix := fmt.Sprintf("_%d", i)
		base := name
		if len(base)+len(suffix) > maxToolName {
			base = base[:maxToolName-len(suffix)]
		}
		if _, ok := taken[base+suffix]; !ok {
			return base + suffix
		}
	}
}

// objectSchema returns schema as an object schema: both providers require
// "type": "object" at the top, and a tool server may send none or a
// broken one.
func objectSchema(schema json.RawMessage) json.RawMessage {
	var m map[string]any
	if err := json.Unmarshal(schema, &m); err != nil || m == nil {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	if t, ok := m["type"]; ok && t != "object" {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	m["type"] = "object"
	if _, ok := m["properties"]; !ok {
		m["properties"] = map[string]any{}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return b
}

func (ts *toolSet) lookup(name string) (toolRef, bool) {
	r, ok := ts.byName[name]
	return r, ok
}

// nameOf returns the provider name of server/tool, "" when not offered.
func (ts *toolSet) nameOf(server, tool string) string { return ts.byRef[toolRef{server, tool}] }

// names lists the provider names, sorted, for a message to the model.
func (ts *toolSet) names() []string {
	out := make([]string, 0, len(ts.byName))
	for n := range ts.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
