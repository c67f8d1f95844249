package testcase

import (
	"net/http"
	"strings"
	"testing"

	"cpesuite/internal/platform/apperr"
)

func TestValidFileName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"case.yaml", true},
		{"case.yml", true},
		{"TC-1 reboot (copy).yaml", true},
		{"ünïcode.yaml", true},
		{strings.Repeat("a", 195) + ".yaml", true},
		{strings.Repeat("a", 196) + ".yaml", false},
		{"", false},
		{".yaml", false},
		{".hidden.yaml", false},
		{"..", false},
		{"../x.yaml", false},
		{"a/../x.yaml", false},
		{"a/b.yaml", false},
		{`a\b.yaml`, false},
		{"/etc/x.yaml", false},
		{"x..yaml", false},
		{"x.txt", false},
		{"x.yaml.txt", false},
		{"x.YAML", false},
		{"x\x00.yaml", false},
		{"x\n.yaml", false},
		{"x\x7f.yaml", false},
		{"x\xff.yaml", false},
	}
	for _, tt := range tests {
		err := ValidFileName(tt.name)
		if (err == nil) != tt.ok {
			t.Errorf("ValidFileName(%q) = %v, want ok=%v", tt.name, err, tt.ok)
		}
		if err != nil && (apperr.Code(err) != "INVALID_FILE_NAME" || apperr.Status(err) != http.StatusBadRequest) {
			t.Errorf("ValidFileName(%q): code %q status %d, want 400 INVALID_FILE_NAME", tt.name, apperr.Code(err), apperr.Status(err))
		}
	}
}

func TestFileNameFor(t *testing.T) {
	tests := []struct{ id, want string }{
		{"TC-001", "tc-001.yaml"},
		{"C12345", "c12345.yaml"},
		{"a.b_c", "a-b_c.yaml"},
		{"..a..b", "a-b.yaml"},
		{"---", "case.yaml"},
		{"", "case.yaml"},
		{"Ünïcode id!", "n-code-id.yaml"},
		{strings.Repeat("x", 300), strings.Repeat("x", 195) + ".yaml"},
	}
	for _, tt := range tests {
		got := FileNameFor(&Case{ID: tt.id})
		if got != tt.want {
			t.Errorf("FileNameFor(%q) = %q, want %q", tt.id, got, tt.want)
		}
		if err := ValidFileName(got); err != nil {
			t.Errorf("FileNameFor(%q) = %q is not a valid file name: %v", tt.id, got, err)
		}
	}
}
