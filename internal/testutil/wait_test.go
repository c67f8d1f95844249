package testutil

import (
	"testing"
	"time"
)

func TestDeadlineIsAFloor(t *testing.T) {
	tests := []struct {
		within, want time.Duration
	}{
		{0, MinDeadline},
		{time.Nanosecond, MinDeadline},
		{5 * time.Second, MinDeadline},
		{MinDeadline, MinDeadline},
		{2 * time.Minute, 2 * time.Minute},
	}
	for _, tc := range tests {
		if got := Deadline(tc.within); got != tc.want {
			t.Errorf("Deadline(%s) = %s, want %s", tc.within, got, tc.want)
		}
	}
}

// A caller's short deadline must not fail a condition that merely takes a
// few polls: before the floor, a nanosecond deadline failed on the second poll.
func TestEventuallyOutlastsAShortDeadline(t *testing.T) {
	for _, within := range []time.Duration{0, time.Nanosecond, time.Millisecond} {
		polls := 0
		Eventually(t, within, "the fifth poll", func() bool {
			polls++
			return polls >= 5
		})
		if polls != 5 {
			t.Errorf("within %s: cond polled %d times, want 5", within, polls)
		}
	}
}
