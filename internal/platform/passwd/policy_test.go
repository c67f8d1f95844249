package passwd_test

import (
	"errors"
	"strings"
	"testing"

	"cpesuite/internal/platform/passwd"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		name, password, username string
		rule                     string // a word of the expected reason; empty when accepted
	}{
		{"four classes", "Abcdefgh12!x", "admin", ""},
		{"lower upper digit", "Abcdefgh1234", "admin", ""},
		{"lower upper other", "Abcdefgh-xyz", "admin", ""},
		{"lower digit other", "abcdefgh-123", "admin", ""},
		{"upper digit other", "ABCDEFGH-123", "admin", ""},
		{"spaces count as other", "correct Horse battery", "admin", ""},
		{"non-Latin letters", "Пароль-пароль", "admin", ""},
		{"exactly 12", "Aa1!Aa1!Aa1!", "", ""},
		{"exactly 128", "Aa1!" + strings.Repeat("x", 124), "", ""},
		{"128 multi-byte characters", "Ü1!" + strings.Repeat("ü", 125), "", ""},
		{"11 characters", "Aa1!Aa1!Aa1", "", "at least 12"},
		{"empty", "", "", "at least 12"},
		{"129 characters", "Aa1!" + strings.Repeat("x", 125), "", "at most 128"},
		{"only lower", "abcdefghijklmn", "", "three"},
		{"lower and upper", "abcdefGHIJKLMN", "", "three"},
		{"digits and other", "1234567890-+!", "", "three"},
		{"contains username", "xxAdmin-2024yy", "admin", "username"},
		{"contains username, other case", "Zz1!JOHN.DOE!zz", "john.doe", "username"},
		{"equals username", "Long-User-Name-1", "long-user-name-1", "username"},
		{"two-letter username ignored", "Abcdefgh12!x", "ab", ""},
		{"empty username ignored", "Abcdefgh12!x", "", ""},
		{"invalid UTF-8", "Abcdefgh12!\xff", "", "invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := passwd.Check(tt.password, tt.username)
			if tt.rule == "" {
				if err != nil {
					t.Fatalf("Check(%q, %q) = %v, want nil", tt.password, tt.username, err)
				}
				return
			}
			var pe *passwd.PolicyError
			if !errors.As(err, &pe) {
				t.Fatalf("Check(%q, %q) = %v, want a *PolicyError", tt.password, tt.username, err)
			}
			msg := pe.Error()
			if !strings.Contains(msg, tt.rule) || !strings.HasSuffix(msg, ".") || msg != pe.Reason {
				t.Fatalf("Check(%q, %q) says %q, want a sentence mentioning %q", tt.password, tt.username, msg, tt.rule)
			}
			if strings.Contains(msg, tt.password) && tt.password != "" {
				t.Fatalf("the reason %q quotes the password", msg)
			}
		})
	}
}
