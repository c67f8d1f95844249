package fccwire_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"cpesuite/internal/fcc/fccwire"
)

// TestSplitActivate holds the split of a large fleet to the contract:
// every part within the limit and valid on its own, the parts together
// holding the fleet once in its order, and the same run splitting into the
// same bytes, so that each part's outbox row can be re-sent unchanged.
func TestSplitActivate(t *testing.T) {
	big := func(n1, n2 int) fccwire.Activate {
		a := *speedActivate()
		devs := fleet(n1 + n2)
		for i := range devs[n1:] {
			devs[n1+i].Protocol = fccwire.ProtocolTR181
		}
		a.Config.Groups[0].Devices = devs[:n1]
		a.Config.Groups[1].Devices = devs[n1:]
		return a
	}
	tests := []struct {
		name      string
		run       fccwire.Activate
		maxBytes  int
		wantParts int // 0: more than one, exact count not pinned
	}{
		{"small fleet is one part", *speedActivate(), 0, 1},
		{"empty fleet is one part", func() fccwire.Activate {
			a := *latencyActivate()
			a.Config.Groups[0].Devices = nil
			return a
		}(), 0, 1},
		{"one configuration at the 20000-device ceiling", big(20000, 0), 0, 0},
		{"10 configurations over a 64 KiB limit", func() fccwire.Activate {
			a := big(0, 0)
			g := a.Config.Groups[0]
			a.Config.Groups = nil
			devs := fleet(20000)
			for i := range 10 {
				g.ConfigID = int64(i + 1)
				g.Devices = devs[i*2000 : (i+1)*2000]
				a.Config.Groups = append(a.Config.Groups, g)
			}
			return a
		}(), 64 << 10, 0},
		{"two groups over a small limit", big(300, 200), 4096, 0},
		{"latency fleet over a small limit", func() fccwire.Activate {
			a := *latencyActivate()
			a.Config.Groups[0].Devices = fleet(1000)
			return a
		}(), 8192, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parts, err := fccwire.SplitActivate(tt.run, tt.maxBytes)
			if err != nil {
				t.Fatalf("SplitActivate: %v", err)
			}
			if tt.wantParts > 0 && len(parts) != tt.wantParts || tt.wantParts == 0 && len(parts) < 2 {
				t.Fatalf("%d parts, want %d (0: several)", len(parts), tt.wantParts)
			}
			limit := tt.maxBytes
			if limit == 0 {
				limit = fccwire.MaxMessageBytes
			}
			var got [][]fccwire.Device
			for i, b := range parts {
				if len(b) > limit {
					t.Fatalf("part %d is %d bytes, over %d", i+1, len(b), limit)
				}
				m, err := fccwire.Decode(fccwire.KindActivate, b)
				if err != nil {
					t.Fatalf("part %d: %v", i+1, err)
				}
				a := m.(*fccwire.Activate)
				if a.Part != i+1 || a.Parts != len(parts) || a.CommandID != tt.run.CommandID || a.Config.Retry != tt.run.Config.Retry || a.Schedule != tt.run.Schedule {
					t.Fatalf("part %d head: part %d/%d command %q", i+1, a.Part, a.Parts, a.CommandID)
				}
				if len(a.Config.Groups) != len(tt.run.Config.Groups) {
					t.Fatalf("part %d has %d groups, want %d", i+1, len(a.Config.Groups), len(tt.run.Config.Groups))
				}
				for g := range a.Config.Groups {
					for len(got) <= g {
						got = append(got, nil)
					}
					got[g] = append(got[g], a.Config.Groups[g].Devices...)
				}
			}
			for g, grp := range tt.run.Config.Groups {
				var have []fccwire.Device
				if g < len(got) {
					have = got[g]
				}
				if !slices.Equal(have, grp.Devices) {
					t.Fatalf("group %d: the parts hold %d devices, want the %d of the run in order", g, len(have), len(grp.Devices))
				}
			}
			again, err := fccwire.SplitActivate(tt.run, tt.maxBytes)
			if err != nil || !slices.EqualFunc(again, parts, bytes.Equal) {
				t.Fatalf("a second split differs (err %v)", err)
			}
		})
	}
	t.Run("a limit no device fits", func(t *testing.T) {
		if _, err := fccwire.SplitActivate(big(3, 0), 100); !errors.Is(err, fccwire.ErrInvalid) {
			t.Fatalf("SplitActivate = %v, want ErrInvalid", err)
		}
	})
	t.Run("an invalid run", func(t *testing.T) {
		a := big(3, 0)
		a.Config.Groups[0].Devices[1].Serial = ""
		if _, err := fccwire.SplitActivate(a, 0); !errors.Is(err, fccwire.ErrInvalid) {
			t.Fatalf("SplitActivate = %v, want ErrInvalid", err)
		}
	})
}

func BenchmarkSplitActivate20000(b *testing.B) {
	a := *speedActivate()
	a.Config.Groups[0].Devices = fleet(20000)
	a.Config.Groups[1].Devices = nil
	b.ReportAllocs()
	for b.Loop() {
		if _, err := fccwire.SplitActivate(a, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// The result benchmarks measure the per-message cost on the ingestion path
// (issue 21's goal is 100,000 rows/s end to end); UnmarshalOnly is the
// baseline of the same bytes without the contract, for a ratio in one run.
func BenchmarkEncodeResult(b *testing.B) {
	r := speedResult()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := fccwire.Encode(r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeResult(b *testing.B) {
	msg, err := fccwire.Encode(speedResult())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := fccwire.Decode(fccwire.KindResult, msg); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUnmarshalResultOnly(b *testing.B) {
	msg, err := fccwire.Encode(speedResult())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		var r fccwire.Result
		if err := json.Unmarshal(msg, &r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidateResult(b *testing.B) {
	msg, err := fccwire.Encode(speedResult())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := fccwire.Validate(fccwire.KindResult, msg); err != nil {
			b.Fatal(err)
		}
	}
}
