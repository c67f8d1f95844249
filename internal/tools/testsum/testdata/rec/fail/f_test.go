package fail

import "testing"

func TestGood(t *testing.T) {}

func TestBad(t *testing.T) {
	t.Log("context before the failure")
	t.Fatalf("want 2, got %d", 3)
}

func TestSub(t *testing.T) {
	t.Run("ok", func(t *testing.T) {})
	t.Run("broken", func(t *testing.T) { t.Error("sub failed\nsecond line") })
}
