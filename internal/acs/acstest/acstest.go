// Package acstest runs a real ACS (SQLite store, CWMP endpoint and
// management API on httptest servers) for the tests of other packages: the
// emulators and end-to-end chains talk to the genuine article.
package acstest

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"cpesuite/internal/acs"
	"cpesuite/internal/acs/acsclient"
	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/platform/logx"
	"cpesuite/internal/platform/metrics"
	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/platform/sqlstore/sqltest"
)

// ACS is a running test ACS.
type ACS struct {
	*acs.ACS
	// CWMPURL is where CPEs post; APIURL the management API base.
	CWMPURL, APIURL string
	Client          *acsclient.Client
	Config          acs.Config
}

// Config returns the test defaults: Digest and Basic with cpe/s3cret,
// quick connection requests and no session ceiling worth mentioning.
func Config() acs.Config {
	return acs.Config{CWMPPath: "/", DBDialect: "sqlite", SessionTimeout: 30 * time.Second, MaxSessions: 5000, RetryAfter: 1 * time.Second,
		MaxBodyBytes: 4 << 20, Auth: "digest,basic", Username: "cpe", Password: "s3cret",
		ConnReq:     acs.ConnRequestConfig{Timeout: 5 * time.Second, Attempts: 2, Backoff: 50 * time.Millisecond, Username: "cpe", Password: "s3cret"},
		OnlineGrace: 2, DefaultOnlineWindow: 10 * time.Minute, MaxAttempts: 3, MaxDiagnostics: 100, DiagnosticsTimeout: time.Hour,
		SpeedtestURL: "http://127.0.0.1:7580", DefaultDomain: 1, InformBatch: 64, InformWriters: 2}
}

// Start runs an ACS with cfg (Config() when nil is passed to edit) until
// the test ends.
func Start(t testing.TB, edit func(*acs.Config)) *ACS {
	t.Helper()
	cfg := Config()
	if edit != nil {
		edit(&cfg)
	}
	return StartWithDB(t, sqltest.Open(t, sqlstore.SQLite), cfg)
}

// StartWithDB runs an ACS on the given database.
func StartWithDB(t testing.TB, db *sqlstore.DB, cfg acs.Config) *ACS {
	t.Helper()
	store, err := acs.OpenStore(context.Background(), db, cfg.DefaultDomain)
	if err != nil {
		t.Fatal(err)
	}
	a, err := acs.New(cfg, store, logx.Discard(), metrics.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	svc := a.Services()
	if err := svc.Start(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = svc.Run(ctx); close(done) }()
	cwmpSrv := httptest.NewServer(a)
	mux := httpx.NewMux()
	acs.NewAPI(a).Routes(mux)
	apiSrv := httptest.NewServer(mux)
	t.Cleanup(func() {
		apiSrv.Close()
		cwmpSrv.Close()
		cancel()
		<-done
		_ = svc.Stop(context.Background())
	})
	return &ACS{ACS: a, CWMPURL: cwmpSrv.URL + "/", APIURL: apiSrv.URL, Client: acsclient.New(apiSrv.URL, nil), Config: cfg}
}
