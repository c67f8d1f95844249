package export

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"cpesuite/internal/fcc/fccwire"
	"cpesuite/internal/fcc/results"
)

func ptr[T any](v T) *T { return &v }

func at(s string) fccwire.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return fccwire.At(t)
}

func speedRow(serial, desc string) results.Row {
	r := results.Row{
		Result: fccwire.Result{
			Type: fccwire.TypeSpeed, FccTestID: 7, ActivationID: 70, Iteration: 2, DomainID: 3,
			Serial: serial, Direction: fccwire.Direction("DOWNLOAD"), URL: "http://speed.example/dl?size=10&x=1",
			TierKbps: ptr[int64](100000), StartedAt: at("2025-03-04T05:06:07.123456Z"), FinishedAt: at("2025-03-04T05:06:17Z"),
			Status: fccwire.Outcome("OK"), Description: desc, WanUsageDlKbps: ptr[int64](12), AfterStop: true,
			Speed: &fccwire.SpeedResult{
				Kbps: 94321.125, TestMode: fccwire.TestMode("SINGLE"), BOM: at("2025-03-04T05:06:08Z"), EOM: at("2025-03-04T05:06:16.5Z"),
				TestBytes: 100000000, TotalBytes: ptr[int64](100100000), TCPOpenRequestTime: ptr(at("2025-03-04T05:06:07.2Z")),
				Connections: 4,
			},
		},
		HubbID: "hub-1", Source: results.SourceACS, Created: time.Date(2025, 3, 4, 5, 7, 0, 0, time.UTC),
	}
	return r
}

func latencyRow(serial string, avg *float64) results.Row {
	return results.Row{
		Result: fccwire.Result{
			Type: fccwire.TypeLatency, FccTestID: 8, ActivationID: 80, Iteration: 1, DomainID: 4,
			Serial: serial, Direction: fccwire.Direction("NONE"), URL: "ping.example",
			StartedAt: at("2025-03-05T00:00:00Z"), FinishedAt: at("2025-03-05T00:00:01.5Z"), Status: fccwire.Outcome("ERROR"),
			Latency: &fccwire.LatencyResult{AverageMs: avg, MinMs: avg, MaxMs: ptr(33.25), SuccessCount: 3, FailureCount: 1},
		},
		Source: results.SourceLegacy, LegacyUgID: ptr[int64](12), LegacyResultID: ptr[int64](-9),
		Created: time.Date(2025, 3, 5, 0, 1, 0, 0, time.UTC),
	}
}

// testRows are rows whose text exercises both formats: markup, quotes,
// commas, line breaks of every kind, edge white space, non-ASCII text and
// code points XML 1.0 forbids.
func testRows() []results.Row {
	return []results.Row{
		speedRow("SN-0001", ""),
		latencyRow("SN-0002", ptr(12.5)),
		latencyRow("SN-0003", nil),
		speedRow(`SN,"4"`, `<b class="x">a & b</b> > c`),
		speedRow("SN-5", "line one\nline two\r\nline three\rend"),
		speedRow(" lead", "trail\t"),
		speedRow(`\.`, "Grüße 📶 𝄞 \u0085 \uFFFD kept"),
		speedRow("SN-\x00forbidden", "a\x00b\x01c\x08d\x0be\x0cf\x1fg\uFFFEh\uFFFFi\xed\xa0\x80j\xffk"),
		speedRow("SN-8", "\x00\x01\uFFFF"), // nothing left: an empty cell
	}
}

// expected formats rows the way the export promises, written apart from
// the writer: strings cleaned with strings.Map, numbers by strconv.
func expected(rows []results.Row) [][]string {
	clean := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0xFFFE || r == 0xFFFF {
				return -1
			}
			return r
		}, strings.ToValidUTF8(s, ""))
	}
	ts := func(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000Z") }
	opt := func(p *int64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatInt(*p, 10)
	}
	optT := func(p *fccwire.Time) string {
		if p == nil {
			return ""
		}
		return ts(p.Time)
	}
	optF := func(p *float64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatFloat(*p, 'f', -1, 64)
	}
	out := [][]string{Columns()}
	for _, r := range rows {
		rec := []string{
			string(r.Type), strconv.FormatInt(r.FccTestID, 10), strconv.FormatInt(r.ActivationID, 10), strconv.Itoa(r.Iteration),
			strconv.FormatInt(r.DomainID, 10), clean(r.Serial), clean(r.HubbID), string(r.Direction), clean(r.URL), opt(r.TierKbps),
			ts(r.StartedAt.Time), ts(r.FinishedAt.Time), string(r.Status), clean(r.Description), opt(r.WanUsageDlKbps),
			opt(r.WanUsageUlKbps), strconv.FormatBool(r.AfterStop), r.Source, opt(r.LegacyUgID), opt(r.LegacyResultID), ts(r.Created),
		}
		if s := r.Speed; s != nil {
			rec = append(rec, strconv.FormatFloat(s.Kbps, 'f', -1, 64), string(s.TestMode), optT(s.ROMTime), ts(s.BOM.Time), ts(s.EOM.Time),
				strconv.FormatInt(s.TestBytes, 10), opt(s.TotalBytes), optT(s.TCPOpenRequestTime), optT(s.TCPOpenResponseTime), strconv.Itoa(s.Connections))
		} else {
			rec = append(rec, make([]string, 10)...)
		}
		if l := r.Latency; l != nil {
			rec = append(rec, optF(l.AverageMs), optF(l.MinMs), optF(l.MaxMs), strconv.Itoa(l.SuccessCount), strconv.Itoa(l.FailureCount))
		} else {
			rec = append(rec, make([]string, 5)...)
		}
		out = append(out, rec)
	}
	return out
}

func write(t *testing.T, f Format, rows []results.Row) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := New(f, &buf)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		if err := w.Write(&rows[i]); err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if w.Rows() != int64(len(rows)) {
		t.Fatalf("Rows() = %d, want %d", w.Rows(), len(rows))
	}
	return buf.Bytes()
}

// python runs one of the independent readers over file and returns its
// rows.
func python(t *testing.T, script string, file []byte) [][]string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 is the independent reader of these tests and is not installed: %v", err)
	}
	path := filepath.Join(t.TempDir(), "export")
	if err := os.WriteFile(path, file, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, filepath.Join("testdata", script), path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v: %s", script, err, stderr.String())
	}
	var rows [][]string
	if err := json.Unmarshal(out, &rows); err != nil {
		t.Fatalf("%s output: %v", script, err)
	}
	return rows
}

func diffRows(t *testing.T, what string, got, want [][]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d records, want %d", what, len(got), len(want))
	}
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			for j := range max(len(got[i]), len(want[i])) {
				var g, w string
				if j < len(got[i]) {
					g = got[i][j]
				}
				if j < len(want[i]) {
					w = want[i][j]
				}
				if g != w {
					t.Errorf("%s: record %d column %d (%s): got %q, want %q", what, i, j, want[0][min(j, len(want[0])-1)], g, w)
				}
			}
		}
	}
}

// strictCSV is an RFC 4180 parser that accepts nothing else: CRLF after
// every record, quotes only around a whole field, a quote inside a quoted
// field doubled, no bare CR or LF outside quotes, valid UTF-8.
func strictCSV(b []byte) ([][]string, error) {
	if !utf8.Valid(b) {
		return nil, errors.New("not UTF-8")
	}
	var recs [][]string
	var rec []string
	var field []byte
	for i := 0; i < len(b); {
		if b[i] == '"' {
			i++
			for {
				if i >= len(b) {
					return nil, errors.New("unterminated quoted field")
				}
				if b[i] == '"' {
					if i+1 < len(b) && b[i+1] == '"' {
						field = append(field, '"')
						i += 2
						continue
					}
					i++
					break
				}
				field = append(field, b[i])
				i++
			}
		} else {
			for i < len(b) && b[i] != ',' && b[i] != '\r' && b[i] != '\n' {
				if b[i] == '"' {
					return nil, errors.New("quote inside an unquoted field")
				}
				field = append(field, b[i])
				i++
			}
		}
		rec = append(rec, string(field))
		field = field[:0]
		switch {
		case i < len(b) && b[i] == ',':
			i++
		case i+1 < len(b) && b[i] == '\r' && b[i+1] == '\n':
			recs = append(recs, rec)
			rec = nil
			i += 2
		default:
			return nil, errors.New("record not ended by CRLF at byte " + strconv.Itoa(i))
		}
	}
	if rec != nil {
		return nil, errors.New("last record not ended by CRLF")
	}
	return recs, nil
}

func TestCSVReadByIndependentReaders(t *testing.T) {
	rows := testRows()
	want := expected(rows)
	file := write(t, FormatCSV, rows)
	if bytes.HasPrefix(file, []byte("\xef\xbb\xbf")) {
		t.Fatal("CSV starts with a byte order mark")
	}
	got, err := strictCSV(file)
	if err != nil {
		t.Fatalf("strict RFC 4180 parser: %v", err)
	}
	diffRows(t, "strict parser", got, want)
	diffRows(t, "python csv", python(t, "read_csv.py", file), want)
}

func TestXLSXCellsEqualCSV(t *testing.T) {
	rows := testRows()
	csvRows := python(t, "read_csv.py", write(t, FormatCSV, rows))
	diffRows(t, "xlsx against csv", python(t, "read_xlsx.py", write(t, FormatXLSX, rows)), csvRows)
	diffRows(t, "xlsx against input", csvRows, expected(rows))
}

func TestXLSXMarkupEscaped(t *testing.T) {
	file := write(t, FormatXLSX, testRows()[3:4])
	// The sheet XML itself must carry the escaped forms (a reader
	// tolerant of raw markup would hide a missing escape).
	sheet := unzip(t, file, "xl/worksheets/sheet1.xml")
	for _, s := range []string{`&lt;b class=&quot;x&quot;&gt;a &amp; b&lt;/b&gt; &gt; c`, `SN,&quot;4&quot;`} {
		if !strings.Contains(sheet, s) {
			t.Errorf("sheet lacks %s", s)
		}
	}
}

func TestEmptyExportHasHeader(t *testing.T) {
	want := [][]string{Columns()}
	diffRows(t, "csv", python(t, "read_csv.py", write(t, FormatCSV, nil)), want)
	diffRows(t, "xlsx", python(t, "read_xlsx.py", write(t, FormatXLSX, nil)), want)
}

// TestXLSXSheetBound fills sheets up to a small bound: each sheet holds
// the header and at most maxRows rows, and the workbook reads back whole.
func TestXLSXSheetBound(t *testing.T) {
	base := testRows()
	var rows []results.Row
	for i := range 11 {
		r := base[i%len(base)]
		r.Iteration = i
		rows = append(rows, r)
	}
	for _, maxRows := range []int{1, 3, 11, 12} {
		t.Run(strconv.Itoa(maxRows), func(t *testing.T) {
			var buf bytes.Buffer
			w := newWriter(newXLSX(&buf, maxRows))
			for i := range rows {
				if err := w.Write(&rows[i]); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			wantSheets := (len(rows) + maxRows - 1) / maxRows
			if got := strings.Count(unzip(t, buf.Bytes(), "xl/workbook.xml"), "<sheet "); got != wantSheets {
				t.Errorf("%d sheets, want %d", got, wantSheets)
			}
			diffRows(t, "xlsx", python(t, "read_xlsx.py", buf.Bytes()), expected(rows))
		})
	}
}

type failAfter struct{ n int }

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		n := f.n
		f.n = 0
		return n, errors.New("peer gone")
	}
	f.n -= len(p)
	return len(p), nil
}

// TestWriteErrorSticks: once the destination fails, every later call
// reports it, so a caller stops reading its cursor.
func TestWriteErrorSticks(t *testing.T) {
	for _, f := range []Format{FormatCSV, FormatXLSX} {
		t.Run(string(f), func(t *testing.T) {
			w, _ := New(f, &failAfter{n: 1000})
			row := speedRow("SN", strings.Repeat("x", 1000))
			var err error
			for i := 0; i < 10000 && err == nil; i++ {
				err = w.Write(&row)
			}
			if err == nil {
				t.Fatal("no error from a failing destination")
			}
			if err2 := w.Write(&row); err2 == nil {
				t.Error("Write after a failure succeeded")
			}
			if err2 := w.Close(); err2 == nil {
				t.Error("Close after a failure succeeded")
			}
		})
	}
}

func TestNewRefusesUnknownFormat(t *testing.T) {
	for _, f := range []Format{"", "csv", "XLS", "JSON"} {
		if _, err := New(f, &bytes.Buffer{}); err == nil || f.Valid() {
			t.Errorf("format %q accepted", f)
		}
	}
}

func TestColName(t *testing.T) {
	for i, want := range map[int]string{0: "A", 25: "Z", 26: "AA", 35: "AJ", 51: "AZ", 52: "BA", 701: "ZZ", 702: "AAA"} {
		if got := string(colName(i)); got != want {
			t.Errorf("colName(%d) = %s, want %s", i, got, want)
		}
	}
}

func TestAppendStampMatchesLayout(t *testing.T) {
	for _, s := range []string{"2025-03-04T05:06:07.123456Z", "1999-12-31T23:59:59.999999Z", "0001-01-01T00:00:00Z",
		"2038-01-19T03:14:08.000001Z", "9999-12-31T23:59:59.5Z", "2024-02-29T12:00:00+02:00"} {
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := string(appendStamp(nil, tm.UTC())), tm.UTC().Format(timeLayout); got != want {
			t.Errorf("%s: %s, want %s", s, got, want)
		}
	}
}
