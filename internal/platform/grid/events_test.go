package grid

import (
	"testing"
	"time"

	"cpesuite/internal/testutil"
)

func TestDispatcherNeverBlocksPush(t *testing.T) {
	d := newDispatcher()
	defer d.finish()
	release := make(chan struct{})
	got := make(chan EventKind, 1000)
	d.subscribe(func(ev Event) {
		<-release
		got <- ev.Kind
	})
	// The listener is stuck on the first event; pushes must still return.
	kinds := []EventKind{Disconnected, Reconnected}
	for i := range 1000 {
		d.push(Event{Kind: kinds[i%2]})
	}
	close(release)
	for i := range 1000 {
		select {
		case k := <-got:
			if k != kinds[i%2] {
				t.Fatalf("event %d: %v, want %v (order lost)", i, k, kinds[i%2])
			}
		case <-time.After(testutil.MinDeadline):
			t.Fatalf("only %d of 1000 events delivered", i)
		}
	}
}

func TestDispatcherDeliversQueuedEventsBeforeStopping(t *testing.T) {
	d := newDispatcher()
	got := make(chan EventKind, 3)
	d.subscribe(func(ev Event) { got <- ev.Kind })
	d.push(Event{Kind: Disconnected})
	d.push(Event{Kind: Closed})
	d.finish()
	d.push(Event{Kind: Reconnected}) // after finish: dropped
	for _, want := range []EventKind{Disconnected, Closed} {
		select {
		case k := <-got:
			if k != want {
				t.Fatalf("got %v, want %v", k, want)
			}
		case <-time.After(testutil.MinDeadline):
			t.Fatalf("no %v event", want)
		}
	}
}

func TestKindAndStatusStrings(t *testing.T) {
	tests := []struct{ got, want string }{
		{Disconnected.String(), "disconnected"},
		{Reconnected.String(), "reconnected"},
		{Closed.String(), "closed"},
		{EventKind(0).String(), "EventKind(0)"},
		{StatusConnected.String(), "connected"},
		{StatusReconnecting.String(), "reconnecting"},
		{StatusClosed.String(), "closed"},
		{Status(0).String(), "Status(0)"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("String() = %q, want %q", tc.got, tc.want)
		}
	}
}
