package acs

import (
	"crypto/rand"
	"errors"
	"sync"
	"time"

	"cpesuite/internal/cwmp"
)

// session is one CWMP session: from an Inform to the ACS's empty answer.
// Its state lives in memory only; tasks it was working on are in the store,
// so a lost session costs a resend, never a task.
type session struct {
	id        string
	key       DeviceKey
	deviceID  int64
	version   cwmp.Version
	dataModel string

	mu       sync.Mutex // one message of a session at a time
	lastSeen time.Time  // guarded by sessionTable.mu
	current  *Task      // task whose RPC awaits the CPE's answer
	rpcID    string     // cwmp:ID of that RPC
	rpcSent  time.Time
	ended    bool
}

// sessionTable enforces one session per device and a ceiling on
// concurrent sessions. Memory is O(active sessions): nothing is kept for
// idle devices.
type sessionTable struct {
	mu       sync.Mutex
	byID     map[string]*session
	byDevice map[DeviceKey]*session
	max      int
	timeout  time.Duration
	now      func() time.Time
}

var (
	errSessionActive = errors.New("device already has an active session")
	errTooMany       = errors.New("too many concurrent sessions")
)

func newSessionTable(max int, timeout time.Duration) *sessionTable {
	return &sessionTable{byID: map[string]*session{}, byDevice: map[DeviceKey]*session{}, max: max, timeout: timeout, now: time.Now}
}

// open reserves a session for key and returns it locked: the Inform that
// opens it is its first message. A live session of the same device is
// refused while it handles a message; otherwise it is ended and returned
// as replaced when takeOver is set, and refused when not. An expired one
// is replaced silently.
func (t *sessionTable) open(key DeviceKey, v cwmp.Version, takeOver bool) (s, replaced *session, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	if old, ok := t.byDevice[key]; ok {
		if now.Sub(old.lastSeen) < t.timeout {
			// TryLock, not Lock: the order elsewhere is session, then
			// table, and a busy session is not stale anyway.
			if !takeOver || !old.mu.TryLock() {
				return nil, nil, errSessionActive
			}
			old.ended = true
			old.mu.Unlock()
			replaced = old
		}
		t.removeLocked(old)
	}
	if len(t.byID) >= t.max {
		return nil, replaced, errTooMany
	}
	s = &session{id: rand.Text(), key: key, version: v, lastSeen: now}
	s.mu.Lock()
	t.byID[s.id] = s
	t.byDevice[key] = s
	return s, replaced, nil
}

// get returns the live session with id, or nil.
func (t *sessionTable) get(id string) *session {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.byID[id]
	if s == nil {
		return nil
	}
	if t.now().Sub(s.lastSeen) >= t.timeout {
		t.removeLocked(s)
		return nil
	}
	return s
}

// touch records activity.
func (t *sessionTable) touch(s *session) {
	t.mu.Lock()
	s.lastSeen = t.now()
	t.mu.Unlock()
}

// close ends a session.
func (t *sessionTable) close(s *session) {
	t.mu.Lock()
	t.removeLocked(s)
	t.mu.Unlock()
}

func (t *sessionTable) removeLocked(s *session) {
	if t.byID[s.id] == s {
		delete(t.byID, s.id)
	}
	if t.byDevice[s.key] == s {
		delete(t.byDevice, s.key)
	}
}

// expire drops sessions idle for longer than the timeout and returns them,
// so their diagnostics slots can be given back.
func (t *sessionTable) expire() []*session {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	var out []*session
	for _, s := range t.byID {
		if now.Sub(s.lastSeen) >= t.timeout {
			t.removeLocked(s)
			out = append(out, s)
		}
	}
	return out
}

// active is the number of open sessions.
func (t *sessionTable) active() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.byID)
}
