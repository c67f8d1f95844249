package cwmp

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

const envOpen = `<SOAP-ENV:Envelope xmlns:SOAP-ENV="http://schemas.xmlsoap.org/soap/envelope/" xmlns:SOAP-ENC="http://schemas.xmlsoap.org/soap/encoding/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:cwmp="urn:dslforum-org:cwmp-1-0">`
const envClose = `</SOAP-ENV:Envelope>`

// wrap builds an envelope with cwmp:ID "1" around body.
func wrap(body string) string {
	return envOpen + `<SOAP-ENV:Header><cwmp:ID SOAP-ENV:mustUnderstand="1">1</cwmp:ID></SOAP-ENV:Header><SOAP-ENV:Body>` +
		body + `</SOAP-ENV:Body>` + envClose
}

func TestDecodeVersionIsDetectedAndEchoed(t *testing.T) {
	for v := CWMP10; v <= CWMP14; v++ {
		t.Run(v.String(), func(t *testing.T) {
			in := strings.Replace(wrap(`<cwmp:GetRPCMethods/>`), "cwmp-1-0", v.String(), 1)
			env, err := Decode([]byte(in))
			if err != nil {
				t.Fatal(err)
			}
			if env.Version != v {
				t.Fatalf("Version = %v, want %v", env.Version, v)
			}
			out, err := Encode(env.Reply(&GetRPCMethodsResponse{MethodList: []string{"Inform"}}))
			if err != nil {
				t.Fatal(err)
			}
			if want := `xmlns:cwmp="urn:dslforum-org:` + v.String() + `"`; !strings.Contains(string(out), want) {
				t.Fatalf("reply does not declare %s:\n%s", want, out)
			}
		})
	}
}

// TestDecodeVersionFromBoundNamespace: the version is the one bound to the
// RPC element, not whatever the Envelope happens to declare first.
func TestDecodeVersionFromBoundNamespace(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Version
	}{
		{"other prefix on Body", envOpen + `<SOAP-ENV:Body xmlns:c2="urn:dslforum-org:cwmp-1-2"><c2:Reboot><CommandKey/></c2:Reboot></SOAP-ENV:Body>` + envClose, CWMP12},
		{"prefix rebound on the RPC", envOpen + `<SOAP-ENV:Body><cwmp:Reboot xmlns:cwmp="urn:dslforum-org:cwmp-1-3"/></SOAP-ENV:Body>` + envClose, CWMP13},
		{"default namespace", envOpen + `<SOAP-ENV:Body><Reboot xmlns="urn:dslforum-org:cwmp-1-4"/></SOAP-ENV:Body>` + envClose, CWMP14},
		{"header when the RPC has none", envOpen + `<SOAP-ENV:Header><x:ID xmlns:x="urn:dslforum-org:cwmp-1-1">1</x:ID></SOAP-ENV:Header><SOAP-ENV:Body><Reboot/></SOAP-ENV:Body>` + envClose, CWMP11},
		{"Envelope declaration as last resort", envOpen + `<SOAP-ENV:Body><Reboot/></SOAP-ENV:Body>` + envClose, CWMP10},
		{"fault detail", envOpen + `<SOAP-ENV:Body><SOAP-ENV:Fault><faultcode>Server</faultcode><faultstring>CWMP fault</faultstring><detail><f:Fault xmlns:f="urn:dslforum-org:cwmp-1-2"><FaultCode>9002</FaultCode></f:Fault></detail></SOAP-ENV:Fault></SOAP-ENV:Body>` + envClose, CWMP12},
		{"scope ends with the element", envOpen + `<SOAP-ENV:Header><cwmp:ID xmlns:cwmp="urn:dslforum-org:cwmp-1-4">1</cwmp:ID></SOAP-ENV:Header><SOAP-ENV:Body><cwmp:Reboot/></SOAP-ENV:Body>` + envClose, CWMP10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, err := Decode([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if env.Version != tt.want {
				t.Fatalf("Version = %v, want %v", env.Version, tt.want)
			}
		})
	}
}

func TestDecodeText(t *testing.T) {
	tests := []struct {
		name, value string
		want        Value
	}{
		{"plain", `<Value xsi:type="xsd:string">abc</Value>`, String("abc")},
		{"white space kept", `<Value xsi:type="xsd:string">  a  b  </Value>`, String("  a  b  ")},
		{"predefined entities", `<Value>&lt;&gt;&amp;&apos;&quot;</Value>`, Value{Text: `<>&'"`}},
		{"character references", `<Value>&#65;&#x42;&#x1F600;&#xd;</Value>`, Value{Text: "AB\U0001F600\r"}},
		{"CDATA", `<Value><![CDATA[<a>&amp;]]></Value>`, Value{Text: "<a>&amp;"}},
		{"text and CDATA mixed", `<Value>x<![CDATA[<]]>y<!-- c -->z</Value>`, Value{Text: "x<yz"}},
		{"CRLF normalised", "<Value>a\r\nb\rc</Value>", Value{Text: "a\nb\nc"}},
		{"self-closing", `<Value xsi:type="xsd:int"/>`, Value{Type: TypeInt}},
		{"single-quoted type", `<Value xsi:type='xsd:boolean'>true</Value>`, Bool(true)},
		{"type with entity", `<Value xsi:type="xsd:&#115;tring">s</Value>`, String("s")},
		{"attributes in any order", `<Value foo="1" xsi:type="xsd:unsignedInt"  bar = 'x' >5</Value>`, UnsignedInt(5)},
		{"UTF-8", `<Value>Grüße ✓</Value>`, Value{Text: "Grüße ✓"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := wrap(`<cwmp:GetParameterValuesResponse><ParameterList><ParameterValueStruct><Name>N</Name>` +
				tt.value + `</ParameterValueStruct></ParameterList></cwmp:GetParameterValuesResponse>`)
			env, err := Decode([]byte(in))
			if err != nil {
				t.Fatal(err)
			}
			got := env.Body.(*GetParameterValuesResponse).ParameterList[0].Value
			if got != tt.want {
				t.Fatalf("Value = %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestDecodeHeader(t *testing.T) {
	in := envOpen + `<SOAP-ENV:Header>
		<cwmp:ID SOAP-ENV:mustUnderstand="0">abc</cwmp:ID>
		<cwmp:HoldRequests SOAP-ENV:mustUnderstand="1">true</cwmp:HoldRequests>
		<cwmp:SessionTimeout> 45 </cwmp:SessionTimeout>
		<cwmp:UseCWMPVersion SOAP-ENV:mustUnderstand="1">1.2</cwmp:UseCWMPVersion>
		<vendor:Trace xmlns:vendor="urn:x" SOAP-ENV:mustUnderstand="0"><deep>1</deep></vendor:Trace>
	</SOAP-ENV:Header><SOAP-ENV:Body><cwmp:InformResponse><MaxEnvelopes>1</MaxEnvelopes></cwmp:InformResponse></SOAP-ENV:Body>` + envClose
	env, err := Decode([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := &Envelope{Version: CWMP10, ID: "abc", HoldRequests: ptr(true), SessionTimeout: ptr(uint32(45)),
		UseCWMPVersion: "1.2", Body: &InformResponse{MaxEnvelopes: 1}}
	if !reflect.DeepEqual(env, want) {
		t.Fatalf("Decode = %+v, want %+v", env, want)
	}
}

func TestDecodeLenientShapes(t *testing.T) {
	tests := []struct {
		name string
		body string
		want Message
	}{
		{"unknown children skipped", `<cwmp:Reboot><X_Vendor a="1"><b/>text</X_Vendor><CommandKey>k</CommandKey></cwmp:Reboot>`, &Reboot{CommandKey: "k"}},
		{"prefixed children", `<cwmp:AddObject><cwmp:ObjectName>A.</cwmp:ObjectName><cwmp:ParameterKey>p</cwmp:ParameterKey></cwmp:AddObject>`, &AddObject{ObjectName: "A.", ParameterKey: "p"}},
		{"array without arrayType", `<cwmp:GetParameterValues><ParameterNames><string>A.</string><xsd:string>B</xsd:string></ParameterNames></cwmp:GetParameterValues>`, &GetParameterValues{ParameterNames: []string{"A.", "B"}}},
		{"arrayType larger than the content", `<cwmp:GetParameterValues><ParameterNames SOAP-ENC:arrayType="xsd:string[999999999]"><string>A.</string></ParameterNames></cwmp:GetParameterValues>`, &GetParameterValues{ParameterNames: []string{"A."}}},
		{"booleans as words", `<cwmp:GetParameterNames><ParameterPath>A.</ParameterPath><NextLevel> True </NextLevel></cwmp:GetParameterNames>`, &GetParameterNames{ParameterPath: "A.", NextLevel: true}},
		{"empty numbers are zero", `<cwmp:InformResponse><MaxEnvelopes></MaxEnvelopes></cwmp:InformResponse>`, &InformResponse{}},
		{"time without zone is UTC", `<cwmp:UploadResponse><Status>0</Status><StartTime>2024-01-02T03:04:05</StartTime><CompleteTime>not a time</CompleteTime></cwmp:UploadResponse>`,
			&UploadResponse{StartTime: time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)}},
		{"bare cwmp:Fault in Body", `<cwmp:Fault><FaultCode>8005</FaultCode><FaultString>Retry request</FaultString></cwmp:Fault>`, &Fault{FaultCode: 8005, FaultString: "Retry request"}},
		{"SOAP fault without detail", `<SOAP-ENV:Fault><faultcode> SOAP-ENV:Server </faultcode><faultstring>boom</faultstring></SOAP-ENV:Fault>`, &Fault{SOAPFaultCode: "Server", FaultString: "boom"}},
		{"cwmp:Fault without detail wrapper", `<SOAP-ENV:Fault><faultcode>Client</faultcode><faultstring>CWMP fault</faultstring><cwmp:Fault><FaultCode>9005</FaultCode><FaultString>x</FaultString></cwmp:Fault></SOAP-ENV:Fault>`,
			&Fault{SOAPFaultCode: "Client", FaultCode: 9005, FaultString: "x"}},
		{"vouchers wrapped in lines", `<cwmp:SetVouchers><VoucherList><base64>SGVs
bG8=</base64></VoucherList></cwmp:SetVouchers>`, &SetVouchers{VoucherList: [][]byte{[]byte("Hello")}}},
		{"results in schema form", `<cwmp:AutonomousDUStateChangeComplete><Results><UUID>u</UUID><OperationPerformed>Install</OperationPerformed><X_V/></Results><Results><UUID>v</UUID></Results></cwmp:AutonomousDUStateChangeComplete>`,
			&AutonomousDUStateChangeComplete{Results: []AutonOpResult{{OpResult: OpResult{UUID: "u"}, OperationPerformed: "Install"}, {OpResult: OpResult{UUID: "v"}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, err := Decode([]byte(wrap(tt.body)))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(env.Body, tt.want) {
				t.Fatalf("Body = %#v, want %#v", env.Body, tt.want)
			}
		})
	}
}

func TestDecodeCopiesInput(t *testing.T) {
	data := []byte(wrap(`<cwmp:Reboot><CommandKey>keep-me</CommandKey></cwmp:Reboot>`))
	env, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	for i := range data {
		data[i] = 'x'
	}
	if got := env.Body.(*Reboot).CommandKey; got != "keep-me" {
		t.Fatalf("CommandKey changed with the input buffer: %q", got)
	}
}

func TestDecodeErrors(t *testing.T) {
	var (
		syntax   *SyntaxError
		envelope *EnvelopeError
		unknown  *UnknownMethodError
		value    *ValueError
	)
	deep := strings.Repeat("<a>", MaxDepth) + strings.Repeat("</a>", MaxDepth)
	manyAttrs := "<cwmp:Reboot"
	for i := 0; i <= MaxAttrs; i++ {
		manyAttrs += " a" + strings.Repeat("x", i) + `="1"`
	}
	manyAttrs += "/>"
	tests := []struct {
		name     string
		in       string
		target   any   // a pointer to an error type for errors.As
		sentinel error // or a sentinel for errors.Is
		withEnv  bool  // the envelope comes with the error
	}{
		{"empty", "", nil, ErrEmpty, false},
		{"blank", " \r\n\t ", nil, ErrEmpty, false},
		{"comment only", "<!-- nothing -->", &syntax, nil, false},
		{"truncated", wrap(`<cwmp:Reboot><CommandKey>k</CommandKey></cwmp:Reboot>`)[:120], &syntax, nil, false},
		{"truncated in tag", `<SOAP-ENV:Envelope xmlns:SOAP-ENV="http://schemas.xmlsoap.org/soap/envelope/"`, &syntax, nil, false},
		{"mismatched tags", wrap(`<cwmp:Reboot><CommandKey>k</Key></cwmp:Reboot>`), &syntax, nil, false},
		{"stray end tag", wrap(`<cwmp:Reboot/></x>`), &syntax, nil, false},
		{"unknown entity", wrap(`<cwmp:Reboot><CommandKey>&nbsp;</CommandKey></cwmp:Reboot>`), &syntax, nil, false},
		{"bare ampersand", wrap(`<cwmp:Reboot><CommandKey>a & b</CommandKey></cwmp:Reboot>`), &syntax, nil, false},
		{"bad entity in skipped text", wrap(`<cwmp:Reboot><X>&bogus;</X></cwmp:Reboot>`), &syntax, nil, false},
		{"bad entity between elements", wrap(`<cwmp:Reboot>&bogus;<CommandKey/></cwmp:Reboot>`), &syntax, nil, false},
		{"bad entity in attribute", wrap(`<cwmp:Reboot a="&bogus;"/>`), &syntax, nil, false},
		{"NUL character reference", wrap(`<cwmp:Reboot><CommandKey>&#0;</CommandKey></cwmp:Reboot>`), &syntax, nil, false},
		{"surrogate reference", wrap(`<cwmp:Reboot><CommandKey>&#xD800;</CommandKey></cwmp:Reboot>`), &syntax, nil, false},
		{"reference out of range", wrap(`<cwmp:Reboot><CommandKey>&#x110000;</CommandKey></cwmp:Reboot>`), &syntax, nil, false},
		{"DOCTYPE", `<?xml version="1.0"?><!DOCTYPE foo [<!ENTITY x "y">]>` + wrap(`<cwmp:Reboot/>`), nil, ErrDTD, false},
		{"ENTITY declaration", `<!ENTITY lol "lol">` + wrap(`<cwmp:Reboot/>`), nil, ErrDTD, false},
		{"DOCTYPE inside", envOpen + `<!DOCTYPE x><SOAP-ENV:Body/>` + envClose, nil, ErrDTD, false},
		{"nesting too deep", wrap(`<cwmp:Reboot>` + deep + `</cwmp:Reboot>`), &syntax, nil, false},
		{"too many attributes", wrap(manyAttrs), &syntax, nil, false},
		{"unquoted attribute", wrap(`<cwmp:Reboot a=1/>`), &syntax, nil, false},
		{"attribute without value", wrap(`<cwmp:Reboot a/>`), &syntax, nil, false},
		{"attributes not separated", wrap(`<cwmp:Reboot a="1"b="2"/>`), &syntax, nil, false},
		{"< in attribute", wrap(`<cwmp:Reboot a="<"/>`), &syntax, nil, false},
		{"empty prefix", wrap(`<:Reboot/>`), &syntax, nil, false},
		{"two colons", wrap(`<a:b:Reboot/>`), &syntax, nil, false},
		{"unterminated comment", wrap(`<!-- x`), &syntax, nil, false},
		{"unterminated CDATA", wrap(`<cwmp:Reboot><CommandKey><![CDATA[x</CommandKey>`), &syntax, nil, false},
		{"unterminated PI", `<?xml version="1.0"`, &syntax, nil, false},
		{"text before root", `junk` + wrap(`<cwmp:Reboot/>`), &syntax, nil, false},
		{"second root", wrap(`<cwmp:Reboot/>`) + `<again/>`, &syntax, nil, false},
		{"text after root", wrap(`<cwmp:Reboot/>`) + `junk`, &syntax, nil, false},
		{"not an Envelope", `<cwmp:Inform xmlns:cwmp="urn:dslforum-org:cwmp-1-0"/>`, &envelope, nil, false},
		{"SOAP 1.2 namespace", `<e:Envelope xmlns:e="http://www.w3.org/2003/05/soap-envelope"><e:Body><Reboot/></e:Body></e:Envelope>`, &envelope, nil, false},
		{"unbound Envelope prefix", `<e:Envelope><e:Body><Reboot/></e:Body></e:Envelope>`, &envelope, nil, false},
		{"no namespace", `<Envelope><Body><Reboot/></Body></Envelope>`, &envelope, nil, false},
		{"missing Body", envOpen + `<SOAP-ENV:Header/>` + envClose, &envelope, nil, false},
		{"empty Body", envOpen + `<SOAP-ENV:Body> </SOAP-ENV:Body>` + envClose, &envelope, nil, false},
		{"two Bodies", envOpen + `<SOAP-ENV:Body/><SOAP-ENV:Body/>` + envClose, &envelope, nil, false},
		{"two RPCs", wrap(`<cwmp:Reboot/><cwmp:FactoryReset/>`), &envelope, nil, false},
		{"RPC in a foreign namespace", strings.ReplaceAll(wrap(`<cwmp:Inform/>`), "urn:dslforum-org:cwmp-1-0", "urn:evil:cwmp"), &envelope, nil, false},
		{"RPC rebound to a foreign namespace", wrap(`<cwmp:Reboot xmlns:cwmp="urn:evil:cwmp"/>`), &envelope, nil, false},
		{"RPC in a default foreign namespace", wrap(`<Reboot xmlns="urn:evil:cwmp"/>`), &envelope, nil, false},
		{"cwmp-1-5 is not a version", wrap(`<c:Reboot xmlns:c="urn:dslforum-org:cwmp-1-5"/>`), &envelope, nil, false},
		{"Fault in a foreign namespace", wrap(`<x:Fault xmlns:x="urn:evil"/>`), &envelope, nil, false},
		{"unknown RPC", wrap(`<cwmp:X_ACME_Frobnicate><A>1</A></cwmp:X_ACME_Frobnicate>`), &unknown, nil, true},
		{"invalid unsignedInt", wrap(`<cwmp:ScheduleInform><DelaySeconds>soon</DelaySeconds></cwmp:ScheduleInform>`), &value, nil, true},
		{"negative unsignedInt", wrap(`<cwmp:ScheduleInform><DelaySeconds>-1</DelaySeconds></cwmp:ScheduleInform>`), &value, nil, true},
		{"int overflow", wrap(`<cwmp:AddObjectResponse><Status>99999999999</Status></cwmp:AddObjectResponse>`), &value, nil, true},
		{"invalid boolean", wrap(`<cwmp:GetParameterNames><NextLevel>yes</NextLevel></cwmp:GetParameterNames>`), &value, nil, true},
		{"element in simple content", wrap(`<cwmp:Reboot><CommandKey>a<b/>c</CommandKey></cwmp:Reboot>`), &value, nil, true},
		{"invalid base64 voucher", wrap(`<cwmp:SetVouchers><VoucherList><base64>!!</base64></VoucherList></cwmp:SetVouchers>`), &value, nil, true},
		{"operation without type", wrap(`<cwmp:ChangeDUState><Operations><URL>u</URL></Operations></cwmp:ChangeDUState>`), &value, nil, true},
		{"syntax error wins over value error", wrap(`<cwmp:ScheduleInform><DelaySeconds>x</DelaySeconds><A></B></cwmp:ScheduleInform>`), &syntax, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, err := Decode([]byte(tt.in))
			if err == nil {
				t.Fatalf("Decode succeeded: %+v", env)
			}
			switch {
			case tt.sentinel != nil:
				if !errors.Is(err, tt.sentinel) {
					t.Fatalf("error %v (%T) is not %v", err, err, tt.sentinel)
				}
			case !errors.As(err, tt.target):
				t.Fatalf("error %v is a %T, want %T", err, err, tt.target)
			}
			if tt.withEnv {
				if env == nil || env.ID != "1" || env.Body != nil || env.Version != CWMP10 {
					t.Fatalf("want the envelope with ID 1 and no Body, got %+v", env)
				}
			} else if env != nil {
				t.Fatalf("want no envelope with %v, got %+v", err, env)
			}
			if msg := err.Error(); msg != strings.ToLower(msg[:1])+msg[1:] || !strings.HasPrefix(msg, "cwmp") {
				t.Errorf("error string %q should start with the package name in lower case", msg)
			}
		})
	}
}

func TestUnknownMethodName(t *testing.T) {
	_, err := Decode([]byte(wrap(`<cwmp:X_ACME_Frobnicate/>`)))
	var u *UnknownMethodError
	if !errors.As(err, &u) || u.Name != "X_ACME_Frobnicate" {
		t.Fatalf("error %v, want UnknownMethodError for X_ACME_Frobnicate", err)
	}
}

func TestSyntaxErrorOffset(t *testing.T) {
	in := wrap(`<cwmp:Reboot><CommandKey>&bad;</CommandKey></cwmp:Reboot>`)
	_, err := Decode([]byte(in))
	var se *SyntaxError
	if !errors.As(err, &se) {
		t.Fatalf("error %v, want SyntaxError", err)
	}
	if want := strings.Index(in, "&bad;"); se.Offset != want {
		t.Fatalf("Offset = %d, want %d", se.Offset, want)
	}
}

// TestLimitsAreInclusive: exactly the limit is accepted.
func TestLimitsAreInclusive(t *testing.T) {
	// Envelope, Body and Reboot use three levels.
	deep := strings.Repeat("<a>", MaxDepth-3) + strings.Repeat("</a>", MaxDepth-3)
	if _, err := Decode([]byte(wrap(`<cwmp:Reboot>` + deep + `</cwmp:Reboot>`))); err != nil {
		t.Errorf("nesting of exactly MaxDepth: %v", err)
	}
	attrs := "<cwmp:Reboot"
	for i := 0; i < MaxAttrs; i++ {
		attrs += " a" + strings.Repeat("x", i) + `="1"`
	}
	if _, err := Decode([]byte(wrap(attrs + "/>"))); err != nil {
		t.Errorf("exactly MaxAttrs attributes: %v", err)
	}
}

func TestTooManyElements(t *testing.T) {
	in := wrap(`<cwmp:GetParameterValues><ParameterNames>` + strings.Repeat("<s/>", MaxElements) +
		`</ParameterNames></cwmp:GetParameterValues>`)
	_, err := Decode([]byte(in))
	var se *SyntaxError
	if !errors.As(err, &se) || !strings.Contains(se.Msg, "elements") {
		t.Fatalf("error %v, want the element limit", err)
	}
}

// TestPathologicalInputs feeds inputs that would take quadratic time in a
// naive scanner. There is no clock here: a quadratic path on a megabyte
// would take minutes and trip the test timeout.
func TestPathologicalInputs(t *testing.T) {
	const n = 1 << 20
	inputs := map[string]string{
		"ampersands":          wrap(`<cwmp:Reboot><CommandKey>` + strings.Repeat("&", n) + `</CommandKey></cwmp:Reboot>`),
		"ampersands in attr":  wrap(`<cwmp:Reboot a="` + strings.Repeat("&", n) + `"/>`),
		"unclosed elements":   strings.Repeat("<a>", n/3),
		"open comment starts": strings.Repeat("<!--", n/4),
		"open PIs":            strings.Repeat("<?", n/2),
		"open CDATA":          wrap(`<cwmp:Reboot>` + strings.Repeat("<![CDATA[", n/9)),
		"long attribute list": wrap(`<cwmp:Reboot` + strings.Repeat(` a="1"`, n/6) + `/>`),
		"many empty texts":    wrap(`<cwmp:GetParameterValues><ParameterNames>` + strings.Repeat("<s></s>", n/7) + `</ParameterNames></cwmp:GetParameterValues>`),
		"unterminated quote":  wrap(`<cwmp:Reboot a="` + strings.Repeat("x", n)),
		"char refs":           wrap(`<cwmp:Reboot><CommandKey>` + strings.Repeat("&#x41;", n/6) + `</CommandKey></cwmp:Reboot>`),
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			_, _ = Decode([]byte(in))
		})
	}
}
