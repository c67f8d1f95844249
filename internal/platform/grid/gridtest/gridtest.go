// Package gridtest is the conformance suite of the grid: the same tests run
// against every NATS server the grid must work with (embedded and
// external), so that code above the grid can rely on one behaviour.
package gridtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/platform/grid"
	"cpesuite/internal/testutil"
)

// waitFor bounds every poll. It is generous because it only matters when a
// test is about to fail (a safety net sized for a busy 2-core machine);
// passing tests return as soon as the condition holds.
const waitFor = testutil.MinDeadline

// Run runs the suite. newGrid returns a connected grid for one test and
// arranges its closing with t.Cleanup; tests run in parallel and name their
// queues and maps uniquely, so they can share one server.
func Run(t *testing.T, newGrid func(t *testing.T) *grid.Grid) {
	tests := []struct {
		name string
		fn   func(t *testing.T, g *grid.Grid)
	}{
		{"Ping", testPing},
		{"QueuePublishFetchAck", testQueuePublishFetchAck},
		{"QueueFetchReturnsWhatIsReady", testQueueFetchReturnsWhatIsReady},
		{"QueueRedeliveryAfterAckWait", testQueueRedelivery},
		{"QueueNak", testQueueNak},
		{"QueueInProgressAndTerm", testQueueInProgressAndTerm},
		{"QueueMaxDeliver", testQueueMaxDeliver},
		{"QueueMsgIDDedup", testQueueDedup},
		{"QueuePending", testQueuePending},
		{"QueueInvalid", testQueueInvalid},
		{"MapPutGetDelete", testMapPutGetDelete},
		{"MapPutIfAbsent", testMapPutIfAbsent},
		{"MapPutIfAbsentRace", testMapPutIfAbsentRace},
		{"MapEntryTTL", testMapEntryTTL},
		{"MapBucketTTL", testMapBucketTTL},
		{"MapTTLMode", testMapTTLMode},
		{"MapKeys", testMapKeys},
		{"MapInvalid", testMapInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, newGrid(t))
		})
	}
}

func testPing(t *testing.T, g *grid.Grid) {
	if err := g.Ping(ctx(t)); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	if got := g.Status(); got != grid.StatusConnected {
		t.Fatalf("Status() = %v, want %v", got, grid.StatusConnected)
	}
}

func testQueuePublishFetchAck(t *testing.T, g *grid.Grid) {
	for _, tc := range []struct {
		name string
		opts grid.QueueOptions
	}{
		{"file", grid.QueueOptions{}},
		{"memory", grid.QueueOptions{Memory: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := newQueue(t, g, tc.opts)
			want := []string{"one", "two", "three"}
			for _, s := range want {
				publish(t, q, s, "")
			}
			ds := fetchN(t, q, len(want))
			var lastSeq uint64
			for i, d := range ds {
				if string(d.Data) != want[i] {
					t.Errorf("delivery %d: Data = %q, want %q", i, d.Data, want[i])
				}
				if d.NumDelivered != 1 {
					t.Errorf("delivery %d: NumDelivered = %d, want 1", i, d.NumDelivered)
				}
				if d.Seq <= lastSeq {
					t.Errorf("delivery %d: Seq = %d, want > %d", i, d.Seq, lastSeq)
				}
				lastSeq = d.Seq
				if d.Published.IsZero() {
					t.Errorf("delivery %d: Published is zero", i)
				}
			}
			// Declaring the queue again is how a second process joins it.
			again, err := grid.NewQueue(ctx(t), g, q.Name(), tc.opts)
			if err != nil {
				t.Fatalf("NewQueue again: %v", err)
			}
			waitPending(t, again, 3)
			for _, d := range ds {
				if err := d.Ack(ctx(t)); err != nil {
					t.Fatalf("Ack: %v", err)
				}
			}
			waitPending(t, q, 0)
			if ds := fetch(t, q, 10, 0); len(ds) != 0 {
				t.Fatalf("Fetch after acking everything: got %d deliveries, want 0", len(ds))
			}
		})
	}
}

func testQueueFetchReturnsWhatIsReady(t *testing.T, g *grid.Grid) {
	q := newQueue(t, g, grid.QueueOptions{})
	if ds := fetch(t, q, 1, 50*time.Millisecond); len(ds) != 0 {
		t.Fatalf("Fetch on an empty queue: got %d deliveries, want 0", len(ds))
	}
	publish(t, q, "a", "")
	publish(t, q, "b", "")
	// A long wait must not delay the messages that are already there; if it
	// did, this test would take the whole minute.
	ds := fetch(t, q, 10, time.Minute)
	if len(ds) != 2 {
		t.Fatalf("Fetch(10): got %d deliveries, want 2", len(ds))
	}
	ackAll(t, ds)

	// With nothing ready, Fetch waits for the first message.
	done := make(chan []*grid.Delivery, 1)
	go func() {
		ds, err := q.Fetch(ctx(t), 10, waitFor)
		if err != nil {
			t.Errorf("Fetch: %v", err)
		}
		done <- ds
	}()
	publish(t, q, "c", "")
	// Whether the publish lands before or during the pull, Fetch gets it.
	ds = <-done
	if len(ds) != 1 || string(ds[0].Data) != "c" {
		t.Fatalf("Fetch while publishing: got %v, want [c]", datas(ds))
	}
	ackAll(t, ds)
}

func testQueueRedelivery(t *testing.T, g *grid.Grid) {
	q := newQueue(t, g, grid.QueueOptions{AckWait: 200 * time.Millisecond})
	publish(t, q, "x", "")
	first := fetchN(t, q, 1)[0]
	if first.NumDelivered != 1 {
		t.Fatalf("first NumDelivered = %d, want 1", first.NumDelivered)
	}
	// Not acking: the server must hand the message out again after AckWait.
	second := fetchN(t, q, 1)[0]
	if second.NumDelivered != 2 || second.Seq != first.Seq || string(second.Data) != "x" {
		t.Fatalf("redelivery: got NumDelivered=%d Seq=%d Data=%q, want 2, %d, \"x\"",
			second.NumDelivered, second.Seq, second.Data, first.Seq)
	}
	if err := second.Ack(ctx(t)); err != nil {
		t.Fatalf("Ack: %v", err)
	}
	waitPending(t, q, 0)
}

func testQueueNak(t *testing.T, g *grid.Grid) {
	q := newQueue(t, g, grid.QueueOptions{})
	publish(t, q, "n", "")
	d := fetchN(t, q, 1)[0]
	if err := d.Nak(0); err != nil {
		t.Fatalf("Nak(0): %v", err)
	}
	d = fetchN(t, q, 1)[0]
	if d.NumDelivered != 2 {
		t.Fatalf("after Nak(0): NumDelivered = %d, want 2", d.NumDelivered)
	}
	if err := d.Nak(50 * time.Millisecond); err != nil {
		t.Fatalf("Nak(50ms): %v", err)
	}
	d = fetchN(t, q, 1)[0]
	if d.NumDelivered != 3 {
		t.Fatalf("after Nak(50ms): NumDelivered = %d, want 3", d.NumDelivered)
	}
	ackAll(t, []*grid.Delivery{d})
	waitPending(t, q, 0)
}

func testQueueInProgressAndTerm(t *testing.T, g *grid.Grid) {
	q := newQueue(t, g, grid.QueueOptions{})
	publish(t, q, "keep", "")
	publish(t, q, "drop", "")
	ds := fetchN(t, q, 2)
	if err := ds[0].InProgress(); err != nil {
		t.Fatalf("InProgress: %v", err)
	}
	if err := ds[1].Term(); err != nil {
		t.Fatalf("Term: %v", err)
	}
	waitPending(t, q, 1)
	if err := ds[0].Ack(ctx(t)); err != nil {
		t.Fatalf("Ack after InProgress: %v", err)
	}
	waitPending(t, q, 0)
	if ds := fetch(t, q, 10, 0); len(ds) != 0 {
		t.Fatalf("Fetch after Term and Ack: got %v, want nothing", datas(ds))
	}
}

func testQueueMaxDeliver(t *testing.T, g *grid.Grid) {
	q := newQueue(t, g, grid.QueueOptions{AckWait: 200 * time.Millisecond, MaxDeliver: 2})
	publish(t, q, "poison", "")
	if d := fetchN(t, q, 1)[0]; d.NumDelivered != 1 {
		t.Fatalf("NumDelivered = %d, want 1", d.NumDelivered)
	}
	if d := fetchN(t, q, 1)[0]; d.NumDelivered != 2 {
		t.Fatalf("NumDelivered = %d, want 2", d.NumDelivered)
	}
	// After the last allowed delivery times out, the next request for work
	// finds the message exhausted and gives it up instead of delivering it.
	eventually(t, func() error {
		if ds := fetch(t, q, 1, 0); len(ds) != 0 {
			t.Fatalf("delivery %d beyond MaxDeliver 2", ds[0].NumDelivered)
		}
		if got, err := q.Pending(ctx(t)); err != nil || got != 0 {
			return fmt.Errorf("pending count %d (err %v), want 0", got, err)
		}
		return nil
	})
}

func testQueueDedup(t *testing.T, g *grid.Grid) {
	q := newQueue(t, g, grid.QueueOptions{})
	publish(t, q, "a", "id-1")
	publish(t, q, "a again", "id-1")
	publish(t, q, "b", "id-2")
	publish(t, q, "c", "")
	publish(t, q, "c", "")
	waitPending(t, q, 4)
	ds := fetchN(t, q, 4)
	got := datas(ds)
	if want := []string{"a", "b", "c", "c"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("deliveries = %v, want %v", got, want)
	}
	if ds[0].MsgID != "id-1" || ds[1].MsgID != "id-2" || ds[2].MsgID != "" {
		t.Fatalf("MsgIDs = %q, %q, %q; want id-1, id-2, \"\"", ds[0].MsgID, ds[1].MsgID, ds[2].MsgID)
	}
	ackAll(t, ds)
}

func testQueuePending(t *testing.T, g *grid.Grid) {
	q := newQueue(t, g, grid.QueueOptions{})
	waitPending(t, q, 0)
	for i := range 5 {
		publish(t, q, strconv.Itoa(i), "")
	}
	waitPending(t, q, 5)
	ds := fetchN(t, q, 2)
	// Fetched but unacknowledged messages still count.
	waitPending(t, q, 5)
	ackAll(t, ds)
	waitPending(t, q, 3)
}

func testQueueInvalid(t *testing.T, g *grid.Grid) {
	for _, name := range []string{"", "a.b", "a b", "a*", "a>", "a/b", "ü", strings.Repeat("x", 129)} {
		if _, err := grid.NewQueue(ctx(t), g, name, grid.QueueOptions{}); !errors.Is(err, grid.ErrInvalid) {
			t.Errorf("NewQueue(%q): err = %v, want ErrInvalid", name, err)
		}
	}
	for _, opts := range []grid.QueueOptions{{AckWait: -1}, {MaxAge: -1}, {Duplicates: -1}, {Replicas: -1}} {
		if _, err := grid.NewQueue(ctx(t), g, uniqueName(t), opts); !errors.Is(err, grid.ErrInvalid) {
			t.Errorf("NewQueue(%+v): err = %v, want ErrInvalid", opts, err)
		}
	}
	q := newQueue(t, g, grid.QueueOptions{})
	if _, err := q.Fetch(ctx(t), 0, 0); !errors.Is(err, grid.ErrInvalid) {
		t.Errorf("Fetch(limit 0): err = %v, want ErrInvalid", err)
	}
}

func testMapPutGetDelete(t *testing.T, g *grid.Grid) {
	m := newMap(t, g, grid.MapOptions{})
	steps := []struct {
		op, key, value string
		wantOK         bool
	}{
		{"get", "k", "", false},
		{"put", "k", "v1", true},
		{"get", "k", "v1", true},
		{"put", "k", "v2", true},
		{"get", "k", "v2", true},
		{"put", "a.b/c=d_e-f", "dotted", true},
		{"get", "a.b/c=d_e-f", "dotted", true},
		{"put", "empty", "", true},
		{"get", "empty", "", true},
		{"delete", "k", "", false},
		{"get", "k", "", false},
		{"delete", "never-written", "", false},
		{"get", "a.b/c=d_e-f", "dotted", true},
	}
	for i, s := range steps {
		switch s.op {
		case "put":
			if err := m.Put(ctx(t), s.key, []byte(s.value), 0); err != nil {
				t.Fatalf("step %d: Put(%q): %v", i, s.key, err)
			}
		case "delete":
			if err := m.Delete(ctx(t), s.key); err != nil {
				t.Fatalf("step %d: Delete(%q): %v", i, s.key, err)
			}
		case "get":
			v, ok, err := m.Get(ctx(t), s.key)
			if err != nil {
				t.Fatalf("step %d: Get(%q): %v", i, s.key, err)
			}
			if ok != s.wantOK || string(v) != s.value {
				t.Fatalf("step %d: Get(%q) = %q, %v; want %q, %v", i, s.key, v, ok, s.value, s.wantOK)
			}
		}
	}
}

func testMapPutIfAbsent(t *testing.T, g *grid.Grid) {
	m := newMap(t, g, grid.MapOptions{})
	steps := []struct {
		op, value   string
		wantCreated bool
		wantValue   string
	}{
		{"putIfAbsent", "first", true, "first"},
		{"putIfAbsent", "second", false, "first"},
		{"delete", "", false, ""},
		{"putIfAbsent", "third", true, "third"},
		{"put", "fourth", false, "fourth"},
		{"putIfAbsent", "fifth", false, "fourth"},
	}
	for i, s := range steps {
		switch s.op {
		case "putIfAbsent":
			created, err := m.PutIfAbsent(ctx(t), "key", []byte(s.value), 0)
			if err != nil {
				t.Fatalf("step %d: PutIfAbsent: %v", i, err)
			}
			if created != s.wantCreated {
				t.Fatalf("step %d: PutIfAbsent(%q) created = %v, want %v", i, s.value, created, s.wantCreated)
			}
		case "put":
			if err := m.Put(ctx(t), "key", []byte(s.value), 0); err != nil {
				t.Fatalf("step %d: Put: %v", i, err)
			}
		case "delete":
			if err := m.Delete(ctx(t), "key"); err != nil {
				t.Fatalf("step %d: Delete: %v", i, err)
			}
		}
		v, ok, err := m.Get(ctx(t), "key")
		if err != nil {
			t.Fatalf("step %d: Get: %v", i, err)
		}
		if ok != (s.wantValue != "") || string(v) != s.wantValue {
			t.Fatalf("step %d: Get = %q, %v; want %q", i, v, ok, s.wantValue)
		}
	}
	// A per-entry TTL does not weaken the check while the entry lives.
	if created, err := m.PutIfAbsent(ctx(t), "held", []byte("x"), time.Hour); err != nil || !created {
		t.Fatalf("PutIfAbsent(held, 1h) = %v, %v; want true, nil", created, err)
	}
	if created, err := m.PutIfAbsent(ctx(t), "held", []byte("y"), time.Hour); err != nil || created {
		t.Fatalf("second PutIfAbsent(held, 1h) = %v, %v; want false, nil", created, err)
	}
}

func testMapPutIfAbsentRace(t *testing.T, g *grid.Grid) {
	m := newMap(t, g, grid.MapOptions{})
	const racers = 32
	for _, key := range []string{"fresh", "deleted"} {
		if key == "deleted" {
			// Racing over a delete marker takes the compare-and-set path
			// rather than the create path.
			if err := m.Put(ctx(t), key, []byte("old"), 0); err != nil {
				t.Fatalf("Put: %v", err)
			}
			if err := m.Delete(ctx(t), key); err != nil {
				t.Fatalf("Delete: %v", err)
			}
		}
		start := make(chan struct{})
		type result struct {
			id      int
			created bool
			err     error
		}
		results := make(chan result, racers)
		for i := range racers {
			go func() {
				<-start
				created, err := m.PutIfAbsent(ctx(t), key, []byte(strconv.Itoa(i)), 0)
				results <- result{i, created, err}
			}()
		}
		close(start)
		winner := -1
		for range racers {
			r := <-results
			if r.err != nil {
				t.Errorf("%s: PutIfAbsent #%d: %v", key, r.id, r.err)
				continue
			}
			if r.created {
				if winner >= 0 {
					t.Errorf("%s: both #%d and #%d created the entry", key, winner, r.id)
				}
				winner = r.id
			}
		}
		if winner < 0 {
			t.Fatalf("%s: no PutIfAbsent created the entry", key)
		}
		v, ok, err := m.Get(ctx(t), key)
		if err != nil || !ok || string(v) != strconv.Itoa(winner) {
			t.Fatalf("%s: Get = %q, %v, %v; want the winner's value %d", key, v, ok, err, winner)
		}
	}
}

func testMapEntryTTL(t *testing.T, g *grid.Grid) {
	m := newMap(t, g, grid.MapOptions{})
	if err := m.Put(ctx(t), "long", []byte("stays"), 0); err != nil {
		t.Fatalf("Put(long): %v", err)
	}
	if err := m.Put(ctx(t), "short", []byte("goes"), time.Second); err != nil {
		t.Fatalf("Put(short, 1s): %v", err)
	}
	if created, err := m.PutIfAbsent(ctx(t), "dedup", []byte("x"), time.Second); err != nil || !created {
		t.Fatalf("PutIfAbsent(dedup, 1s) = %v, %v; want true, nil", created, err)
	}
	waitAbsent(t, m, "short")
	waitAbsent(t, m, "dedup")
	if v, ok, err := m.Get(ctx(t), "long"); err != nil || !ok || string(v) != "stays" {
		t.Fatalf("Get(long) = %q, %v, %v; want \"stays\", true, nil", v, ok, err)
	}
	keys, err := m.Keys(ctx(t))
	if err != nil || strings.Join(keys, ",") != "long" {
		t.Fatalf("Keys = %v, %v; want [long]", keys, err)
	}
	// An expired entry frees its key for the next PutIfAbsent.
	if created, err := m.PutIfAbsent(ctx(t), "dedup", []byte("y"), time.Hour); err != nil || !created {
		t.Fatalf("PutIfAbsent(dedup) after expiry = %v, %v; want true, nil", created, err)
	}
	if err := m.Put(ctx(t), "k", nil, -time.Second); !errors.Is(err, grid.ErrInvalid) {
		t.Fatalf("Put with negative ttl: err = %v, want ErrInvalid", err)
	}
}

func testMapBucketTTL(t *testing.T, g *grid.Grid) {
	m := newMap(t, g, grid.MapOptions{TTL: time.Second})
	if err := m.Put(ctx(t), "k", []byte("v"), 0); err != nil {
		t.Fatalf("Put: %v", err)
	}
	waitAbsent(t, m, "k")
	if created, err := m.PutIfAbsent(ctx(t), "k", []byte("again"), 0); err != nil || !created {
		t.Fatalf("PutIfAbsent after bucket expiry = %v, %v; want true, nil", created, err)
	}
	if err := m.Put(ctx(t), "k", []byte("v"), 2*time.Second); !errors.Is(err, grid.ErrInvalid) {
		t.Fatalf("Put with ttl above the bucket TTL: err = %v, want ErrInvalid", err)
	}
}

// testMapTTLMode checks that the map uses the server's per-message TTL
// exactly when the server has it (NATS 2.11 and later).
func testMapTTLMode(t *testing.T, g *grid.Grid) {
	m := newMap(t, g, grid.MapOptions{})
	v := g.Conn().ConnectedServerVersion()
	var major, minor int
	if _, err := fmt.Sscanf(v, "%d.%d", &major, &minor); err != nil {
		t.Fatalf("parsing server version %q: %v", v, err)
	}
	want := major > 2 || major == 2 && minor >= 11
	if m.NativeTTL() != want {
		t.Fatalf("server %s: NativeTTL() = %v, want %v", v, m.NativeTTL(), want)
	}
	t.Logf("server %s: native per-entry TTL %v", v, m.NativeTTL())
}

func testMapKeys(t *testing.T, g *grid.Grid) {
	m := newMap(t, g, grid.MapOptions{})
	keys, err := m.Keys(ctx(t))
	if err != nil || len(keys) != 0 {
		t.Fatalf("Keys of an empty map = %v, %v; want none", keys, err)
	}
	for _, k := range []string{"c", "a", "b", "x.y"} {
		if err := m.Put(ctx(t), k, []byte(k), 0); err != nil {
			t.Fatalf("Put(%q): %v", k, err)
		}
	}
	if err := m.Put(ctx(t), "a", []byte("overwritten"), 0); err != nil {
		t.Fatalf("Put(a): %v", err)
	}
	if err := m.Delete(ctx(t), "b"); err != nil {
		t.Fatalf("Delete(b): %v", err)
	}
	keys, err = m.Keys(ctx(t))
	if want := "a,c,x.y"; err != nil || strings.Join(keys, ",") != want {
		t.Fatalf("Keys = %v, %v; want [%s]", keys, err, want)
	}
}

func testMapInvalid(t *testing.T, g *grid.Grid) {
	for _, name := range []string{"", "a.b", "a b", "a*", "ü", strings.Repeat("x", 129)} {
		if _, err := grid.NewMap(ctx(t), g, name, grid.MapOptions{}); !errors.Is(err, grid.ErrInvalid) {
			t.Errorf("NewMap(%q): err = %v, want ErrInvalid", name, err)
		}
	}
	if _, err := grid.NewMap(ctx(t), g, uniqueName(t), grid.MapOptions{TTL: -1}); !errors.Is(err, grid.ErrInvalid) {
		t.Errorf("NewMap(TTL -1): err = %v, want ErrInvalid", err)
	}
	m := newMap(t, g, grid.MapOptions{})
	for _, key := range []string{"", ".a", "a.", "a..b", "a b", "a*", "a>", "a:b", "ü"} {
		ops := map[string]error{
			"Put":    m.Put(ctx(t), key, nil, 0),
			"Delete": m.Delete(ctx(t), key),
		}
		_, _, ops["Get"] = m.Get(ctx(t), key)
		_, ops["PutIfAbsent"] = m.PutIfAbsent(ctx(t), key, nil, 0)
		for op, err := range ops {
			if !errors.Is(err, grid.ErrInvalid) {
				t.Errorf("%s(%q): err = %v, want ErrInvalid", op, key, err)
			}
		}
	}
}

// ctx returns a context for one call; t.Context ends with the test.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), waitFor)
	t.Cleanup(cancel)
	return c
}

// uniqueName returns a queue or map name no other test uses, so tests can
// share a server and run in parallel.
func uniqueName(t *testing.T) string {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	base := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
			return r
		}
		return '-'
	}, t.Name())
	if len(base) > 80 {
		base = base[len(base)-80:]
	}
	return "t-" + base + "-" + hex.EncodeToString(b)
}

func cleanupCtx() (context.Context, context.CancelFunc) {
	// t.Context is already cancelled when cleanups run.
	return context.WithTimeout(context.Background(), waitFor)
}

func newQueue(t *testing.T, g *grid.Grid, opts grid.QueueOptions) *grid.Queue {
	t.Helper()
	q, err := grid.NewQueue(ctx(t), g, uniqueName(t), opts)
	if err != nil {
		t.Fatalf("NewQueue: %v", err)
	}
	t.Cleanup(func() {
		c, cancel := cleanupCtx()
		defer cancel()
		if err := q.Delete(c); err != nil {
			t.Errorf("deleting queue: %v", err)
		}
	})
	return q
}

func newMap(t *testing.T, g *grid.Grid, opts grid.MapOptions) *grid.Map {
	t.Helper()
	m, err := grid.NewMap(ctx(t), g, uniqueName(t), opts)
	if err != nil {
		t.Fatalf("NewMap: %v", err)
	}
	t.Cleanup(func() {
		c, cancel := cleanupCtx()
		defer cancel()
		if err := m.Destroy(c); err != nil {
			t.Errorf("destroying map: %v", err)
		}
	})
	return m
}

func publish(t *testing.T, q *grid.Queue, data, msgID string) {
	t.Helper()
	if err := q.Publish(ctx(t), []byte(data), msgID); err != nil {
		t.Fatalf("Publish(%q): %v", data, err)
	}
}

func fetch(t *testing.T, q *grid.Queue, limit int, wait time.Duration) []*grid.Delivery {
	t.Helper()
	ds, err := q.Fetch(ctx(t), limit, wait)
	if err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	return ds
}

// fetchN fetches until exactly n deliveries have arrived, failing if more
// arrive or the deadline passes.
//
// Each pull stays open for a long time and returns as soon as a message
// comes. Short pulls would be worse: NATS 2.9 can lose a redelivery that
// falls due just as a pull request expires (the delivery is counted but
// never sent, so it comes again only after another AckWait), and pulls
// expiring every 100 ms with an AckWait of 200 ms hit that often.
func fetchN(t *testing.T, q *grid.Queue, n int) []*grid.Delivery {
	t.Helper()
	var got []*grid.Delivery
	deadline := time.Now().Add(waitFor)
	for len(got) < n {
		if time.Now().After(deadline) {
			t.Fatalf("got %d deliveries within %s, want %d", len(got), waitFor, n)
		}
		got = append(got, fetch(t, q, n-len(got), time.Until(deadline))...)
	}
	if len(got) != n {
		t.Fatalf("got %d deliveries, want %d", len(got), n)
	}
	return got
}

func ackAll(t *testing.T, ds []*grid.Delivery) {
	t.Helper()
	for _, d := range ds {
		if err := d.Ack(ctx(t)); err != nil {
			t.Fatalf("Ack: %v", err)
		}
	}
}

func datas(ds []*grid.Delivery) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = string(d.Data)
	}
	return out
}

// eventually polls cond until it returns nil or the deadline passes, then
// fails with cond's last error.
func eventually(t *testing.T, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %v", waitFor, err)
		}
		<-tick.C
	}
}

func waitPending(t *testing.T, q *grid.Queue, want uint64) {
	t.Helper()
	eventually(t, func() error {
		got, err := q.Pending(ctx(t))
		if err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("pending count %d, want %d", got, want)
		}
		return nil
	})
}

func waitAbsent(t *testing.T, m *grid.Map, key string) {
	t.Helper()
	eventually(t, func() error {
		v, ok, err := m.Get(ctx(t), key)
		if err != nil {
			return err
		}
		if ok {
			return fmt.Errorf("key %q still present with %q", key, v)
		}
		return nil
	})
}
