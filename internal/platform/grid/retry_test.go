package grid

import (
	"errors"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

func TestRetryStoreCreate(t *testing.T) {
	storeErr := &jetstream.APIError{Code: 500, ErrorCode: errCodeStreamStoreCreate, Description: "error creating store for stream"}
	otherErr := errors.New("other")
	tests := []struct {
		name      string
		results   []error
		wantErr   error
		wantCalls int
	}{
		{"success", []error{nil}, nil, 1},
		{"race then success", []error{storeErr, storeErr, nil}, nil, 3},
		{"persistent store error", []error{storeErr, storeErr, storeErr, nil}, storeErr, createAttempts},
		{"other error is not retried", []error{otherErr, nil}, otherErr, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			err := retryStoreCreate(func() error {
				calls++
				return tc.results[calls-1]
			})
			if !errors.Is(err, tc.wantErr) || calls != tc.wantCalls {
				t.Fatalf("err = %v after %d calls, want %v after %d", err, calls, tc.wantErr, tc.wantCalls)
			}
		})
	}
}
