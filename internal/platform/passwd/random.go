package passwd

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"strings"
)

// The alphabet of temporary passwords leaves out characters that are easily
// confused when a password is read aloud or copied from a screen (0/O,
// 1/l/I), and uses only symbols that need no quoting in shells, URLs or
// e-mail and are on every keyboard layout without dead keys.
const (
	upperChars  = "ABCDEFGHJKLMNPQRSTUVWXYZ"
	lowerChars  = "abcdefghijkmnopqrstuvwxyz"
	digitChars  = "23456789"
	symbolChars = "!#%*+-=?@_"
	alphabet    = upperChars + lowerChars + digitChars + symbolChars

	temporaryLen = 16
	// About one draw in five misses a class, so 100 consecutive misses
	// happen with probability around 1e-70: reaching the limit means the
	// random source is broken.
	maxTemporaryDraws = 100
)

// Temporary returns a random 16-character password over an alphabet without
// look-alike characters that contains at least one upper-case letter,
// lower-case letter, digit and symbol.
//
// Whole passwords are drawn uniformly and redrawn until they contain every
// class, which makes the result uniform over all acceptable passwords;
// forcing one character of each class into fixed or shuffled positions
// would not.
func Temporary() (string, error) {
	buf := make([]byte, temporaryLen)
	for range maxTemporaryDraws {
		for i := range buf {
			n, err := uniform(uint64(len(alphabet)))
			if err != nil {
				return "", err
			}
			buf[i] = alphabet[n]
		}
		s := string(buf)
		if strings.ContainsAny(s, upperChars) && strings.ContainsAny(s, lowerChars) &&
			strings.ContainsAny(s, digitChars) && strings.ContainsAny(s, symbolChars) {
			return s, nil
		}
	}
	return "", fmt.Errorf("passwd: no acceptable temporary password in %d draws", maxTemporaryDraws)
}

// OTP returns a one-time password of n decimal digits, leading zeros
// included, drawn uniformly from crypto/rand. n must be 4 to 12: fewer
// digits are too easy to guess, and more are too tedious to type from an
// e-mail.
func OTP(n int) (string, error) {
	if n < 4 || n > 12 {
		return "", fmt.Errorf("passwd: one-time password length %d is outside 4..12", n)
	}
	limit := uint64(1)
	for range n {
		limit *= 10
	}
	v, err := uniform(limit)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%0*d", n, v), nil
}

// uniform returns a uniform random integer in [0, n), n > 0. Reducing a
// random uint64 modulo n would favour small results whenever n does not
// divide 2^64, so values below 2^64 mod n are rejected and drawn again;
// what remains is a whole number of copies of [0, n).
func uniform(n uint64) (uint64, error) {
	threshold := -n % n // 2^64 mod n, computed in 64 bits
	var b [8]byte
	for {
		if _, err := rand.Read(b[:]); err != nil {
			return 0, fmt.Errorf("passwd: reading random bytes: %w", err)
		}
		if v := binary.LittleEndian.Uint64(b[:]); v >= threshold {
			return v % n, nil
		}
	}
}
