package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/testutil"
)

// campaignDeadline bounds the wait for one whole activation (two runs of
// 48 measured CPEs each) on a loaded machine.
const campaignDeadline = 6 * time.Minute

// runView is a run as POST /FCC/activations/list answers it.
type runView struct {
	ID        int64            `json:"id"`
	RunNumber int              `json:"runNumber"`
	State     string           `json:"state"`
	Reason    *string          `json:"reason"`
	FleetSize int64            `json:"fleetSize"`
	Devices   map[string]int64 `json:"devices"`
	Results   *int64           `json:"results"`
}

type runList struct {
	State string    `json:"state"`
	Items []runView `json:"items"`
}

// TestCampaignMeasuresEmulatedFleet is the acceptance chain of the campaign
// issues: a campaign saved over 50 CPEs (24 emulated TR-098, 24 emulated
// TR-181, 2 USP rows in the ACS tables) is activated, the service hands the
// run to our ACS through the outbox and the grid, the ACS runs real TR-143
// diagnostics (transfers against the speedtest target, pings) on every
// supported CPE, skips the USP ones, streams the results back over the
// grid into the result store, and the campaign goes through its
// reactivation to COMPLETED. SPEED and LATENCY, into DuckDB (the default
// of up) and into ClickHouse.
func TestCampaignMeasuresEmulatedFleet(t *testing.T) {
	engines := []struct {
		name string
		env  func(t *testing.T) map[string]string
	}{
		{"duckdb", func(*testing.T) map[string]string { return nil }},
		{"clickhouse", clickhouseEnv},
	}
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			dataDir := t.TempDir()
			env := map[string]string{
				"CPESUITE_DATA_DIR": dataDir,
				// A minute lasts a second: the 1-hour window lasts a minute.
				"CPESUITE_CAMPAIGN_TIME_SCALE":     "60",
				"SVC_FCC_SCHEDULER_POLL_INTERVAL":  "200ms",
				"SVC_FCC_OUTBOX_DISPATCH_INTERVAL": "200ms",
				"SVC_FCC_RESULT_FLUSH_INTERVAL":    "200ms",
				"SVC_FCC_WATCHDOG_POLL_INTERVAL":   "1s",
			}
			for k, v := range eng.env(t) {
				env[k] = v
			}
			p := up(t, "acs,speedtest,tr069-emulator,fcc", env)
			emu := p.url("CPESUITE_TR069_EMULATOR_ADDR", "")
			noTaskDelays(t, emu)
			var serials []string
			for i := 1; i <= 24; i++ {
				for _, proto := range []string{"TR-098", "TR-181"} {
					s := fmt.Sprintf("CMP%s-%02d", strings.ReplaceAll(proto, "-", ""), i)
					serials = append(serials, s)
					post(t, emu+"/apiV2/startProtocol", map[string]string{"protocol": proto, "serial": s})
				}
			}
			waitResolvable(t, p, serials)
			serials = append(serials, addUSPDevices(t, dataDir)...)

			speed := map[string]any{"type": "SPEED", "testMode": "FILE_BASED",
				"downloadUrl": p.url("CPESUITE_SPEEDTEST_ADDR", "/download?size=200000"),
				"uploadUrl":   p.url("CPESUITE_SPEEDTEST_ADDR", "/upload"), "fileSizeUpload": 100000}
			latency := map[string]any{"type": "LATENCY", "testHost": "127.0.0.1"}
			for _, c := range []struct {
				kind       string
				settings   map[string]any
				directions int64
			}{{"SPEED", speed, 2}, {"LATENCY", latency, 1}} {
				t.Run(c.kind, func(t *testing.T) {
					id := saveCampaign(t, p, c.kind, serials, c.settings)
					status, body := fccCall(t, p, "POST", "/FCC/activate", map[string]any{"id": id})
					if status != 200 {
						t.Fatalf("activate: %d %s", status, body)
					}
					// A second activation while it is scheduled or running is refused.
					if status, body := fccCall(t, p, "POST", "/FCC/activate", map[string]any{"id": id}); status != 409 {
						t.Fatalf("second activate: %d %s", status, body)
					}
					var list runList
					testutil.Eventually(t, campaignDeadline, c.kind+" campaign COMPLETED after its reactivation", func() bool {
						status, body := fccCall(t, p, "POST", "/FCC/activations/list", map[string]any{"id": id})
						if status != 200 {
							t.Fatalf("activations: %d %s", status, body)
						}
						list = runList{}
						_ = json.Unmarshal(body, &list)
						if list.State == "ERROR" {
							t.Fatalf("campaign in ERROR: %s", body)
						}
						return list.State == "COMPLETED"
					})
					if len(list.Items) != 2 {
						t.Fatalf("want 2 runs (reactivationCount 1), got %+v", list.Items)
					}
					for _, r := range list.Items {
						if r.State != "FINISHED" || r.FleetSize != 50 {
							t.Errorf("run %d: state %s reason %v fleet %d", r.RunNumber, r.State, deref(r.Reason), r.FleetSize)
						}
					}
					// Results flush in batches, and device states travel on a
					// queue of their own, which may be read after the run's
					// end: wait until every measurement is stored and every
					// device state has arrived.
					want := 48 * c.directions
					testutil.Eventually(t, testutil.MinDeadline, "every result stored and every device state in", func() bool {
						_, body := fccCall(t, p, "POST", "/FCC/activations/list", map[string]any{"id": id})
						_ = json.Unmarshal(body, &list)
						for _, r := range list.Items {
							if r.Results == nil || *r.Results != want || r.Devices["DONE"] != 48 || r.Devices["SKIPPED"] != 2 {
								return false
							}
						}
						return true
					})
					checkReports(t, p, id, c.kind, want)
				})
			}
		})
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// waitResolvable waits until the campaign service sees every serial in the
// ACS tables.
func waitResolvable(t *testing.T, p *platform, serials []string) {
	t.Helper()
	testutil.Eventually(t, platformDeadline, fmt.Sprintf("%d emulated CPEs resolvable", len(serials)), func() bool {
		status, body := fccCall(t, p, "POST", "/FCC/devices/count", map[string]any{"sourceType": "SERIAL_LIST", "serials": serials})
		if status != 200 {
			return false
		}
		var res struct{ TotalCount int }
		_ = json.Unmarshal(body, &res)
		return res.TotalCount == len(serials)
	})
}

// addUSPDevices writes two USP devices into the ACS tables, as a USP
// controller sharing the tables would: the campaign must skip them
// (UNSUPPORTED) and never send them an RPC.
func addUSPDevices(t *testing.T, dataDir string) []string {
	t.Helper()
	ctx := context.Background()
	db, err := sqlstore.OpenService(ctx, "sqlite", "", filepath.Join(dataDir, "acs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`INSERT INTO acs_product_classes (oui, product_class, model_name, protocol_id) VALUES ('00D09E', 'USPHUB', 'USP Hub', 3)`)
	serials := []string{"CMPUSP-01", "CMPUSP-02"}
	for _, s := range serials {
		exec(`INSERT INTO acs_devices (oui, product_class, serial, product_class_id, domain_id)
			VALUES ('00D09E', 'USPHUB', ?, (SELECT id FROM acs_product_classes WHERE product_class = 'USPHUB'), 1)`, s)
	}
	return serials
}

func saveCampaign(t *testing.T, p *platform, kind string, serials []string, settings map[string]any) int64 {
	t.Helper()
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	status, body := fccCall(t, p, "PUT", "/FCC/item/details", map[string]any{
		"name": "e2e " + kind, "type": kind, "domainId": 1,
		"activation": map[string]any{"type": "Immediately", "totalTestDuration": 1, "singleTestDuration": 60,
			"batchInterval": 0, "failedTestRetries": 1, "wanUsageRetries": 0, "requestDeviceConnect": true},
		// startsOn in the past: the second run is due as soon as the first
		// closes.
		"reactivation": map[string]any{"type": "Daily", "repeatEvery": 1, "startsOn": past, "ends": "After", "reactivationCount": 1},
		"configs":      []any{map[string]any{"sourceType": "SERIAL_LIST", "serials": serials, "settings": []any{settings}}},
	})
	if status != 200 {
		t.Fatalf("save %s: %d %s", kind, status, body)
	}
	var saved struct{ ID int64 }
	_ = json.Unmarshal(body, &saved)
	return saved.ID
}

// clickhouseEnv points the result store at a fresh database of the local
// ClickHouse server, dropped afterwards.
func clickhouseEnv(t *testing.T) map[string]string {
	addr := testutil.RequireClickHouse(t)
	admin, err := clickhouse.Open(&clickhouse.Options{Addr: []string{addr}, ReadTimeout: time.Minute, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := "cpesuite_e2e_" + hex.EncodeToString(b)
	ctx, cancel := context.WithTimeout(context.Background(), testutil.MinDeadline)
	defer cancel()
	if err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("creating database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testutil.MinDeadline)
		defer cancel()
		if err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+name); err != nil {
			t.Errorf("dropping database %s: %v", name, err)
		}
		admin.Close()
	})
	return map[string]string{"CPESUITE_FCC_RESULTSTORE_ENGINE": "clickhouse",
		"CPESUITE_FCC_RESULTSTORE_DSN": "clickhouse://" + addr + "/" + name}
}

// checkReports: the campaign's report is listed, generated and exported in
// both formats, and the files are read back by readers other than ours
// (Python's csv module, and its zipfile and XML parser for the XLSX).
func checkReports(t *testing.T, p *platform, id int64, kind string, perRun int64) {
	t.Helper()
	status, body := fccCall(t, p, "POST", "/FCC/reports/list", map[string]any{"campaignId": id})
	var list struct {
		Items []struct {
			RunNumber int   `json:"runNumber"`
			FleetSize int64 `json:"fleetSize"`
			Results   int64 `json:"results"`
		} `json:"items"`
	}
	if status != 200 || json.Unmarshal(body, &list) != nil || len(list.Items) != 2 {
		t.Fatalf("reports/list: %d %s", status, body)
	}
	for _, r := range list.Items {
		if r.Results != perRun || r.FleetSize != 50 {
			t.Errorf("report of run %d: %d results, fleet %d; want %d and 50", r.RunNumber, r.Results, r.FleetSize, perRun)
		}
	}
	status, body = fccCall(t, p, "POST", "/FCC/reports/generate", map[string]any{"campaignId": id})
	var sum struct {
		Results         int64    `json:"results"`
		DistinctSerials int64    `json:"distinctSerials"`
		DistinctRuns    int64    `json:"distinctRuns"`
		AverageKbps     *float64 `json:"averageKbps"`
	}
	if status != 200 || json.Unmarshal(body, &sum) != nil {
		t.Fatalf("reports/generate: %d %s", status, body)
	}
	if sum.Results != 2*perRun || sum.DistinctSerials != 48 || sum.DistinctRuns != 2 || (kind == "SPEED") != (sum.AverageKbps != nil) {
		t.Errorf("summary %s", body)
	}
	dir := t.TempDir()
	for _, format := range []string{"CSV", "XLSX"} {
		data, _ := json.Marshal(map[string]any{"campaignId": id, "format": format})
		req, _ := http.NewRequest("POST", p.url("CPESUITE_FCC_ADDR", "/FCC/reports/export"), bytes.NewReader(data))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-SVC-Domain-Scope", "ALL")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		file, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cd := resp.Header.Get("Content-Disposition")
		if resp.StatusCode != 200 || !regexp.MustCompile(`^attachment; filename="fcc-report.*\d{8}-\d{6}\.`+strings.ToLower(format)+`"$`).MatchString(cd) {
			t.Fatalf("export %s: %d %q %.200s", format, resp.StatusCode, cd, file)
		}
		path := filepath.Join(dir, "report."+strings.ToLower(format))
		if err := os.WriteFile(path, file, 0o600); err != nil {
			t.Fatal(err)
		}
		// Data rows (the header excluded) as another reader counts them.
		script := `import csv,sys; r=list(csv.reader(open(sys.argv[1],newline='',encoding='utf-8'),strict=True)); print(len(r)-1)`
		if format == "XLSX" {
			script = `import zipfile,sys,xml.etree.ElementTree as E; z=zipfile.ZipFile(sys.argv[1]); n='{http://schemas.openxmlformats.org/spreadsheetml/2006/main}'; print(len(list(E.fromstring(z.read('xl/worksheets/sheet1.xml')).iter(n+'row')))-1)`
		}
		out, err := exec.Command("python3", "-c", script, path).CombinedOutput()
		if err != nil {
			t.Fatalf("reading the %s export with python3: %v\n%s", format, err, out)
		}
		if got := strings.TrimSpace(string(out)); got != strconv.FormatInt(2*perRun, 10) {
			t.Errorf("%s export: python3 reads %s data rows, want %d", format, got, 2*perRun)
		}
	}
}
