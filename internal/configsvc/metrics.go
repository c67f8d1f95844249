package configsvc

import (
	"github.com/prometheus/client_golang/prometheus"
)

// serviceMetrics are the service's own series, beside the HTTP ones every
// target has.
type serviceMetrics struct {
	logins      *prometheus.CounterVec
	tokenChecks *prometheus.CounterVec
	mail        *prometheus.CounterVec
	republished prometheus.Counter
}

func newServiceMetrics(reg prometheus.Registerer) *serviceMetrics {
	m := &serviceMetrics{
		logins: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "configs_logins_total", Help: "Login attempts by outcome.",
		}, []string{"outcome"}),
		tokenChecks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "configs_token_checks_total", Help: "Access-token checks by outcome (valid, invalid, expired, revoked, grid_unavailable).",
		}, []string{"outcome"}),
		mail: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "configs_mail_sent_total", Help: "E-mails attempted by outcome (sent, failed).",
		}, []string{"outcome"}),
		republished: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "configs_grid_snapshots_published_total", Help: "Publications of the cache snapshots to the grid (start-up and every reconnect).",
		}),
	}
	// Known label values start at zero, so dashboards see the series
	// before the first event.
	for _, o := range []string{"success", "failure", "password_change_required"} {
		m.logins.WithLabelValues(o)
	}
	for _, o := range []string{"valid", "invalid", "expired", "revoked", "grid_unavailable"} {
		m.tokenChecks.WithLabelValues(o)
	}
	for _, o := range []string{"sent", "failed"} {
		m.mail.WithLabelValues(o)
	}
	if reg != nil {
		reg.MustRegister(m.logins, m.tokenChecks, m.mail, m.republished)
	}
	return m
}

func (m *serviceMetrics) mailSent(err error) {
	if err != nil {
		m.mail.WithLabelValues("failed").Inc()
		return
	}
	m.mail.WithLabelValues("sent").Inc()
}
