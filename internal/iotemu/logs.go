package iotemu

import (
	"sync"
	"time"

	"cpesuite/internal/iotemu/proto"
)

// LogEntry is one protocol message of the ring buffer (spec: "Log entry").
type LogEntry struct {
	Seq            uint64    `json:"seq"`
	Time           time.Time `json:"time"`
	DeviceName     string    `json:"deviceName"`
	Direction      string    `json:"direction"`
	Event          string    `json:"event"`
	MessageOptions string    `json:"messageOptions"`
	Payload        string    `json:"payload"`
	RawMessage     string    `json:"rawMessage"`
}

// LogBatch is the answer of GET /api/logs.
type LogBatch struct {
	LastSeq uint64     `json:"lastSeq"`
	Entries []LogEntry `json:"entries"`
}

// maxLogField bounds each text field so that one large payload cannot
// make the buffer hold megabytes.
const maxLogField = 4096

// ring keeps the last n protocol messages. Sequence numbers start at 1 and
// never repeat while the process runs, so a client polling with since
// never sees an entry twice.
type ring struct {
	mu      sync.Mutex
	entries []LogEntry
	next    int // index the next entry goes to
	full    bool
	seq     uint64
}

func newRing(n int) *ring { return &ring{entries: make([]LogEntry, n)} }

func clip(s string) string {
	if len(s) > maxLogField {
		return s[:maxLogField] + "…"
	}
	return s
}

func (r *ring) add(device string, e proto.Entry) {
	r.mu.Lock()
	r.seq++
	r.entries[r.next] = LogEntry{
		Seq: r.seq, Time: time.Now().UTC(), DeviceName: device, Direction: e.Direction, Event: e.Event,
		MessageOptions: clip(e.MessageOptions), Payload: clip(e.Payload), RawMessage: clip(e.RawMessage),
	}
	r.next++
	if r.next == len(r.entries) {
		r.next, r.full = 0, true
	}
	r.mu.Unlock()
}

// since returns the entries with seq above since, oldest first. lastSeq is
// the newest sequence number even when the batch is empty.
func (r *ring) since(since uint64) LogBatch {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := LogBatch{LastSeq: r.seq, Entries: []LogEntry{}}
	n := r.next
	start := 0
	if r.full {
		n = len(r.entries)
		start = r.next
	}
	for i := range n {
		e := r.entries[(start+i)%len(r.entries)]
		if e.Seq > since {
			b.Entries = append(b.Entries, e)
		}
	}
	return b
}
