package passwd

import (
	"strconv"
	"testing"
	"time"
)

// TestRefusalLog: one audited refusal per key and window, bounded memory,
// and keys beyond the bound still audited once per window together.
func TestRefusalLog(t *testing.T) {
	t0 := time.Unix(1_900_000_000, 0)
	r := NewRefusalLog(time.Minute, 2)
	steps := []struct {
		key  string
		at   time.Duration
		want bool
	}{
		{"a", 0, true},
		{"a", time.Second, false},
		{"b", time.Second, true},
		{"c", 2 * time.Second, true},  // table full: the overflow key
		{"d", 3 * time.Second, false}, // shares the overflow window
		{"a", time.Minute, true},      // a's window is over
	}
	for i, s := range steps {
		if got := r.First(s.key, t0.Add(s.at)); got != s.want {
			t.Fatalf("step %d (%s at %s): First = %v, want %v", i, s.key, s.at, got, s.want)
		}
	}
	for i := range 100 {
		r.First(strconv.Itoa(i), t0.Add(2*time.Minute))
	}
	if n := len(r.last); n > 2 {
		t.Fatalf("%d keys kept, want at most the bound", n)
	}
}

func TestFailureLimiterKeysAreIndependent(t *testing.T) {
	t0 := time.Unix(1_900_000_000, 0)
	l := NewFailureLimiter[string](1, time.Minute, 10)
	if ok, _ := l.Begin("x", t0); !ok {
		t.Fatal("first attempt refused")
	}
	l.End("x", t0, true)
	if ok, wait := l.Begin("x", t0); ok || wait != time.Minute {
		t.Fatalf("over the limit: ok=%v wait=%s", ok, wait)
	}
	if !l.FirstRefusal("x") || l.FirstRefusal("x") {
		t.Fatal("FirstRefusal must be true once per run of refusals")
	}
	if ok, _ := l.Begin("y", t0); !ok {
		t.Fatal("another key refused")
	}
	l.End("y", t0, false)
	if n := l.Size(); n != 1 {
		t.Fatalf("Size = %d, want 1 (y had no failure)", n)
	}
}
