package testcase

import (
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"cpesuite/internal/platform/apperr"
)

func TestParseFullDocument(t *testing.T) {
	doc := `# a hand-written case
id: TC-001
title: Reboot from the ACS
portal: acs
base_url: http://127.0.0.1:8080/ui
project: Regression
references: JIRA-12, JIRA-13
priority: High
type: Functional
section: Device management
tags: [reboot, smoke]
description: |-
  Reboots a device.
  Two lines.
preconditions:
  - device online
  - ACS reachable
emulator_setup:
  tree_file: tr181.xml
  serial: SN1
  model: HG8245
steps:
  - action: Open the device page
    expected: The page shows the device
  - action: Reboot the device
    expected: The device reboots
    tool:
      server: acs
      name: reboot_device
      arguments:
        serial: SN1
        wait: 30.0
        ratio: 0.5
        force: true
        nothing: ~
        list: [a, 1, {k: v}]
        date: 2001-12-14
        number: "123"
      expect:
        error: true
        contains: ok
        not_contains: fail
        equals: ok
        matches: ^o+k$
`
	c, err := Parse([]byte(doc))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if want := sampleCase(); !reflect.DeepEqual(c, want) {
		t.Fatalf("Parse =\n%#v\nwant\n%#v", c, want)
	}
}

func TestParseNormalisesEmptyAndNull(t *testing.T) {
	doc := `id: a
title: t
tags: []
preconditions: ~
emulator_setup: {}
steps:
  - action: x
    tool:
      server: s
      name: n
      arguments: {}
      expect: ~
`
	c, err := Parse([]byte(doc))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	tool := c.Steps[0].Tool
	if c.Tags != nil || c.Preconditions != nil || tool.Arguments != nil || tool.Expect != nil {
		t.Fatalf("empty and null values must decode as omitted ones: %#v %#v", c, tool)
	}
}

func TestParseProblems(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []Problem // Message is a substring of the real message
	}{
		{
			name: "third step lacks action",
			doc: `id: a
title: t
steps:
  - action: one
  - action: two
  - expected: three
    tool: {server: s, name: n}
`,
			want: []Problem{{"steps[2].action", 6, "required"}},
		},
		{
			name: "unknown top-level key",
			doc: `id: a
title: t
steps:
  - action: x
stepz:
  - action: y
`,
			want: []Problem{{"stepz", 5, "unknown field"}},
		},
		{
			name: "steps of the wrong type",
			doc:  "id: a\ntitle: t\nsteps: 3\n",
			want: []Problem{{"steps", 3, "must be a list, got a number"}},
		},
		{
			name: "tool without name",
			doc: `id: a
title: t
steps:
  - action: x
  - action: y
    expected: z
    tool:
      server: acs
      arguments: {a: 1}
`,
			want: []Problem{{"steps[1].tool.name", 7, "required"}},
		},
		{
			name: "bad server, bad tool name, bad regexp",
			doc: `id: a
title: t
steps:
  - action: x
    tool:
      server: ACS!
      name: "has space"
      expect:
        matches: "a(b"
`,
			want: []Problem{
				{"steps[0].tool.server", 6, "must match"},
				{"steps[0].tool.name", 7, "must match"},
				{"steps[0].tool.expect.matches", 9, "not a valid regular expression"},
			},
		},
		{
			name: "id and title missing",
			doc:  "\n\nsteps:\n  - action: x\n",
			want: []Problem{{"id", 3, "required"}, {"title", 3, "required"}},
		},
		{
			name: "id with a bad character, blank title",
			doc:  "id: a/b\ntitle: '  '\nsteps: [{action: x}]\n",
			want: []Problem{{"id", 1, "must match"}, {"title", 2, "required"}},
		},
		{
			name: "id too long",
			doc:  "id: " + strings.Repeat("a", 129) + "\ntitle: t\nsteps: [{action: x}]\n",
			want: []Problem{{"id", 1, "must match"}},
		},
		{
			name: "long title and organisation fields",
			doc: "id: a\ntitle: " + strings.Repeat("é", 301) + "\nproject: " + strings.Repeat("p", 201) +
				"\nreferences: " + strings.Repeat("r", 201) + "\npriority: " + strings.Repeat("p", 201) +
				"\ntype: " + strings.Repeat("t", 201) + "\nsection: " + strings.Repeat("s", 201) + "\nsteps: [{action: x}]\n",
			want: []Problem{
				{"title", 2, "at most 300"}, {"project", 3, "at most 200"}, {"references", 4, "at most 200"},
				{"priority", 5, "at most 200"}, {"type", 6, "at most 200"}, {"section", 7, "at most 200"},
			},
		},
		{
			name: "limits hold exactly at the edge",
			doc: "id: " + strings.Repeat("a", 128) + "\ntitle: " + strings.Repeat("é", 300) + "\nproject: " + strings.Repeat("ü", 200) +
				"\ntags: [" + strings.Repeat("t", 64) + "]\nsteps: [{action: x}]\nfoo: 1\n",
			want: []Problem{{"foo", 6, "unknown field"}},
		},
		{
			name: "tags empty and too long",
			doc:  "id: a\ntitle: t\ntags:\n  - ok\n  - ''\n  - " + strings.Repeat("x", 65) + "\nsteps: [{action: x}]\n",
			want: []Problem{{"tags[1]", 5, "must not be empty"}, {"tags[2]", 6, "at most 64"}},
		},
		{
			name: "no steps at all",
			doc:  "id: a\ntitle: t\n",
			want: []Problem{{"steps", 1, "at least one step"}},
		},
		{
			name: "empty step list",
			doc:  "id: a\ntitle: t\nsteps: []\n",
			want: []Problem{{"steps", 3, "at least one step"}},
		},
		{
			name: "step that is a string",
			doc:  "id: a\ntitle: t\nsteps:\n  - just do it\n",
			want: []Problem{{"steps[0]", 4, "must be a mapping, got a string"}},
		},
		{
			name: "unknown fields in a step and a tool",
			doc:  "id: a\ntitle: t\nsteps:\n  - acton: x\n    tool:\n      server: s\n      name: n\n      args: {}\n",
			want: []Problem{{"steps[0].acton", 4, "unknown field"}, {"steps[0].tool.args", 8, "unknown field"}, {"steps[0].action", 4, "required"}},
		},
		{
			name: "duplicate keys",
			doc:  "id: a\ntitle: t\nid: b\nsteps:\n  - action: x\n    tool:\n      server: s\n      name: n\n      arguments: {k: 1, k: 2}\n",
			want: []Problem{{"id", 3, "duplicate key"}, {"steps[0].tool.arguments.k", 9, "duplicate key"}},
		},
		{
			name: "error that is not a boolean",
			doc:  "id: a\ntitle: t\nsteps:\n  - action: x\n    tool:\n      server: s\n      name: n\n      expect:\n        error: yes\n",
			want: []Problem{{"steps[0].tool.expect.error", 9, "must be true or false"}},
		},
		{
			name: "wrong kinds for mappings and strings",
			doc:  "id: [a]\ntitle: t\nemulator_setup: tree.xml\nsteps:\n  - action: x\n    tool:\n      server: s\n      name: n\n      arguments: [1]\n      expect: [a]\n",
			want: []Problem{
				{"id", 1, "must be a string, got a list"},
				{"emulator_setup", 3, "must be a mapping, got a string"},
				{"steps[0].tool.arguments", 9, "must be a mapping, got a list"},
				{"steps[0].tool.expect", 10, "must be a mapping, got a list"},
			},
		},
		{
			name: "tree file that is not a plain xml name",
			doc:  "id: a\ntitle: t\nemulator_setup:\n  tree_file: ../etc/x.xml\nsteps: [{action: x}]\n",
			want: []Problem{{"emulator_setup.tree_file", 4, "plain file name"}},
		},
		{
			name: "arguments that JSON cannot carry",
			doc:  "id: a\ntitle: t\nsteps:\n  - action: x\n    tool:\n      server: s\n      name: n\n      arguments:\n        a: .nan\n        b: [-.inf]\n        ? [x]\n        : 1\n",
			want: []Problem{
				{"steps[0].tool.arguments.a", 9, "finite number"},
				{"steps[0].tool.arguments.b[0]", 10, "finite number"},
				{"steps[0].tool.arguments", 11, "keys must be strings"},
			},
		},
		{
			name: "mapping key that is not a string",
			doc:  "id: a\nsteps: [{action: x}]\n? [k]\n: v\n",
			want: []Problem{{"", 3, "keys must be strings"}, {"title", 1, "required"}},
		},
		{
			name: "syntax error",
			doc:  "id: a\ntitle: t\nsteps:\n  - action: x\n   bad: indentation\n",
			// The parser points at where the list it could not finish
			// started.
			want: []Problem{{"", 4, "invalid YAML: did not find expected '-' indicator"}},
		},
		{
			name: "unclosed flow list",
			doc:  "id: a\ntags: [a, b\ntitle: t\n",
			want: []Problem{{"", 2, "invalid YAML: did not find expected ',' or ']'"}},
		},
		{
			name: "scanner error",
			doc:  "id: a\ntitle: t\nsteps:\n  - action: x: y\n",
			want: []Problem{{"", 4, "invalid YAML: mapping values are not allowed in this context"}},
		},
		{
			name: "parser error on a later line",
			doc:  "id: a\ntitle: t\nsteps:\n  - action: x\n    tool:\n      server: s\n     name: n\n",
			// The mapping left unfinished is the step's, which starts on 4.
			want: []Problem{{"", 4, "invalid YAML: did not find expected key"}},
		},
		{
			name: "control character",
			doc:  "id: a\ntitle: \x01\n",
			want: []Problem{{"", 0, "invalid YAML: control characters are not allowed"}},
		},
		{
			name: "second document",
			doc:  "id: a\ntitle: t\nsteps: [{action: x}]\n---\nid: b\n",
			want: []Problem{{"", 4, "only one YAML document"}},
		},
		{
			name: "empty second document",
			doc:  "id: a\ntitle: t\nsteps: [{action: x}]\n---\n",
			want: []Problem{{"", 4, "only one YAML document"}},
		},
		{name: "empty", doc: "", want: []Problem{{"", 0, "empty"}}},
		{name: "only comments", doc: "# nothing\n\n", want: []Problem{{"", 0, "empty"}}},
		{name: "only a document marker", doc: "---\n", want: []Problem{{"", 0, "empty"}}},
		{name: "null document", doc: "~\n", want: []Problem{{"", 0, "empty"}}},
		{name: "list document", doc: "- id: a\n", want: []Problem{{"", 1, "must be a mapping of case fields, got a list"}}},
		{name: "string document", doc: "hello\n", want: []Problem{{"", 1, "got a string"}}},
		{
			name: "alias",
			doc:  "id: a\ntitle: &t t\nsteps:\n  - action: *t\n",
			want: []Problem{{"title", 2, "anchors (&t) are not allowed"}, {"steps[0].action", 4, "aliases (*t) are not allowed"}},
		},
		{
			name: "billion laughs",
			doc:  "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n",
			want: nil, // checked below: only anchor and alias problems
		},
		{
			name: "custom and unwanted tags",
			doc:  "id: !shell a\ntitle: !!binary dA==\nsteps: !!set {a}\n",
			want: []Problem{{"id", 1, "tag !shell is not allowed"}, {"title", 2, "tag !!binary is not allowed"}, {"steps", 3, "tag !!set is not allowed on a mapping"}},
		},
		{
			name: "merge key",
			doc:  "id: a\ntitle: t\n<<: {section: s}\nsteps: [{action: x}]\n",
			want: []Problem{{`["<<"]`, 3, "merge keys (<<) are not allowed"}},
		},
		{
			name: "standard explicit tags are fine, wrong types are not",
			doc:  "id: !!str 123\ntitle: !!str t\nsteps: !!seq [{action: x, tool: {server: s, name: n, arguments: {a: !!int 0x10}, expect: {error: !!bool true}}}]\n",
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(tt.doc))
			if tt.name == "standard explicit tags are fine, wrong types are not" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if c.ID != "123" || c.Steps[0].Tool.Arguments["a"] != 16 || !*c.Steps[0].Tool.Expect.Error {
					t.Fatalf("got %#v", c)
				}
				return
			}
			if c != nil {
				t.Fatalf("Parse returned a case with an error")
			}
			got := problemsOf(t, err)
			if tt.want == nil {
				for _, p := range got {
					if !strings.Contains(p.Message, "anchors") && !strings.Contains(p.Message, "aliases") {
						t.Fatalf("unexpected problem %v", p)
					}
				}
				return
			}
			if len(got) != len(tt.want) {
				t.Fatalf("problems = %v, want %v", got, tt.want)
			}
			for i, w := range tt.want {
				g := got[i]
				if g.Field != w.Field || g.Line != w.Line || !strings.Contains(g.Message, w.Message) {
					t.Errorf("problem %d = %+v, want field %q line %d message containing %q", i, g, w.Field, w.Line, w.Message)
				}
			}
		})
	}
}

func TestParseErrorMessageNamesFieldAndLine(t *testing.T) {
	doc := "id: a\ntitle: t\nsteps:\n  - action: x\n  - action: y\n  - action: z\n    tool:\n      server: s\n"
	_, err := Parse([]byte(doc))
	if got, want := apperr.PublicMessage(err), "steps[2].tool.name: required (line 7)"; got != want {
		t.Fatalf("message = %q, want %q", got, want)
	}
}

func TestParseSizeLimit(t *testing.T) {
	head := "id: a\ntitle: t\nsteps: [{action: x}]\ndescription: "
	fits := head + strings.Repeat("d", MaxDocumentSize-len(head)-1) + "\n"
	if _, err := Parse([]byte(fits)); err != nil {
		t.Fatalf("a document of exactly 1 MiB must parse: %v", err)
	}
	_, err := Parse([]byte(fits + "\n"))
	if !errors.Is(err, apperr.ErrTooLarge) || apperr.Status(err) != http.StatusRequestEntityTooLarge {
		t.Fatalf("1 MiB + 1 byte: err = %v, want ErrTooLarge", err)
	}
}

func TestParseCapsTheProblemList(t *testing.T) {
	var b strings.Builder
	b.WriteString("id: a\ntitle: t\nsteps: [{action: x}]\n")
	for i := range 150 {
		b.WriteString("unknown" + strings.Repeat("x", i) + ": 1\n")
	}
	ps := problemsOf(t, func() error { _, err := Parse([]byte(b.String())); return err }())
	if len(ps) != maxProblems+1 || ps[maxProblems].Message != "50 more problems not shown" {
		t.Fatalf("got %d problems, last %+v", len(ps), ps[len(ps)-1])
	}
}

func TestValidateJSONBody(t *testing.T) {
	c := sampleCase()
	if err := c.Validate(); err != nil {
		t.Fatalf("sample case: %v", err)
	}
	c.Steps[1].Action = " "
	c.Steps[1].Tool.Name = ""
	c.Steps[1].Tool.Arguments["bad"] = make(chan int)
	c.EmulatorSetup.TreeFile = "tree.txt"
	ps := problemsOf(t, c.Validate())
	want := []Problem{
		{Field: "emulator_setup.tree_file", Message: "must be an .xml file name"},
		{Field: "steps[1].action", Message: "required"},
		{Field: "steps[1].tool.name", Message: "required"},
		{Field: "steps[1].tool.arguments", Message: "cannot be sent as JSON"},
	}
	if !reflect.DeepEqual(ps, want) {
		t.Fatalf("problems = %+v, want %+v", ps, want)
	}
}

func TestTreeFileRule(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"tr181.xml", true},
		{"Tree Data.XML", true},
		{"a.b.xml", true},
		{".xml", false},
		{".hidden.xml", false},
		{"../x.xml", false},
		{"dir/x.xml", false},
		{`dir\x.xml`, false},
		{"x..xml", false},
		{"x.xml.txt", false},
		{"tree", false},
		{"x\n.xml", false},
		{strings.Repeat("a", 197) + ".xml", false},
	}
	for _, tt := range tests {
		if got := treeFileProblem(tt.name) == ""; got != tt.ok {
			t.Errorf("treeFileProblem(%q) ok = %v, want %v", tt.name, got, tt.ok)
		}
	}
}
