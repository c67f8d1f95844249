package logx

import (
	"bytes"
	"strings"
	"testing"
)

func TestNew(t *testing.T) {
	tests := []struct {
		level, format string
		wantErr       bool
		wantPrefix    string
	}{
		{"info", "json", false, `{"time"`},
		{"DEBUG", "text", false, "time="},
		{"warn", "auto", false, `{"time"`}, // a buffer is not a terminal
		{"loud", "json", true, ""},
		{"info", "xml", true, ""},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		log, err := New(&b, tt.level, tt.format)
		if (err != nil) != tt.wantErr {
			t.Fatalf("%s/%s: err=%v", tt.level, tt.format, err)
		}
		if err != nil {
			continue
		}
		log.Error("hello")
		if !strings.HasPrefix(b.String(), tt.wantPrefix) {
			t.Errorf("%s/%s: got %q", tt.level, tt.format, b.String())
		}
	}
}
