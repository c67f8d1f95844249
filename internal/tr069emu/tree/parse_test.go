package tree

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// doc wraps body lines in a tree file whose first body line is line 3.
func doc(body ...string) string {
	return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ParameterTree name=\"t\">\n" +
		strings.Join(body, "\n") + "\n</ParameterTree>\n"
}

func TestParseErrors(t *testing.T) {
	ok := `<Parameter name="Device.A.B">x</Parameter>`
	cases := []struct {
		name string
		in   string
		line int
		msg  string
	}{
		{"doctype", "<?xml version=\"1.0\"?>\n<!DOCTYPE ParameterTree [<!ENTITY x \"y\">]>\n<ParameterTree/>", 2, "DTD"},
		{"entity declaration", doc(ok, `<!ENTITY x "boom">`), 4, "DTD"},
		{"undefined entity", doc(`<Parameter name="Device.A.B">&x;</Parameter>`), 3, "not well-formed"},
		{"not well-formed", doc(ok, `<Parameter name="Device.A.C">x</Param>`), 4, "not well-formed"},
		{"unclosed root", "<ParameterTree>\n" + ok + "\n", 3, "not well-formed"},
		{"empty", "", 1, "no ParameterTree"},
		{"no parameters", doc(), 2, "no Parameter"},
		{"wrong root element", "<Tree/>", 1, "root element"},
		{"two roots", doc(ok) + "<ParameterTree/>", 5, "after the ParameterTree"},
		{"text outside", doc(ok) + "junk", 5, "text outside"},
		{"text inside", doc(ok, "junk"), 4, "text directly inside"},
		{"processing instruction", doc(ok, `<?php echo 1 ?>`), 4, "processing instruction"},
		{"unknown element", doc(ok, `<Param name="Device.A.C"/>`), 4, "unknown element"},
		{"namespaced element", doc(`<x:Parameter xmlns:x="urn:x" name="Device.A.C"/>`), 3, "unknown element"},
		{"unknown attribute", doc(`<Parameter name="Device.A.B" color="red">x</Parameter>`), 3, "unknown attribute color"},
		{"unknown root attribute", `<ParameterTree version="1">` + ok + `</ParameterTree>`, 1, "unknown attribute version"},
		{"unknown object attribute", doc(`<Object name="Device.A." type="int"/>`), 3, "unknown attribute type"},
		{"namespaced attribute", doc(`<Parameter xmlns:x="urn:x" x:name="Device.A.B"/>`), 3, "unknown attribute"},
		{"namespaced object attribute", doc(`<Object xmlns:x="urn:x" x:name="Device.A."/>`), 3, "unknown attribute"},
		{"bad object writable", doc(`<Object name="Device.A." writable="maybe"/>`), 3, "writable"},
		{"unexpected end in object", "<ParameterTree>\n<Object name=\"Device.A.\">", 2, "not well-formed"},
		{"bad type", doc(ok, ok[:0]+`<Parameter name="Device.A.C" type="float">1</Parameter>`), 4, "unknown parameter type"},
		{"bad int", doc(ok, `<Parameter name="Device.A.C" type="int">x</Parameter>`), 4, "not a valid int"},
		{"bad unsignedInt", doc(`<Parameter name="Device.A.C" type="unsignedInt">-1</Parameter>`), 3, "not a valid unsignedInt"},
		{"bad boolean", doc(`<Parameter name="Device.A.C" type="boolean">yes</Parameter>`), 3, "not a valid boolean"},
		{"bad dateTime", doc(`<Parameter name="Device.A.C" type="dateTime"/>`), 3, "not a valid dateTime"},
		{"bad template value", doc(`<Parameter name="Device.A.{i}.C" type="int">x</Parameter>`), 3, "not a valid int"},
		{"bad writable", doc(`<Parameter name="Device.A.C" writable="yes"/>`), 3, "writable"},
		{"bad inform", doc(`<Parameter name="Device.A.C" inform=" true"/>`), 3, "inform"},
		{"bad notification", doc(ok, `<Parameter name="Device.A.C" notification="3"/>`), 4, "notification must be"},
		{"empty notification", doc(`<Parameter name="Device.A.C" notification=""/>`), 3, "notification must be"},
		{"duplicate", doc(ok, ok), 4, "duplicate name Device.A.B (first at line 3)"},
		{"duplicate object", doc(ok, `<Object name="Device.A."/>`, `<Object name="Device.A."/>`), 5, "duplicate name"},
		{"mixed roots", doc(ok, `<Parameter name="InternetGatewayDevice.A.B"/>`), 4, "not under Device."},
		{"other root", doc(`<Parameter name="Foo.A.B"/>`), 3, "not under"},
		{"dataModel mismatch", "<ParameterTree dataModel=\"TR-098\">\n" + ok + "\n</ParameterTree>", 2, "dataModel TR-098"},
		{"unknown dataModel", `<ParameterTree dataModel="TR-104">` + ok + `</ParameterTree>`, 1, "dataModel must be"},
		{"no name", doc(`<Parameter type="int">1</Parameter>`), 3, "without name"},
		{"object no name", doc(`<Object/>`), 3, "without name"},
		{"empty segment", doc(`<Parameter name="Device..B"/>`), 3, "empty segment"},
		{"trailing empty segment", doc(`<Object name="Device.A.."/>`), 3, "empty segment"},
		{"bad character", doc(`<Parameter name="Device.A B"/>`), 3, "invalid character"},
		{"bad brace", doc(`<Parameter name="Device.A.{j}.B"/>`), 3, "invalid character"},
		{"root only parameter", doc(`<Parameter name="Device"/>`), 3, "needs an object"},
		{"parameter ending with dot", doc(`<Parameter name="Device.A."/>`), 3, "must not end"},
		{"object without dot", doc(`<Object name="Device.A"/>`), 3, "must end"},
		{"leading zero", doc(`<Parameter name="Device.A.01.B"/>`), 3, "leading zero"},
		{"instance zero", doc(`<Parameter name="Device.A.0.B"/>`), 3, "leading zero"},
		{"instance too big", doc(`<Parameter name="Device.A.4294967296.B"/>`), 3, "out of range"},
		{"instance first", doc(`<Parameter name="Device.1.B"/>`), 3, "must follow an object name"},
		{"two instances", doc(`<Parameter name="Device.A.1.2.B"/>`), 3, "must follow an object name"},
		{"number after {i}", doc(`<Parameter name="Device.A.{i}.B.1.C"/>`), 3, "after {i}"},
		{"parameter ends with instance", doc(`<Parameter name="Device.A.1"/>`), 3, "ends with an instance"},
		{"parameter ends with {i}", doc(`<Parameter name="Device.A.{i}"/>`), 3, "ends with an instance"},
		{"too long", doc(`<Parameter name="Device.` + strings.Repeat("a", 300) + `"/>`), 3, "longer than 256"},
		{"inform on template", doc(`<Parameter name="Device.A.{i}.B" inform="true"/>`), 3, "inform on template"},
		{"element in parameter", doc(`<Parameter name="Device.A.B"><b/></Parameter>`), 3, "inside Parameter"},
		{"text in object", doc(`<Object name="Device.A.">x</Object>`), 3, "text inside Object"},
		{"element in object", doc(`<Object name="Device.A."><Object name="Device.B."/></Object>`), 3, "inside Object"},
		{"parameter and object", doc(`<Parameter name="Device.A.B"/>`, `<Parameter name="Device.A.B.C"/>`), 3, "both a parameter and an object"},
		{"parameter and template object", doc(`<Object name="Device.A.{i}.B."/>`, `<Parameter name="Device.A.1.B"/>`), 4, "its template"},
		{"encoding", `<?xml version="1.0" encoding="ISO-8859-1"?><ParameterTree/>`, 1, "not well-formed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(c.in), 0)
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("Parse = %v (%T), want *FormatError", err, err)
			}
			if fe.Line != c.line || !strings.Contains(fe.Msg, c.msg) {
				t.Fatalf("Parse = line %d %q, want line %d containing %q", fe.Line, fe.Msg, c.line, c.msg)
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	in := doc(`<Parameter name="Device.A.B">x</Parameter>`)
	if _, err := Parse(strings.NewReader(in), int64(len(in))); err != nil {
		t.Fatalf("exactly maxBytes: %v", err)
	}
	_, err := Parse(strings.NewReader(in), int64(len(in)-1))
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Msg != fmt.Sprintf("larger than %d bytes", len(in)-1) {
		t.Fatalf("one byte over: %v", err)
	}
	// Above MaxFileBytes the limit is MaxFileBytes, whatever the caller says.
	big := io.MultiReader(strings.NewReader(in[:len(in)-len("</ParameterTree>\n")]),
		strings.NewReader(strings.Repeat(" ", MaxFileBytes)), strings.NewReader("</ParameterTree>"))
	_, err = Parse(big, 1<<40)
	if !errors.As(err, &fe) || fe.Msg != fmt.Sprintf("larger than %d bytes", MaxFileBytes) {
		t.Fatalf("over MaxFileBytes: %v", err)
	}
	_, err = Parse(iotest.ErrReader(errors.New("disk on fire")), 0)
	if !errors.As(err, &fe) || !strings.Contains(fe.Msg, "disk on fire") {
		t.Fatalf("read error: %v", err)
	}
}

func TestParseEntryLimit(t *testing.T) {
	var b strings.Builder
	b.WriteString("<ParameterTree>\n")
	for i := 0; i <= MaxEntries; i++ {
		fmt.Fprintf(&b, "<Parameter name=\"Device.P%d\"/>\n", i)
	}
	b.WriteString("</ParameterTree>\n")
	_, err := Parse(strings.NewReader(b.String()), 0)
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Line != MaxEntries+2 || !strings.Contains(fe.Msg, "more than") {
		t.Fatalf("Parse = %v", err)
	}
}

func TestParseSmall(t *testing.T) {
	tp := small(t)
	if tp.Name() != "small" || tp.DataModel() != TR181 || tp.Root() != RootTR181 {
		t.Fatalf("Name %q DataModel %q Root %q", tp.Name(), tp.DataModel(), tp.Root())
	}
	if tp.Len() != 14 {
		t.Fatalf("Len = %d, want 14", tp.Len())
	}
	wantNames(t, "Tables", tp.Tables(), []string{"Device.Hosts.Host.{i}.", "Device.Hosts.Host.{i}.IPv4Address.{i}."})
	cases := []struct {
		name string
		want Param
	}{
		{"Device.ManagementServer.PeriodicInformInterval", Param{Name: "Device.ManagementServer.PeriodicInformInterval", Value: "300", Type: UnsignedInt, Writable: true}},
		{"Device.DeviceInfo.SoftwareVersion", Param{Name: "Device.DeviceInfo.SoftwareVersion", Value: "1.0", Notification: 2}},
		{"Device.Hosts.Host.{i}.IPAddress", Param{Name: "Device.Hosts.Host.{i}.IPAddress", Value: "0.0.0.0", Writable: true, Notification: 1}},
		{"Device.", Param{Name: "Device.", Object: true}},
		// Tables and instances take their writability from the {i} object.
		{"Device.Hosts.Host.", Param{Name: "Device.Hosts.Host.", Object: true, Writable: true}},
		{"Device.Hosts.Host.2.", Param{Name: "Device.Hosts.Host.2.", Object: true, Writable: true}},
		{"Device.Hosts.Host.{i}.", Param{Name: "Device.Hosts.Host.{i}.", Object: true, Writable: true}},
		{"Device.Hosts.", Param{Name: "Device.Hosts.", Object: true}},
		// An empty nested table exists in every instance of its parent.
		{"Device.Hosts.Host.1.IPv4Address.", Param{Name: "Device.Hosts.Host.1.IPv4Address.", Object: true}},
		{"Device.Hosts.Host.{i}.IPv4Address.", Param{Name: "Device.Hosts.Host.{i}.IPv4Address.", Object: true}},
	}
	for _, c := range cases {
		got, ok := tp.Lookup(c.name)
		if !ok || got != c.want {
			t.Errorf("Lookup(%q) = %+v, %v; want %+v", c.name, got, ok, c.want)
		}
	}
	if _, ok := tp.Lookup("Device.Hosts.Host.1.Stats."); ok {
		t.Errorf("Host.1.Stats. exists, but only tables are implied in template instances")
	}
}

func TestParseAccepts(t *testing.T) {
	tp := mustParse(t, "\ufeff"+`<?xml version="1.0"?>
<!-- leading comment -->
<ParameterTree>
  <Parameter name="InternetGatewayDevice.A.B" type="XSD:Boolean" writable="TRUE" notification="1" inform="0">true</Parameter>
  <Parameter name="InternetGatewayDevice.A.C"><!-- c -->a &amp; b&#x21;<![CDATA[ <x> ]]></Parameter>
  <Object name="InternetGatewayDevice.A.D-x_1.{i}."> <!-- nothing --> </Object>
  <Parameter name="InternetGatewayDevice.LANDevice.1.Hosts.Host.{i}.IPAddress" writable="true"/>
</ParameterTree>
<!-- trailing comment -->
`)
	if tp.DataModel() != TR098 || tp.Root() != RootTR098 || tp.Name() != "" {
		t.Fatalf("DataModel %q Root %q Name %q", tp.DataModel(), tp.Root(), tp.Name())
	}
	d := New(tp)
	p := mustGet(t, d, "InternetGatewayDevice.A.B")
	if p.Type != Boolean || !p.Writable || p.Notification != 1 || p.Value != "true" {
		t.Fatalf("A.B = %+v", p)
	}
	wantValue(t, d, "InternetGatewayDevice.A.C", "a & b! <x> ")
	if len(d.InformParams()) != 0 {
		t.Fatalf("InformParams = %v", d.InformParams())
	}
	// A template under a concrete instance makes the table exist there.
	if p := mustGet(t, d, "InternetGatewayDevice.LANDevice.1.Hosts.Host."); !p.Object || p.Writable {
		t.Fatalf("Host. = %+v", p)
	}
	n, err := d.AddObject("InternetGatewayDevice.LANDevice.1.Hosts.Host.")
	if err != nil || n != 1 {
		t.Fatalf("AddObject = %d, %v", n, err)
	}
	wantValue(t, d, "InternetGatewayDevice.LANDevice.1.Hosts.Host.1.IPAddress", "")
	if _, err := d.AddObject("InternetGatewayDevice.A.D-x_1."); err != nil {
		t.Fatalf("AddObject on an object-only template: %v", err)
	}
	if p := mustGet(t, d, "InternetGatewayDevice.A.D-x_1.1."); !p.Object {
		t.Fatalf("new instance = %+v", p)
	}
}

// TestParseLines checks line numbers far into a file, where counting
// resumes from the previous offset.
func TestParseLines(t *testing.T) {
	var body []string
	for i := 0; i < 500; i++ {
		body = append(body, fmt.Sprintf(`<Parameter name="Device.A.P%d" type="int">%d</Parameter>`, i, i))
	}
	body = append(body, "", "<!-- a\nmulti-line\ncomment -->", `<Parameter name="Device.A.Bad"`, `  type="int">x</Parameter>`)
	_, err := Parse(strings.NewReader(doc(body...)), 0)
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Line != 3+500+4 {
		t.Fatalf("Parse = %v, want line %d", err, 3+500+4)
	}
}
