package passwd

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Parameters of new hashes. They are the first argon2id configuration the
// OWASP Password Storage Cheat Sheet recommends (19 MiB, 2 passes, 1 lane):
// memory-hard enough to make GPU guessing expensive, yet cheap enough
// (tens of milliseconds, 19 MiB) that a burst of logins on a small
// container neither stalls nor runs out of memory.
const (
	memoryKiB = 19 * 1024
	passes    = 2
	lanes     = 1
	saltLen   = 16
	keyLen    = 32
)

// Bounds accepted by Verify. Hash rows come from a database that an
// attacker might be able to write to; without bounds a tampered row could
// ask for gigabytes of memory or minutes of CPU on every login attempt, or
// carry a key so short that random passwords match it.
const (
	maxMemoryKiB  = 1 << 20 // 1 GiB
	maxPasses     = 10
	maxLanes      = 16
	minSaltLen    = 8 // the Argon2 specification's minimum
	maxSaltLen    = 64
	minKeyLen     = 16
	maxKeyLen     = 64
	maxEncodedLen = 256 // far above any hash within the bounds above
)

// ErrMalformed is returned by Verify when the stored hash cannot be parsed
// or its parameters are outside the accepted bounds. It points at a
// damaged or tampered row, not at a wrong password.
var ErrMalformed = errors.New("passwd: malformed password hash")

var b64 = base64.RawStdEncoding.Strict()

// params are the values encoded in a PHC string.
type params struct {
	memory uint32
	passes uint32
	lanes  uint8
	salt   []byte
	key    []byte
}

// Hash returns an argon2id hash of password in PHC string form,
// $argon2id$v=19$m=19456,t=2,p=1$<salt>$<key>, with a fresh random 16-byte
// salt and a 32-byte key, both in unpadded standard base64.
func Hash(password string) (string, error) {
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("passwd: reading random salt: %w", err)
	}
	key := argon2.IDKey([]byte(password), salt, passes, memoryKiB, lanes, keyLen)
	return encode(params{memory: memoryKiB, passes: passes, lanes: lanes, salt: salt, key: key}), nil
}

// Verify reports whether password matches the encoded hash. The keys are
// compared in constant time. A malformed or out-of-bounds encoding returns
// an error wrapping ErrMalformed and false.
func Verify(encoded, password string) (bool, error) {
	p, err := decode(encoded)
	if err != nil {
		return false, err
	}
	key := argon2.IDKey([]byte(password), p.salt, p.passes, p.memory, p.lanes, uint32(len(p.key)))
	return subtle.ConstantTimeCompare(key, p.key) == 1, nil
}

func encode(p params) string {
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, p.memory, p.passes, p.lanes,
		b64.EncodeToString(p.salt), b64.EncodeToString(p.key))
}

func malformed(reason string) error {
	return fmt.Errorf("%w: %s", ErrMalformed, reason)
}

// decode parses a PHC string and checks every parameter against the
// bounds, so that nothing reaching argon2.IDKey can make it panic or run
// away. The reasons are fixed phrases: the encoding is a secret-derived
// value and must not end up in logs.
func decode(encoded string) (params, error) {
	var p params
	if len(encoded) > maxEncodedLen {
		return p, malformed("too long")
	}
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[0] != "" {
		return p, malformed("wrong number of fields")
	}
	if parts[1] != "argon2id" {
		return p, malformed("not argon2id")
	}
	if parts[2] != "v="+strconv.Itoa(argon2.Version) {
		return p, malformed("unsupported version")
	}
	m, t, l, ok := parseParams(parts[3])
	if !ok {
		return p, malformed("bad parameter field")
	}
	switch {
	case t < 1 || t > maxPasses:
		return p, malformed("pass count out of bounds")
	case l < 1 || l > maxLanes:
		return p, malformed("parallelism out of bounds")
	case m < 8*l || m > maxMemoryKiB:
		// Argon2 needs 8 KiB per lane; x/crypto would silently raise a
		// smaller value, and the hash would no longer mean what it says.
		return p, malformed("memory out of bounds")
	}
	p.memory, p.passes, p.lanes = uint32(m), uint32(t), uint8(l)
	var err error
	if p.salt, err = b64.DecodeString(parts[4]); err != nil {
		return p, malformed("salt is not base64")
	}
	if len(p.salt) < minSaltLen || len(p.salt) > maxSaltLen {
		return p, malformed("salt length out of bounds")
	}
	if p.key, err = b64.DecodeString(parts[5]); err != nil {
		return p, malformed("key is not base64")
	}
	if len(p.key) < minKeyLen || len(p.key) > maxKeyLen {
		return p, malformed("key length out of bounds")
	}
	return p, nil
}

// parseParams parses "m=<n>,t=<n>,p=<n>" in that order, the order every
// common implementation writes.
func parseParams(s string) (m, t, l uint64, ok bool) {
	fields := strings.Split(s, ",")
	if len(fields) != 3 {
		return 0, 0, 0, false
	}
	var vals [3]uint64
	for i, name := range [3]string{"m=", "t=", "p="} {
		digits, found := strings.CutPrefix(fields[i], name)
		if !found {
			return 0, 0, 0, false
		}
		// 32 bits is enough for every bound and keeps the later
		// conversions exact.
		v, err := strconv.ParseUint(digits, 10, 32)
		if err != nil {
			return 0, 0, 0, false
		}
		vals[i] = v
	}
	return vals[0], vals[1], vals[2], true
}
