package httpauth

import (
	"encoding/binary"
	"strings"
	"testing"
	"time"
)

func TestNonceRoundTripAndTampering(t *testing.T) {
	s := newNonceSigner([]byte("0123456789abcdef"))
	now := time.Unix(1700000000, 123456789)
	n := s.issue(now)
	if len(n) != nonceStrLen {
		t.Fatalf("nonce length %d, want %d", len(n), nonceStrLen)
	}
	id, ok := s.open(n)
	if !ok || id.issued() != now.UnixNano() {
		t.Fatalf("open(issue()) = %v, %v", id.issued(), ok)
	}
	if s.issue(now) == n {
		t.Fatalf("two nonces of the same instant are equal")
	}
	other := newNonceSigner([]byte("fedcba9876543210"))
	for name, bad := range map[string]string{
		"empty":        "",
		"short":        n[:len(n)-1],
		"long":         n + "A",
		"not base64":   strings.Repeat("!", nonceStrLen),
		"padded":       n[:len(n)-1] + "=",
		"other key":    other.issue(now),
		"time changed": reissueWithTime(t, n, now.Add(time.Hour)),
	} {
		if _, ok := s.open(bad); ok {
			t.Errorf("%s: accepted", name)
		}
	}
	for i := range n {
		b := []byte(n)
		b[i] ^= 0x01
		if _, ok := s.open(string(b)); ok {
			t.Errorf("nonce with byte %d changed accepted", i)
		}
	}
}

// reissueWithTime returns n with its timestamp changed but its tag kept:
// extending a nonce's life without the key.
func reissueWithTime(t *testing.T, n string, at time.Time) string {
	t.Helper()
	raw, err := nonceEncoding.DecodeString(n)
	if err != nil {
		t.Fatal(err)
	}
	binary.BigEndian.PutUint64(raw[:nonceTimeLen], uint64(at.UnixNano()))
	return nonceEncoding.EncodeToString(raw)
}

func testID(shard byte, issued int64, serial byte) *nonceID {
	var id nonceID
	binary.BigEndian.PutUint64(id[:nonceTimeLen], uint64(issued))
	id[nonceTimeLen] = shard
	id[nonceIDLen-1] = serial
	return &id
}

func TestReplayGuardWindow(t *testing.T) {
	g := newReplayGuard(100)
	id := testID(0, 1, 0)
	steps := []struct {
		nc   uint32
		want ncVerdict
	}{
		{3, ncFresh}, {3, ncReplayed}, {1, ncFresh}, {2, ncFresh}, {1, ncReplayed},
		{3 + replayWindow - 1, ncFresh}, {3, ncReplayed}, {4, ncFresh},
		{3 + replayWindow, ncFresh}, {4, ncReplayed}, {5, ncFresh},
		{1 << 31, ncFresh}, {1<<31 - replayWindow + 1, ncFresh}, {1<<31 - replayWindow, ncReplayed},
	}
	for i, s := range steps {
		if got := g.use(id, s.nc); got != s.want {
			t.Fatalf("step %d nc=%d: %v, want %v", i, s.nc, got, s.want)
		}
	}
}

func TestReplayGuardEvictsOldestAndForgetsSafely(t *testing.T) {
	// 16 shards of one entry each; all ids below go to shard 5.
	g := newReplayGuard(replayShards)
	first := testID(5, 100, 1)
	if g.use(first, 1) != ncFresh {
		t.Fatal("first use refused")
	}
	later := testID(5, 50, 2) // issued earlier, used later
	if g.use(later, 1) != ncFresh {
		t.Fatal("second nonce refused")
	}
	// first was evicted; its old counts must not be accepted again.
	if got := g.use(first, 1); got != ncForgotten {
		t.Fatalf("evicted nonce: %v, want ncForgotten", got)
	}
	// A nonce issued after every evicted one is new, not forgotten.
	if got := g.use(testID(5, 101, 3), 1); got != ncFresh {
		t.Fatalf("new nonce: %v, want ncFresh", got)
	}
	// Other shards are unaffected.
	if got := g.use(testID(6, 1, 4), 1); got != ncFresh {
		t.Fatalf("other shard: %v", got)
	}
	if n := len(g.shards[5].m); n != 1 {
		t.Fatalf("shard holds %d entries, want 1", n)
	}
}
