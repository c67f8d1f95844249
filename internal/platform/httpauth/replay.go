package httpauth

import "sync"

// replayWindow is how far below the highest nonce count seen a count may
// arrive and still be accepted once. A strict "greater than the highest"
// rule would refuse a client whose parallel requests on one nonce overtake
// each other; the window (as in IPsec anti-replay) allows that and still
// refuses every count seen before.
const replayWindow = 64

// replayShards spreads the lock: verification on many cores would otherwise
// queue on one mutex.
const replayShards = 16

type ncVerdict int

const (
	ncFresh     ncVerdict = iota
	ncReplayed            // the count was seen before, or is too old to tell
	ncForgotten           // the nonce may have been evicted; ask for a new one
)

// ncState is the anti-replay state of one nonce: the highest count seen and
// a bitmap of the replayWindow counts at and below it (bit i = max-i).
type ncState struct {
	max  uint32
	seen uint64
}

// replayGuard remembers nonce counts per nonce, bounded in memory: each
// shard holds at most its share of the capacity and evicts the entry it
// first saw longest ago.
type replayGuard struct {
	shards [replayShards]replayShard
}

type replayShard struct {
	mu    sync.Mutex
	cap   int
	m     map[nonceID]ncState
	order []nonceID // ring of the keys of m in insertion order
	next  int       // oldest entry of order once it is full
	// watermark is the latest issue time of any evicted nonce. A nonce
	// issued at or before it and not in m may have been evicted, and
	// accepting it would accept its old counts again; it is answered as
	// stale instead, which costs an honest client one round trip.
	watermark int64
}

func newReplayGuard(capacity int) *replayGuard {
	per := (capacity + replayShards - 1) / replayShards
	per = max(per, 1)
	g := &replayGuard{}
	for i := range g.shards {
		g.shards[i].cap = per
		g.shards[i].m = make(map[nonceID]ncState)
	}
	return g
}

// use records count nc for nonce id and says whether it may be accepted.
// nc is at least 1.
func (g *replayGuard) use(id *nonceID, nc uint32) ncVerdict {
	// The random bytes of the id spread nonces evenly over the shards.
	s := &g.shards[id[nonceTimeLen]%replayShards]
	s.mu.Lock()
	defer s.mu.Unlock()

	st, known := s.m[*id]
	if !known {
		if id.issued() <= s.watermark {
			return ncForgotten
		}
		s.insert(id)
		s.m[*id] = ncState{max: nc, seen: 1}
		return ncFresh
	}
	switch {
	case nc > st.max:
		if shift := nc - st.max; shift < replayWindow {
			st.seen = st.seen<<shift | 1
		} else {
			st.seen = 1
		}
		st.max = nc
	case st.max-nc >= replayWindow:
		return ncReplayed
	default:
		bit := uint64(1) << (st.max - nc)
		if st.seen&bit != 0 {
			return ncReplayed
		}
		st.seen |= bit
	}
	s.m[*id] = st
	return ncFresh
}

// insert appends id to the ring, evicting the oldest entry when full.
func (s *replayShard) insert(id *nonceID) {
	if len(s.order) < s.cap {
		s.order = append(s.order, *id)
		return
	}
	old := &s.order[s.next]
	s.watermark = max(s.watermark, old.issued())
	delete(s.m, *old)
	*old = *id
	s.next = (s.next + 1) % s.cap
}
