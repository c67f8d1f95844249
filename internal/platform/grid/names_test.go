package grid

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"fccResultDedup", true},
		{"acs-activate_2", true},
		{strings.Repeat("x", maxNameLen), true},
		{"", false},
		{strings.Repeat("x", maxNameLen+1), false},
		{"a.b", false},
		{"a b", false},
		{"a*", false},
		{"a>", false},
		{"a/b", false},
		{"a\\b", false},
		{"ü", false},
	}
	for _, tc := range tests {
		err := validateName("queue", tc.name)
		if (err == nil) != tc.ok {
			t.Errorf("validateName(%q) = %v, want ok=%v", tc.name, err, tc.ok)
		}
		if err != nil && (!errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "queue name")) {
			t.Errorf("validateName(%q) error %q does not wrap ErrInvalid or name the kind", tc.name, err)
		}
	}
}

func TestValidateKey(t *testing.T) {
	tests := []struct {
		key string
		ok  bool
	}{
		{"k", true},
		{"device/0011AA-CPE-123", true},
		{"a.b.c", true},
		{"x=y_z-1", true},
		{"", false},
		{".a", false},
		{"a.", false},
		{"a..b", false},
		{"a b", false},
		{"a*", false},
		{"a>", false},
		{"a:b", false},
		{"ü", false},
	}
	for _, tc := range tests {
		err := validateKey(tc.key)
		if (err == nil) != tc.ok {
			t.Errorf("validateKey(%q) = %v, want ok=%v", tc.key, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("validateKey(%q) error %q does not wrap ErrInvalid", tc.key, err)
		}
	}
}
