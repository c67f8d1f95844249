package fccwire_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"cpesuite/internal/fcc/fccwire"
	"cpesuite/internal/platform/grid"
	"cpesuite/internal/testutil"
)

// TestOverTheGrid carries every kind of message over the queue its kind
// names on a real NATS server (the embedded one, with the server's default
// 1 MiB payload limit): the names are valid grid names, each message
// arrives byte for byte and decodes, an unsplit ACTIVATE of a
// 20,000-device fleet is refused by the server while its parts pass, and
// the dedup map takes the natural key of a serial that no map key could
// hold as it is.
func TestOverTheGrid(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), testutil.MinDeadline)
	defer cancel()
	emb, err := grid.StartEmbedded(grid.Config{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatalf("StartEmbedded: %v", err)
	}
	t.Cleanup(emb.Shutdown)
	g, err := grid.Connect(ctx, grid.Config{Name: t.Name()}, emb)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(g.Close)

	queues := map[string]*grid.Queue{}
	for _, k := range fccwire.Kinds {
		name := k.Queue()
		if queues[name] != nil {
			continue
		}
		q, err := grid.NewQueue(ctx, g, name, grid.QueueOptions{Memory: true})
		if err != nil {
			t.Fatalf("declaring queue %s: %v", name, err)
		}
		queues[name] = q
	}

	big := *speedActivate()
	big.Config.Groups[0].Devices = fleet(20000)
	big.Config.Groups[1].Devices = nil
	whole, err := json.Marshal(&big)
	if err != nil {
		t.Fatal(err)
	}
	err = queues[fccwire.QueueCommands].Publish(ctx, whole, "")
	if err == nil {
		t.Fatalf("the server took an ACTIVATE of %d bytes; the split is then not needed and MaxMessageBytes is wrong", len(whole))
	}
	t.Logf("unsplit ACTIVATE of %d bytes refused: %v", len(whole), err)
	parts, err := fccwire.SplitActivate(big, 0)
	if err != nil {
		t.Fatal(err)
	}

	type sent struct {
		kind fccwire.Kind
		data []byte
	}
	var all []sent
	for _, p := range parts {
		all = append(all, sent{fccwire.KindActivate, p})
	}
	for _, m := range []fccwire.Message{latencyActivate(), stop(), ack(fccwire.Accepted), ack(fccwire.Rejected),
		deviceState(fccwire.DeviceSkipped, fccwire.ReasonUnsupported), speedResult(), latencyResult(), finished()} {
		b, err := fccwire.Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, sent{m.MessageKind(), b})
	}
	for i, s := range all {
		if err := queues[s.kind.Queue()].Publish(ctx, s.data, fccwire.CommandMsgID("outbox-4711", i+1, 1)); err != nil {
			t.Fatalf("publishing %s of %d bytes: %v", s.kind, len(s.data), err)
		}
	}
	for i, s := range all {
		q := queues[s.kind.Queue()]
		var d *grid.Delivery
		testutil.Eventually(t, testutil.MinDeadline, fmt.Sprintf("message %d (%s) on %s", i, s.kind, q.Name()), func() bool {
			ds, err := q.Fetch(ctx, 1, time.Second)
			if err != nil {
				t.Fatalf("fetching from %s: %v", q.Name(), err)
			}
			if len(ds) == 1 {
				d = ds[0]
			}
			return d != nil
		})
		if string(d.Data) != string(s.data) {
			t.Fatalf("message %d changed on the way", i)
		}
		k, err := fccwire.PeekKind(d.Data)
		if err != nil || k != s.kind {
			t.Fatalf("PeekKind = %q, %v; want %s", k, err, s.kind)
		}
		if _, err := fccwire.Decode(k, d.Data); err != nil {
			t.Fatalf("Decode %s: %v", k, err)
		}
		if err := d.Ack(ctx); err != nil {
			t.Fatal(err)
		}
	}

	dedup, err := grid.NewMap(ctx, g, fccwire.MapResultDedup, grid.MapOptions{TTL: time.Hour, Memory: true})
	if err != nil {
		t.Fatalf("declaring map %s: %v", fccwire.MapResultDedup, err)
	}
	key := fccwire.NaturalKey(912, "usp:00 01/Ü", fccwire.Download, 3)
	for i, want := range []bool{true, false} {
		got, err := dedup.PutIfAbsent(ctx, key, []byte("1"), 0)
		if err != nil || got != want {
			t.Fatalf("PutIfAbsent #%d of %q = %v, %v; want %v", i+1, key, got, err, want)
		}
	}
}
