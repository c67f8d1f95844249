package grid

import (
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

func TestMapLive(t *testing.T) {
	stored := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	hdr := func(kv ...string) nats.Header {
		h := nats.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	tests := []struct {
		name      string
		bucketTTL time.Duration
		hdr       nats.Header
		age       time.Duration
		want      bool
	}{
		{"plain value", 0, hdr(), time.Hour, true},
		{"delete marker", 0, hdr("KV-Operation", "DEL"), 0, false},
		{"purge marker", 0, hdr("KV-Operation", "PURGE"), 0, false},
		{"server expiry marker", 0, hdr("Nats-Marker-Reason", "MaxAge"), 0, false},
		{"native ttl, young", 0, hdr("Nats-TTL", "2s"), time.Second, true},
		{"native ttl, expired", 0, hdr("Nats-TTL", "2s"), 2 * time.Second, false},
		{"native ttl in seconds", 0, hdr("Nats-TTL", "2"), 3 * time.Second, false},
		{"native ttl never", 0, hdr("Nats-TTL", "never"), time.Hour, true},
		{"fallback ttl, young", 0, hdr("Grid-TTL", "5s"), 4 * time.Second, true},
		{"fallback ttl, expired", 0, hdr("Grid-TTL", "5s"), 5 * time.Second, false},
		{"bucket ttl, young", time.Minute, hdr(), 59 * time.Second, true},
		{"bucket ttl, expired", time.Minute, hdr(), time.Minute, false},
		{"entry ttl below bucket ttl", time.Minute, hdr("Nats-TTL", "2s"), 3 * time.Second, false},
		{"entry ttl above bucket ttl", time.Minute, hdr("Grid-TTL", "1h"), time.Minute, false},
		{"unparsable ttl falls back to bucket ttl", time.Minute, hdr("Grid-TTL", "soon"), 30 * time.Second, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := &Map{ttl: tc.bucketTTL}
			if got := m.live(tc.hdr, stored, stored.Add(tc.age)); got != tc.want {
				t.Fatalf("live() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestMapCheck(t *testing.T) {
	tests := []struct {
		name      string
		bucketTTL time.Duration
		key       string
		ttl       time.Duration
		want      time.Duration
		wantErr   bool
	}{
		{"no ttl", 0, "k", 0, 0, false},
		{"whole seconds kept", 0, "k", 3 * time.Second, 3 * time.Second, false},
		{"fraction rounded up", 0, "k", 1500 * time.Millisecond, 2 * time.Second, false},
		{"tiny ttl rounded up to a second", 0, "k", time.Nanosecond, time.Second, false},
		{"negative ttl", 0, "k", -time.Second, 0, true},
		{"ttl equal to bucket ttl", time.Minute, "k", time.Minute, time.Minute, false},
		{"ttl above bucket ttl", time.Minute, "k", 2 * time.Minute, 0, true},
		{"invalid key", 0, "a b", 0, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := &Map{name: "m", ttl: tc.bucketTTL}
			got, err := m.check(tc.key, tc.ttl)
			if tc.wantErr {
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("check(%q, %s) error = %v, want ErrInvalid", tc.key, tc.ttl, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("check(%q, %s) = %s, %v; want %s", tc.key, tc.ttl, got, err, tc.want)
			}
		})
	}
}
