package grid

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

const (
	// markerTTL is how long the server keeps the marker it leaves where an
	// entry expired or was deleted. Markers only matter to watchers; a short
	// life keeps deleted keys from piling up.
	markerTTL = time.Minute
	// fallbackTTLHeader carries an entry's TTL on servers without
	// per-message TTL (before NATS 2.11); clients then enforce it on read.
	fallbackTTLHeader = "Grid-TTL"
	// kvOperationHeader marks KV delete and purge markers.
	kvOperationHeader = "KV-Operation"
	// casAttempts bounds PutIfAbsent's retries when entries change or
	// expire under it; each retry means another writer made progress.
	casAttempts = 16
)

// MapOptions tune a map. The zero value is a file-backed map whose entries
// live until deleted unless written with a TTL.
type MapOptions struct {
	// TTL is the bucket's default: an entry written without its own TTL
	// expires this long after it was written. It also caps per-entry TTLs.
	// 0 means entries do not expire by default.
	TTL time.Duration
	// Replicas is the number of copies in a cluster. Default 1.
	Replicas int
	// Memory keeps the map in memory instead of on disk.
	Memory bool
}

// Map is a named key/value map whose entries can expire, a JetStream KV
// bucket underneath.
//
// Per-entry TTLs count in whole seconds, as the server's do: a TTL is
// rounded up to the next second. On servers with per-message TTL (NATS 2.11
// and later) the server removes expired entries. Older servers cannot, so
// the map stores the TTL in a header and treats an entry as absent once its
// server timestamp plus TTL has passed; the entry itself then stays until it
// is overwritten, deleted or reaches the bucket TTL. Either way reads judge
// expiry by the server's write timestamp and the reader's clock, so all
// readers agree as long as clocks are in sync.
type Map struct {
	g      *Grid
	name   string
	kv     jetstream.KeyValue
	stream jetstream.Stream
	prefix string
	ttl    time.Duration
	native bool
}

// NewMap declares the map name, creating or updating its bucket, and
// returns a handle to it.
func NewMap(ctx context.Context, g *Grid, name string, opts MapOptions) (*Map, error) {
	if err := validateName("map", name); err != nil {
		return nil, err
	}
	if opts.TTL < 0 || opts.Replicas < 0 {
		return nil, fmt.Errorf("%w: map options must not be negative: %+v", ErrInvalid, opts)
	}
	cfg := jetstream.KeyValueConfig{
		Bucket:         name,
		History:        1,
		TTL:            opts.TTL,
		Replicas:       max(opts.Replicas, 1),
		Storage:        jetstream.FileStorage,
		LimitMarkerTTL: markerTTL,
	}
	if opts.Memory {
		cfg.Storage = jetstream.MemoryStorage
	}
	var kv jetstream.KeyValue
	create := func() (err error) {
		kv, err = g.js.CreateOrUpdateKeyValue(ctx, cfg)
		return err
	}
	native := true
	err := retryStoreCreate(create)
	if errors.Is(err, jetstream.ErrLimitMarkerTTLNotSupported) {
		native = false
		cfg.LimitMarkerTTL = 0
		err = retryStoreCreate(create)
	}
	if err != nil {
		return nil, fmt.Errorf("creating bucket for map %q: %w", name, err)
	}
	// Reads go to the stream itself because only raw messages show the
	// headers that say whether an entry has expired.
	stream, err := g.js.Stream(ctx, "KV_"+name)
	if err != nil {
		return nil, fmt.Errorf("opening bucket stream of map %q: %w", name, err)
	}
	return &Map{
		g:      g,
		name:   name,
		kv:     kv,
		stream: stream,
		prefix: "$KV." + name + ".",
		ttl:    opts.TTL,
		native: native,
	}, nil
}

// Name returns the map's name.
func (m *Map) Name() string { return m.name }

// NativeTTL reports whether the server expires entries itself (per-message
// TTL, NATS 2.11+) rather than the client hiding expired ones.
func (m *Map) NativeTTL() bool { return m.native }

// Put sets key to value. With ttl 0 the entry follows the bucket TTL (or
// never expires without one); otherwise it expires after ttl.
func (m *Map) Put(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	ttl, err := m.check(key, ttl)
	if err != nil {
		return err
	}
	if _, err := m.write(ctx, key, value, ttl, nil); err != nil {
		return fmt.Errorf("putting %q in map %q: %w", key, m.name, err)
	}
	return nil
}

// PutIfAbsent sets key to value only when the key has no live entry, and
// reports whether it did. It is atomic across all clients of the grid: of
// concurrent callers for one key exactly one gets true. This is the
// primitive for deduplication.
func (m *Map) PutIfAbsent(ctx context.Context, key string, value []byte, ttl time.Duration) (bool, error) {
	ttl, err := m.check(key, ttl)
	if err != nil {
		return false, err
	}
	// Optimistically assume the key has never been written, which costs one
	// round trip; otherwise learn its last revision and write only on top of
	// a dead one.
	var expect uint64
	for range casAttempts {
		_, err := m.write(ctx, key, value, ttl, &expect)
		if err == nil {
			return true, nil
		}
		if !isWrongLastSequence(err) {
			return false, fmt.Errorf("creating %q in map %q: %w", key, m.name, err)
		}
		raw, err := m.last(ctx, key)
		if err != nil {
			return false, fmt.Errorf("creating %q in map %q: %w", key, m.name, err)
		}
		if raw == nil {
			expect = 0
			continue
		}
		if m.live(raw.Header, raw.Time, time.Now()) {
			return false, nil
		}
		expect = raw.Sequence
	}
	return false, fmt.Errorf("creating %q in map %q: gave up after %d conflicting writes", key, m.name, casAttempts)
}

// Get returns the value of key and whether it has a live entry. Deleted and
// expired entries read as absent.
func (m *Map) Get(ctx context.Context, key string) ([]byte, bool, error) {
	if err := validateKey(key); err != nil {
		return nil, false, err
	}
	raw, err := m.last(ctx, key)
	if err != nil {
		return nil, false, fmt.Errorf("getting %q from map %q: %w", key, m.name, err)
	}
	if raw == nil || !m.live(raw.Header, raw.Time, time.Now()) {
		return nil, false, nil
	}
	return raw.Data, true, nil
}

// Delete removes key. Deleting an absent key is not an error.
func (m *Map) Delete(ctx context.Context, key string) error {
	if err := validateKey(key); err != nil {
		return err
	}
	var opts []jetstream.KVDeleteOpt
	if m.native {
		// Let the server drop the marker too, so deleted keys leave nothing
		// behind for long.
		opts = append(opts, jetstream.PurgeTTL(markerTTL))
	}
	if err := m.kv.Purge(ctx, key, opts...); err != nil {
		return fmt.Errorf("deleting %q from map %q: %w", key, m.name, err)
	}
	return nil
}

// Keys returns the keys with live entries, sorted.
func (m *Map) Keys(ctx context.Context) ([]string, error) {
	keys, err := m.keys(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing keys of map %q: %w", m.name, err)
	}
	slices.Sort(keys)
	return keys, nil
}

// keys reads the last message of every key through a temporary consumer
// that delivers headers only, so values are never transferred.
func (m *Map) keys(ctx context.Context) ([]string, error) {
	cons, err := m.stream.CreateConsumer(ctx, jetstream.ConsumerConfig{
		Name:              fmt.Sprintf("grid-keys-%016x", rand.Uint64()),
		DeliverPolicy:     jetstream.DeliverLastPerSubjectPolicy,
		FilterSubject:     m.prefix + ">",
		AckPolicy:         jetstream.AckNonePolicy,
		HeadersOnly:       true,
		MemoryStorage:     true,
		Replicas:          1,
		InactiveThreshold: time.Minute,
	})
	if err != nil {
		return nil, err
	}
	defer func() {
		// Best effort: the server drops the consumer after InactiveThreshold
		// anyway.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.g.timeout)
		defer cancel()
		_ = m.stream.DeleteConsumer(dctx, cons.CachedInfo().Name)
	}()

	var keys []string
	pending := cons.CachedInfo().NumPending
	for pending > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		wait := m.g.timeout
		if deadline, ok := ctx.Deadline(); ok {
			wait = min(wait, time.Until(deadline))
		}
		if wait <= 0 {
			return nil, context.DeadlineExceeded
		}
		batch, err := cons.Fetch(int(min(pending, 256)), jetstream.FetchMaxWait(wait))
		if err != nil {
			return nil, err
		}
		n := 0
		now := time.Now()
		for msg := range batch.Messages() {
			n++
			meta, err := msg.Metadata()
			if err != nil {
				return nil, err
			}
			pending = meta.NumPending
			if m.live(msg.Headers(), meta.Timestamp, now) {
				keys = append(keys, strings.TrimPrefix(msg.Subject(), m.prefix))
			}
		}
		if err := batch.Error(); err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, fmt.Errorf("no entries within %s though %d are pending", wait, pending)
		}
	}
	return keys, nil
}

// Destroy deletes the map and all its entries. Destroying a map that does
// not exist is not an error.
func (m *Map) Destroy(ctx context.Context) error {
	err := m.g.js.DeleteKeyValue(ctx, m.name)
	if err != nil && !errors.Is(err, jetstream.ErrBucketNotFound) && !errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("destroying map %q: %w", m.name, err)
	}
	return nil
}

// check validates a key and turns a requested TTL into the one to store.
func (m *Map) check(key string, ttl time.Duration) (time.Duration, error) {
	if err := validateKey(key); err != nil {
		return 0, err
	}
	if ttl < 0 {
		return 0, fmt.Errorf("%w: ttl %s is negative", ErrInvalid, ttl)
	}
	if m.ttl > 0 && ttl > m.ttl {
		// The bucket TTL removes every entry at that age; a longer entry TTL
		// would silently not hold, which for a dedup map means duplicates.
		return 0, fmt.Errorf("%w: ttl %s is longer than the TTL %s of map %q", ErrInvalid, ttl, m.ttl, m.name)
	}
	if r := ttl % time.Second; r != 0 {
		ttl += time.Second - r
	}
	return ttl, nil
}

// write publishes one entry; with expect set, only if the key's last
// revision is still *expect (0: the key has no messages).
func (m *Map) write(ctx context.Context, key string, value []byte, ttl time.Duration, expect *uint64) (uint64, error) {
	msg := nats.NewMsg(m.prefix + key)
	msg.Data = value
	var opts []jetstream.PublishOpt
	if ttl > 0 {
		if m.native {
			opts = append(opts, jetstream.WithMsgTTL(ttl))
		} else {
			msg.Header.Set(fallbackTTLHeader, ttl.String())
		}
	}
	if expect != nil {
		opts = append(opts, jetstream.WithExpectLastSequencePerSubject(*expect))
	}
	ack, err := m.g.js.PublishMsg(ctx, msg, opts...)
	if err != nil {
		return 0, err
	}
	return ack.Sequence, nil
}

// last returns the newest message of key, or nil when there is none.
func (m *Map) last(ctx context.Context, key string) (*jetstream.RawStreamMsg, error) {
	raw, err := m.stream.GetLastMsgForSubject(ctx, m.prefix+key)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, nil
	}
	return raw, err
}

// live reports whether a message written at stored is a value that has not
// expired by now, rather than a delete marker or an expired entry.
func (m *Map) live(hdr nats.Header, stored, now time.Time) bool {
	if hdr.Get(kvOperationHeader) != "" || hdr.Get(jetstream.MarkerReasonHeader) != "" {
		return false
	}
	ttl := m.ttl
	if v := hdr.Get(jetstream.MsgTTLHeader); v != "" {
		ttl = parseTTL(v)
	} else if v := hdr.Get(fallbackTTLHeader); v != "" {
		ttl = parseTTL(v)
	}
	if m.ttl > 0 && (ttl <= 0 || ttl > m.ttl) {
		// The bucket TTL removes every entry at that age, whatever its own.
		ttl = m.ttl
	}
	return ttl <= 0 || now.Before(stored.Add(ttl))
}

// parseTTL reads a TTL header the way the server does: a Go duration, a
// number of seconds, or "never" (returned as 0, no expiry).
func parseTTL(v string) time.Duration {
	if d, err := time.ParseDuration(v); err == nil {
		return d
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	return 0
}

func isWrongLastSequence(err error) bool {
	var apiErr *jetstream.APIError
	if !errors.As(err, &apiErr) {
		return false
	}
	return apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant
}
