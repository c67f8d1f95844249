package jwtauth_test

import (
	"errors"
	"testing"

	"cpesuite/internal/configsvc/jwtauth"

	"github.com/golang-jwt/jwt/v5"
)

func isSentinel(err error) bool {
	return errors.Is(err, jwtauth.ErrExpired) || errors.Is(err, jwtauth.ErrWrongKind) || errors.Is(err, jwtauth.ErrInvalid)
}

func BenchmarkIssue(b *testing.B) {
	iss, err := jwtauth.NewIssuer(testKey, accessTTL, refreshTTL)
	if err != nil {
		b.Fatal(err)
	}
	c := jwtauth.Claims{RegisteredClaims: jwt.RegisteredClaims{Subject: "alice"}, UserID: 42, Role: "ADMIN"}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := iss.Issue(jwtauth.Access, c); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParse(b *testing.B) {
	iss, err := jwtauth.NewIssuer(testKey, accessTTL, refreshTTL)
	if err != nil {
		b.Fatal(err)
	}
	tok := issue(b, iss, jwtauth.Access)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := iss.Parse(tok, jwtauth.Access); err != nil {
			b.Fatal(err)
		}
	}
}
