package grid

import (
	"errors"

	"github.com/nats-io/nats.go/jetstream"
)

// errCodeStreamStoreCreate is the server's "error creating store for
// stream"; nats.go has no name for it.
const errCodeStreamStoreCreate jetstream.ErrorCode = 10049

// createAttempts bounds retries of stream creation.
const createAttempts = 3

// retryStoreCreate runs create again when the server failed to create the
// stream's directory. The server removes an account's empty streams
// directory in the background after deleting its last stream; a stream
// created at that instant finds its parent directory gone (seen with NATS
// 2.9.10 and 2.15.2). The window is tiny, so an immediate retry succeeds.
func retryStoreCreate(create func() error) error {
	var err error
	for range createAttempts {
		if err = create(); !isStoreCreateError(err) {
			return err
		}
	}
	return err
}

func isStoreCreateError(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode == errCodeStreamStoreCreate
}
