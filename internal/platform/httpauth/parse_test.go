package httpauth_test

import (
	"reflect"
	"strings"
	"testing"

	"cpesuite/internal/platform/httpauth"
)

// malformedAuthorizations are Authorization values that must be refused
// without panicking, by the parser and the Verifier alike.
var malformedAuthorizations = []string{
	"",
	" ",
	"Digest",
	"Digest ",
	"Digest ,,, ,",
	"Digest,username=\"a\"",
	`Digest username="`,
	`Digest username="abc`,
	`Digest username="abc\`,
	`Digest username="abc\"`,
	"Digest username=\"a\x00b\"",
	"Digest username=\"a\x7f\"",
	`Digest username=`,
	`Digest username= ,realm="r"`,
	`Digest =x`,
	`Digest "quoted"="x"`,
	`Digest username="a" realm="b"`,
	`Digest username="a",, username="b"`,
	`Digest USERNAME="a", username="b"`,
	`Digest username="a", username*=UTF-8''b`,
	`Digest username*=ISO-8859-1''a`,
	`Digest username*=UTF-8''%ff%fe`,
	`Digest username*=UTF-8''%zz`,
	`Digest username*=nope`,
	`Digest userhash=maybe`,
	`Digest a=b=c`,
	`Digest username="a", realm="r", nonce="n", uri="/", response="r", qop=auth, nc=00000001, cnonce="c", qop=auth`,
	"Digest username=\"" + strings.Repeat("a", 1<<20) + "\"",
	"Digest " + strings.Repeat("a=b, ", 10000),
	"Digest " + strings.Repeat(`"`, 100),
	"Digest " + strings.Repeat(`\`, 100),
	"Digest \xff\xfe",
	"Basic",
	"Basic !!!",
	"Basic " + strings.Repeat("QUFB", 1<<18),
	"Basic Zm9v",
	"Basic Zm9v Zm9v",
	"Negotiate " + strings.Repeat("=", 1000),
	"\t\t\t",
	"Digest username=\"a\", realm=\"r\", nonce=\"" + strings.Repeat("x", 48) + "\", uri=\"/\", response=\"" + strings.Repeat("0", 32) + "\"",
}

func TestParseDigestAuthorizationMalformed(t *testing.T) {
	for _, v := range malformedAuthorizations {
		if !strings.HasPrefix(v, "Digest") {
			continue
		}
		d, err := httpauth.ParseDigestAuthorization(v)
		if err == nil && d.Username != "" && d.Nonce != "" && d.Response != "" && d.URI != "" && d.QOP != "" {
			t.Errorf("ParseDigestAuthorization(%.60q) = %+v, want an error or an incomplete result", v, d)
		}
	}
}

func TestParseDigestAuthorization(t *testing.T) {
	tests := []struct {
		name  string
		value string
		want  httpauth.DigestAuthorization
	}{
		{
			name: "RFC 7616 3.9.1 SHA-256",
			value: `Digest username="Mufasa",
       realm="http-auth@example.org",
       uri="/dir/index.html",
       algorithm=SHA-256,
       nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v",
       nc=00000001,
       cnonce="f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ",
       qop=auth,
       response="753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1",
       opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"`,
			want: rfcSHA256,
		},
		{
			name:  "odd spacing, case and quoting",
			value: "  digest   USERNAME = \"u\" ,Realm=r,,  nonce= \"n\"\t, uri=\"/a?b=c\", Algorithm=\"md5\", QOP=\"auth\", NC=\"00000002\", CNonce=c, Response=\"abc\", unknown=\"x, y\", other=tok, userhash=FALSE",
			want:  httpauth.DigestAuthorization{Username: "u", Realm: "r", Nonce: "n", URI: "/a?b=c", Algorithm: "md5", QOP: "auth", NC: "00000002", CNonce: "c", Response: "abc"},
		},
		{
			name:  "escapes",
			value: `Digest username="a\"b\\c\d", realm="r,\ \"x\""`,
			want:  httpauth.DigestAuthorization{Username: `a"b\cd`, Realm: `r, "x"`},
		},
		{
			name:  "username* RFC 7616 3.4.4 style",
			value: `Digest username*=UTF-8''J%C3%A4s%C3%B8n%20Doe, realm="r"`,
			want:  httpauth.DigestAuthorization{Username: "Jäsøn Doe", Realm: "r"},
		},
		{
			name:  "userhash true",
			value: `Digest username="h", userhash=true`,
			want:  httpauth.DigestAuthorization{Username: "h", Userhash: true},
		},
		{
			name:  "trailing comma",
			value: `Digest username="u",`,
			want:  httpauth.DigestAuthorization{Username: "u"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := httpauth.ParseDigestAuthorization(unfold(tc.value))
			if err != nil {
				t.Fatalf("ParseDigestAuthorization: %v", err)
			}
			if got != tc.want {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
			again, err := httpauth.ParseDigestAuthorization(got.String())
			if err != nil || again != got {
				t.Fatalf("round trip of %q: %+v, %v", got.String(), again, err)
			}
		})
	}
}

func TestDigestAuthorizationStringUsesUsernameStarForControls(t *testing.T) {
	d := httpauth.DigestAuthorization{Username: "a\x01b", Realm: "r"}
	s := d.String()
	if !strings.Contains(s, `username*=UTF-8''a%01b`) {
		t.Fatalf("String() = %q", s)
	}
	got, err := httpauth.ParseDigestAuthorization(s)
	if err != nil || got != d {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
}

func TestParseChallenges(t *testing.T) {
	type ch = httpauth.Challenge
	type p = map[string]string
	tests := []struct {
		name    string
		values  []string
		want    []ch
		wantErr bool
	}{
		{
			name:   "basic",
			values: []string{`Basic realm="simple"`},
			want:   []ch{{Scheme: "Basic", Params: p{"realm": "simple"}}},
		},
		{
			name: "RFC 9110 11.6.1 example",
			values: []string{`Newauth realm="apps", type=1,
                       title="Login to \"apps\"", Basic realm="simple"`},
			want: []ch{
				{Scheme: "Newauth", Params: p{"realm": "apps", "type": "1", "title": `Login to "apps"`}},
				{Scheme: "Basic", Params: p{"realm": "simple"}},
			},
		},
		{
			name: "RFC 7616 3.9.1 two headers",
			values: []string{
				`Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=SHA-256, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"`,
				`Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=MD5, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"`,
			},
			want: []ch{
				{Scheme: "Digest", Params: p{"realm": "http-auth@example.org", "qop": "auth, auth-int", "algorithm": "SHA-256", "nonce": "7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", "opaque": "FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"}},
				{Scheme: "Digest", Params: p{"realm": "http-auth@example.org", "qop": "auth, auth-int", "algorithm": "MD5", "nonce": "7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", "opaque": "FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"}},
			},
		},
		{
			name:   "two digests in one header",
			values: []string{`Digest realm="r", nonce="n1", algorithm=SHA-256, Digest realm="r", nonce="n2", algorithm=MD5`},
			want: []ch{
				{Scheme: "Digest", Params: p{"realm": "r", "nonce": "n1", "algorithm": "SHA-256"}},
				{Scheme: "Digest", Params: p{"realm": "r", "nonce": "n2", "algorithm": "MD5"}},
			},
		},
		{
			name:   "bare schemes, token68 and odd spacing",
			values: []string{`, Negotiate, NTLM TlRMTVNTUAACAAAA==,Bearer ,  Basic   REALM = "x"  ,, Digest Realm=r,NONCE="n"  `},
			want: []ch{
				{Scheme: "Negotiate"},
				{Scheme: "NTLM", Token68: "TlRMTVNTUAACAAAA=="},
				{Scheme: "Bearer"},
				{Scheme: "Basic", Params: p{"realm": "x"}},
				{Scheme: "Digest", Params: p{"realm": "r", "nonce": "n"}},
			},
		},
		{
			name:    "good challenge kept next to a broken one",
			values:  []string{`Digest realm="unterminated`, `Basic realm="ok"`},
			want:    []ch{{Scheme: "Basic", Params: p{"realm": "ok"}}},
			wantErr: true,
		},
		{
			name:    "challenges before the error kept",
			values:  []string{`Basic realm="ok", Digest realm="a", realm="b"`},
			want:    []ch{{Scheme: "Basic", Params: p{"realm": "ok"}}},
			wantErr: true,
		},
		{name: "empty", values: []string{""}},
		{name: "only commas", values: []string{" , ,"}},
		{name: "missing comma", values: []string{`Digest realm="a" nonce="b"`}, wantErr: true},
		{name: "scheme is not a token", values: []string{`"Digest" realm=x`}, wantErr: true},
		{name: "parameter without value", values: []string{`Digest nonce="n", realm=`}, wantErr: true},
		{name: "token68 is not a parameter", values: []string{`Digest realm=`}, want: []ch{{Scheme: "Digest", Token68: "realm="}}},
		{name: "huge", values: []string{"Digest realm=\"" + strings.Repeat("x", 1<<20) + "\""}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			values := make([]string, len(tc.values))
			for i, v := range tc.values {
				values[i] = unfold(v)
			}
			got, err := httpauth.ParseChallenges(values)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got  %#v\nwant %#v", got, tc.want)
			}
		})
	}
}

func TestChallengeParamIsCaseInsensitive(t *testing.T) {
	chs, err := httpauth.ParseChallenges([]string{`Digest ReAlM="r"`})
	if err != nil || chs[0].Param("REALM") != "r" {
		t.Fatalf("Param: %v %v", chs, err)
	}
}

func TestParseAlgorithm(t *testing.T) {
	for in, want := range map[string]httpauth.Algorithm{
		"": httpauth.MD5, "md5": httpauth.MD5, "MD5-SESS": httpauth.MD5Sess, "sha-256": httpauth.SHA256,
		"SHA-256-sess": httpauth.SHA256Sess, "SHA-512-256": httpauth.SHA512_256, "sha-512-256-SESS": httpauth.SHA512_256Sess,
	} {
		if got, ok := httpauth.ParseAlgorithm(in); !ok || got != want {
			t.Errorf("ParseAlgorithm(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"SHA-1", "MD5 ", "sha256", "-sess"} {
		if _, ok := httpauth.ParseAlgorithm(in); ok {
			t.Errorf("ParseAlgorithm(%q) accepted", in)
		}
	}
}

// unfold turns the multi-line examples copied from the RFCs into the single
// line a header value is once received (obs-fold becomes SP).
func unfold(s string) string {
	return strings.ReplaceAll(s, "\n", " ")
}
