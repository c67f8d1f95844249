package fcc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"testing"

	"cpesuite/internal/fcc/export"
	"cpesuite/internal/fcc/results"
	"cpesuite/internal/fcc/results/storetest"
	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/sqlstore"
)

// sliceReports is a result store whose Stream hands out fixed rows; it
// can fail before row failAt, and records the filters it was given.
type sliceReports struct {
	results.Store
	rows    []results.Row
	failAt  int // -1: never
	failErr error

	mu      sync.Mutex
	filters []results.Filter
}

func (s *sliceReports) RunCounts(context.Context, results.Filter, []int64) (map[int64]results.RunCounts, error) {
	return nil, errors.New("not used")
}

func (s *sliceReports) Page(context.Context, results.Filter, int, int) ([]results.Row, int64, error) {
	return nil, 0, errors.New("not used")
}

func (s *sliceReports) Summarise(context.Context, results.Filter) (results.Summary, error) {
	return results.Summary{}, errors.New("not used")
}

func (s *sliceReports) Stream(ctx context.Context, f results.Filter, fn func(*results.Row) error) error {
	s.mu.Lock()
	s.filters = append(s.filters, f)
	s.mu.Unlock()
	for i := range s.rows {
		if i == s.failAt {
			return s.failErr
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(&s.rows[i]); err != nil {
			return err
		}
	}
	return nil
}

func (s *sliceReports) calls() []results.Filter {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]results.Filter(nil), s.filters...)
}

func exportHarness(t *testing.T, rows []results.Row) (*harness, *sliceReports) {
	h := newHarness(t, sqlstore.SQLite, nil)
	store := &sliceReports{rows: rows, failAt: -1}
	useGate(h.svc, fakeGate{results.StateUp})
	h.svc.UseResultStore(store)
	return h, store
}

// readExport runs an independent reader of package export's tests over a
// file and returns its rows.
func readExport(t *testing.T, script string, file []byte) [][]string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 is the independent reader of these tests and is not installed: %v", err)
	}
	path := filepath.Join(t.TempDir(), "export")
	if err := os.WriteFile(path, file, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py, filepath.Join("export", "testdata", script), path).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("%s: %v: %s", script, err, ee.Stderr)
		}
		t.Fatalf("%s: %v", script, err)
	}
	var rows [][]string
	if err := json.Unmarshal(out, &rows); err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestReportExportRefusals: every refusal is a JSON error before any byte of a
// file (no Content-Disposition), 400 for the body and the enums, 404 for
// what the caller cannot see, 503 while the store is not UP.
func TestReportExportRefusals(t *testing.T) {
	h, store := exportHarness(t, storetest.Batch(1, 3, 0))
	campaign := h.save(scopeAll, withDomain(speedCampaign("exported", serialConfig("A1")), 2))
	const path = "/FCC/reports/export"
	tests := []struct {
		name   string
		id     hdr
		body   any
		status int
	}{
		{"not json", scopeAll, "{not json", 400},
		{"no format", scopeAll, map[string]any{}, 400},
		{"null format", scopeAll, map[string]any{"format": nil}, 400},
		{"unknown format", scopeAll, map[string]any{"format": "PDF"}, 400},
		{"lower-case format", scopeAll, map[string]any{"format": "csv"}, 400},
		{"format not a string", scopeAll, map[string]any{"format": 1}, 400},
		{"bad type", scopeAll, map[string]any{"format": "CSV", "type": "JITTER"}, 400},
		{"bad status", scopeAll, map[string]any{"format": "XLSX", "statuses": []string{"FINE"}}, 400},
		{"unknown campaign", scopeAll, map[string]any{"format": "CSV", "campaignId": 999999}, 404},
		{"invisible campaign", scopeList(3, 3), map[string]any{"format": "CSV", "campaignId": campaign}, 404},
		{"unknown run", scopeAll, map[string]any{"format": "XLSX", "runId": 999999}, 404},
		{"nested filters", scopeAll, map[string]any{"format": "XLSX", "filters": map[string]any{"runId": 999999}}, 404},
		{"nested bad type", scopeAll, map[string]any{"format": "CSV", "type": "SPEED", "filters": map[string]any{"type": "x"}}, 400},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do("POST", path, tc.id, tc.body).want(tc.status)
			if cd := r.Header().Get("Content-Disposition"); cd != "" {
				t.Fatalf("refusal carries Content-Disposition %q", cd)
			}
		})
	}
	for _, gate := range []ResultGate{nil, fakeGate{results.StateUnavailable}, fakeGate{results.StateSchemaBehind}} {
		useGate(h.svc, gate)
		h.svc.UseResultStore(store)
		for _, body := range []any{map[string]any{"format": "CSV"}, "{not json", map[string]any{"format": "PDF"}} {
			if r := h.do("POST", path, scopeAll, body).want(503); r.errorBody().Code != 9503 {
				t.Fatalf("gate %v, body %v: %+v", gate, body, r.errorBody())
			}
		}
	}
	if n := len(store.calls()); n != 0 {
		t.Fatalf("refused requests read the store %d times", n)
	}

	// A store failing before the first byte is still an error answer.
	useGate(h.svc, fakeGate{results.StateUp})
	store.failAt, store.failErr = 0, apperr.New(apperr.ErrUnavailable, "", "store went away")
	if r := h.do("POST", path, scopeAll, map[string]any{"format": "XLSX"}).want(503); r.Header().Get("Content-Disposition") != "" {
		t.Fatal("failed export carries Content-Disposition")
	}
}

var exportName = regexp.MustCompile(`^attachment; filename="fcc-report(-\d+)?-\d{8}-\d{6}\.(csv|xlsx)"$`)

// TestReportExportStreams: both formats answer 200 with their content type and
// file name, carry every row the store streamed, and read back equal in
// independent readers; the filter reaches the store resolved.
func TestReportExportStreams(t *testing.T) {
	rows := storetest.Batch(5, 40, 0)
	rows[3].Description = `<b>"tag" & comma, here</b>` + "\nnext\x00line"
	h, store := exportHarness(t, rows)
	campaign := h.save(scopeAll, withDomain(speedCampaign("exported", serialConfig("A1")), 2))

	files := map[export.Format][]byte{}
	for _, f := range []export.Format{export.FormatCSV, export.FormatXLSX} {
		r := h.do("POST", "/FCC/reports/export", scopeAll, map[string]any{"format": f, "filters": map[string]any{"campaignId": campaign, "type": "SPEED"}}).want(200)
		if ct := r.Header().Get("Content-Type"); ct != f.ContentType() {
			t.Errorf("%s: Content-Type %q", f, ct)
		}
		cd := r.Header().Get("Content-Disposition")
		if m := exportName.FindStringSubmatch(cd); m == nil || m[1] != fmt.Sprintf("-%d", campaign) || "."+m[2] != f.Ext() {
			t.Errorf("%s: Content-Disposition %q", f, cd)
		}
		if r.Header().Get("Content-Length") != "" {
			t.Errorf("%s: Content-Length on a stream", f)
		}
		files[f] = r.Body.Bytes()
	}
	csvRows := readExport(t, "read_csv.py", files[export.FormatCSV])
	if len(csvRows) != len(rows)+1 {
		t.Fatalf("CSV has %d records, want %d", len(csvRows), len(rows)+1)
	}
	if got := csvRows[4][13]; got != `<b>"tag" & comma, here</b>`+"\nnextline" {
		t.Errorf("description cell %q", got)
	}
	xlsxRows := readExport(t, "read_xlsx.py", files[export.FormatXLSX])
	for i := range csvRows {
		if fmt.Sprint(xlsxRows[i]) != fmt.Sprint(csvRows[i]) {
			t.Fatalf("record %d: xlsx %q, csv %q", i, xlsxRows[i], csvRows[i])
		}
	}
	calls := store.calls()
	if len(calls) != 2 || len(calls[0].CampaignIDs) != 1 || calls[0].CampaignIDs[0] != campaign || calls[0].Type != "SPEED" {
		t.Fatalf("filters %+v", calls)
	}

	// A caller whose domain list misses every visible domain gets the
	// header alone, without a read.
	r := h.do("POST", "/FCC/reports/export", scopeList(3, 3), map[string]any{"format": "CSV", "domainIds": []int64{2}}).want(200)
	if got := readExport(t, "read_csv.py", r.Body.Bytes()); len(got) != 1 || len(got[0]) != len(export.Columns()) {
		t.Fatalf("empty export %q", got)
	}
	if exportName.FindStringSubmatch(r.Header().Get("Content-Disposition")) == nil {
		t.Errorf("Content-Disposition %q", r.Header().Get("Content-Disposition"))
	}
	if n := len(store.calls()); n != 2 {
		t.Fatalf("an empty scope read the store (%d reads)", n)
	}
}

// TestReportExportTruncatesAfterFirstByte: once bytes of the file are out, a
// store failure aborts the response over a real connection, so the client
// sees an error and never a short file that looks complete.
func TestReportExportTruncatesAfterFirstByte(t *testing.T) {
	for _, f := range []export.Format{export.FormatCSV, export.FormatXLSX} {
		t.Run(string(f), func(t *testing.T) {
			rows := storetest.Batch(9, 20000, 0)
			h, store := exportHarness(t, rows)
			store.failAt, store.failErr = 15000, errors.New("cursor lost")
			srv := httptest.NewServer(h.h)
			defer srv.Close()
			body, _ := json.Marshal(map[string]any{"format": f})
			req, _ := http.NewRequest("POST", srv.URL+"/FCC/reports/export", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set(HeaderScope, "ALL")
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			n, err := io.Copy(io.Discard, resp.Body)
			if err == nil {
				t.Fatalf("a truncated export read cleanly (%d bytes)", n)
			}
			if n == 0 {
				t.Fatal("no byte before the failure; the test wants one")
			}
		})
	}
}

// TestReportExportFromDuckDB exports rows stored in a real embedded result
// store, through the report cursor, and reads both files back with the
// independent readers: every stored row once, in the fixed order, with the
// markup and forbidden code points of one row handled as the spec says.
func TestReportExportFromDuckDB(t *testing.T) {
	h := newHarness(t, sqlstore.SQLite, nil)
	store, err := results.OpenDuckDB(filepath.Join(t.TempDir(), results.DuckDBFile))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	if err := store.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	rows := storetest.Batch(11, 30, 0)
	odd := rows[0]
	odd.Serial, odd.Description = "ZZ-odd", "<i>a & b</i> \"q\", c\r\nd\x01e\uFFFEf"
	rows = append(rows, odd)
	if _, err := store.Insert(ctx, rows); err != nil {
		t.Fatal(err)
	}
	useGate(h.svc, fakeGate{results.StateUp})
	h.svc.UseResultStore(store)
	want, total, err := store.Page(ctx, results.Filter{}, 0, 1000)
	if err != nil || total != int64(len(rows)) {
		t.Fatalf("page: %d rows, %v", total, err)
	}

	files := map[export.Format][][]string{}
	for _, f := range []export.Format{export.FormatCSV, export.FormatXLSX} {
		r := h.do("POST", "/FCC/reports/export", scopeAll, map[string]any{"format": f}).want(200)
		script := map[export.Format]string{export.FormatCSV: "read_csv.py", export.FormatXLSX: "read_xlsx.py"}[f]
		files[f] = readExport(t, script, r.Body.Bytes())
	}
	csvRows, xlsxRows := files[export.FormatCSV], files[export.FormatXLSX]
	if len(csvRows) != len(want)+1 || len(xlsxRows) != len(csvRows) {
		t.Fatalf("CSV %d records, XLSX %d, want %d", len(csvRows), len(xlsxRows), len(want)+1)
	}
	for i := range csvRows {
		if fmt.Sprint(xlsxRows[i]) != fmt.Sprint(csvRows[i]) {
			t.Fatalf("record %d: xlsx %q, csv %q", i, xlsxRows[i], csvRows[i])
		}
	}
	for i, w := range want {
		rec := csvRows[i+1]
		if rec[5] != w.Serial || rec[2] != fmt.Sprint(w.ActivationID) || rec[3] != fmt.Sprint(w.Iteration) {
			t.Fatalf("record %d %q, stored row %+v", i+1, rec[:6], w.Result)
		}
		if w.Serial == "ZZ-odd" && rec[13] != "<i>a & b</i> \"q\", c\r\ndef" {
			t.Fatalf("odd row's description %q", rec[13])
		}
	}
}
