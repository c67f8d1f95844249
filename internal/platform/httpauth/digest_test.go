package httpauth_test

import (
	"testing"

	"cpesuite/internal/platform/httpauth"
)

// rfcSHA256 is the SHA-256 Authorization of RFC 7616 §3.9.1 (user
// "Mufasa", password "Circle of Life", GET /dir/index.html).
var rfcSHA256 = httpauth.DigestAuthorization{
	Username:  "Mufasa",
	Realm:     "http-auth@example.org",
	URI:       "/dir/index.html",
	Algorithm: "SHA-256",
	Nonce:     "7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v",
	NC:        "00000001",
	CNonce:    "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ",
	QOP:       "auth",
	Response:  "753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1",
	Opaque:    "FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS",
}

func TestComputeResponseRFC7616KnownAnswers(t *testing.T) {
	md5 := rfcSHA256
	md5.Algorithm = "MD5"
	md5.Response = "8ca523f5e9506fed4657c9700eebdbec"

	// RFC 2617 §3.5, the legacy-free MD5 example with qop=auth.
	rfc2617 := httpauth.DigestAuthorization{
		Username: "Mufasa", Realm: "testrealm@host.com", URI: "/dir/index.html",
		Nonce: "dcd98b7102dd2f0e8b11d0f600bfb0c093", NC: "00000001", CNonce: "0a4f113b", QOP: "auth",
		Response: "6629fae49393a05397450978507c4ef1",
	}
	// RFC 2069 §2.4, no qop.
	rfc2069 := httpauth.DigestAuthorization{
		Username: "Mufasa", Realm: "testrealm@host.com", URI: "/dir/index.html",
		Nonce: "dcd98b7102dd2f0e8b11d0f600bfb0c093", Response: "1949323746fe6a43ef61f9606e7febea",
	}

	tests := []struct {
		name     string
		d        httpauth.DigestAuthorization
		password string
	}{
		{"RFC 7616 SHA-256", rfcSHA256, "Circle of Life"},
		{"RFC 7616 MD5", md5, "Circle of Life"},
		{"RFC 2617 MD5", rfc2617, "Circle Of Life"},
		{"RFC 2069 MD5", rfc2069, "CircleOfLife"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.d.ComputeResponse("GET", tc.password)
			if err != nil {
				t.Fatalf("ComputeResponse: %v", err)
			}
			if got != tc.d.Response {
				t.Fatalf("response %s, want %s", got, tc.d.Response)
			}
		})
	}
}

func TestComputeResponseRefusesWhatItCannotCompute(t *testing.T) {
	for name, d := range map[string]httpauth.DigestAuthorization{
		"unknown algorithm": {Algorithm: "SHA-1", QOP: "auth"},
		"auth-int":          {QOP: "auth-int"},
		"sess without qop":  {Algorithm: "MD5-sess"},
	} {
		if _, err := d.ComputeResponse("GET", "p"); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
