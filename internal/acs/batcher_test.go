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
