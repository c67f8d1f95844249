package fccxml

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

// minimal wraps a test body in a valid document.
func minimal(test string) string {
	return "<fccExport><formatVersion>1</formatVersion><test><type>SPEED</type>" + test + "</test></fccExport>"
}

func TestReadCampaign(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want Campaign
	}{
		{
			name: "formatVersion inside test, hand-indented values",
			doc: `<?xml version="1.0"?>
<!-- exported by hand -->
<fccExport>
  <test>
    <formatVersion> 1 </formatVersion>
    <type>
      LATENCY
    </type>
    <domain> 7 </domain>
    <configs>
      <config>
        <sourceType> CONDITION </sourceType>
        <conditionId>
          42
        </conditionId>
        <latencySettings><host>a</host><count>5</count></latencySettings>
      </config>
    </configs>
  </test>
</fccExport>`,
			want: Campaign{FormatVersion: "1", Type: "LATENCY", Domain: ptr(int64(7)),
				Configs: []Config{{SourceType: "CONDITION", ConditionID: ptr(int64(42)), SettingsType: "LATENCY",
					Settings: []Setting{{"host", "a"}, {"count", "5"}}}}},
		},
		{
			name: "fleet pages concatenated in document order, blanks skipped, duplicates kept",
			doc: minimal(`<configs><config>
				<fleet page="2"><serial>B</serial><serial> </serial></fleet>
				<fleet><serial> A </serial><serial>B</serial></fleet>
				<fleet page="x"/>
			</config></configs>`),
			want: Campaign{FormatVersion: "1", Type: "SPEED", Configs: []Config{{Serials: []string{"B", "A", "B"}}}},
		},
		{
			name: "BOM, CDATA, entities, character references and namespaces",
			doc: "\ufeff" + `<x:fccExport xmlns:x="urn:x"><x:formatVersion>1</x:formatVersion><x:test><x:type>SPEED</x:type>` +
				`<x:name><![CDATA[a<b]]> &amp; &#x263A; &lt;&gt;&quot;&apos;</x:name></x:test></x:fccExport>`,
			want: Campaign{FormatVersion: "1", Type: "SPEED", Name: "a<b & \u263a <>\"'"},
		},
		{
			name: "empty settings block keeps its type",
			doc:  minimal(`<configs><config><speedSettings/></config></configs>`),
			want: Campaign{FormatVersion: "1", Type: "SPEED", Configs: []Config{{SettingsType: "SPEED"}}},
		},
		{
			name: "settings block need not match the type (the service validates)",
			doc:  minimal(`<configs><config><latencySettings><a>1</a></latencySettings></config></configs>`),
			want: Campaign{FormatVersion: "1", Type: "SPEED", Configs: []Config{{SettingsType: "LATENCY", Settings: []Setting{{"a", "1"}}}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadCampaign(strings.NewReader(tt.doc))
			if err != nil {
				t.Fatalf("ReadCampaign: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestReadCampaignRefuses(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want string // part of the message
	}{
		{"second test element", "<fccExport>\n<formatVersion>1</formatVersion>\n<test><type>SPEED</type></test>\n<test><type>SPEED</type></test>\n</fccExport>",
			"the document must hold exactly one campaign: found a second test element (the first is at line 3) at line 4"},
		{"second test after the root", minimal("") + "\n<fccExport><test/></fccExport>", "found a second test element"},
		{"second test as a second root", minimal("") + "<test/>", "found a second test element"},
		{"content after the root", minimal("") + "<other/>", "content after the root element (other)"},
		{"text after the root", minimal("") + "junk", "content after the root element (text)"},
		{"missing test", "<fccExport><formatVersion>1</formatVersion></fccExport>", "no <test> element"},
		{"missing formatVersion", "<fccExport><test><type>SPEED</type></test></fccExport>", "no <formatVersion>"},
		{"formatVersion 2", "<fccExport><formatVersion>2</formatVersion><test><type>SPEED</type></test></fccExport>", `unsupported formatVersion "2"; supported version is 1`},
		{"two formatVersions", "<fccExport><formatVersion>1</formatVersion><test><formatVersion>1</formatVersion><type>SPEED</type></test></fccExport>", "duplicate <formatVersion>"},
		{"wrong root", "<test><type>SPEED</type></test>", "root element must be <fccExport>, found <test>"},
		{"empty input", "", "no elements"},
		{"only a comment", "<!-- x -->", "no elements"},
		{"text before root", "hello <fccExport/>", "text before the root element"},
		{"missing type", "<fccExport><formatVersion>1</formatVersion><test><name>x</name></test></fccExport>", "<test> holds no <type>"},
		{"duplicate type", minimal("<type>LATENCY</type>"), "duplicate <type> in <test>"},
		{"lower-case type", "<fccExport><formatVersion>1</formatVersion><test><type>speed</type></test></fccExport>", `<type> must be SPEED or LATENCY, found "speed"`},
		{"unknown element in test", minimal("<schedule>x</schedule>"), "unknown element <schedule> in <test>"},
		{"unknown element in root", "<fccExport><formatVersion>1</formatVersion><state/></fccExport>", "unknown element <state> in <fccExport>"},
		{"unknown element in configs", minimal("<configs><cfg/></configs>"), "unknown element <cfg> in <configs>"},
		{"unknown element in config", minimal("<configs><config><runs/></config></configs>"), "unknown element <runs> in <config>"},
		{"unknown element in fleet", minimal("<configs><config><fleet><device/></fleet></config></configs>"), "unknown element <device> in <fleet>"},
		{"text in block", minimal("<configs>text</configs>"), "unexpected text in <configs>"},
		{"element in text field", minimal("<name><b>x</b></name>"), "<name> holds text only, found element <b>"},
		{"setting with child elements", minimal("<configs><config><speedSettings><downloadUrl><a/></downloadUrl></speedSettings></config></configs>"), "<downloadUrl> holds text only, found element <a>"},
		{"two settings blocks", minimal("<configs><config><speedSettings/><latencySettings/></config></configs>"), "at most one settings block"},
		{"duplicate setting", minimal("<configs><config><speedSettings><a>1</a><a>2</a></speedSettings></config></configs>"), "duplicate setting <a>"},
		{"duplicate field", minimal("<name>a</name><name>b</name>"), "duplicate <name> in <test>"},
		{"duplicate config field", minimal("<configs><config><model>a</model><model>b</model></config></configs>"), "duplicate <model> in <config>"},
		{"domain not a number", minimal("\n<domain>12abc</domain>"), `<domain> must be a non-negative integer, found "12abc" at line 2`},
		{"domain empty", minimal("<domain/>"), `<domain> must be a non-negative integer, found ""`},
		{"domain negative", minimal("<domain>-1</domain>"), `<domain> must be a non-negative integer, found "-1"`},
		{"domain with plus", minimal("<domain>+1</domain>"), `found "+1"`},
		{"domain float", minimal("<domain>1.0</domain>"), `found "1.0"`},
		{"domain hex", minimal("<domain>0x10</domain>"), `found "0x10"`},
		{"domain overflow", minimal("<domain>9223372036854775808</domain>"), "<domain> value \"9223372036854775808\" is out of range"},
		{"reactivationDays overflow", minimal("<reactivationDays>2147483648</reactivationDays>"), "<reactivationDays> value"},
		{"reactivationDays word", minimal("<reactivationDays>one</reactivationDays>"), "<reactivationDays> must be a non-negative integer"},
		{"conditionId bad", minimal("<configs><config><conditionId>4 2</conditionId></config></configs>"), `<conditionId> must be a non-negative integer, found "4 2"`},
		{"DTD", `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e "boom">]>` + minimal("<name>&e;</name>"), "document type declaration (DTD) is not allowed"},
		{"other directive", `<!ELEMENT x ANY>` + minimal(""), "markup declarations"},
		{"billion laughs", `<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<fccExport><test><name>&lol3;</name></test></fccExport>`, "DTD"},
		{"billion laughs without the DTD", minimal("<name>&lol9;</name>"), "invalid character entity &lol9;"},
		{"external entity", minimal("<name>&xxe;</name>"), "invalid character entity &xxe;"},
		{"unknown entity in a setting", minimal("<configs><config><speedSettings><a>&nbsp;</a></speedSettings></config></configs>"), "invalid character entity &nbsp;"},
		{"unclosed", "<fccExport><test>", "unexpected EOF"},
		{"mismatched end", "<fccExport></test>", "element <fccExport> closed by </test>"},
		{"other encoding", `<?xml version="1.0" encoding="ISO-8859-1"?><fccExport/>`, `encoding "ISO-8859-1" declared`},
		{"invalid UTF-8", minimal("<name>\xff</name>"), "invalid UTF-8"},
		{"forbidden character", minimal("<name>\x01</name>"), "illegal character code U+0001"},
		{"long text", minimal("<name>" + strings.Repeat("x", maxText+1) + "</name>"), "text of <name> is longer than 65536 bytes"},
		{"depth bomb", strings.Repeat("<a>", 100000) + strings.Repeat("</a>", 100000), "root element must be <fccExport>"},
		{"depth bomb inside", minimal("<configs><config><speedSettings>" + strings.Repeat("<a>", 100) + strings.Repeat("</a>", 100) + "</speedSettings></config></configs>"),
			"<a> holds text only"},
		{"too many configs", minimal("<configs>" + strings.Repeat("<config/>", maxConfigs+1) + "</configs>"), "more than 100 configs"},
		{"too many settings", minimal("<configs><config><speedSettings>" + manySettings(maxSettings+1) + "</speedSettings></config></configs>"), "more than 256 settings"},
		{"setting with a non-ASCII name", minimal("<configs><config><speedSettings><ü>1</ü></speedSettings></config></configs>"), "is not a plain name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadCampaign(strings.NewReader(tt.doc))
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error = %v, want one wrapping ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

func manySettings(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString("<s")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString(string(rune('a' + i/26%26)))
		b.WriteString(">v</s")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString(string(rune('a' + i/26%26)))
		b.WriteString(">")
	}
	return b.String()
}

// TestDepthLimit checks the depth bound itself, on a document whose
// elements would all be allowed were it not for the depth.
func TestDepthLimit(t *testing.T) {
	deep := func(n int) string {
		return strings.Repeat("<a>", n) + "<serial>S</serial>" + strings.Repeat("</a>", n)
	}
	if got, err := Serials(strings.NewReader(deep(maxDepth-1)), 0); err != nil || len(got) != 1 {
		t.Fatalf("depth %d: %v %v", maxDepth, got, err)
	}
	_, err := Serials(strings.NewReader(deep(maxDepth)), 0)
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "elements nest deeper than 64 levels") {
		t.Fatalf("depth %d: error = %v", maxDepth+1, err)
	}
	_, err = Serials(strings.NewReader(deep(1_000_000)), 0)
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("depth bomb: error = %v", err)
	}
}

// errReader returns data, then a read error.
type errReader struct {
	data string
	err  error
}

func (r *errReader) Read(p []byte) (int, error) {
	if r.data == "" {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

// TestReadErrorsAreNotInvalid checks that a failure of the reader (such as
// http.MaxBytesError) is passed on instead of blamed on the document.
func TestReadErrorsAreNotInvalid(t *testing.T) {
	tooBig := errors.New("http: request body too large")
	tests := []struct {
		name string
		read func(io.Reader) error
	}{
		{"ReadCampaign", func(r io.Reader) error { _, err := ReadCampaign(r); return err }},
		{"Serials", func(r io.Reader) error { _, err := Serials(r, 0); return err }},
		{"SerialList", func(r io.Reader) error { _, err := SerialList(r, 0); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.read(&errReader{data: "<fccExport><test><name>abc", err: tooBig})
			if !errors.Is(err, tooBig) || errors.Is(err, ErrInvalid) {
				t.Fatalf("error = %v, want the reader's error and not ErrInvalid", err)
			}
		})
	}
}
