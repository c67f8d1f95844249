package tree

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strconv"
	"strings"

	"cpesuite/internal/cwmp"
)

// MaxFileBytes is the largest tree file Parse accepts.
const MaxFileBytes = 8 << 20

// MaxEntries is the largest number of <Parameter> and <Object> elements a
// tree file may hold; it bounds the memory a hostile file can claim beyond
// its size.
const MaxEntries = 200_000

// The two data models and their roots.
const (
	TR098 = "TR-098"
	TR181 = "TR-181"

	RootTR098 = "InternetGatewayDevice."
	RootTR181 = "Device."
)

// Parse reads a tree file (see FORMAT.md). It refuses DTDs and entity
// declarations, files over maxBytes, unknown types, duplicate names, values
// that do not fit their type, and names outside one root.
//
// A maxBytes of 0 or less, or above MaxFileBytes, means MaxFileBytes.
func Parse(r io.Reader, maxBytes int64) (*Template, error) {
	if maxBytes <= 0 || maxBytes > MaxFileBytes {
		maxBytes = MaxFileBytes
	}
	// The whole file is read first: the limit is checked before any XML is
	// looked at, and line numbers are counted in the bytes themselves.
	data, err := io.ReadAll(io.LimitReader(r, maxBytes+1))
	if err != nil {
		return nil, &FormatError{Msg: "reading: " + err.Error()}
	}
	if int64(len(data)) > maxBytes {
		return nil, &FormatError{Msg: "larger than " + strconv.FormatInt(maxBytes, 10) + " bytes"}
	}
	// Editors on Windows start files with a byte order mark, which the
	// decoder would take for text before the root element.
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	p := &parser{data: data, d: xml.NewDecoder(bytes.NewReader(data)), line: 1}
	p.d.Strict = true
	return p.parse()
}

type parser struct {
	data    []byte
	d       *xml.Decoder
	off     int64 // offset up to which line was counted
	line    int
	root    string
	model   string
	names   map[string]int // name -> line, to report duplicates
	entries []rawEntry
}

// lineAt returns the 1-based line of byte offset off; offsets only grow,
// so counting resumes where it stopped.
func (p *parser) lineAt(off int64) int {
	if off > int64(len(p.data)) {
		off = int64(len(p.data))
	}
	if off > p.off {
		p.line += bytes.Count(p.data[p.off:off], []byte{'\n'})
		p.off = off
	}
	return p.line
}

func (p *parser) errAt(off int64, msg string) error {
	return &FormatError{Line: p.lineAt(off), Msg: msg}
}

// token returns the next token and the offset it starts at, refusing DTDs
// before anything is made of them.
func (p *parser) token() (xml.Token, int64, error) {
	start := p.d.InputOffset()
	tok, err := p.d.Token()
	if err != nil {
		if err == io.EOF {
			return nil, start, err
		}
		var se *xml.SyntaxError
		if errors.As(err, &se) {
			return nil, start, &FormatError{Line: se.Line, Msg: "not well-formed: " + se.Msg}
		}
		return nil, start, p.errAt(start, "not well-formed: "+err.Error())
	}
	switch t := tok.(type) {
	case xml.Directive:
		return nil, start, p.errAt(start, "DTDs and entity declarations are not allowed")
	case xml.ProcInst:
		if t.Target != "xml" {
			return nil, start, p.errAt(start, "processing instruction <?"+t.Target+"?> not allowed")
		}
	}
	return tok, start, nil
}

func (p *parser) parse() (*Template, error) {
	var name string
	seenRoot, rootLine := false, 0
	for {
		tok, off, err := p.token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if seenRoot {
				return nil, p.errAt(off, "content after the ParameterTree element")
			}
			if t.Name.Local != "ParameterTree" || t.Name.Space != "" {
				return nil, p.errAt(off, "root element must be ParameterTree, not "+t.Name.Local)
			}
			seenRoot, rootLine = true, p.lineAt(off)
			for _, a := range t.Attr {
				switch {
				case a.Name.Space != "":
					return nil, p.errAt(off, "unknown attribute "+a.Name.Space+":"+a.Name.Local)
				case a.Name.Local == "name":
					name = a.Value
				case a.Name.Local == "dataModel":
					if a.Value != TR098 && a.Value != TR181 {
						return nil, p.errAt(off, "dataModel must be "+TR098+" or "+TR181+", not "+strconv.Quote(a.Value))
					}
					p.model = a.Value
				default:
					return nil, p.errAt(off, "unknown attribute "+a.Name.Local+" on ParameterTree")
				}
			}
			if err := p.body(); err != nil {
				return nil, err
			}
		case xml.CharData:
			if i := textAt(t); i >= 0 {
				return nil, p.errAt(off+int64(i), "text outside the ParameterTree element")
			}
		}
	}
	if !seenRoot {
		return nil, &FormatError{Line: p.lineAt(int64(len(p.data))), Msg: "no ParameterTree element"}
	}
	if p.root == "" {
		return nil, &FormatError{Line: rootLine, Msg: "no Parameter element"}
	}
	return build(name, p.model, p.root, p.entries)
}

// body reads the children of ParameterTree up to its end tag.
func (p *parser) body() error {
	p.names = map[string]int{}
	for {
		tok, off, err := p.token()
		if err == io.EOF {
			return p.errAt(off, "unexpected end of file in ParameterTree")
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.EndElement:
			return nil
		case xml.CharData:
			if i := textAt(t); i >= 0 {
				return p.errAt(off+int64(i), "text directly inside ParameterTree")
			}
		case xml.StartElement:
			if len(p.entries) >= MaxEntries {
				return p.errAt(off, "more than "+strconv.Itoa(MaxEntries)+" entries")
			}
			line := p.lineAt(off)
			var e rawEntry
			var err error
			switch {
			case t.Name.Space == "" && t.Name.Local == "Parameter":
				e, err = p.parameter(t, line)
			case t.Name.Space == "" && t.Name.Local == "Object":
				e, err = p.object(t, line)
			default:
				err = &FormatError{Line: line, Msg: "unknown element " + t.Name.Local}
			}
			if err != nil {
				return err
			}
			if first, dup := p.names[e.name]; dup {
				return &FormatError{Line: line, Msg: "duplicate name " + e.name + " (first at line " + strconv.Itoa(first) + ")"}
			}
			p.names[e.name] = line
			p.entries = append(p.entries, e)
		}
	}
}

// checkEntryName validates a name and ties it to the file's root.
func (p *parser) checkEntryName(name string, line int, object bool) error {
	if msg := checkName(name); msg != "" {
		return &FormatError{Line: line, Msg: "invalid name " + strconv.Quote(name) + ": " + msg}
	}
	if object != strings.HasSuffix(name, ".") {
		if object {
			return &FormatError{Line: line, Msg: "object name " + name + " must end with \".\""}
		}
		return &FormatError{Line: line, Msg: "parameter name " + name + " must not end with \".\""}
	}
	root := name[:strings.IndexByte(name, '.')+1]
	model := ""
	switch root {
	case RootTR098:
		model = TR098
	case RootTR181:
		model = TR181
	default:
		return &FormatError{Line: line, Msg: "name " + name + " is not under " + RootTR098 + " or " + RootTR181}
	}
	if p.root == "" {
		if p.model != "" && p.model != model {
			return &FormatError{Line: line, Msg: "name " + name + " is not under the root of dataModel " + p.model}
		}
		p.root, p.model = root, model
	}
	if root != p.root {
		return &FormatError{Line: line, Msg: "name " + name + " is not under " + p.root + " like the names before it"}
	}
	return nil
}

func (p *parser) parameter(se xml.StartElement, line int) (rawEntry, error) {
	e := rawEntry{line: line}
	var hasName bool
	for _, a := range se.Attr {
		if a.Name.Space != "" {
			return e, &FormatError{Line: line, Msg: "unknown attribute " + a.Name.Space + ":" + a.Name.Local}
		}
		switch a.Name.Local {
		case "name":
			e.name, hasName = a.Value, true
		case "type":
			t, err := ParseType(a.Value)
			if err != nil {
				return e, &FormatError{Line: line, Msg: err.Error()}
			}
			e.typ = t
		case "writable":
			if err := boolAttr(&e.flags, flagWritable, a.Value); err != nil {
				return e, &FormatError{Line: line, Msg: "writable: " + err.Error()}
			}
		case "inform":
			if err := boolAttr(&e.flags, flagInform, a.Value); err != nil {
				return e, &FormatError{Line: line, Msg: "inform: " + err.Error()}
			}
		case "notification":
			switch a.Value {
			case "0", "1", "2":
				e.notif = a.Value[0] - '0'
			default:
				return e, &FormatError{Line: line, Msg: "notification must be 0, 1 or 2, not " + strconv.Quote(a.Value)}
			}
		default:
			return e, &FormatError{Line: line, Msg: "unknown attribute " + a.Name.Local + " on Parameter"}
		}
	}
	if !hasName {
		return e, &FormatError{Line: line, Msg: "Parameter without name"}
	}
	if err := p.checkEntryName(e.name, line, false); err != nil {
		return e, err
	}
	if e.flags&flagInform != 0 && strings.Contains(e.name, instanceSeg) {
		return e, &FormatError{Line: line, Msg: "inform on template " + e.name + ": only concrete parameters are sent in Informs"}
	}
	var value []byte
	for {
		tok, off, err := p.token()
		if err == io.EOF {
			return e, p.errAt(off, "unexpected end of file in Parameter")
		}
		if err != nil {
			return e, err
		}
		switch t := tok.(type) {
		case xml.CharData:
			value = append(value, t...)
		case xml.StartElement:
			return e, p.errAt(off, "element "+t.Name.Local+" inside Parameter "+e.name)
		case xml.EndElement:
			e.value = string(value)
			if err := e.typ.Check(e.value); err != nil {
				return e, &FormatError{Line: line, Msg: "value of " + e.name + ": " + err.Error()}
			}
			return e, nil
		}
	}
}

func (p *parser) object(se xml.StartElement, line int) (rawEntry, error) {
	e := rawEntry{line: line, declared: true, entry: entry{flags: flagObject}}
	var hasName bool
	for _, a := range se.Attr {
		if a.Name.Space != "" {
			return e, &FormatError{Line: line, Msg: "unknown attribute " + a.Name.Space + ":" + a.Name.Local}
		}
		switch a.Name.Local {
		case "name":
			e.name, hasName = a.Value, true
		case "writable":
			if err := boolAttr(&e.flags, flagWritable, a.Value); err != nil {
				return e, &FormatError{Line: line, Msg: "writable: " + err.Error()}
			}
		default:
			return e, &FormatError{Line: line, Msg: "unknown attribute " + a.Name.Local + " on Object"}
		}
	}
	if !hasName {
		return e, &FormatError{Line: line, Msg: "Object without name"}
	}
	if err := p.checkEntryName(e.name, line, true); err != nil {
		return e, err
	}
	for {
		tok, off, err := p.token()
		if err == io.EOF {
			return e, p.errAt(off, "unexpected end of file in Object")
		}
		if err != nil {
			return e, err
		}
		switch t := tok.(type) {
		case xml.CharData:
			if i := textAt(t); i >= 0 {
				return e, p.errAt(off+int64(i), "text inside Object "+e.name)
			}
		case xml.StartElement:
			return e, p.errAt(off, "element "+t.Name.Local+" inside Object "+e.name)
		case xml.EndElement:
			return e, nil
		}
	}
}

func boolAttr(flags *uint8, f uint8, v string) error {
	b, err := cwmp.ParseBool(v)
	if err != nil || strings.TrimSpace(v) != v {
		return errors.New("must be true, false, 1 or 0, not " + strconv.Quote(v))
	}
	if b {
		*flags |= f
	}
	return nil
}

// textAt returns the index of the first character of b that is not XML
// white space, or -1; errors point at the text rather than the blank lines
// before it.
func textAt(b []byte) int {
	for i, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return i
		}
	}
	return -1
}
