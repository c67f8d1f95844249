package grid

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

const (
	queueStreamPrefix  = "GRID_Q_"
	queueSubjectPrefix = "grid.q."
	// queueConsumer is the one durable consumer of every queue. All workers
	// of a queue share it, which is what makes them compete for messages.
	queueConsumer = "workers"

	defaultAckWait    = 30 * time.Second
	defaultDuplicates = 2 * time.Minute

	// readyWait is how long a pull for "what is ready now" stays open.
	// Ready messages go out the moment the server gets the request, so this
	// only bounds the wait when fewer than asked for are ready.
	readyWait = 5 * time.Millisecond
)

// QueueOptions tune a work queue. The zero value is a file-backed queue with
// a 30 s ack wait and unlimited redeliveries.
type QueueOptions struct {
	// AckWait is how long a delivery may stay unacknowledged before it is
	// delivered again. Default 30 s.
	AckWait time.Duration
	// MaxDeliver caps deliveries of one message; 0 means unlimited. A
	// message that reaches the cap stays in the stream but is no longer
	// handed out.
	MaxDeliver int
	// MaxAge drops messages that are older, consumed or not; 0 keeps them.
	MaxAge time.Duration
	// Replicas is the number of copies in a cluster. Default 1.
	Replicas int
	// Duplicates is the window in which a repeated message id is dropped.
	// Default 2 min, and never longer than MaxAge.
	Duplicates time.Duration
	// Memory keeps the queue in memory instead of on disk.
	Memory bool
	// MaxAckPending caps the messages delivered and not yet acknowledged,
	// across the queue's workers. Default DefaultMaxAckPending, the NATS
	// server's own default, made explicit. It is also the grid's
	// back-pressure: a consumer never holds more than this in memory, so
	// a backlog stays in the durable queue instead of overflowing a
	// consumer's buffer (raising it above the campaign service's
	// svc.fcc.result.queue-capacity made a healthy but slower result store
	// park a backlog as BUFFER_FULL). Every process that declares a queue
	// sets the consumer's value (the last one wins), so processes sharing
	// a queue should agree on it.
	MaxAckPending int
}

// DefaultMaxAckPending is QueueOptions.MaxAckPending when unset.
const DefaultMaxAckPending = 1000

func (o QueueOptions) withDefaults() (QueueOptions, error) {
	if o.AckWait < 0 || o.MaxAge < 0 || o.Duplicates < 0 || o.Replicas < 0 {
		return o, fmt.Errorf("%w: queue options must not be negative: %+v", ErrInvalid, o)
	}
	if o.AckWait == 0 {
		o.AckWait = defaultAckWait
	}
	if o.MaxDeliver <= 0 {
		o.MaxDeliver = -1
	}
	if o.Replicas == 0 {
		o.Replicas = 1
	}
	if o.MaxAckPending < 0 {
		return o, fmt.Errorf("%w: MaxAckPending must not be negative: %d", ErrInvalid, o.MaxAckPending)
	}
	if o.MaxAckPending == 0 {
		o.MaxAckPending = DefaultMaxAckPending
	}
	if o.Duplicates == 0 {
		o.Duplicates = defaultDuplicates
	}
	if o.MaxAge > 0 && o.Duplicates > o.MaxAge {
		// The server refuses a dedup window longer than the messages live.
		o.Duplicates = o.MaxAge
	}
	return o, nil
}

// Queue is a named work queue: each message goes to one worker and stays
// until a worker acknowledges it.
type Queue struct {
	g       *Grid
	name    string
	stream  string
	subject string
	cons    jetstream.Consumer
}

// NewQueue declares the queue name, creating or updating its stream and
// consumer, and returns a handle to it. Every process that uses the queue
// calls NewQueue with the same options.
func NewQueue(ctx context.Context, g *Grid, name string, opts QueueOptions) (*Queue, error) {
	if err := validateName("queue", name); err != nil {
		return nil, err
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	q := &Queue{g: g, name: name, stream: queueStreamPrefix + name, subject: queueSubjectPrefix + name}
	storage := jetstream.FileStorage
	if opts.Memory {
		storage = jetstream.MemoryStorage
	}
	scfg := jetstream.StreamConfig{
		Name:       q.stream,
		Subjects:   []string{q.subject},
		Retention:  jetstream.WorkQueuePolicy,
		Storage:    storage,
		Replicas:   opts.Replicas,
		MaxAge:     opts.MaxAge,
		Duplicates: opts.Duplicates,
		MaxMsgs:    -1,
		MaxBytes:   -1,
	}
	var s jetstream.Stream
	err = retryStoreCreate(func() (err error) {
		s, err = g.js.CreateOrUpdateStream(ctx, scfg)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("creating stream for queue %q: %w", name, err)
	}
	q.cons, err = s.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable:       queueConsumer,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       opts.AckWait,
		MaxDeliver:    opts.MaxDeliver,
		MaxAckPending: opts.MaxAckPending,
		DeliverPolicy: jetstream.DeliverAllPolicy,
		Replicas:      opts.Replicas,
	})
	if err != nil {
		return nil, fmt.Errorf("creating consumer for queue %q: %w", name, err)
	}
	return q, nil
}

// Name returns the queue's name.
func (q *Queue) Name() string { return q.name }

// Publish stores data in the queue and returns once the server has it. A
// non-empty msgID makes the publish idempotent: a second message with the
// same id within the Duplicates window is dropped.
func (q *Queue) Publish(ctx context.Context, data []byte, msgID string) error {
	// Expecting the stream guards against another stream capturing the
	// subject, which would silently bypass the work queue.
	opts := []jetstream.PublishOpt{jetstream.WithExpectStream(q.stream)}
	if msgID != "" {
		opts = append(opts, jetstream.WithMsgID(msgID))
	}
	if _, err := q.g.js.Publish(ctx, q.subject, data, opts...); err != nil {
		return fmt.Errorf("publishing to queue %q: %w", q.name, err)
	}
	return nil
}

// Fetch returns up to limit deliveries. It waits up to wait for the first
// one and then takes whatever else is ready, so a worker gets work as soon as
// there is some rather than when a full batch has gathered. No messages
// within wait is not an error: the result is empty. With wait 0 it only
// takes what is ready.
func (q *Queue) Fetch(ctx context.Context, limit int, wait time.Duration) ([]*Delivery, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("%w: fetch limit must be positive, got %d", ErrInvalid, limit)
	}
	if deadline, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(deadline))
	}
	if wait <= 0 {
		return q.fetch(ctx, limit, readyWait)
	}
	out, err := q.fetch(ctx, 1, wait)
	if err != nil || len(out) == 0 || limit == 1 {
		return out, err
	}
	more, err := q.fetch(ctx, limit-1, readyWait)
	if err != nil {
		// The first delivery is ours already; hand it out rather than let it
		// wait for AckWait.
		return out, nil
	}
	return append(out, more...), nil
}

// fetch makes one pull request for up to limit messages that expires after
// wait.
//
// It never uses the server's no-wait pulls: NATS 2.9 sometimes keeps such a
// request open after the client has given up on it, and a redelivery sent
// to it is then lost until AckWait passes again. An expiring request ends
// at the same moment for client and server.
func (q *Queue) fetch(ctx context.Context, limit int, wait time.Duration) ([]*Delivery, error) {
	batch, err := q.cons.Fetch(limit, jetstream.FetchMaxWait(wait))
	if err != nil {
		return nil, fmt.Errorf("fetching from queue %q: %w", q.name, err)
	}
	var out []*Delivery
	msgs := batch.Messages()
recv:
	for {
		select {
		case m, ok := <-msgs:
			if !ok {
				break recv
			}
			d, err := newDelivery(m)
			if err != nil {
				return nil, fmt.Errorf("fetching from queue %q: %w", q.name, err)
			}
			out = append(out, d)
		case <-ctx.Done():
			// Give back what arrived so it is redelivered now rather than
			// after AckWait.
			for _, d := range out {
				_ = d.Nak(0)
			}
			return nil, fmt.Errorf("fetching from queue %q: %w", q.name, ctx.Err())
		}
	}
	if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) {
		for _, d := range out {
			_ = d.Nak(0)
		}
		return nil, fmt.Errorf("fetching from queue %q: %w", q.name, err)
	}
	return out, nil
}

// Pending returns the number of messages not yet acknowledged: those
// waiting for a worker plus those a worker holds or that wait for
// redelivery. A message that used up MaxDeliver stops counting when the
// server next looks for work to hand out, that is on the next Fetch.
func (q *Queue) Pending(ctx context.Context) (uint64, error) {
	info, err := q.cons.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("reading pending count of queue %q: %w", q.name, err)
	}
	return info.NumPending + uint64(info.NumAckPending), nil
}

// Delete removes the queue and all its messages. Deleting a queue that does
// not exist is not an error.
func (q *Queue) Delete(ctx context.Context) error {
	err := q.g.js.DeleteStream(ctx, q.stream)
	if err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("deleting queue %q: %w", q.name, err)
	}
	return nil
}

// Delivery is one message handed to a worker. The worker must settle it
// with Ack, Nak or Term; otherwise it is delivered again after AckWait.
type Delivery struct {
	// Data is the message body as published.
	Data []byte
	// NumDelivered counts deliveries of this message, 1 the first time.
	NumDelivered uint64
	// Seq is the message's sequence number in the queue.
	Seq uint64
	// Published is when the server stored the message.
	Published time.Time
	// MsgID is the id given to Publish, if any.
	MsgID string

	msg jetstream.Msg
}

func newDelivery(m jetstream.Msg) (*Delivery, error) {
	meta, err := m.Metadata()
	if err != nil {
		return nil, fmt.Errorf("reading delivery metadata: %w", err)
	}
	return &Delivery{
		Data:         m.Data(),
		NumDelivered: meta.NumDelivered,
		Seq:          meta.Sequence.Stream,
		Published:    meta.Timestamp,
		MsgID:        m.Headers().Get(jetstream.MsgIDHeader),
		msg:          m,
	}, nil
}

// Ack acknowledges the message, removing it from the queue. It waits for
// the server's confirmation, so after a nil error the message will not come
// back.
func (d *Delivery) Ack(ctx context.Context) error {
	if err := d.msg.DoubleAck(ctx); err != nil {
		return fmt.Errorf("acknowledging message %d: %w", d.Seq, err)
	}
	return nil
}

// Nak hands the message back for redelivery after delay, or at once when
// delay is 0.
func (d *Delivery) Nak(delay time.Duration) error {
	var err error
	if delay > 0 {
		err = d.msg.NakWithDelay(delay)
	} else {
		err = d.msg.Nak()
	}
	if err != nil {
		return fmt.Errorf("rejecting message %d: %w", d.Seq, err)
	}
	return nil
}

// InProgress tells the server the worker is still busy, restarting the
// AckWait timer.
func (d *Delivery) InProgress() error {
	if err := d.msg.InProgress(); err != nil {
		return fmt.Errorf("extending message %d: %w", d.Seq, err)
	}
	return nil
}

// Term drops the message for good: it is never delivered again.
func (d *Delivery) Term() error {
	if err := d.msg.Term(); err != nil {
		return fmt.Errorf("terminating message %d: %w", d.Seq, err)
	}
	return nil
}
