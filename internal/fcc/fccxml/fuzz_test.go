package fccxml

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// FuzzReadCampaign checks that no input panics, that every refusal wraps
// ErrInvalid (the reader never fails here), and that whatever is accepted
// survives a write and a second read unchanged. The seeds live in
// testdata/fuzz/FuzzReadCampaign.
func FuzzReadCampaign(f *testing.F) {
	f.Add([]byte(minimal("<name>n</name>")))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ReadCampaign(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error does not wrap ErrInvalid: %v", err)
			}
			return
		}
		var buf bytes.Buffer
		w := NewWriter(&buf)
		if err := w.Begin(c); err != nil {
			t.Fatalf("Begin of an accepted campaign: %v", err)
		}
		for _, cfg := range c.Configs {
			if err := w.BeginConfig(cfg); err != nil {
				t.Fatalf("BeginConfig of an accepted config: %v", err)
			}
			for s := cfg.Serials; len(s) > 0; {
				n := min(1000, len(s))
				if err := w.Serials(s[:n]); err != nil {
					t.Fatal(err)
				}
				s = s[n:]
			}
			if err := w.EndConfig(); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.End(); err != nil {
			t.Fatal(err)
		}
		again, err := ReadCampaign(&buf)
		if err != nil {
			t.Fatalf("reading our own output: %v", err)
		}
		if !reflect.DeepEqual(normalize(c), normalize(again)) {
			t.Fatalf("round trip differs:\n first  %+v\n second %+v", c, again)
		}
	})
}

// normalize maps empty slices to nil: a document may hold an empty fleet or
// settings element that the Writer does not reproduce.
func normalize(c Campaign) Campaign {
	if len(c.Configs) == 0 {
		c.Configs = nil
	}
	for i := range c.Configs {
		if len(c.Configs[i].Settings) == 0 {
			c.Configs[i].Settings = nil
		}
		if len(c.Configs[i].Serials) == 0 {
			c.Configs[i].Serials = nil
		}
	}
	return c
}

// FuzzSerials checks Serials and SerialList: no panic, refusals wrap
// ErrInvalid, the limit holds and every serial is trimmed and non-blank.
// The seeds live in testdata/fuzz/FuzzSerials.
func FuzzSerials(f *testing.F) {
	f.Add([]byte("<a><serial>S1</serial></a>"), 0)
	f.Add([]byte("serial\nS1,S2;S3"), 2)
	f.Fuzz(func(t *testing.T, data []byte, max int) {
		max %= 50
		check := func(name string, got []string, err error) {
			if err != nil {
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("%s: error does not wrap ErrInvalid: %v", name, err)
				}
				return
			}
			if got == nil {
				t.Fatalf("%s: nil slice without an error", name)
			}
			if max > 0 && len(got) > max {
				t.Fatalf("%s: %d serials over the limit %d", name, len(got), max)
			}
			for _, s := range got {
				if s == "" || strings.TrimSpace(s) != s {
					t.Fatalf("%s: serial %q is blank or untrimmed", name, s)
				}
			}
		}
		got, err := Serials(bytes.NewReader(data), max)
		check("Serials", got, err)
		got, err = SerialList(bytes.NewReader(data), max)
		check("SerialList", got, err)
	})
}
