package cwmp

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
)

func TestEncodeErrors(t *testing.T) {
	tests := map[string]*Envelope{
		"nil envelope":    nil,
		"nil body":        {Version: CWMP12},
		"typed nil body":  {Version: CWMP12, Body: (*Inform)(nil)},
		"invalid version": {Version: 7, Body: &Reboot{}},
	}
	for name, env := range tests {
		t.Run(name, func(t *testing.T) {
			if out, err := Encode(env); err == nil {
				t.Fatalf("Encode succeeded:\n%s", out)
			}
			dst := []byte("prefix")
			out, err := AppendEncode(dst, env)
			if err == nil || string(out) != "prefix" {
				t.Fatalf("AppendEncode = %q, %v; want the input back and an error", out, err)
			}
		})
	}
}

func TestAppendEncodeAppends(t *testing.T) {
	env := NewEnvelope(CWMP12, "7", &Reboot{CommandKey: "k"})
	whole, err := Encode(env)
	if err != nil {
		t.Fatal(err)
	}
	out, err := AppendEncode([]byte("HTTP body: "), env)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != "HTTP body: "+string(whole) {
		t.Fatalf("AppendEncode did not append:\n%s", out)
	}
}

// TestEncodedStringsRoundTrip: every string that XML can carry comes back
// exactly, including characters parsers normalise (CR, tabs and newlines in
// attributes) and the sequences that end CDATA or look like markup.
func TestEncodedStringsRoundTrip(t *testing.T) {
	texts := []string{
		"", " ", "  lead and trail  ", "a\r\nb\rc\n", "tab\there", "]]>", "<![CDATA[x]]>", "&amp;", "&#65;",
		`"quotes" and 'apostrophes'`, "<tag attr=\"v\">", "Grüße ✓ \U0001F600", "\uFFFD", "\u00a0nbsp",
	}
	for _, s := range texts {
		env := NewEnvelope(CWMP12, s, &SetParameterValues{
			ParameterList: []ParameterValueStruct{{Name: s, Value: Value{Type: s, Text: s}}},
			ParameterKey:  s,
		})
		out, err := Encode(env)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Decode(out)
		if err != nil {
			t.Fatalf("%q: %v\n%s", s, err, out)
		}
		spv := back.Body.(*SetParameterValues)
		p := spv.ParameterList[0]
		if back.ID != s || spv.ParameterKey != s || p.Name != s || p.Value.Text != s || p.Value.Type != s {
			t.Errorf("%q came back as ID %q, key %q, name %q, value %#v", s, back.ID, spv.ParameterKey, p.Name, p.Value)
		}
		// encoding/xml is a second opinion that the output is well-formed.
		dec := xml.NewDecoder(bytes.NewReader(out))
		for {
			if _, err := dec.Token(); err != nil {
				if err.Error() != "EOF" {
					t.Errorf("%q: encoding/xml rejects the output: %v", s, err)
				}
				break
			}
		}
	}
}

// TestEncodeReplacesWhatXMLCannotCarry: invalid UTF-8 and control
// characters become U+FFFD rather than producing a document no peer can read.
func TestEncodeReplacesWhatXMLCannotCarry(t *testing.T) {
	tests := map[string]string{
		"a\x00b":         "a\uFFFDb",
		"\x01\x1f":       "\uFFFD\uFFFD",
		"bad \xff utf8":  "bad \uFFFD utf8",
		"cut \xe2\x82":   "cut \uFFFD\uFFFD",
		"\uFFFE\uFFFF":   "\uFFFD\uFFFD",
		"fine \t\n text": "fine \t\n text",
	}
	for in, want := range tests {
		out, err := Encode(NewEnvelope(CWMP10, "1", &Reboot{CommandKey: in}))
		if err != nil {
			t.Fatal(err)
		}
		env, err := Decode(out)
		if err != nil {
			t.Fatalf("%q: %v\n%s", in, err, out)
		}
		if got := env.Body.(*Reboot).CommandKey; got != want {
			t.Errorf("%q came back as %q, want %q", in, got, want)
		}
	}
}

func TestEncodeHeaderRules(t *testing.T) {
	tests := []struct {
		name    string
		env     *Envelope
		want    []string
		notWant []string
	}{
		{"ID must understand", NewEnvelope(CWMP10, "5", &Reboot{}),
			[]string{`<cwmp:ID SOAP-ENV:mustUnderstand="1">5</cwmp:ID>`}, nil},
		{"ID without mustUnderstand", &Envelope{ID: "5", Body: &Reboot{}},
			[]string{`<cwmp:ID>5</cwmp:ID>`}, []string{"mustUnderstand"}},
		{"no header at all", &Envelope{Body: &Reboot{}}, nil, []string{"Header"}},
		{"HoldRequests false is written", &Envelope{HoldRequests: ptr(false), Body: &InformResponse{}},
			[]string{`<cwmp:HoldRequests SOAP-ENV:mustUnderstand="1">0</cwmp:HoldRequests>`}, []string{"cwmp:ID"}},
		{"version negotiation", &Envelope{ID: "1", IDMustUnderstand: true, UseCWMPVersion: "1.4", Body: &InformResponse{MaxEnvelopes: 1}},
			[]string{`<cwmp:UseCWMPVersion SOAP-ENV:mustUnderstand="1">1.4</cwmp:UseCWMPVersion>`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Encode(tt.env)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("output lacks %s:\n%s", w, out)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(string(out), w) {
					t.Errorf("output has %s:\n%s", w, out)
				}
			}
		})
	}
}

func TestReply(t *testing.T) {
	in := &Envelope{Version: CWMP13, ID: "cpe-9", HoldRequests: ptr(true), Body: &Inform{}}
	r := in.Reply(&InformResponse{MaxEnvelopes: 1})
	if r.Version != CWMP13 || r.ID != "cpe-9" || !r.IDMustUnderstand || r.HoldRequests != nil {
		t.Fatalf("Reply = %+v", r)
	}
}

func TestFaultEncodingDefaults(t *testing.T) {
	out, err := Encode(NewEnvelope(CWMP10, "1", &Fault{FaultCode: FaultInvalidParameterName, FaultString: "no such name"}))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"<faultcode>Client</faultcode>", "<faultstring>CWMP fault</faultstring>", "<cwmp:Fault>", "<FaultCode>9005</FaultCode>"} {
		if !strings.Contains(string(out), w) {
			t.Errorf("output lacks %s:\n%s", w, out)
		}
	}
}
