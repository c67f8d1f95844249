package grid

import (
	"fmt"
	"sync"
	"time"
)

// EventKind says what happened to the grid connection.
type EventKind int

// Connection event kinds.
const (
	// Disconnected means the connection to the server was lost; the client
	// is trying to reconnect and buffers publishes meanwhile.
	Disconnected EventKind = iota + 1
	// Reconnected means the connection is back, possibly to another member.
	Reconnected
	// Closed means the connection is gone for good: Close was called.
	Closed
)

var _ fmt.Stringer = EventKind(0)

// String returns the kind's name.
func (k EventKind) String() string {
	switch k {
	case Disconnected:
		return "disconnected"
	case Reconnected:
		return "reconnected"
	case Closed:
		return "closed"
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// Event is a change of the grid connection's state.
type Event struct {
	Kind EventKind
	// Err is the cause of a disconnection, when the client knows it.
	Err error
	// At is when the client observed the change.
	At time.Time
	// Server is the URL of the server connected to after a reconnection.
	Server string
}

// dispatcher hands events to listeners on its own goroutine. The NATS
// client calls its handlers on a goroutine it also needs for other
// callbacks, so push only queues the event and never waits for a listener.
type dispatcher struct {
	mu        sync.Mutex
	cond      *sync.Cond
	queue     []Event
	listeners []listener
	nextID    int
	done      bool
}

type listener struct {
	id int
	fn func(Event)
}

func newDispatcher() *dispatcher {
	d := &dispatcher{}
	d.cond = sync.NewCond(&d.mu)
	go d.run()
	return d
}

// subscribe registers fn and returns a function that unregisters it.
func (d *dispatcher) subscribe(fn func(Event)) func() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.nextID++
	id := d.nextID
	d.listeners = append(d.listeners, listener{id: id, fn: fn})
	return func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		for i, l := range d.listeners {
			if l.id == id {
				d.listeners = append(d.listeners[:i:i], d.listeners[i+1:]...)
				return
			}
		}
	}
}

// push queues ev for the listeners. The queue is unbounded on purpose:
// connection events are rare, and dropping a Reconnected would leave a
// listener believing the grid is down.
func (d *dispatcher) push(ev Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done {
		return
	}
	d.queue = append(d.queue, ev)
	d.cond.Signal()
}

// finish lets the dispatcher deliver what is queued and then stop.
func (d *dispatcher) finish() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.done = true
	d.cond.Signal()
}

func (d *dispatcher) run() {
	for {
		d.mu.Lock()
		for len(d.queue) == 0 && !d.done {
			d.cond.Wait()
		}
		if len(d.queue) == 0 {
			d.mu.Unlock()
			return
		}
		ev := d.queue[0]
		d.queue = d.queue[1:]
		ls := append([]listener(nil), d.listeners...)
		d.mu.Unlock()
		for _, l := range ls {
			l.fn(ev)
		}
	}
}
