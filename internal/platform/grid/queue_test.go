package grid_test

import (
	"errors"
	"strconv"
	"testing"

	"cpesuite/internal/platform/grid"
)

// TestQueueMaxAckPending: a consumer holds at most MaxAckPending
// unacknowledged messages (1000 by default); the rest wait in the queue.
func TestQueueMaxAckPending(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		max      int
		publish  int
		wantHeld int
	}{
		{"default", 0, 1500, grid.DefaultMaxAckPending},
		{"an explicit cap", 300, 500, 300},
		{"a larger cap", 2000, 1500, 1500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := grid.Config{StoreDir: t.TempDir()}
			g := connect(t, cfg, startEmbedded(t, cfg))
			q, err := grid.NewQueue(testCtx(t), g, "held", grid.QueueOptions{MaxAckPending: tt.max})
			if err != nil {
				t.Fatal(err)
			}
			for i := range tt.publish {
				if err := q.Publish(testCtx(t), []byte(strconv.Itoa(i)), ""); err != nil {
					t.Fatal(err)
				}
			}
			held := 0
			for held < tt.publish {
				ds, err := q.Fetch(testCtx(t), 500, 0)
				if err != nil {
					t.Fatal(err)
				}
				if len(ds) == 0 {
					break
				}
				held += len(ds)
			}
			if held != tt.wantHeld {
				t.Fatalf("held %d unacknowledged messages, want %d", held, tt.wantHeld)
			}
		})
	}
	if _, err := grid.NewQueue(t.Context(), nil, "bad", grid.QueueOptions{MaxAckPending: -1}); !errors.Is(err, grid.ErrInvalid) {
		t.Fatalf("negative MaxAckPending: %v, want ErrInvalid", err)
	}
}
