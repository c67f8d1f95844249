package accounts

import (
	"context"
	"io"
	"log/slog"
	"net/netip"
	"testing"

	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/platform/sqlstore/sqltest"
)

func benchService(b *testing.B) *Service {
	b.Helper()
	db := sqltest.Open(b, sqlstore.SQLite)
	svc, err := Open(context.Background(), db, Config{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := svc.Bootstrap(context.Background(), adminName, adminPass); err != nil {
		b.Fatal(err)
	}
	return svc
}

// BenchmarkLogin is a successful login on SQLite: one argon2id
// verification, a token insert and an audit insert. The argon2 step
// dominates by design.
func BenchmarkLogin(b *testing.B) {
	svc := benchService(b)
	ctx := context.Background()
	client := netip.MustParseAddr("192.0.2.1")
	b.ReportAllocs()
	for b.Loop() {
		if _, _, _, err := svc.Login(ctx, adminName, adminPass, client); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAuthenticate is the per-request cost of a bearer token on
// SQLite: a SHA-256 and one primary-key read joined to the account.
func BenchmarkAuthenticate(b *testing.B) {
	svc := benchService(b)
	ctx := context.Background()
	token, _, _, err := svc.Login(ctx, adminName, adminPass, netip.Addr{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := svc.Authenticate(ctx, token); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAuthenticateParallel is the same from all cores at once, as a
// busy gateway sees it; SQLite's WAL lets the reads run side by side.
func BenchmarkAuthenticateParallel(b *testing.B) {
	svc := benchService(b)
	ctx := context.Background()
	token, _, _, err := svc.Login(ctx, adminName, adminPass, netip.Addr{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := svc.Authenticate(ctx, token); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
