// Command acsload plays many CPEs doing Inform -> empty POST -> 204
// against the ACS, and against a no-op Go HTTP handler that answers the
// same bytes, in one run, and reports sessions/s of both and their ratio.
//
//	go run ./bench/acsload -store sqlite   -duration 10s
//	go run ./bench/acsload -store postgres -duration 10s
//
// The ACS runs in this process on loopback with its real store (every
// Inform is a durable device upsert, answered only after commit) and the
// real CWMP handler, Basic authentication included.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"cpesuite/internal/acs"
	"cpesuite/internal/cwmp"
	"cpesuite/internal/platform/metrics"
	"cpesuite/internal/platform/sqlstore"
)

func main() {
	store := flag.String("store", "sqlite", "sqlite or postgres")
	pgDSN := flag.String("pg", envOr("CPESUITE_TEST_POSTGRES_DSN", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"), "PostgreSQL DSN")
	duration := flag.Duration("duration", 10*time.Second, "measuring time per target")
	conc := flag.Int("c", 64, "concurrent CPEs")
	devices := flag.Int("devices", 20000, "distinct devices cycled through")
	params := flag.Int("params", 25, "parameters per Inform")
	writers := flag.Int("writers", 2, "ACS inform batch writers")
	flag.Parse()
	if err := run(*store, *pgDSN, *duration, *conc, *devices, *params, *writers); err != nil {
		fmt.Fprintln(os.Stderr, "acsload:", err)
		os.Exit(1)
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func run(storeKind, pgDSN string, d time.Duration, conc, devices, nparams, writers int) error {
	ctx := context.Background()
	db, cleanup, err := openDB(ctx, storeKind, pgDSN)
	if err != nil {
		return err
	}
	defer cleanup()
	st, err := acs.OpenStore(ctx, db, 1)
	if err != nil {
		return err
	}
	cfg := acs.Config{CWMPPath: "/", SessionTimeout: 30 * time.Second, MaxSessions: 100000, RetryAfter: time.Second, MaxBodyBytes: 1 << 20,
		Auth: "basic,digest", Username: "cpe", Password: "bench", OnlineGrace: 2, DefaultOnlineWindow: 10 * time.Minute, MaxAttempts: 3,
		MaxDiagnostics: 10, DiagnosticsTimeout: time.Hour, SpeedtestURL: "http://127.0.0.1:7580", DefaultDomain: 1,
		InformBatch: acs.MaxInformBatch, InformWriters: writers, ConnReq: acs.ConnRequestConfig{Timeout: time.Second, Attempts: 1}}
	a, err := acs.New(cfg, st, slog.New(slog.DiscardHandler), metrics.NewRegistry())
	if err != nil {
		return err
	}
	svc := a.Services()
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := svc.Start(runCtx); err != nil {
		return err
	}
	go func() { _ = svc.Run(runCtx) }()

	informs := make([][]byte, devices)
	for i := range informs {
		if informs[i], err = informBody(i, nparams); err != nil {
			return err
		}
	}
	resp, _ := cwmp.Encode(cwmp.NewEnvelope(cwmp.CWMP12, "1", &cwmp.InformResponse{MaxEnvelopes: 1}))
	noop := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if len(b) == 0 {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: "cwmpsession", Value: "x", Path: "/"})
		w.Header().Set("Content-Type", `text/xml; charset="utf-8"`)
		_, _ = w.Write(resp)
	})

	auth := "Basic " + base64.StdEncoding.EncodeToString([]byte("cpe:bench"))
	fmt.Printf("acsload: store=%s concurrency=%d devices=%d params/inform=%d inform-size=%dB duration=%s GOMAXPROCS=%d\n",
		storeKind, conc, devices, nparams, len(informs[0]), d, runtime.GOMAXPROCS(0))

	// Warm up the ACS so every device exists (steady state is updates).
	if _, err := load(a, informs, auth, conc, 0, devices); err != nil {
		return err
	}
	var ms0, ms1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms0)

	noopRes, err := load(noop, informs, auth, conc, d, 0)
	if err != nil {
		return err
	}
	acsRes, err := load(a, informs, auth, conc, d, 0)
	if err != nil {
		return err
	}
	runtime.GC()
	runtime.ReadMemStats(&ms1)
	total, online, _ := st.CountDevices(ctx)
	fmt.Printf("noop baseline: %8.0f sessions/s  p50 %s  p99 %s\n", noopRes.rate, noopRes.p50, noopRes.p99)
	fmt.Printf("acs (%s): %8.0f sessions/s  p50 %s  p99 %s  errors %d\n", storeKind, acsRes.rate, acsRes.p50, acsRes.p99, acsRes.errors)
	fmt.Printf("ratio acs/noop: %.3f\n", acsRes.rate/noopRes.rate)
	fmt.Printf("devices in registry: %d (online %d); heap in use after the run: %.1f MiB (%+.1f MiB vs. after warm-up); goroutines: %d\n",
		total, online, float64(ms1.HeapInuse)/(1<<20), (float64(ms1.HeapInuse)-float64(ms0.HeapInuse))/(1<<20), runtime.NumGoroutine())
	return nil
}

type result struct {
	rate     float64
	p50, p99 time.Duration
	errors   int64
}

// load runs sessions against h over real loopback TCP: for d, or, when
// d is 0, exactly count sessions.
func load(h http.Handler, informs [][]byte, auth string, conc int, d time.Duration, count int) (result, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return result{}, err
	}
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	url := "http://" + ln.Addr().String() + "/"
	tr := &http.Transport{MaxIdleConnsPerHost: conc, MaxConnsPerHost: conc}
	defer tr.CloseIdleConnections()

	var next, done, errs atomic.Int64
	var mu sync.Mutex
	var lat []time.Duration
	stop := time.Now().Add(d)
	began := time.Now()
	var wg sync.WaitGroup
	var firstErr atomic.Value
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{Transport: tr}
			var mine []time.Duration
			for {
				i := next.Add(1) - 1
				if (d > 0 && time.Now().After(stop)) || (d == 0 && i >= int64(count)) {
					break
				}
				t0 := time.Now()
				if err := session(client, url, auth, informs[i%int64(len(informs))]); err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err)
					continue
				}
				mine = append(mine, time.Since(t0))
				done.Add(1)
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	took := time.Since(began)
	if done.Load() == 0 {
		return result{}, fmt.Errorf("no session succeeded: %v", firstErr.Load())
	}
	slices.Sort(lat)
	return result{rate: float64(done.Load()) / took.Seconds(), p50: lat[len(lat)/2], p99: lat[len(lat)*99/100], errors: errs.Load()}, nil
}

func session(c *http.Client, url, auth string, inform []byte) error {
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(inform))
	req.Header.Set("Authorization", auth)
	req.Header.Set("Content-Type", "text/xml")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("inform: %s", resp.Status)
	}
	var cookie string
	for _, c := range resp.Cookies() {
		if c.Name == "cwmpsession" {
			cookie = c.Value
		}
	}
	req, _ = http.NewRequest(http.MethodPost, url, nil)
	req.AddCookie(&http.Cookie{Name: "cwmpsession", Value: cookie})
	resp, err = c.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("empty POST: %s", resp.Status)
	}
	return nil
}

func informBody(i, nparams int) ([]byte, error) {
	inf := &cwmp.Inform{DeviceID: cwmp.DeviceID{Manufacturer: "Acme", OUI: "00D09E", ProductClass: fmt.Sprintf("HG%d", i%20), SerialNumber: fmt.Sprintf("LOAD%07d", i)},
		Event: []cwmp.EventStruct{{EventCode: cwmp.EventPeriodic}}, MaxEnvelopes: 1, CurrentTime: time.Now().UTC().Truncate(time.Second)}
	base := []cwmp.ParameterValueStruct{
		{Name: "InternetGatewayDevice.DeviceSummary", Value: cwmp.String("InternetGatewayDevice:1.4[](Baseline:1)")},
		{Name: "InternetGatewayDevice.DeviceInfo.SoftwareVersion", Value: cwmp.String("V3.2.1")},
		{Name: "InternetGatewayDevice.DeviceInfo.HardwareVersion", Value: cwmp.String("HW1")},
		{Name: "InternetGatewayDevice.DeviceInfo.ModelName", Value: cwmp.String("Home Gateway")},
		{Name: "InternetGatewayDevice.ManagementServer.ConnectionRequestURL", Value: cwmp.String(fmt.Sprintf("http://10.%d.%d.%d:7547/cr", i>>16&255, i>>8&255, i&255))},
		{Name: "InternetGatewayDevice.ManagementServer.PeriodicInformInterval", Value: cwmp.UnsignedInt(300)},
		{Name: "InternetGatewayDevice.WANDevice.1.WANConnectionDevice.1.WANIPConnection.1.ExternalIPAddress", Value: cwmp.String(fmt.Sprintf("100.64.%d.%d", i>>8&255, i&255))},
	}
	for len(base) < nparams {
		n := len(base)
		base = append(base, cwmp.ParameterValueStruct{Name: fmt.Sprintf("InternetGatewayDevice.X_VENDOR.Stats.Counter%d", n), Value: cwmp.UnsignedInt(uint32(n * 1000))})
	}
	inf.ParameterList = base[:nparams]
	return cwmp.Encode(cwmp.NewEnvelope(cwmp.CWMP12, "1", inf))
}

func openDB(ctx context.Context, kind, pgDSN string) (*sqlstore.DB, func(), error) {
	switch kind {
	case "sqlite":
		dir, err := os.MkdirTemp("", "acsload-")
		if err != nil {
			return nil, nil, err
		}
		db, err := sqlstore.OpenSQLiteFile(ctx, dir+"/acs.db")
		return db, func() { db.Close(); os.RemoveAll(dir) }, err
	case "postgres":
		schema := "acsload_" + strings.ToLower(rand.Text()[:10])
		admin, err := sql.Open("pgx", pgDSN)
		if err != nil {
			return nil, nil, err
		}
		if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
			return nil, nil, fmt.Errorf("creating schema: %w", err)
		}
		sep := "?"
		if strings.Contains(pgDSN, "?") {
			sep = "&"
		}
		db, err := sqlstore.Open(ctx, sqlstore.Config{Dialect: sqlstore.Postgres, DSN: pgDSN + sep + "search_path=" + schema})
		return db, func() {
			if db != nil {
				db.Close()
			}
			_, _ = admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
			admin.Close()
		}, err
	}
	return nil, nil, fmt.Errorf("store %q: want sqlite or postgres", kind)
}
