// Package ingest takes RESULT messages off the grid and stores them in the
// result store with zero loss: batched inserts, acknowledgement to the grid
// only after a row is stored or parked, dedup through the map
// fccResultDedup and the store's natural key, and the dead-letter store for
// LATE rows and a full buffer.
package ingest

// ResendReport is the answer of POST /FCC/admin/result-dead-letter/resend.
type ResendReport struct {
	Resent    int `json:"resent"`
	Remaining int `json:"remaining"`
}
