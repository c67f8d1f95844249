// Package health is cpesuite's Spring-actuator-style health model:
// indicators report a Status with details, a Registry runs them
// concurrently under a timeout, groups (liveness, readiness, ...) select
// subsets, and Mount serves the results over HTTP.
package health

import "net/http"

// Status is the health of a component or of an aggregate.
type Status string

// The statuses, with Spring Boot's names and JSON spelling.
const (
	StatusUp           Status = "UP"
	StatusDown         Status = "DOWN"
	StatusOutOfService Status = "OUT_OF_SERVICE"
	StatusDegraded     Status = "DEGRADED"
	StatusUnknown      Status = "UNKNOWN"
)

// severity orders statuses worst first. UNKNOWN ranks last so that one
// indicator that cannot tell does not hide what the others know.
var severity = map[Status]int{
	StatusDown:         0,
	StatusOutOfService: 1,
	StatusDegraded:     2,
	StatusUp:           3,
	StatusUnknown:      4,
}

// Aggregate returns the worst of statuses in the order DOWN, OUT_OF_SERVICE,
// DEGRADED, UP, UNKNOWN. UNKNOWN (and any unrecognised status, which counts
// as UNKNOWN) therefore only wins when nothing else is known. No statuses at
// all aggregate to UP: an empty group, such as a liveness group without
// members, means "this process answers", which is what such a probe asks.
func Aggregate(statuses ...Status) Status {
	if len(statuses) == 0 {
		return StatusUp
	}
	worst, rank := StatusUnknown, severity[StatusUnknown]
	for _, s := range statuses {
		if r, ok := severity[s]; ok && r < rank {
			worst, rank = s, r
		}
	}
	return worst
}

// HTTPStatus maps s to a response status: 503 for DOWN and OUT_OF_SERVICE,
// so load balancers and Kubernetes probes act on it, 200 for the rest
// (DEGRADED still serves traffic; UNKNOWN is not evidence of failure).
func (s Status) HTTPStatus() int {
	switch s {
	case StatusDown, StatusOutOfService:
		return http.StatusServiceUnavailable
	}
	return http.StatusOK
}
