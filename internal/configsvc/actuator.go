package configsvc

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/health"
	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/platform/metrics"
)

// RegisterHealth fills the actuator's registry. The aggregate holds the
// database, the grid connection and the cache warm-up; the liveness and
// readiness groups hold only the application's own state, so that a grid
// outage never makes an orchestrator restart or unroute the service.
func (s *Service) RegisterHealth(hr *health.Registry) {
	up := health.IndicatorFunc(func(context.Context) health.Result { return health.Result{Status: health.StatusUp} })
	hr.Register("livenessState", up, "liveness")
	hr.Register("readinessState", up, "readiness")
	hr.Register("db", health.Ping(func(ctx context.Context) error {
		if err := s.db.PingContext(ctx); err != nil {
			return apperr.New(apperr.ErrUnavailable, "", "database unreachable")
		}
		return nil
	}))
	hr.Register("grid", health.IndicatorFunc(s.link.health))
	hr.Register("cacheWarmup", health.IndicatorFunc(s.link.warmup))
}

// MountActuator registers the actuator endpoints beside health: metrics in
// Spring's JSON shape and in the Prometheus text format. None needs a
// token.
func MountActuator(mux *httpx.Mux, g prometheus.Gatherer, ew httpx.ErrorWriter) {
	a := httpx.Adapter{Errors: ew}
	mux.Handle("GET "+Base+"/actuator/prometheus", metrics.Handler(g))
	mux.Handle("GET "+Base+"/actuator/metrics", a.H(func(w http.ResponseWriter, _ *http.Request) error {
		families, err := g.Gather()
		if err != nil {
			return err
		}
		names := make([]string, 0, len(families))
		for _, f := range families {
			names = append(names, f.GetName())
		}
		slices.Sort(names)
		return httpx.WriteJSON(w, http.StatusOK, map[string]any{"names": names})
	}))
	mux.Handle("GET "+Base+"/actuator/metrics/{name}", a.H(func(w http.ResponseWriter, r *http.Request) error {
		families, err := g.Gather()
		if err != nil {
			return err
		}
		name := r.PathValue("name")
		for _, f := range families {
			if f.GetName() == name {
				return httpx.WriteJSON(w, http.StatusOK, metricView(f))
			}
		}
		return apperr.NotFound("METRIC_NOT_FOUND", "no metric named %q", name)
	}))
}

// Measurement is one statistic of a metric, summed over its series.
type Measurement struct {
	Statistic string  `json:"statistic"`
	Value     float64 `json:"value"`
}

// metricView sums a family over its label sets, as Spring's endpoint
// shows a meter without tag filters, and lists the tags with their values.
func metricView(f *dto.MetricFamily) map[string]any {
	sums := map[string]float64{}
	tags := map[string][]string{}
	for _, m := range f.GetMetric() {
		switch {
		case m.Counter != nil:
			sums["COUNT"] += m.Counter.GetValue()
		case m.Gauge != nil:
			sums["VALUE"] += m.Gauge.GetValue()
		case m.Histogram != nil:
			sums["COUNT"] += float64(m.Histogram.GetSampleCount())
			sums["TOTAL"] += m.Histogram.GetSampleSum()
		case m.Summary != nil:
			sums["COUNT"] += float64(m.Summary.GetSampleCount())
			sums["TOTAL"] += m.Summary.GetSampleSum()
		case m.Untyped != nil:
			sums["VALUE"] += m.Untyped.GetValue()
		}
		for _, l := range m.GetLabel() {
			if !slices.Contains(tags[l.GetName()], l.GetValue()) {
				tags[l.GetName()] = append(tags[l.GetName()], l.GetValue())
			}
		}
	}
	ms := []Measurement{}
	for _, k := range []string{"COUNT", "TOTAL", "VALUE"} {
		if v, ok := sums[k]; ok {
			ms = append(ms, Measurement{Statistic: k, Value: v})
		}
	}
	avail := []map[string]any{}
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		vals := tags[k]
		slices.Sort(vals)
		avail = append(avail, map[string]any{"tag": k, "values": vals})
	}
	return map[string]any{"name": f.GetName(), "description": f.GetHelp(), "baseUnit": nil, "measurements": ms, "availableTags": avail}
}

// CORS answers cross-origin requests from CORS_ALLOWED_ORIGINS only. The
// comparison is exact, so http://host and https://host are different
// origins. A request from any other origin is refused with 403, as
// Spring's CORS processor does; same-origin and non-browser requests (no
// Origin header) pass untouched.
func CORS(allowed []string, ew httpx.ErrorWriter) func(http.Handler) http.Handler {
	any := slices.Contains(allowed, "*")
	set := map[string]bool{}
	for _, o := range allowed {
		set[strings.TrimSuffix(o, "/")] = true
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			origin := r.Header.Get("Origin")
			if origin == "" {
				next.ServeHTTP(w, r)
				return
			}
			w.Header().Add("Vary", "Origin")
			preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
			if !any && !set[origin] {
				if preflight || !sameOrigin(r, origin) {
					ew(w, r, http.StatusForbidden, apperr.New(apperr.ErrForbidden, "CORS_ORIGIN_REJECTED", "origin %q is not allowed (CORS_ALLOWED_ORIGINS)", origin))
					return
				}
				next.ServeHTTP(w, r)
				return
			}
			w.Header().Set("Access-Control-Allow-Origin", origin)
			w.Header().Set("Access-Control-Allow-Credentials", "true")
			if preflight {
				w.Header().Set("Access-Control-Allow-Methods", "GET, POST, PUT, DELETE, OPTIONS")
				w.Header().Set("Access-Control-Allow-Headers", "Authorization, Content-Type, X-Request-Id")
				w.Header().Set("Access-Control-Max-Age", "3600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
			w.Header().Set("Access-Control-Expose-Headers", "Location, X-Request-Id")
			next.ServeHTTP(w, r)
		})
	}
}

// sameOrigin reports whether origin names the server the request came to,
// which browsers also send on same-origin POSTs.
func sameOrigin(r *http.Request, origin string) bool {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return origin == scheme+"://"+r.Host
}

// Mount registers every route of the service on mux: the API, the
// actuator (health, info, metrics, prometheus) and the OpenAPI document.
// CORS is middleware around the whole server (see CORS).
func (s *Service) Mount(mux *httpx.Mux, g prometheus.Gatherer) {
	NewAPI(s).Routes(mux)
	MountActuator(mux, g, writeError)
	hr := health.NewRegistry()
	s.RegisterHealth(hr)
	health.Mount(mux.ServeMux, Base+"/actuator/health", hr)
}
