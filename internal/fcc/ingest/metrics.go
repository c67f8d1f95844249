package ingest

import "github.com/prometheus/client_golang/prometheus"

// metrics are the spec's fcc.result.* counters in Prometheus spelling
// (fcc.result.parked -> fcc_result_parked_total), plus the gauges an
// operator needs to see a backlog building.
type metrics struct {
	parked         *prometheus.CounterVec
	lost           prometheus.Counter
	late           prometheus.Counter
	dedupSkipped   prometheus.Counter
	insertFailures prometheus.Counter
	parkFailures   prometheus.Counter
	ackFailures    prometheus.Counter
	stored         prometheus.Counter
	batches        prometheus.Counter
	resent         prometheus.Counter
	buffered       prometheus.Gauge
	degraded       prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		parked: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fcc_result_parked_total", Help: "Result rows parked in the dead-letter store, by reason (LATE, BUFFER_FULL, INVALID).",
		}, []string{"reason"}),
		lost: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "fcc_result_lost_total", Help: "Result rows dropped without being stored or parked. Zero by design: such a row is handed back to the grid instead.",
		}),
		late: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "fcc_result_late_total", Help: "Result rows that arrived after stopped_at + svc.fcc.stop-grace and were parked as LATE.",
		}),
		dedupSkipped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "fcc_result_dedup_skipped_total", Help: "Result messages dropped because their natural key was in fccResultDedup.",
		}),
		insertFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "fcc_result_insert_failures_total", Help: "Failed inserts into the result store (the rows stay buffered and are retried).",
		}),
		parkFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "fcc_result_park_failures_total", Help: "Failed writes to the dead-letter store (the messages go back to the grid).",
		}),
		ackFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "fcc_result_ack_failures_total", Help: "Acks of stored or parked results the grid did not confirm (redelivered, then dropped by dedup).",
		}),
		stored: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "fcc_result_stored_total", Help: "Result rows newly stored by the consume loop.",
		}),
		batches: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "fcc_result_batches_total", Help: "Successful result store inserts.",
		}),
		resent: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "fcc_result_resent_total", Help: "Parked rows re-inserted by a dead-letter resend.",
		}),
		buffered: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "fcc_result_buffered", Help: "Result rows held in memory (batch and retry queue), at most svc.fcc.result.queue-capacity.",
		}),
		degraded: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "fcc_result_buffer_full", Help: "1 while the result buffer is full and new rows are parked as BUFFER_FULL.",
		}),
	}
	// Known label values start at zero, so dashboards see every series
	// before the first event.
	for _, r := range []Reason{ReasonLate, ReasonBufferFull, ReasonInvalid} {
		m.parked.WithLabelValues(string(r))
	}
	if reg != nil {
		reg.MustRegister(m.parked, m.lost, m.late, m.dedupSkipped, m.insertFailures, m.parkFailures,
			m.ackFailures, m.stored, m.batches, m.resent, m.buffered, m.degraded)
	}
	return m
}
