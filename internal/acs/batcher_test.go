package acs

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"cpesuite/internal/platform/logx"
)

func TestInformBatcherGroupCommit(t *testing.T) {
	forStores(t, func(t *testing.T, s *Store) {
		ctx, cancel := context.WithCancel(context.Background())
		b := newInformBatcher(s, 16, 2, logx.Discard())
		var mu sync.Mutex
		var batches, rows int
		b.onFlush = func(n int, _ time.Duration, err error) {
			mu.Lock()
			batches++
			rows += n
			mu.Unlock()
		}
		stopped := make(chan error, 1)
		go func() { stopped <- b.Run(ctx) }()

		// 200 sessions over 100 devices: every device informs twice,
		// concurrently, so duplicates meet inside a batch.
		var wg sync.WaitGroup
		ids := make([]int64, 200)
		errs := make([]error, 200)
		for i := 0; i < 200; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				u := inform(fmt.Sprintf("B%03d", i%100), time.Now(), Params{"N": {fmt.Sprint(i), ""}})
				r, err := b.Apply(ctx, u)
				ids[i], errs[i] = r.DeviceID, err
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("inform %d: %v", i, err)
			}
			if ids[i] == 0 || ids[i] != ids[(i+100)%200] {
				t.Fatalf("inform %d: device id %d vs %d", i, ids[i], ids[(i+100)%200])
			}
		}
		total, _, _ := s.CountDevices(ctx)
		if total != 100 || rows != 200 {
			t.Fatalf("devices %d rows %d", total, rows)
		}
		if batches >= 200 {
			t.Errorf("no batching happened: %d batches for 200 informs", batches)
		}
		cancel()
		if err := <-stopped; err != nil {
			t.Fatal(err)
		}
		if _, err := b.Apply(context.Background(), inform("late", time.Now(), nil)); err != errBatcherStopped {
			t.Fatalf("inform after stop: %v, want errBatcherStopped", err)
		}
	})
}

// refuseSerial makes the database itself refuse any device row with serial:
// a trigger, so the refusal comes from the engine as a constraint would.
func refuseSerial(t *testing.T, s *Store, serial string) {
	t.Helper()
	stmts := []string{`CREATE TRIGGER acs_test_refuse BEFORE INSERT ON acs_devices WHEN NEW.serial = '` + serial + `'
		BEGIN SELECT RAISE(ABORT, 'refused by the test trigger'); END`}
	if s.pg() {
		stmts = []string{
			`CREATE FUNCTION acs_test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN IF NEW.serial = '` + serial + `' THEN RAISE EXCEPTION 'refused by the test trigger'; END IF; RETURN NEW; END $$`,
			`CREATE TRIGGER acs_test_refuse BEFORE INSERT ON acs_devices FOR EACH ROW EXECUTE FUNCTION acs_test_refuse()`,
		}
	}
	for _, q := range stmts {
		if _, err := s.db.ExecContext(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
}

// incompressible returns n letters that neither repeat nor compress, so
// that PostgreSQL cannot squeeze them into an index row.
func incompressible(n int) string {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = 'a' + byte(x%26)
	}
	return string(b)
}

// TestInformBatchBadRowCommitsNeighbours: a row the database refuses used
// to fail every Inform of its group commit (on PostgreSQL 60-71 % of good
// Informs got 503 while two bad senders ran). Now the batch is retried row
// by row: the good rows commit and only the bad ones fail.
func TestInformBatchBadRowCommitsNeighbours(t *testing.T) {
	tests := []struct {
		name   string
		serial string
		pgOnly bool // SQLite stores these; PostgreSQL refuses them
	}{
		{"row refused by a trigger", "POISON", false},
		{"invalid UTF-8 serial", "P\xff1", true},
		{"12,000-character serial", incompressible(12000), true},
	}
	forStores(t, func(t *testing.T, s *Store) {
		refuseSerial(t, s, "POISON")
		for i, tt := range tests {
			if tt.pgOnly && !s.pg() {
				continue // SQLite stores it; the trigger row covers SQLite
			}
			t.Run(tt.name, func(t *testing.T) {
				b := newInformBatcher(s, 16, 1, logx.Discard())
				now := time.Now()
				var batch []*informReq
				for j := 0; j < 4; j++ {
					serial := fmt.Sprintf("GOOD-%d-%d", i, j)
					if j == 1 {
						serial = tt.serial
					}
					batch = append(batch, &informReq{up: inform(serial, now, Params{"X.Y": {"1", ""}}), reply: make(chan informReply, 1)})
				}
				b.flush(context.Background(), batch)
				for j, r := range batch {
					got := <-r.reply
					if j == 1 {
						if got.err == nil {
							t.Fatal("the bad row was stored")
						}
						continue
					}
					if got.err != nil || got.res.DeviceID == 0 {
						t.Fatalf("good row %d failed with its bad neighbour: %v", j, got.err)
					}
					if _, err := s.DeviceByKey(context.Background(), r.up.Key); err != nil {
						t.Fatalf("good row %d not committed: %v", j, err)
					}
				}
			})
		}
	})
}
