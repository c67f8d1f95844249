package codec

import (
	"reflect"
	"testing"
)

func TestLinks(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []Link
	}{
		{
			name: "register body",
			text: `</>;rt="oma.lwm2m";ct=110,</1/0>,</3/0>`,
			want: []Link{
				{Target: "/", Params: []LinkParam{{Key: "rt", Value: "oma.lwm2m", Quoted: true}, {Key: "ct", Value: "110"}}},
				{Target: "/1/0"},
				{Target: "/3/0"},
			},
		},
		{
			name: "object versions and several content formats",
			text: `</1>;ver=1.1,</3/0>,</3303>;ver="1.1";ct="60 110 112 11542"`,
			want: []Link{
				{Target: "/1", Params: []LinkParam{{Key: "ver", Value: "1.1"}}},
				{Target: "/3/0"},
				{Target: "/3303", Params: []LinkParam{{Key: "ver", Value: "1.1", Quoted: true}, {Key: "ct", Value: "60 110 112 11542", Quoted: true}}},
			},
		},
		{
			name: "discover answer with attributes and a valueless parameter",
			text: `</3/0>;pmin=10;pmax=60,</3/0/1>,</3/0/7>;dim=2;obs`,
			want: []Link{
				{Target: "/3/0", Params: []LinkParam{{Key: "pmin", Value: "10"}, {Key: "pmax", Value: "60"}}},
				{Target: "/3/0/1"},
				{Target: "/3/0/7", Params: []LinkParam{{Key: "dim", Value: "2"}, {Key: "obs"}}},
			},
		},
		{
			name: "quoted strings hold commas, semicolons and escapes",
			text: `</a>;title="x, y; \"z\" \\";empty=""`,
			want: []Link{
				{Target: "/a", Params: []LinkParam{{Key: "title", Value: `x, y; "z" \`, Quoted: true}, {Key: "empty", Quoted: true}}},
			},
		},
		{
			name: "no links",
			text: "",
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseLinks(tt.text)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseLinks\n got: %#v\nwant: %#v", got, tt.want)
			}
			if enc := EncodeLinks(tt.want); enc != tt.text {
				t.Errorf("EncodeLinks = %s, want %s", enc, tt.text)
			}
		})
	}
}

func TestEncodeLinksQuotesInvalidTokens(t *testing.T) {
	got := EncodeLinks([]Link{{Target: "/1", Params: []LinkParam{{Key: "t", Value: "a b"}}}})
	if want := `</1>;t="a b"`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestParseLinksMalformed(t *testing.T) {
	tests := []string{
		"/1/0",
		"</1/0",
		"<>",
		"</1/0>,",
		",</1/0>",
		"</1/0>,,</3/0>",
		"</1/0> ,</3/0>",
		"</1/0>, </3/0>",
		"</1/0></3/0>",
		"</1 0>",
		"</1/0>;",
		"</1/0>;=1",
		"</1/0>;ct=",
		"</1/0>;ct=1 2",
		`</1/0>;rt="oma`,
		`</1/0>;rt="oma\`,
		`</1/0>;rt="a"b`,
		"</1/0>;c t=1",
		"</1/0>x",
	}
	for _, s := range tests {
		if got, err := ParseLinks(s); err == nil {
			t.Errorf("ParseLinks(%q): no error, got %#v", s, got)
		}
	}
}
