package results

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"cpesuite/internal/fcc/fccwire"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/ext"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// ClickHouse is the scale-out engine, spoken over the native protocol
// (Debian's 18.16 answers nothing else that clickhouse-go speaks).
type ClickHouse struct {
	conn       driver.Conn
	migrations []migration
	now        func() time.Time
	// secrets are cut out of every error text this store returns: the
	// reason of a health check is served to anyone who can reach it.
	secrets []string

	// mu makes check-then-insert atomic inside the process; across
	// processes ReplacingMergeTree and FINAL keep a key once.
	mu     sync.Mutex
	closed atomic.Bool
}

// ClickHouseOptions tune the connection; zero values take the defaults.
type ClickHouseOptions struct {
	// ReadTimeout bounds every server answer; without one a statement the
	// server never answers (18.16 and a plain INSERT) hangs forever.
	// Default 60s.
	ReadTimeout time.Duration
	// DialTimeout bounds connecting. Default 5s.
	DialTimeout time.Duration
}

// OpenClickHouse prepares a store for dsn (clickhouse://host:9000/db?...).
// It does not connect: a server that is down shows as UNAVAILABLE in Check
// and the probe keeps trying.
func OpenClickHouse(dsn string, o ClickHouseOptions) (*ClickHouse, error) {
	opts, err := clickhouse.ParseDSN(dsn)
	if err != nil {
		// The parser's message may quote the DSN and its password.
		return nil, errors.New("CPESUITE_FCC_RESULTSTORE_DSN is not a valid ClickHouse DSN (want clickhouse://host:9000/database)")
	}
	if opts.Protocol != clickhouse.Native {
		return nil, errors.New("CPESUITE_FCC_RESULTSTORE_DSN: only the native protocol (clickhouse://, port 9000) is supported")
	}
	opts.ReadTimeout = cmpOr(o.ReadTimeout, 60*time.Second)
	opts.DialTimeout = cmpOr(o.DialTimeout, 5*time.Second)
	conn, err := clickhouse.Open(opts)
	if err != nil {
		return nil, errors.New("opening the ClickHouse result store failed")
	}
	s := &ClickHouse{conn: conn, migrations: mustMigrations("clickhouse"), now: time.Now, secrets: []string{dsn}}
	if opts.Auth.Password != "" {
		s.secrets = append(s.secrets, opts.Auth.Password)
	}
	return s, nil
}

func cmpOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// safe returns err with the DSN and password cut out of its text.
func (s *ClickHouse) safe(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	for _, sec := range s.secrets {
		if sec != "" && strings.Contains(msg, sec) {
			msg = strings.ReplaceAll(msg, sec, "***")
		}
	}
	if msg == err.Error() {
		return err
	}
	return errors.New(msg)
}

func (s *ClickHouse) errorf(format string, err error) error {
	return fmt.Errorf(format+": %w", s.safe(err))
}

// Migrate implements Store. ClickHouse has no transactional DDL, so each
// statement is idempotent (IF NOT EXISTS) and the version row is written
// after its migration: a crash in between repeats the migration.
func (s *ClickHouse) Migrate(ctx context.Context) error {
	if s.isClosed() {
		return errClosed
	}
	if err := s.conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+TableSchemaVersion+` (
		version UInt32, name String, applied_at DateTime) ENGINE = MergeTree ORDER BY version`); err != nil {
		return s.errorf("creating "+TableSchemaVersion, err)
	}
	stored, err := s.storedVersion(ctx)
	if err != nil {
		return err
	}
	for _, m := range s.migrations[min(stored, len(s.migrations)):] {
		for _, st := range m.statements {
			if err := s.conn.Exec(ctx, st); err != nil {
				return s.errorf("result store migration "+m.name, err)
			}
		}
		// 18.16 hangs on an INSERT sent as a plain statement; a batch names
		// its columns and works everywhere.
		b, err := s.conn.PrepareBatch(ctx, `INSERT INTO `+TableSchemaVersion+` (version, name, applied_at)`)
		if err != nil {
			return s.errorf("recording migration "+m.name, err)
		}
		if err := b.Append(uint32(m.version), m.name, s.now().UTC().Truncate(time.Second)); err != nil {
			b.Abort()
			return s.errorf("recording migration "+m.name, err)
		}
		if err := b.Send(); err != nil {
			return s.errorf("recording migration "+m.name, err)
		}
	}
	return nil
}

func (s *ClickHouse) storedVersion(ctx context.Context) (int, error) {
	var n uint64
	if err := s.conn.QueryRow(ctx, `SELECT count() FROM system.tables WHERE database = currentDatabase() AND name = ?`, TableSchemaVersion).Scan(&n); err != nil {
		return 0, s.safe(err)
	}
	if n == 0 {
		return 0, nil
	}
	var v uint32
	if err := s.conn.QueryRow(ctx, `SELECT max(version) FROM `+TableSchemaVersion).Scan(&v); err != nil {
		return 0, s.safe(err)
	}
	return int(v), nil
}

// Ping implements Pinger.
func (s *ClickHouse) Ping(ctx context.Context) error {
	if s.isClosed() {
		return errClosed
	}
	return s.safe(s.conn.Ping(ctx))
}

// Check implements Store.
func (s *ClickHouse) Check(ctx context.Context) Status {
	now := s.now()
	if s.isClosed() {
		return Status{State: StateUnavailable, Reason: errClosed.Error(), CheckedAt: now}
	}
	v, err := s.storedVersion(ctx)
	if err != nil {
		return Status{State: StateUnavailable, Reason: err.Error(), CheckedAt: now}
	}
	st := schemaStatus(v, len(s.migrations))
	st.CheckedAt = now
	return st
}

// Insert implements Store: one query reads which keys of the batch the
// tables already hold, then the others are sent in one native batch per
// table. Each INSERT is a new part on the server, whose cost does not
// depend much on its size, so callers that can should send large batches.
func (s *ClickHouse) Insert(ctx context.Context, rows []Row) (int, error) {
	if len(rows) > MaxInsertRows {
		return 0, errTooMany(len(rows))
	}
	speed, latency, err := split(rows)
	if err != nil || len(speed)+len(latency) == 0 {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.isClosed() {
		return 0, errClosed
	}
	now := s.now().UTC()
	batches := []tableRows{{TableSpeed, speed}, {TableLatency, latency}}
	// Both tables are checked before either is written, so an unreachable
	// server fails the batch before anything is stored.
	have, err := s.stored(ctx, batches)
	if err != nil {
		return 0, err
	}
	total := 0
	for _, b := range batches {
		fresh := b.rows[:0:0]
		for _, r := range b.rows {
			if _, ok := have[keyOf(r)]; !ok {
				fresh = append(fresh, r)
			}
		}
		if len(fresh) == 0 {
			continue
		}
		if err := s.send(ctx, b.table, fresh, now); err != nil {
			return 0, err
		}
		total += len(fresh)
	}
	return total, nil
}

// keysTable names the external table that carries a batch's keys to the
// existence query: sent as data beside the query, it has no size limit
// (a key list in the SQL text hit max_query_size at 1000 rows, so a batch
// of 10,000 took ten queries) and matches whole keys, not serials.
const keysTable = "batch_keys"

// stored returns the natural keys of the batch the tables hold, with one
// query over both tables. fcc_test_id and activation_id lead the sorting
// key; naming them lets the primary index skip other runs' granules.
func (s *ClickHouse) stored(ctx context.Context, batches []tableRows) (map[key]struct{}, error) {
	keys, err := ext.NewTable(keysTable,
		ext.Column("activation_id", "Int64"), ext.Column("serial", "String"),
		ext.Column("direction", "String"), ext.Column("iteration", "Int32"))
	if err != nil {
		return nil, err
	}
	tests, acts := set[int64]{}, set[int64]{}
	var selects []string
	for _, b := range batches {
		if len(b.rows) == 0 {
			continue
		}
		for _, r := range b.rows {
			tests.add(r.FccTestID)
			acts.add(r.ActivationID)
			if err := keys.Append(r.ActivationID, r.Serial, string(r.Direction), int32(r.Iteration)); err != nil {
				return nil, err
			}
		}
		selects = append(selects, `SELECT activation_id, serial, direction, iteration FROM `+b.table+
			` WHERE fcc_test_id IN ? AND activation_id IN ? AND (activation_id, serial, direction, iteration) IN `+keysTable)
	}
	var args []any
	for range selects {
		args = append(args, tests.group(), acts.group())
	}
	q, err := s.conn.Query(clickhouse.Context(ctx, clickhouse.WithExternalTable(keys)), strings.Join(selects, " UNION ALL "), args...)
	if err != nil {
		return nil, s.errorf("reading stored result keys", err)
	}
	defer q.Close()
	have := make(map[key]struct{})
	for q.Next() {
		var k key
		var it int32
		var dir string
		if err := q.Scan(&k.activationID, &k.serial, &dir, &it); err != nil {
			return nil, s.errorf("reading stored result keys", err)
		}
		k.direction, k.iteration = fccwire.Direction(dir), int(it)
		have[k] = struct{}{}
	}
	if err := q.Err(); err != nil {
		return nil, s.errorf("reading stored result keys", err)
	}
	return have, nil
}

func (s *ClickHouse) send(ctx context.Context, table string, rows []*Row, now time.Time) error {
	b, err := s.conn.PrepareBatch(ctx, `INSERT INTO `+table+` (`+columnList(table)+`)`)
	if err != nil {
		return s.errorf("inserting results", err)
	}
	args := make([]any, 0, len(commonColumns)+len(speedColumns))
	for _, r := range rows {
		v, err := values(r, table, now)
		if err != nil {
			b.Abort()
			return err
		}
		args = args[:0]
		for _, x := range v {
			if bv, ok := x.(bool); ok {
				x = boolU8(bv)
			}
			args = append(args, x)
		}
		if err := b.Append(args...); err != nil {
			b.Abort()
			return s.errorf("inserting results", err)
		}
	}
	if err := b.Send(); err != nil {
		return s.errorf("inserting results", err)
	}
	return nil
}

func boolU8(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// Rows implements Store. FINAL merges what the background merges have not
// yet collapsed, so a key inserted twice by two processes reads once.
func (s *ClickHouse) Rows(ctx context.Context, activationID int64) ([]Row, error) {
	if s.isClosed() {
		return nil, errClosed
	}
	var out []Row
	for _, t := range []string{TableSpeed, TableLatency} {
		q, err := s.conn.Query(ctx, `SELECT `+columnList(t)+` FROM `+t+` FINAL WHERE activation_id = ? ORDER BY serial, direction, iteration`, activationID)
		if err != nil {
			return nil, s.errorf("reading results", err)
		}
		rec := record{boolAsUint8: true}
		for q.Next() {
			if err := q.Scan(rec.dest(t)...); err != nil {
				q.Close()
				return nil, s.errorf("reading results", err)
			}
			r, err := rec.row(t)
			if err != nil {
				q.Close()
				return nil, fmt.Errorf("reading results of activation %d: %w", activationID, err)
			}
			out = append(out, r)
		}
		err = q.Err()
		q.Close()
		if err != nil {
			return nil, s.errorf("reading results", err)
		}
	}
	sortRows(out)
	return out, nil
}

func (s *ClickHouse) isClosed() bool { return s.closed.Load() }

// Close implements Store.
func (s *ClickHouse) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Swap(true) {
		return nil
	}
	return s.safe(s.conn.Close())
}

type set[T comparable] map[T]struct{}

func (s set[T]) add(v T) { s[v] = struct{}{} }

// group renders as a parenthesised list in a bound query.
func (s set[T]) group() clickhouse.GroupSet {
	g := clickhouse.GroupSet{Value: make([]any, 0, len(s))}
	for v := range s {
		g.Value = append(g.Value, v)
	}
	return g
}

var (
	_ Store  = (*ClickHouse)(nil)
	_ Pinger = (*ClickHouse)(nil)
)
