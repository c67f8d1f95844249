package jwtauth_test

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"cpesuite/internal/configsvc/jwtauth"
)

func TestDecodeSecret(t *testing.T) {
	// Bytes chosen so that the standard and URL alphabets differ (+/ vs -_).
	key := bytes.Repeat([]byte{0xfb, 0xff, 0xbf}, 11)[:32]
	key33 := bytes.Repeat([]byte{0xfb, 0xff, 0xbf}, 11)
	tests := []struct {
		name  string
		input string
		want  []byte
		err   string // part of the expected error; empty when accepted
	}{
		{"32 bytes std padded", base64.StdEncoding.EncodeToString(key), key, ""},
		{"32 bytes std unpadded", base64.RawStdEncoding.EncodeToString(key), key, ""},
		{"32 bytes url padded", base64.URLEncoding.EncodeToString(key), key, ""},
		{"32 bytes url unpadded", base64.RawURLEncoding.EncodeToString(key), key, ""},
		{"33 bytes, no padding needed", base64.StdEncoding.EncodeToString(key33), key33, ""},
		{"surrounding blanks", " \t" + base64.StdEncoding.EncodeToString(key) + "\n", key, ""},
		{"31 bytes", base64.StdEncoding.EncodeToString(key[:31]), nil, "decodes to 31 bytes; at least 32 are required"},
		{"short plain word", "secret", nil, "JWT_SECRET"},
		{"not base64", "this is not base64 at all, it has spaces and commas!", nil, "is not valid base64"},
		{"mixed alphabets", "+" + base64.RawURLEncoding.EncodeToString(key)[1:], nil, "is not valid base64"},
		{"empty", "", nil, "JWT_SECRET is empty"},
		{"blank", "  \n", nil, "JWT_SECRET is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := jwtauth.DecodeSecret(tt.input)
			if tt.err == "" {
				if err != nil || !bytes.Equal(got, tt.want) {
					t.Fatalf("DecodeSecret(%q) = %x, %v; want %x", tt.input, got, err, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("DecodeSecret(%q) = %x, want an error mentioning %q", tt.input, got, tt.err)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.err) || !strings.Contains(msg, "JWT_SECRET") {
				t.Fatalf("DecodeSecret(%q) error %q, want it to name JWT_SECRET and say %q", tt.input, msg, tt.err)
			}
			if v := strings.TrimSpace(tt.input); v != "" && strings.Contains(msg, v) {
				t.Fatalf("DecodeSecret error %q repeats the secret", msg)
			}
		})
	}
}
