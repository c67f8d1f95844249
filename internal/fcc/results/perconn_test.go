package results

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"cpesuite/internal/fcc/fccwire"
)

func TestPerConnectionJSON(t *testing.T) {
	// The hand-written encoder names every field; a new one must be added.
	if n := reflect.TypeFor[fccwire.ConnectionResult]().NumField(); n != 8 {
		t.Fatalf("fccwire.ConnectionResult has %d fields; appendPerConnection writes 8", n)
	}
	tm := func(s string) fccwire.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return fccwire.At(v)
	}
	p := func(t fccwire.Time) *fccwire.Time { return &t }
	n := func(v int64) *int64 { return &v }
	cases := []struct {
		name string
		cs   []fccwire.ConnectionResult
	}{
		{"empty", []fccwire.ConnectionResult{}},
		{"required only", []fccwire.ConnectionResult{{Connection: 1, BOM: tm("2026-01-02T03:04:05Z"), EOM: tm("2026-01-02T03:04:06.000001Z")}}},
		{"every field, two", []fccwire.ConnectionResult{
			{Connection: 1, ROMTime: p(tm("1999-12-31T23:59:59.999999Z")), BOM: tm("2000-01-01T00:00:00Z"), EOM: tm("2000-02-29T12:00:00.5Z"),
				TestBytes: -1, TotalBytes: n(1 << 62), TCPOpenRequestTime: p(tm("2026-11-27T08:00:00.000123Z")), TCPOpenResponseTime: p(tm("2026-11-27T08:00:00.1234564Z"))},
			{Connection: -7, BOM: tm("0001-01-01T00:00:00.000001Z"), EOM: tm("9999-12-31T23:59:59.999999Z"), TestBytes: 0, TotalBytes: n(0)},
		}},
		{"not UTC, sub-microsecond", []fccwire.ConnectionResult{{Connection: 3,
			BOM: fccwire.Time{Time: time.Date(2026, 3, 29, 2, 30, 0, 999, time.FixedZone("x", 3600+1800))},
			EOM: fccwire.Time{Time: time.Date(2026, 3, 29, 2, 30, 0, 123456789, time.FixedZone("y", -7*3600))}}}},
		{"year outside four digits", []fccwire.ConnectionResult{{Connection: 1,
			BOM: fccwire.Time{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, EOM: tm("2026-01-01T00:00:00Z")}}},
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range 200 {
		r := func() fccwire.Time { return fccwire.At(time.Unix(rnd.Int64N(1<<35), rnd.Int64N(1e9))) }
		c := fccwire.ConnectionResult{Connection: rnd.IntN(100), BOM: r(), EOM: r(), TestBytes: rnd.Int64()}
		if i%2 == 0 {
			c.ROMTime, c.TotalBytes, c.TCPOpenRequestTime, c.TCPOpenResponseTime = p(r()), n(rnd.Int64()), p(r()), p(r())
		}
		cases = append(cases, struct {
			name string
			cs   []fccwire.ConnectionResult
		}{"random", []fccwire.ConnectionResult{c}})
	}
	for _, tc := range cases {
		want, err := json.Marshal(tc.cs)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, err := appendPerConnection(nil, tc.cs)
		if err != nil || string(got) != string(want) {
			t.Errorf("%s:\n got %s, %v\nwant %s", tc.name, got, err, want)
		}
	}
	for _, cs := range [][]fccwire.ConnectionResult{{{Connection: 1, EOM: tm("2026-01-01T00:00:00Z")}}, {{Connection: 1, BOM: tm("2026-01-01T00:00:00Z")}}} {
		if _, err := json.Marshal(cs); err == nil {
			t.Fatal("json.Marshal accepts a zero time; so must the encoder")
		}
		if _, err := appendPerConnection(nil, cs); err == nil {
			t.Errorf("%+v: want an error for a zero time", cs)
		}
	}
}
