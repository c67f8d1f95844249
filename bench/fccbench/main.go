// Command fccbench measures the campaign service's issue-5 figures over a
// seeded ACS dataset (see bench/fccseed): resolve + count of a
// 20,000-device condition page, resolve of a 20,000-serial list, and the
// save of a campaign with a 20,000-device fleet. Requests go over loopback
// HTTP through the real handlers, identity filter included.
//
//	go run ./bench/fccseed/cmd/fccseed -dialect postgres -dsn "$PG/fccbench"
//	go run ./bench/fccbench -dialect postgres -acs-dsn "$PG/fccbench" -fcc-dsn "$PG/fccbench" -runs 9
//
// It prints every run and the median of each figure.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"cpesuite/internal/fcc"
	"cpesuite/internal/platform/httpx"
)

func main() {
	dialect := flag.String("dialect", "sqlite", "sqlite or postgres (both stores)")
	acsDSN := flag.String("acs-dsn", "", "the seeded ACS database (SQLite path or PostgreSQL URL)")
	fccDSN := flag.String("fcc-dsn", "", "the campaign store; may be the same database")
	runs := flag.Int("runs", 9, "runs per figure")
	model := flag.Int64("model", 1, "model id of the condition page (model 1 holds about a fifth of the seeded devices)")
	domains := flag.Int("domains", 0, "0: scope ALL; N: scope LIST over domains 2..N+1")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the measured runs here")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fccbench:", err)
			os.Exit(1)
		}
		_ = pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	if err := run(*dialect, *acsDSN, *fccDSN, *runs, *model, *domains); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "fccbench:", err)
		os.Exit(1)
	}
}

type client struct {
	base string
	hdr  http.Header
}

func (c client) call(method, path string, body any, out any) (time.Duration, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequest(method, c.base+path, bytes.NewReader(b))
	if err != nil {
		return 0, err
	}
	req.Header = c.hdr.Clone()
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	took := time.Since(start)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return 0, err
		}
	}
	return took, nil
}

func run(dialect, acsDSN, fccDSN string, runs int, model int64, domains int) error {
	if acsDSN == "" || fccDSN == "" {
		return fmt.Errorf("-acs-dsn and -fcc-dsn are required")
	}
	ctx := context.Background()
	cfg := fcc.Config{DBDialect: dialect, DBDSN: fccDSN, ACSDBDialect: dialect, ACSDBDSN: acsDSN,
		MaxDevicesPerTest: 20000, MaxConfigsPerTest: 10, ResolvePageSize: 100, SerialFileMaxSize: 10 << 20,
		ExportTimeout: 10 * time.Minute, IOTWEnabled: true, DefaultConnections: 16, UserFallback: "bench", ACSSchemaCheck: true}
	log := slog.New(slog.DiscardHandler)
	svc, closeDBs, err := fcc.Open(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer closeDBs()
	mux := httpx.NewMux()
	fcc.NewAPI(svc).Routes(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	c := client{base: srv.URL, hdr: http.Header{}}
	c.hdr.Set(fcc.HeaderUserID, "bench")
	if domains == 0 {
		c.hdr.Set(fcc.HeaderScope, "ALL")
	} else {
		ids := make([]string, domains)
		for i := range ids {
			ids[i] = fmt.Sprint(i + 2)
		}
		c.hdr.Set(fcc.HeaderScope, "LIST")
		c.hdr.Set(fcc.HeaderDomainIDs, strings.Join(ids, ","))
		c.hdr.Set(fcc.HeaderDomainID, "2")
	}

	condition := map[string]any{"sourceType": "CONDITION", "condition": map[string]any{"modelIds": []int64{model}}, "pageSize": 20000}
	// 20,000 distinct seeded serials, every fifth in lower case.
	rng := rand.New(rand.NewPCG(7, 7))
	seen := map[int]bool{}
	var serials []string
	var ids []int64 // the same devices by cpe id: the seeded ids of distinct serials equal their number
	for len(serials) < 20000 {
		n := 1 + rng.IntN(900000)
		if seen[n] || n%1000 == 0 {
			continue // orphans have no model; keep the fleet measurable
		}
		seen[n] = true
		ids = append(ids, int64(n))
		s := fmt.Sprintf("SN%08d", n)
		if len(serials)%5 == 0 {
			s = strings.ToLower(s)
		}
		serials = append(serials, s)
	}
	serialReq := map[string]any{"sourceType": "SERIAL_LIST", "serials": serials, "pageSize": 20000}
	date := time.Now().Add(24 * time.Hour).UTC()
	campaign := map[string]any{"name": "bench", "type": "SPEED", "domainId": 2,
		"activation": map[string]any{"type": "Scheduled", "date": date, "totalTestDuration": 2, "singleTestDuration": 30},
		// A device list: 20,000 serials resolve to about 20,400 devices (2%
		// of the seeded serials sit on two product classes), above the limit.
		"configs": []any{map[string]any{"manufacturer": "Manufacturer 001", "model": "Model 0001", "sourceType": "DEVICE_LIST", "selectedDevices": ids,
			"settings": []any{map[string]any{"type": "SPEED", "downloadUrl": "http://speed.example/dl", "uploadUrl": "http://speed.example/ul", "testMode": "FILE_BASED"}}}}}

	type figure struct {
		name string
		fn   func() (time.Duration, string, error)
		got  []time.Duration
	}
	figures := []*figure{
		{name: "resolve page of 20,000 (condition)", fn: func() (time.Duration, string, error) {
			var r struct {
				Items      []json.RawMessage
				TotalCount int64
			}
			d, err := c.call("POST", "/FCC/devices/resolve", condition, &r)
			return d, fmt.Sprintf("%d items of %d", len(r.Items), r.TotalCount), err
		}},
		{name: "count (same condition)", fn: func() (time.Duration, string, error) {
			var r struct{ TotalCount int64 }
			d, err := c.call("POST", "/FCC/devices/count", condition, &r)
			return d, fmt.Sprintf("%d devices", r.TotalCount), err
		}},
		{name: "resolve 20,000-serial list", fn: func() (time.Duration, string, error) {
			var r struct {
				Items           []json.RawMessage
				TotalCount      int64
				NotFoundSerials []string
			}
			d, err := c.call("POST", "/FCC/devices/resolve", serialReq, &r)
			return d, fmt.Sprintf("%d items, %d not found", len(r.Items), len(r.NotFoundSerials)), err
		}},
		{name: "save campaign with a 20,000-device fleet", fn: func() (time.Duration, string, error) {
			var r struct{ ID int64 }
			d, err := c.call("PUT", "/FCC/item/details", campaign, &r)
			return d, fmt.Sprintf("campaign %d", r.ID), err
		}},
	}
	// One warm-up round: connection pools, prepared plans, page cache.
	for _, f := range figures {
		if _, _, err := f.fn(); err != nil {
			return err
		}
	}
	for i := range runs {
		for _, f := range figures {
			d, note, err := f.fn()
			if err != nil {
				return err
			}
			f.got = append(f.got, d)
			fmt.Printf("run %d  %-42s %8.1f ms  (%s)\n", i+1, f.name, ms(d), note)
		}
	}
	fmt.Printf("\n%s, %d runs, median (min-max):\n", dialect, runs)
	for _, f := range figures {
		slices.Sort(f.got)
		fmt.Printf("  %-42s %8.1f ms  (%.1f-%.1f)\n", f.name, ms(f.got[len(f.got)/2]), ms(f.got[0]), ms(f.got[len(f.got)-1]))
	}
	rc := figures[0].got[len(figures[0].got)/2] + figures[1].got[len(figures[1].got)/2]
	fmt.Printf("  %-42s %8.1f ms\n", "resolve + count (sum of medians)", ms(rc))
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
