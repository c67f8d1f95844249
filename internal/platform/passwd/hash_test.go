package passwd_test

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"

	"cpesuite/internal/platform/passwd"

	"golang.org/x/crypto/argon2"
)

func mustHash(t testing.TB, password string) string {
	t.Helper()
	h, err := passwd.Hash(password)
	if err != nil {
		t.Fatalf("Hash: %v", err)
	}
	return h
}

func TestHashVerifyRoundTrip(t *testing.T) {
	for _, pw := range []string{"", "correct horse battery staple", "пароль-Ünïcödé-✓", strings.Repeat("x", 1000)} {
		h := mustHash(t, pw)
		if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") {
			t.Fatalf("Hash(%q) = %q, want the OWASP argon2id parameters", pw, h)
		}
		ok, err := passwd.Verify(h, pw)
		if err != nil || !ok {
			t.Fatalf("Verify(Hash(%q)) = %v, %v; want true, nil", pw, ok, err)
		}
	}
}

func TestHashSaltsDiffer(t *testing.T) {
	if a, b := mustHash(t, "same"), mustHash(t, "same"); a == b {
		t.Fatalf("two hashes of one password are equal (%q): the salt is not random", a)
	}
}

func TestVerifyWrongPassword(t *testing.T) {
	h := mustHash(t, "Secret-password-1")
	for _, pw := range []string{"", "Secret-password-2", "secret-password-1", "Secret-password-1 "} {
		ok, err := passwd.Verify(h, pw)
		if err != nil || ok {
			t.Fatalf("Verify(h, %q) = %v, %v; want false, nil", pw, ok, err)
		}
	}
}

// Well-formed salt and key fields, so that each row of the tables below is
// wrong in exactly one way.
const (
	salt16 = "c2FsdHNhbHRzYWx0c2FsdA"                      // "saltsaltsaltsalt"
	key32  = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" // 32 zero bytes
)

func TestVerifyMalformed(t *testing.T) {
	tests := []struct{ name, encoded string }{
		{"empty", ""},
		{"plain text", "password"},
		{"bcrypt", "$2a$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy"},
		{"argon2i", "$argon2i$v=19$m=19456,t=2,p=1$" + salt16 + "$" + key32},
		{"argon2d", "$argon2d$v=19$m=19456,t=2,p=1$" + salt16 + "$" + key32},
		{"old version", "$argon2id$v=16$m=19456,t=2,p=1$" + salt16 + "$" + key32},
		{"no version", "$argon2id$m=19456,t=2,p=1$" + salt16 + "$" + key32},
		{"missing leading dollar", "argon2id$v=19$m=19456,t=2,p=1$" + salt16 + "$" + key32},
		{"extra field", "$argon2id$v=19$m=19456,t=2,p=1$" + salt16 + "$" + key32 + "$"},
		{"missing key", "$argon2id$v=19$m=19456,t=2,p=1$" + salt16},
		{"params out of order", "$argon2id$v=19$t=2,m=19456,p=1$" + salt16 + "$" + key32},
		{"params missing p", "$argon2id$v=19$m=19456,t=2$" + salt16 + "$" + key32},
		{"params with spaces", "$argon2id$v=19$m=19456, t=2, p=1$" + salt16 + "$" + key32},
		{"negative memory", "$argon2id$v=19$m=-1,t=2,p=1$" + salt16 + "$" + key32},
		{"plus sign", "$argon2id$v=19$m=+19456,t=2,p=1$" + salt16 + "$" + key32},
		{"hex number", "$argon2id$v=19$m=0x4c00,t=2,p=1$" + salt16 + "$" + key32},
		{"overflowing number", "$argon2id$v=19$m=99999999999999999999,t=2,p=1$" + salt16 + "$" + key32},
		{"padded salt", "$argon2id$v=19$m=19456,t=2,p=1$" + salt16 + "==$" + key32},
		{"url base64 salt", "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0c2Fsd-_$" + key32},
		{"non-canonical base64 key", "$argon2id$v=19$m=19456,t=2,p=1$" + salt16 + "$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAB"},
		{"salt not base64", "$argon2id$v=19$m=19456,t=2,p=1$!!!!$" + key32},
		{"too long", "$argon2id$v=19$m=19456,t=2,p=1$" + salt16 + "$" + strings.Repeat("A", 300)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, err := passwd.Verify(tt.encoded, "password")
			if ok || !errors.Is(err, passwd.ErrMalformed) {
				t.Fatalf("Verify(%q) = %v, %v; want false, ErrMalformed", tt.encoded, ok, err)
			}
		})
	}
}

func TestVerifyOutOfBounds(t *testing.T) {
	tests := []struct{ name, params, salt, key string }{
		{"memory above 1 GiB", "m=1048577,t=1,p=1", salt16, key32},
		{"memory near 4 GiB", "m=4294967295,t=1,p=1", salt16, key32},
		{"memory below 8 KiB per lane", "m=7,t=1,p=1", salt16, key32},
		{"memory below 8 KiB per lane, 4 lanes", "m=31,t=1,p=4", salt16, key32},
		{"zero memory", "m=0,t=1,p=1", salt16, key32},
		{"zero passes", "m=64,t=0,p=1", salt16, key32},
		{"too many passes", "m=64,t=11,p=1", salt16, key32},
		{"zero lanes", "m=64,t=1,p=0", salt16, key32},
		{"too many lanes", "m=1024,t=1,p=17", salt16, key32},
		{"lanes overflow uint8", "m=65536,t=1,p=257", salt16, key32},
		{"salt of 7 bytes", "m=64,t=1,p=1", "c2FsdHNhbA", key32},
		{"salt of 65 bytes", "m=64,t=1,p=1", strings.Repeat("A", 87), key32},
		{"empty salt", "m=64,t=1,p=1", "", key32},
		{"key of 15 bytes", "m=64,t=1,p=1", salt16, "AAAAAAAAAAAAAAAAAAAA"},
		{"key of 4 bytes", "m=64,t=1,p=1", salt16, "AAAAAA"},
		{"empty key", "m=64,t=1,p=1", salt16, ""},
		{"key of 65 bytes", "m=64,t=1,p=1", salt16, strings.Repeat("A", 87)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			enc := "$argon2id$v=19$" + tt.params + "$" + tt.salt + "$" + tt.key
			ok, err := passwd.Verify(enc, "password")
			if ok || !errors.Is(err, passwd.ErrMalformed) {
				t.Fatalf("Verify(%q) = %v, %v; want false, ErrMalformed", enc, ok, err)
			}
		})
	}
}

// TestVerifyOtherParameters checks that hashes made with other in-bounds
// parameters (as after a future cost change) verify, and that the
// parameters are part of what is checked.
func TestVerifyOtherParameters(t *testing.T) {
	salt := []byte("0123456789abcdef0123")
	for _, p := range []struct {
		m, t   uint32
		p      uint8
		keyLen uint32
	}{{8, 1, 1, 16}, {128, 10, 16, 64}, {4096, 3, 4, 32}} {
		key := argon2.IDKey([]byte("password"), salt, p.t, p.m, p.p, p.keyLen)
		enc := fmt.Sprintf("$argon2id$v=19$m=%d,t=%d,p=%d$%s$%s", p.m, p.t, p.p,
			base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key))
		if ok, err := passwd.Verify(enc, "password"); err != nil || !ok {
			t.Fatalf("Verify(%q, password) = %v, %v; want true, nil", enc, ok, err)
		}
		if ok, err := passwd.Verify(enc, "Password"); err != nil || ok {
			t.Fatalf("Verify(%q, Password) = %v, %v; want false, nil", enc, ok, err)
		}
	}

	// The same salt and key under other parameters must not match.
	fields := strings.Split(mustHash(t, "password"), "$")
	for _, params := range []string{"m=64,t=1,p=1", "m=19456,t=3,p=1", "m=19456,t=2,p=2"} {
		enc := "$argon2id$v=19$" + params + "$" + fields[4] + "$" + fields[5]
		if ok, err := passwd.Verify(enc, "password"); err != nil || ok {
			t.Fatalf("Verify(%q) = %v, %v; want false, nil", enc, ok, err)
		}
	}
}

func TestVerifyErrorHidesHash(t *testing.T) {
	enc := "$argon2id$v=19$m=19456,t=2,p=1$" + salt16 + "$SECRETKEYSECRET"
	_, err := passwd.Verify(enc, "password")
	if err == nil || strings.Contains(err.Error(), "SECRETKEY") || strings.Contains(err.Error(), salt16) {
		t.Fatalf("Verify error %v must exist and not quote the hash", err)
	}
}

func BenchmarkHash(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := passwd.Hash("correct horse battery staple"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerify(b *testing.B) {
	h := mustHash(b, "correct horse battery staple")
	b.ReportAllocs()
	for b.Loop() {
		if ok, err := passwd.Verify(h, "correct horse battery staple"); err != nil || !ok {
			b.Fatal(ok, err)
		}
	}
}
