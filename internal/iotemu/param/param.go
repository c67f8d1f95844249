// Package param holds an emulated device's parameters: typed values that
// the API, protocol stacks, automatic updates and rules read and write.
package param

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Type is a parameter's value type, spelled as the API reports it.
type Type string

// Parameter types. OPAQUE values are standard base64 text; TIME values are
// Unix seconds.
const (
	String  Type = "STRING"
	Integer Type = "INTEGER"
	Float   Type = "FLOAT"
	Boolean Type = "BOOLEAN"
	Time    Type = "TIME"
	Opaque  Type = "OPAQUE"
)

// Param is one parameter. Names never contain '/' (they are URL path
// segments of the API).
type Param struct {
	Name     string `json:"name"`
	Value    string `json:"value"`
	Type     Type   `json:"type"`
	Writable bool   `json:"writable"`
}

// Errors returned by Set.
var (
	ErrUnknown = errors.New("unknown parameter")
	ErrValue   = errors.New("invalid value")
)

// Normalize checks value against t and returns its canonical spelling
// (booleans as true/false, numbers as Go formats them).
func Normalize(t Type, value string) (string, error) {
	v := strings.TrimSpace(value)
	switch t {
	case Integer, Time:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			// Automatic updates and rules produce floats; accept integral ones.
			f, ferr := strconv.ParseFloat(v, 64)
			if ferr != nil || f != float64(int64(f)) {
				return "", fmt.Errorf("%w: %q is not an integer", ErrValue, value)
			}
			n = int64(f)
		}
		return strconv.FormatInt(n, 10), nil
	case Float:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return "", fmt.Errorf("%w: %q is not a number", ErrValue, value)
		}
		return strconv.FormatFloat(f, 'f', -1, 64), nil
	case Boolean:
		switch strings.ToLower(v) {
		case "true", "1":
			return "true", nil
		case "false", "0":
			return "false", nil
		}
		return "", fmt.Errorf("%w: %q is not a boolean", ErrValue, value)
	}
	return value, nil
}

// Set is one device's parameters, safe for concurrent use. The order of
// List is the order the protocol declared them in.
type Set struct {
	mu     sync.RWMutex
	byName map[string]int
	params []Param
}

// NewSet returns a set holding ps (copied).
func NewSet(ps []Param) *Set {
	s := &Set{byName: make(map[string]int, len(ps)), params: slices.Clone(ps)}
	for i, p := range s.params {
		s.byName[p.Name] = i
	}
	return s
}

// Get returns the named parameter.
func (s *Set) Get(name string) (Param, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	i, ok := s.byName[name]
	if !ok {
		return Param{}, false
	}
	return s.params[i], true
}

// Value returns the named parameter's value, or "" when it is unknown.
func (s *Set) Value(name string) string {
	p, _ := s.Get(name)
	return p.Value
}

// List returns a copy of every parameter.
func (s *Set) List() []Param {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Clone(s.params)
}

// Put stores value (normalised to the parameter's type) and returns the
// previous and the stored value. It does not check Writable: whether a
// writer may write is the caller's rule (the API and servers may not write
// read-only parameters; the device itself may).
func (s *Set) Put(name, value string) (old, stored string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, ok := s.byName[name]
	if !ok {
		return "", "", fmt.Errorf("%w %q", ErrUnknown, name)
	}
	v, err := Normalize(s.params[i].Type, value)
	if err != nil {
		return "", "", err
	}
	old = s.params[i].Value
	s.params[i].Value = v
	return old, v, nil
}
