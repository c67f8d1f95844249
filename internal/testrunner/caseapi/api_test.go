package caseapi

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/testrunner/identity"
	"cpesuite/internal/testrunner/testcase"
	"cpesuite/internal/testrunner/worker"
)

func TestNewChecksTheConfig(t *testing.T) {
	dir := t.TempDir()
	st, err := testcase.OpenStore(filepath.Join(dir, "tests"))
	if err != nil {
		t.Fatal(err)
	}
	good := Config{Cases: st, TreesDir: filepath.Join(dir, "trees"), DataDir: dir, Guard: identity.Guard{Secret: testSecret}}
	for name, change := range map[string]func(*Config){
		"no store":         func(c *Config) { c.Cases = nil },
		"no tree folder":   func(c *Config) { c.TreesDir = "" },
		"no data folder":   func(c *Config) { c.DataDir = "" },
		"short secret":     func(c *Config) { c.Guard.Secret = []byte("short") },
		"negative upload":  func(c *Config) { c.MaxUpload = -1 },
		"tree folder file": func(c *Config) { c.TreesDir = filepath.Join(dir, "file") },
	} {
		t.Run(name, func(t *testing.T) {
			if name == "tree folder file" {
				writeFile(t, filepath.Join(dir, "file"), "x")
			}
			cfg := good
			change(&cfg)
			if _, err := New(cfg); err == nil {
				t.Fatal("New accepted the config")
			}
		})
	}
	a, err := New(good)
	if err != nil {
		t.Fatal(err)
	}
	if a.cfg.MaxUpload != DefaultMaxUpload {
		t.Fatalf("MaxUpload %d", a.cfg.MaxUpload)
	}
}

// TestSharesTheWorkerMux wires the API as the app does, next to the
// worker's own routes on one mux: no pattern clashes, and unmatched /api/
// paths get the worker's JSON 404.
func TestSharesTheWorkerMux(t *testing.T) {
	e := newEnv(t)
	w, err := worker.New(worker.Config{DataDir: e.dataDir, Secret: testSecret}, e.cases, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Shutdown(context.Background()) })
	mux := httpx.NewMux()
	e.api.Routes(mux)
	w.Routes(mux)
	e.serve(mux)

	expect(t, e.do("POST", "/api/tests", sampleCase("shared", "t")), 201, "")
	expect(t, e.do("GET", "/api/tests/shared.yaml", nil), 200, "")
	expect(t, e.do("GET", "/api/runs/active", nil), 200, "")
	expect(t, e.do("GET", "/api/no-such-route", nil), 404, "NO_ROUTE")
	expect(t, e.do("PATCH", "/api/tests", nil), 404, "NO_ROUTE")
}

// TestConcurrentTreeUploads: of many uploads of one new name exactly one
// creates it; the others replace it.
func TestConcurrentTreeUploads(t *testing.T) {
	e := newEnv(t)
	const n = 8
	var wg sync.WaitGroup
	created := make(chan bool, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body, ct := multipartBody(t, "file", "race.xml", []byte(fmt.Sprintf("<a n=\"%d\"/>", i)))
			req := httptest.NewRequest("POST", "/api/trees/upload", strings.NewReader(string(body)))
			req.Header.Set("Content-Type", ct)
			identity.SignRequest(testSecret, req, editor, time.Now())
			rec := httptest.NewRecorder()
			e.mux.ServeHTTP(rec, req)
			created <- rec.Code == 201
			if rec.Code != 201 && rec.Code != 200 {
				t.Errorf("upload %d: %d %s", i, rec.Code, rec.Body)
			}
		}()
	}
	wg.Wait()
	close(created)
	count := 0
	for c := range created {
		if c {
			count++
		}
	}
	if count != 1 {
		t.Fatalf("%d uploads say they created race.xml", count)
	}
	if got := e.trees(); len(got) != 1 {
		t.Fatalf("trees %+v", got)
	}
}
