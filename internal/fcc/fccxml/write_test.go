package fccxml

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func ptr[T any](v T) *T { return &v }

// writeCampaign writes c with its serials in pages of pageSize.
func writeCampaign(t testing.TB, c Campaign, pageSize int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.Begin(c); err != nil {
		t.Fatalf("Begin: %v", err)
	}
	for _, cfg := range c.Configs {
		if err := w.BeginConfig(cfg); err != nil {
			t.Fatalf("BeginConfig: %v", err)
		}
		for s := cfg.Serials; len(s) > 0; {
			n := min(pageSize, len(s))
			if err := w.Serials(s[:n]); err != nil {
				t.Fatalf("Serials: %v", err)
			}
			s = s[n:]
		}
		if err := w.EndConfig(); err != nil {
			t.Fatalf("EndConfig: %v", err)
		}
	}
	if err := w.End(); err != nil {
		t.Fatalf("End: %v", err)
	}
	return buf.Bytes()
}

func serialRange(n int) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprintf("SN%08d", i+1)
	}
	return s
}

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		c    Campaign
	}{
		{
			name: "full speed campaign, 2500 serials over 3 pages",
			c: Campaign{
				FormatVersion: "1", Name: "Evening speed", Type: "SPEED",
				Domain: ptr(int64(12)), ReactivationDays: ptr(1),
				Configs: []Config{
					{
						Manufacturer: "Acme", Model: "HG 8245", SourceType: "SERIAL_LIST",
						ConditionID:  ptr(int64(4)),
						SettingsType: "SPEED",
						Settings: []Setting{
							{"downloadUrl", "http://speed.example/1G.bin?a=1&b=2"},
							{"singleTestDuration", "10"},
							{"x.y-z_1", ""},
						},
						Serials: serialRange(2500),
					},
					{Manufacturer: "Other", Model: "M2", SourceType: "ALL", SettingsType: "SPEED", Settings: []Setting{{"downloadUrl", "u"}}},
				},
			},
		},
		{
			name: "latency, nothing optional",
			c: Campaign{
				FormatVersion: "1", Type: "LATENCY",
				Configs: []Config{{SourceType: "CONDITION", SettingsType: "LATENCY"}},
			},
		},
		{
			name: "no configs",
			c:    Campaign{FormatVersion: "1", Name: "empty", Type: "SPEED"},
		},
		{
			name: "markup, quotes, unicode, CR, tab and new lines survive",
			c: Campaign{
				FormatVersion: "1", Name: "A & B <C> \"q\" 'a' ]]> Überprüfung 測試 \U0001F600 \t\r\n x\r",
				Type:    "SPEED",
				Domain:  ptr(int64(0)),
				Configs: []Config{{Manufacturer: "<&>", Model: " spaced ", SourceType: "DEVICE_LIST", Serials: []string{"a&b", "<x>", "ü"}}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := writeCampaign(t, tt.c, 1000)
			got, err := ReadCampaign(bytes.NewReader(doc))
			if err != nil {
				t.Fatalf("ReadCampaign: %v\n%s", err, head(doc))
			}
			if !reflect.DeepEqual(got, tt.c) {
				t.Fatalf("round trip differs:\n got  %+v\n want %+v\n%s", got, tt.c, head(doc))
			}
		})
	}
}

func head(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "..."
	}
	return string(b)
}

func TestWriterShape(t *testing.T) {
	c := Campaign{
		Name: "Evening speed", Type: "SPEED", Domain: ptr(int64(12)), ReactivationDays: ptr(1),
		Configs: []Config{{
			Manufacturer: "Acme", Model: "HG 8245", SourceType: "SERIAL_LIST", ConditionID: ptr(int64(4)),
			SettingsType: "SPEED", Settings: []Setting{{"downloadUrl", "http://x"}},
			Serials: []string{"S1", "S2", "S3"},
		}},
	}
	got := string(writeCampaign(t, c, 2))
	want := `<?xml version="1.0" encoding="UTF-8"?>
<fccExport>
  <formatVersion>1</formatVersion>
  <test>
    <name>Evening speed</name>
    <type>SPEED</type>
    <domain>12</domain>
    <reactivationDays>1</reactivationDays>
    <configs>
      <config>
        <manufacturer>Acme</manufacturer>
        <model>HG 8245</model>
        <sourceType>SERIAL_LIST</sourceType>
        <conditionId>4</conditionId>
        <speedSettings>
          <downloadUrl>http://x</downloadUrl>
        </speedSettings>
        <fleet page="1"><serial>S1</serial><serial>S2</serial></fleet>
        <fleet page="2"><serial>S3</serial></fleet>
      </config>
    </configs>
  </test>
</fccExport>
`
	if got != want {
		t.Fatalf("document:\n%s\nwant:\n%s", got, want)
	}
}

func TestWriterDropsForbiddenCharacters(t *testing.T) {
	c := Campaign{Name: "a\x00b\x01c\x1fd\ufffee\uffff\xff\xfe f\x7f", Type: "SPEED"}
	doc := writeCampaign(t, c, 1000)
	if !strings.Contains(string(doc), "<name>abcde f\x7f</name>") {
		t.Fatalf("forbidden characters not dropped:\n%s", doc)
	}
	got, err := ReadCampaign(bytes.NewReader(doc))
	if err != nil {
		t.Fatalf("ReadCampaign: %v", err)
	}
	if got.Name != "abcde f\x7f" {
		t.Fatalf("name = %q", got.Name)
	}
}

func TestWriterRefuses(t *testing.T) {
	tests := []struct {
		name string
		run  func(w *Writer) error
		want string
	}{
		{"bad type", func(w *Writer) error { return w.Begin(Campaign{Type: "speed"}) }, "campaign type"},
		{"negative domain", func(w *Writer) error { return w.Begin(Campaign{Type: "SPEED", Domain: ptr(int64(-1))}) }, "negative"},
		{"bad settings type", func(w *Writer) error {
			_ = w.Begin(Campaign{Type: "SPEED"})
			return w.BeginConfig(Config{SettingsType: "FAST"})
		}, "settings type"},
		{"settings without type", func(w *Writer) error {
			_ = w.Begin(Campaign{Type: "SPEED"})
			return w.BeginConfig(Config{Settings: []Setting{{"a", "b"}}})
		}, "without a settings type"},
		{"bad setting name", func(w *Writer) error {
			_ = w.Begin(Campaign{Type: "SPEED"})
			return w.BeginConfig(Config{SettingsType: "SPEED", Settings: []Setting{{"1abc", "b"}}})
		}, "setting name"},
		{"setting name with colon", func(w *Writer) error {
			_ = w.Begin(Campaign{Type: "SPEED"})
			return w.BeginConfig(Config{SettingsType: "SPEED", Settings: []Setting{{"a:b", "b"}}})
		}, "setting name"},
		{"duplicate setting", func(w *Writer) error {
			_ = w.Begin(Campaign{Type: "SPEED"})
			return w.BeginConfig(Config{SettingsType: "SPEED", Settings: []Setting{{"a", "b"}, {"a", "c"}}})
		}, "twice"},
		{"serials before config", func(w *Writer) error {
			_ = w.Begin(Campaign{Type: "SPEED"})
			return w.Serials([]string{"x"})
		}, "out of order"},
		{"end inside config", func(w *Writer) error {
			_ = w.Begin(Campaign{Type: "SPEED"})
			_ = w.BeginConfig(Config{})
			return w.End()
		}, "out of order"},
		{"begin twice", func(w *Writer) error {
			_ = w.Begin(Campaign{Type: "SPEED"})
			return w.Begin(Campaign{Type: "SPEED"})
		}, "out of order"},
		{"error is sticky", func(w *Writer) error {
			_ = w.Begin(Campaign{Type: "nope"})
			return w.End()
		}, "campaign type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run(NewWriter(&bytes.Buffer{}))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// failingWriter fails after n bytes.
type failingWriter struct{ n int }

var errDisk = errors.New("disk full")

func (f *failingWriter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		n := f.n
		f.n = 0
		return n, errDisk
	}
	f.n -= len(p)
	return len(p), nil
}

func TestWriterReportsWriteErrors(t *testing.T) {
	w := NewWriter(&failingWriter{n: 100})
	if err := w.Begin(Campaign{Type: "SPEED"}); err != nil {
		t.Fatalf("Begin: %v", err)
	}
	if err := w.BeginConfig(Config{}); err != nil {
		t.Fatalf("BeginConfig: %v", err)
	}
	var err error
	for i := 0; i < 100 && err == nil; i++ {
		err = w.Serials(serialRange(1000))
	}
	if !errors.Is(err, errDisk) {
		t.Fatalf("Serials error = %v, want %v", err, errDisk)
	}
	if err := w.End(); !errors.Is(err, errDisk) {
		t.Fatalf("End error = %v, want %v", err, errDisk)
	}
}

// countingWriter counts bytes and writes.
type countingWriter struct{ bytes, writes int }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.bytes += len(p)
	c.writes++
	return len(p), nil
}

// TestWriterStreams checks that output leaves the Writer while pages are
// still being written, with no whole-document buffer.
func TestWriterStreams(t *testing.T) {
	out := &countingWriter{}
	w := NewWriter(out)
	if err := w.Begin(Campaign{Type: "SPEED"}); err != nil {
		t.Fatal(err)
	}
	if err := w.BeginConfig(Config{SourceType: "SERIAL_LIST"}); err != nil {
		t.Fatal(err)
	}
	page := serialRange(1000)
	for range 200 {
		if err := w.Serials(page); err != nil {
			t.Fatal(err)
		}
	}
	before := out.bytes
	if err := w.EndConfig(); err != nil {
		t.Fatal(err)
	}
	if err := w.End(); err != nil {
		t.Fatal(err)
	}
	if before < out.bytes-64<<10 {
		t.Fatalf("only %d of %d bytes were written before End: the document is buffered", before, out.bytes)
	}
	if out.bytes > 6<<20 {
		t.Fatalf("200,000 serials took %d bytes; the import limit is 10MB", out.bytes)
	}
}

func BenchmarkWriter200k(b *testing.B) {
	page := serialRange(1000)
	b.ReportAllocs()
	for b.Loop() {
		out := &countingWriter{}
		w := NewWriter(out)
		_ = w.Begin(Campaign{Type: "SPEED"})
		_ = w.BeginConfig(Config{})
		for range 200 {
			_ = w.Serials(page)
		}
		_ = w.EndConfig()
		if err := w.End(); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(out.bytes))
	}
}
