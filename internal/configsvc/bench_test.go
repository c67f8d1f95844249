package configsvc

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"cpesuite/internal/configsvc/jwtauth"
)

// reportLatency adds the median and p99 of the samples to the benchmark.
func reportLatency(b *testing.B, samples []time.Duration) {
	slices.Sort(samples)
	b.ReportMetric(float64(samples[len(samples)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(samples[len(samples)*99/100].Nanoseconds())/1e3, "p99-µs")
}

type benchHarness struct {
	*harness
	token string
}

func newBenchHarness(b *testing.B) benchHarness {
	h := newHarness(b, harnessOpts{})
	return benchHarness{h, h.adminToken()}
}

// BenchmarkAuthenticate measures the whole access-token check: JWT
// verification alone, then with the two grid look-ups of the revocation
// check against the embedded grid. The difference is what the
// revocation check costs per request.
func BenchmarkAuthenticate(b *testing.B) {
	h := newBenchHarness(b)
	token := h.token
	ctx := context.Background()
	b.Run("jwt-only", func(b *testing.B) {
		samples := make([]time.Duration, 0, b.N)
		for b.Loop() {
			t0 := time.Now()
			if _, err := h.s.jwt.Parse(token, jwtauth.Access); err != nil {
				b.Fatal(err)
			}
			samples = append(samples, time.Since(t0))
		}
		reportLatency(b, samples)
	})
	b.Run("jwt+revocation", func(b *testing.B) {
		samples := make([]time.Duration, 0, b.N)
		for b.Loop() {
			t0 := time.Now()
			if _, err := h.s.Authenticate(ctx, token); err != nil {
				b.Fatal(err)
			}
			samples = append(samples, time.Since(t0))
		}
		reportLatency(b, samples)
	})
}

// BenchmarkAuthenticatedRequest measures GET /api/product-class-groups
// over loopback HTTP (token check plus a near-cache read) against the
// public snapshot endpoint, one client at a time for latency and in
// parallel for throughput.
func BenchmarkAuthenticatedRequest(b *testing.B) {
	h := newBenchHarness(b)
	client := h.srv.Client()
	do := func(b *testing.B, path, token string) {
		req, _ := http.NewRequest("GET", h.srv.URL+Base+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			b.Fatalf("status %d", res.StatusCode)
		}
	}
	for _, c := range []struct{ name, path, token string }{
		{"public", "/environment/snapshot", ""},
		{"authenticated", "/api/product-class-groups", h.token},
	} {
		b.Run(c.name+"/serial", func(b *testing.B) {
			samples := make([]time.Duration, 0, b.N)
			for b.Loop() {
				t0 := time.Now()
				do(b, c.path, c.token)
				samples = append(samples, time.Since(t0))
			}
			reportLatency(b, samples)
		})
		b.Run(c.name+"/parallel", func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					do(b, c.path, c.token)
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}
