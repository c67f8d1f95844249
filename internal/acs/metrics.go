package acs

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the ACS's Prometheus series.
type metrics struct {
	sessionsStarted  prometheus.Counter
	sessionsFinished *prometheus.CounterVec // by reason
	sessionsActive   prometheus.GaugeFunc
	informs          *prometheus.CounterVec // by event code
	rpcLatency       *prometheus.HistogramVec
	connRequests     *prometheus.CounterVec // by outcome
	queueDepth       *prometheus.GaugeVec   // by state
	informBatch      prometheus.Histogram
	rejected         *prometheus.CounterVec // by reason
}

func newMetrics(reg prometheus.Registerer, active func() float64) (*metrics, error) {
	m := &metrics{
		sessionsStarted: prometheus.NewCounter(prometheus.CounterOpts{Name: "acs_sessions_started_total", Help: "CWMP sessions opened by an Inform."}),
		sessionsFinished: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "acs_sessions_finished_total",
			Help: "CWMP sessions ended, by reason (done: the ACS answered 204; expired: idle past the session time-out; reinform: the CPE informed again in it; replaced: the device started a new session, e.g. after a reboot)."}, []string{"reason"}),
		sessionsActive: prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "acs_sessions_active", Help: "Open CWMP sessions."}, active),
		informs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "acs_informs_total", Help: "Inform events received, by event code."},
			[]string{"event"}),
		rpcLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "acs_rpc_latency_seconds",
			Help: "Time from sending an RPC to the CPE's answer, by method.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)}, []string{"method"}),
		connRequests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "acs_connection_requests_total",
			Help: "Connection request attempts, by outcome."}, []string{"outcome"}),
		queueDepth: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "acs_task_queue_depth", Help: "Open tasks, by state."}, []string{"state"}),
		informBatch: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "acs_inform_batch_size",
			Help: "Informs written per registry transaction.", Buckets: prometheus.ExponentialBuckets(1, 2, 9)}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "acs_requests_rejected_total",
			Help: "CWMP requests refused, by reason."}, []string{"reason"}),
	}
	for _, c := range []prometheus.Collector{m.sessionsStarted, m.sessionsFinished, m.sessionsActive, m.informs, m.rpcLatency,
		m.connRequests, m.queueDepth, m.informBatch, m.rejected} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}
