package httpauth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"hash"
	"sync"
	"time"
)

// A nonce is base64url(issued || random || tag): the issue time in Unix
// nanoseconds, random bytes so that nonces issued in the same nanosecond
// differ, and an HMAC-SHA256 tag over both truncated to 128 bits, plenty
// for a value that lives minutes. The Verifier keeps no state per issued
// nonce: the tag proves we issued it and the time says whether it expired.
const (
	nonceTimeLen = 8
	nonceRandLen = 12
	nonceIDLen   = nonceTimeLen + nonceRandLen
	nonceTagLen  = 16
	nonceRawLen  = nonceIDLen + nonceTagLen
)

// nonceEncoding needs no padding (nonceRawLen is a multiple of 3), so every
// nonce has exactly one spelling and a tag cannot be replayed under another.
var nonceEncoding = base64.RawURLEncoding

var nonceStrLen = nonceEncoding.EncodedLen(nonceRawLen)

// nonceID identifies an issued nonce: its time and random bytes.
type nonceID [nonceIDLen]byte

func (id *nonceID) issued() int64 {
	return int64(binary.BigEndian.Uint64(id[:nonceTimeLen]))
}

// nonceSigner issues and checks nonces. It is safe for concurrent use.
type nonceSigner struct {
	key  []byte
	macs sync.Pool // of *macState
}

// macState is pooled because hmac.New costs several allocations and a key
// schedule, while Reset returns to the keyed state cheaply. The input is
// copied into in because bytes handed to a hash.Hash escape to the heap;
// this way the caller's arrays stay on its stack.
type macState struct {
	h   hash.Hash
	in  nonceID
	sum [sha256.Size]byte
}

func newNonceSigner(key []byte) *nonceSigner {
	s := &nonceSigner{key: append([]byte(nil), key...)}
	s.macs.New = func() any { return &macState{h: hmac.New(sha256.New, s.key)} }
	return s
}

// tag computes the truncated MAC of id into dst.
func (s *nonceSigner) tag(dst *[nonceTagLen]byte, id *nonceID) {
	m := s.macs.Get().(*macState)
	m.in = *id
	m.h.Reset()
	m.h.Write(m.in[:])
	copy(dst[:], m.h.Sum(m.sum[:0]))
	s.macs.Put(m)
}

// issue returns a fresh nonce stamped with now.
func (s *nonceSigner) issue(now time.Time) string {
	var id nonceID
	binary.BigEndian.PutUint64(id[:nonceTimeLen], uint64(now.UnixNano()))
	rand.Read(id[nonceTimeLen:]) // never fails since Go 1.24
	var raw [nonceRawLen]byte
	copy(raw[:], id[:])
	s.tag((*[nonceTagLen]byte)(raw[nonceIDLen:]), &id)
	return nonceEncoding.EncodeToString(raw[:])
}

// open checks that nonce is one we issued and returns its id.
func (s *nonceSigner) open(nonce string) (id nonceID, ok bool) {
	if len(nonce) != nonceStrLen {
		return id, false
	}
	// Copying into an array first keeps the decode from allocating a []byte
	// for the string.
	var src [64]byte
	var raw [nonceRawLen]byte
	n := copy(src[:], nonce)
	if m, err := nonceEncoding.Decode(raw[:], src[:n]); err != nil || m != nonceRawLen {
		return id, false
	}
	copy(id[:], raw[:nonceIDLen])
	var want [nonceTagLen]byte
	s.tag(&want, &id)
	return id, hmac.Equal(want[:], raw[nonceIDLen:])
}

// opaque derives the opaque value from the key so that Verifiers sharing a
// key agree on it without coordination.
func (s *nonceSigner) opaque(realm string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte("httpauth opaque\x00" + realm))
	return nonceEncoding.EncodeToString(m.Sum(nil)[:nonceTagLen])
}
