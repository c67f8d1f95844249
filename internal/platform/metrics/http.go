package metrics

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"cpesuite/internal/platform/httpx"
)

// unmatchedRoute labels requests that no ServeMux pattern matched (404s,
// redirects). The raw path is never used: clients choose it, and each
// distinct value would be a new time series.
const unmatchedRoute = "unmatched"

// httpCollectors are shared by every service on one registry; the service
// label tells them apart.
type httpCollectors struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	inFlight *prometheus.GaugeVec
}

// HTTPMiddleware records, for service:
//
//	http_requests_total{service,method,route,code}
//	http_request_duration_seconds{service,method,route}   (histogram)
//	http_requests_in_flight{service}
//
// route is the ServeMux pattern that served the request (for example
// "GET /FCC/items/{id}"), read from r.Pattern after the mux returns. The mux
// sets Pattern on the *http.Request it receives, so this middleware must see
// that same request: put it directly around the mux, or outside middleware
// that copies Pattern back to the request it was given (httpx.RequestID
// does). Calling it for several services on one registry is fine: the
// collectors are registered once and shared. It panics if reg holds
// different collectors under these names, a start-up programming error.
func HTTPMiddleware(reg prometheus.Registerer, service string) func(http.Handler) http.Handler {
	c := registerHTTP(reg)
	inFlight := c.inFlight.WithLabelValues(service)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			inFlight.Inc()
			defer inFlight.Dec()

			tw := httpx.Track(w)
			next.ServeHTTP(tw, r)

			route := r.Pattern
			if route == "" {
				route = unmatchedRoute
			}
			status := tw.Status()
			if status == 0 {
				status = http.StatusOK
			}
			method := normalizeMethod(r.Method)
			c.requests.WithLabelValues(service, method, route, strconv.Itoa(status)).Inc()
			c.duration.WithLabelValues(service, method, route).Observe(time.Since(start).Seconds())
		})
	}
}

func registerHTTP(reg prometheus.Registerer) httpCollectors {
	return httpCollectors{
		requests: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "http_requests_total",
			Help: "HTTP requests served, by service, method, route pattern and status code.",
		}, []string{"service", "method", "route", "code"})),
		duration: register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "http_request_duration_seconds",
			Help:    "Time to serve HTTP requests, by service, method and route pattern.",
			Buckets: prometheus.DefBuckets,
		}, []string{"service", "method", "route"})),
		inFlight: register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "http_requests_in_flight",
			Help: "HTTP requests being served, by service.",
		}, []string{"service"})),
	}
}

// register registers c, or returns the equal collector already registered
// by an earlier call, so that every service shares one set.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	err := reg.Register(c)
	if err == nil {
		return c
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing
		}
	}
	panic(fmt.Sprintf("metrics: registering HTTP collectors: %v", err))
}

// normalizeMethod bounds the method label: net/http accepts any token as a
// method, and each would otherwise be a new series.
func normalizeMethod(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "OTHER"
}
