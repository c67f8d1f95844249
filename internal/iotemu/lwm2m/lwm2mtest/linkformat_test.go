package lwm2mtest

import (
	"strings"
	"testing"
)

func TestCheckLinkFormat(t *testing.T) {
	tests := []struct {
		in string
		ok bool
	}{
		{"", true},
		{`</>;rt="oma.lwm2m",</1/0>,</3/0>`, true},
		{`</>;rt="oma.lwm2m";ct=110,</1>;ver=1.1,</3/0>`, true},
		{`</sensors/temp>;rt="temperature-c";if="sensor";sz=12;ct="0 40"`, true},
		{`</a>;anchor="/b";title="a, b; \"c\"";obs`, true},
		{`</a>;rel="start http://example.com/x";type="text/plain";hreflang=en-GB`, true},
		{`</a>;title*=UTF-8'en'%C2%A3%20rates`, true},
		{`</a>,</b%20c>`, true},
		{`</a> `, false},                    // white space outside quotes
		{`</a>, </b>`, false},               // white space after ','
		{`</a>,`, false},                    // trailing ','
		{`</a>,,</b>`, false},               // empty link-value
		{`/a`, false},                       // no '<'
		{`</a`, false},                      // no '>'
		{`</a b>`, false},                   // space in the target
		{`</a%2>`, false},                   // bad percent-encoding
		{`<1:x>`, false},                    // ':' in a first segment that is no scheme
		{`</a>;`, false},                    // empty parmname
		{`</a>;k=`, false},                  // empty value
		{`</a>;k="x`, false},                // unterminated quoted-string
		{`</a>;k=a,b`, false},               // ',' ends the link, 'b' is no link-value
		{`</a>;rt=Oma`, false},              // reg-rel-type is lower case
		{`</a>;rt=" oma"`, false},           // padded relation-types
		{`</a>;sz=012`, false},              // cardinal without leading zeros
		{`</a>;ct=70000`, false},            // content format above 65535
		{`</a>;ct=x`, false},                // not a cardinal
		{`</a>;anchor=/b`, false},           // anchor must be quoted
		{`</a>;title=x`, false},             // title must be quoted
		{`</a>;type="text"`, false},         // not a media-type
		{"</a>;title=\"x\x01\"", false},     // control character in a quoted-string
		{`</a>;title*=UTF-8'en'a b`, false}, // space in an ext-value
	}
	for _, tc := range tests {
		err := CheckLinkFormat(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("CheckLinkFormat(%q) = %v, want ok %t", tc.in, err, tc.ok)
		}
	}
}

// TestRegisterLinkRules: the root link as wakaama's server reads it. The
// first failing row is what the emulator sent by default (LwM2M 1.1, TLV)
// and wakaama answered with 4.00 Bad Request.
func TestRegisterLinkRules(t *testing.T) {
	tests := []struct {
		in   string
		want string // "" = accepted, else part of the finding
	}{
		{`</>;rt="oma.lwm2m",</1/0>,</3/0>`, ""},
		{`</>;rt="oma.lwm2m";ct=110,</1/0>`, ""},
		{`</>;rt="oma.lwm2m";ct=112,</1/0>`, ""},
		{`</>;rt="oma.lwm2m";ct=11543,</1/0>`, ""},
		{`</lwm2m>;rt="oma.lwm2m",</lwm2m/1/0>`, "second non-object link"},
		{`</1/0>,</3/0>,</3303/0>`, ""},
		{`</1>;ver=1.1,</3/0>`, ""},
		{`</>;rt="oma.lwm2m";ct=11542,</1/0>`, "ct=11542 is not one of"},
		{`</>;rt="oma.lwm2m";ct=40,</1/0>`, "ct=40 is not one of"},
		{`</>;rt=oma.lwm2m,</1/0>`, `rt=oma.lwm2m is not "oma.lwm2m"`},
		{`</>;rt="oma.lwm2m";rt="oma.lwm2m",</1/0>`, "repeats rt"},
		{`</>;rt="oma.lwm2m";ct=110;ct=112,</1/0>`, "repeats rt (1) or ct (2)"},
		{`</>,</1/0>`, "without attributes"},
		{`</>;rt="oma.lwm2m";obs,</1/0>`, "without a value"},
		{`</>;rt="oma.lwm2m",</x>;rt="y",</1/0>`, "second non-object link"},
		{`</65535/0>;rt="oma.lwm2m",</1/0>`, ""}, // id out of range: wakaama takes it as the root link
	}
	for _, tc := range tests {
		if err := CheckLinkFormat(tc.in); err != nil {
			t.Fatalf("row %q is not even RFC 6690: %v", tc.in, err)
		}
		found := strings.Join(RegisterLinkRules(tc.in), "; ")
		if tc.want == "" && found != "" || !strings.Contains(found, tc.want) {
			t.Errorf("RegisterLinkRules(%q) = %q, want %q", tc.in, found, tc.want)
		}
	}
}
