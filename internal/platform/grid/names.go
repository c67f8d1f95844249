package grid

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalid marks an argument the grid cannot use: a queue, map or key name
// outside the allowed characters, or a TTL out of range. Test for it with
// errors.Is; the message says what is wrong.
var ErrInvalid = errors.New("invalid grid argument")

// maxNameLen keeps stream names, which add a prefix to queue and map names,
// well inside the server's limit of 255 characters.
const maxNameLen = 128

// validateName checks a queue or map name. Names become one token of a
// subject and part of a stream name, so only characters that are safe in
// both are allowed.
func validateName(kind, name string) error {
	if name == "" || len(name) > maxNameLen || strings.IndexFunc(name, func(r rune) bool { return !isNameRune(r) }) >= 0 {
		return fmt.Errorf("%w: %s name %q: use 1 to %d letters, digits, '-' or '_'", ErrInvalid, kind, name, maxNameLen)
	}
	return nil
}

func isNameRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_'
}

// validateKey checks a map key against the JetStream KV key charset. Dots
// separate subject tokens, so a key must not start or end with one or
// contain two in a row.
func validateKey(key string) error {
	ok := key != "" && key[0] != '.' && key[len(key)-1] != '.' && !strings.Contains(key, "..") &&
		strings.IndexFunc(key, func(r rune) bool { return !isNameRune(r) && r != '/' && r != '=' && r != '.' }) < 0
	if !ok {
		return fmt.Errorf("%w: map key %q: use letters, digits, '-', '_', '/', '=' or '.', without leading, trailing or double dots", ErrInvalid, key)
	}
	return nil
}
