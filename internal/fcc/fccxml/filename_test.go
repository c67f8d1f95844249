package fccxml

import (
	"strings"
	"testing"
	"time"
)

func TestFileName(t *testing.T) {
	now := time.Date(2024, 3, 9, 7, 5, 3, 0, time.UTC)
	berlin := time.FixedZone("CET", 3600)
	tests := []struct {
		name string
		in   string
		id   int64
		now  time.Time
		want string
	}{
		{"plain", "Evening_speed.v2", 7, now, "fcc-Evening_speed.v2-20240309-070503.xml"},
		{"spaces become one dash", "Evening   speed test", 7, now, "fcc-Evening-speed-test-20240309-070503.xml"},
		{"non-ASCII letters are replaced", "Überprüfung Köln", 7, now, "fcc-berpr-fung-K-ln-20240309-070503.xml"},
		{"a run of mixed symbols is one dash", "a&<>/\\:*?\"|b", 7, now, "fcc-a-b-20240309-070503.xml"},
		{"dashes next to a run merge", "a - b -- c", 7, now, "fcc-a-b-c-20240309-070503.xml"},
		{"dashes of the name alone are kept", "a--b", 7, now, "fcc-a--b-20240309-070503.xml"},
		{"leading and trailing dashes trimmed", "  --speed!! ", 7, now, "fcc-speed-20240309-070503.xml"},
		{"empty gives the id", "", 42, now, "fcc-42-20240309-070503.xml"},
		{"only symbols give the id", " !?€ ", 42, now, "fcc-42-20240309-070503.xml"},
		{"only dashes give the id", "---", 42, now, "fcc-42-20240309-070503.xml"},
		{"only non-ASCII letters give the id", "測試", 42, now, "fcc-42-20240309-070503.xml"},
		{"cut to 80", strings.Repeat("x", 100), 7, now, "fcc-" + strings.Repeat("x", 80) + "-20240309-070503.xml"},
		{"cut after reduction", strings.Repeat("ü", 10) + strings.Repeat("y", 100), 7, now, "fcc-" + strings.Repeat("y", 80) + "-20240309-070503.xml"},
		{"no trailing dash after the cut", strings.Repeat("x", 79) + " tail", 7, now, "fcc-" + strings.Repeat("x", 79) + "-20240309-070503.xml"},
		{"UTC of a non-UTC time", "t", 7, time.Date(2024, 1, 1, 0, 30, 0, 0, berlin), "fcc-t-20231231-233000.xml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := FileName(tt.in, tt.id, tt.now); got != tt.want {
				t.Fatalf("FileName(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
