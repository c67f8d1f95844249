package ingest

import (
	"testing"
	"time"

	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/platform/sqlstore/sqltest"
)

// TestDeadLetters holds the SQL dead-letter store to its contract on every
// dialect the campaign service runs on.
func TestDeadLetters(t *testing.T) {
	t.Parallel()
	sqltest.ForDialects(t, []sqlstore.Dialect{sqlstore.SQLite, sqlstore.Postgres}, func(t *testing.T, db *sqlstore.DB) {
		t.Parallel()
		ctx := testCtx(t)
		dl, err := OpenDeadLetters(ctx, db)
		if err != nil {
			t.Fatalf("OpenDeadLetters: %v", err)
		}
		// Opening again is a no-op migration.
		if _, err := OpenDeadLetters(ctx, db); err != nil {
			t.Fatalf("OpenDeadLetters again: %v", err)
		}
		at := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
		rows := []Parked{
			{NaturalKey: "1.PING.1.QQ", Reason: ReasonLate, ActivationID: 1, Payload: []byte(`{"a":1}`), ParkedAt: at},
			{NaturalKey: "1.PING.2.QQ", Reason: ReasonBufferFull, ActivationID: 1, Payload: []byte(`{"a":2}`), ParkedAt: at},
			// Invalid UTF-8 in a detail must still store (PostgreSQL refuses it as text).
			{NaturalKey: "invalid.00ff", Reason: ReasonInvalid, Detail: "bad \xff byte", Payload: []byte{0, 0xff}, ParkedAt: at},
		}
		if err := dl.Park(ctx, rows); err != nil {
			t.Fatalf("Park: %v", err)
		}
		// Parking a redelivered message again changes nothing.
		if err := dl.Park(ctx, rows[:1]); err != nil {
			t.Fatalf("Park again: %v", err)
		}
		all, err := dl.List(ctx, 10)
		if err != nil || len(all) != 3 {
			t.Fatalf("List = %d rows, %v; want 3", len(all), err)
		}
		if all[2].Reason != ReasonInvalid || all[2].ActivationID != 0 || string(all[2].Payload) != "\x00\xff" || !all[0].ParkedAt.Equal(at) {
			t.Fatalf("rows read back as %+v", all)
		}
		tests := []struct {
			name      string
			limit     int
			wantKeys  []string
			markFirst bool
			wantCount int
		}{
			{"limit one", 1, []string{"1.PING.1.QQ"}, false, 2},
			{"INVALID never pending", 10, []string{"1.PING.1.QQ", "1.PING.2.QQ"}, true, 1},
			{"resent rows gone", 10, []string{"1.PING.2.QQ"}, false, 1},
		}
		for _, tc := range tests {
			got, err := dl.Pending(ctx, tc.limit)
			if err != nil {
				t.Fatalf("%s: Pending: %v", tc.name, err)
			}
			if len(got) != len(tc.wantKeys) {
				t.Fatalf("%s: Pending = %+v, want keys %v", tc.name, got, tc.wantKeys)
			}
			for i, p := range got {
				if p.NaturalKey != tc.wantKeys[i] {
					t.Fatalf("%s: Pending[%d] = %s, want %s", tc.name, i, p.NaturalKey, tc.wantKeys[i])
				}
			}
			if tc.markFirst {
				if err := dl.MarkResent(ctx, []int64{got[0].ID}, at.Add(time.Hour)); err != nil {
					t.Fatalf("MarkResent: %v", err)
				}
			}
			if n, err := dl.CountPending(ctx); err != nil || n != tc.wantCount {
				t.Fatalf("%s: CountPending = %d, %v; want %d", tc.name, n, err, tc.wantCount)
			}
		}
		all, _ = dl.List(ctx, 10)
		if all[0].ResentAt == nil || !all[0].ResentAt.Equal(at.Add(time.Hour)) || all[1].ResentAt != nil {
			t.Fatalf("resent_at = %v, %v; want the first row marked only", all[0].ResentAt, all[1].ResentAt)
		}
	})
}
