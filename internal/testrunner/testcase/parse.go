package testcase

import (
	"bytes"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"cpesuite/internal/platform/apperr"
)

// MaxDocumentSize is the largest case document Parse accepts.
const MaxDocumentSize = 1 << 20

// Parse decodes and validates one YAML case document. It is strict: unknown
// fields, values of the wrong type, duplicate keys, anchors and aliases,
// custom tags and further documents are all problems. An invalid document
// gives an INVALID_CASE error whose details list every problem with its
// field path and line.
func Parse(data []byte) (*Case, error) {
	if len(data) > MaxDocumentSize {
		return nil, apperr.New(apperr.ErrTooLarge, "CASE_TOO_LARGE", "a case document may be at most %d bytes", MaxDocumentSize)
	}
	root, p := parseDocument(data)
	if root == nil {
		return nil, p.err()
	}
	d := decoder{p: p}
	c := d.decodeCase(root)
	validate(c, p, false)
	if err := p.err(); err != nil {
		return nil, err
	}
	return c, nil
}

// parseDocument reads exactly one YAML document and checks the parts of
// YAML a case has no use for. It returns the root mapping, or nil with the
// problems that stop decoding.
func parseDocument(data []byte) (*yaml.Node, *problems) {
	p := &problems{lines: map[string]int{}}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			p.at("", 0, "the document is empty")
		} else {
			p.push(syntaxProblem(err))
		}
		return nil, p
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		p.push(syntaxProblem(err))
		return nil, p
	default:
		p.at("", next.Line, "only one YAML document is allowed; remove the second document (---)")
		return nil, p
	}
	if len(doc.Content) != 1 {
		p.at("", 0, "the document is empty")
		return nil, p
	}
	root := doc.Content[0]
	if !checkNodes(root, nil, p) {
		return nil, p
	}
	if isNull(root) {
		p.at("", 0, "the document is empty")
		return nil, p
	}
	if root.Kind != yaml.MappingNode {
		p.at("", root.Line, "the document must be a mapping of case fields, got %s", describe(root))
		return nil, p
	}
	p.lines[""] = root.Line
	return root, p
}

var yamlLine = regexp.MustCompile(`^line (\d+): (.*)$`)

// parserProblems are the messages of go-yaml's parser (as opposed to its
// scanner). go-yaml reports their line 0-based, and leaves it out for the
// first line; its scanner errors are 1-based.
var parserProblems = map[string]bool{
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"did not find expected '-' indicator":    true,
	"did not find expected <document start>": true,
	"did not find expected <stream-start>":   true,
	"did not find expected key":              true,
	"did not find expected node content":     true,
	"found duplicate %TAG directive":         true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found undefined tag handle":             true,
}

// syntaxProblem turns a YAML parser error into a problem with the 1-based
// line go-yaml points at: where the construct it could not finish started,
// or where it noticed the error.
func syntaxProblem(err error) Problem {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
		if parserProblems[msg] {
			line++
		}
	}
	return Problem{Line: line, Message: "invalid YAML: " + msg}
}
